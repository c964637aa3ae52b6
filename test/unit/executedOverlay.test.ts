// Precision as executed from a real build/ort report (the protocol fixture, digits): ORT's optimised graph by node,
// and the QDQ model ORT was given, each node mapped to the optimised ops that ran it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { executedOverlayFor } from '../../client/editors/executedOverlay';
import type { BuildOrtResult } from '../../protocol/kernel';
import { repoRoot } from '../support/paths';

const report = JSON.parse(readFileSync(path.join(repoRoot, 'protocol', 'fixtures', 'rpc', 'build-ort.result.json'), 'utf8')) as BuildOrtResult;
const ours = report.variants.find((v) => v.name === 'ours')!;

test("ORT's optimised graph: every node with its executed precision and, for fp32, the reason", () => {
  const overlay = executedOverlayFor(path.join(report.outDir, path.basename(ours.optimized)), report)!;
  assert.equal(overlay.runtime, `ONNX Runtime ${report.ortVersion} (CPUExecutionProvider)`);
  assert.equal(Object.keys(overlay.ops).length, ours.ops.length);
  const conv = ours.ops.find((o) => o.opType === 'QLinearConv')!;
  assert.equal(overlay.ops[conv.name].precision, 'int8');
  const gemm = ours.ops.find((o) => o.precision === 'fp32' && o.role === 'compute')!;
  assert.equal(overlay.ops[gemm.name].precision, 'fp32');
  assert.match(overlay.ops[gemm.name].reason!, /not fused into QGemm/);
});

test('the QDQ model ORT was given: each source node says which optimised ops ran it', () => {
  const overlay = executedOverlayFor(`/elsewhere/${path.basename(ours.onnx)}`, report)!;
  const conv = overlay.ops.node_conv2d;
  assert.equal(conv.precision, 'int8');
  assert.equal(conv.ranAs, 'QLinearConv');
  const gemm = overlay.ops.node_linear_1;
  assert.equal(gemm.precision, 'fp32');
  assert.ok(gemm.reason);
  // Every source named by the optimised graph is there, and nothing else.
  assert.deepEqual(Object.keys(overlay.ops).sort(), [...new Set(ours.ops.flatMap((o) => (o.sourceNode ? [o.sourceNode] : [])))].sort());
});

test('a file the report does not describe gets no overlay', () => {
  assert.equal(executedOverlayFor('/x/other.onnx', report), undefined);
});
