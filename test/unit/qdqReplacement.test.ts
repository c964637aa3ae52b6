// The "Q/DQ re-placement" section of the Build for Target report, from the build/ort fixture and a residual
// model's shape of result (a Conv feeding an Add gets a calibrated Q/DQ pair).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { replacementMarkdown } from '../../client/tasks/qdqReplacement';
import type { BuildOrtResult, QdqReplacement } from '../../protocol/kernel';

const root = path.resolve(__dirname, '..', '..', '..');
const fixture = JSON.parse(
  readFileSync(path.join(root, 'protocol', 'fixtures', 'rpc', 'BuildOrtResult.json'), 'utf8'),
) as BuildOrtResult;

test('the fixture renders a before/after table with counts, parity and latency', () => {
  const lines = replacementMarkdown(fixture.qdqReplacement!);
  const md = lines.join('\n');
  assert.equal(lines[0], '## Q/DQ re-placement');
  assert.match(
    md,
    /\(1 int32 bias\); the trained scales and zero points are kept\. File: `.*digits\.qdq\.replaced\.onnx`/,
  );
  assert.match(md, /\| \| before \(our export\) \| after \(re-placed\) \|/);
  assert.match(md, /\| conv\/matmul ops int8 \| 3 \| 4 \|/);
  assert.match(md, /\| conv\/matmul ops fp32 \| 1 \| 0 \|/);
  assert.match(md, /\| fp32 compute ops \| node_linear_1 \| none \|/);
  assert.match(md, /\| top-1 agreement vs PyTorch INT8 \| 100\.0 % \| 100\.0 % \|/);
  assert.match(md, /\| latency batch 16 \(median\) \| \d+\.\d{3} ms \| \d+\.\d{3} ms \|/);
  assert.match(md, /\| bias \| fc2\.bias \| Gemm node_linear_1 \| 7\.323e-5 \|/);
});

test('calibrated activations are named as such; missing latency and parity read n/a', () => {
  const side = (variant: 'ours' | 'replaced', fp32: number) => ({
    variant,
    perPrecision: { int8: 6, fp32, conversion: 9 },
    computePerPrecision: { int8: 2, fp32 },
    convMatmulPerPrecision: { int8: 4 - fp32, fp32 },
    fp32Ops: fp32 ? ['node_conv2d_2', 'node_add'] : [],
    maxDiffSteps: null,
    top1AgreementVsTorchInt8: 1,
  });
  const rq: QdqReplacement = {
    onnx: '/w/out/res.qdq.replaced.onnx',
    artifact: '/w/out/ort-cpu/model.qdq.replaced.onnx',
    calibrationSamples: 512,
    activationDtype: 'uint8',
    before: side('ours', 2),
    after: side('replaced', 0),
    inserted: [
      {
        kind: 'activation',
        tensor: 'conv2d_2',
        node: 'node_conv2d_2',
        opType: 'Conv',
        why: 'no Q | on its output',
        source: 'calibration',
        scale: 0.04913,
        zeroPoint: 108,
        dtype: 'uint8',
      },
      {
        kind: 'activation',
        tensor: 'view',
        node: 'node_view',
        opType: 'Reshape',
        why: 'layout',
        source: 'neighbour',
        neighbour: 'node_dq_5',
        scale: 0.0237,
        zeroPoint: 0,
        dtype: 'uint8',
      },
    ],
  };
  const md = replacementMarkdown(rq).join('\n');
  assert.match(
    md,
    /\(2 Q\/DQ pairs\); the trained scales and zero points are kept, 1 new scale calibrated on 512 training inputs\./,
  );
  assert.match(md, /\| fp32 compute ops \| node_conv2d_2, node_add \| none \|/);
  assert.match(md, /\| max diff vs PyTorch INT8 \(steps\) \| n\/a \| n\/a \|/);
  assert.match(md, /\| latency batch 1 \(median\) \| n\/a \| n\/a \|/);
  assert.match(
    md,
    /\| activation \| conv2d_2 \| Conv node_conv2d_2 \| 0\.04913 \(calibrated\) \| no Q \\\| on its output \|/,
  );
  assert.match(md, /\| 0\.02370 \(from node_dq_5\) \|/);
});
