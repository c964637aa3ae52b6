// Precision as executed from a real build/ort report (the protocol fixture, digits): ORT's optimised graph by node,
// and the QDQ model ORT was given, each node mapped to the optimised ops that ran it.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { executedOverlayFor, findExecutedOverlay, tvmOverlayFor } from '../../client/editors/executedOverlay';
import type { BuildOrtResult, BuildTvmResult } from '../../protocol/kernel';
import { repoRoot } from '../support/paths';

const report = JSON.parse(
  readFileSync(path.join(repoRoot, 'protocol', 'fixtures', 'rpc', 'BuildOrtResult.json'), 'utf8'),
) as BuildOrtResult;
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
  assert.deepEqual(
    Object.keys(overlay.ops).sort(),
    [...new Set(ours.ops.flatMap((o) => (o.sourceNode ? [o.sourceNode] : [])))].sort(),
  );
});

test('a file the report does not describe gets no overlay', () => {
  assert.equal(executedOverlayFor('/x/other.onnx', report), undefined);
});

const tvm = JSON.parse(
  readFileSync(path.join(repoRoot, 'protocol', 'fixtures', 'rpc', 'BuildTvmResult.json'), 'utf8'),
) as BuildTvmResult;

test('TVM: the export it compiled, each node with what ran it (int8 fold) or why it stayed fp32', () => {
  const overlay = tvmOverlayFor(tvm.onnx, tvm)!;
  assert.equal(overlay.runtime, `TVM ${tvm.tvmVersion} (x86-64, int8 fold)`);
  assert.equal(overlay.ops.node_conv2d.precision, 'int8');
  assert.match(overlay.ops.node_conv2d.ranAs!, /conv2d uint8 x int8 -> int32/);
  assert.equal(overlay.ops.node_conv2d.role, 'compute');
  assert.equal(overlay.ops.node_quantize_per_tensor.role, 'conversion');
  assert.match(overlay.ops.node_quantize_per_tensor.reason!, /graph input/);
  assert.equal(tvmOverlayFor('/somewhere/else.onnx', tvm), undefined);
});

test('the newest report next to the export wins: TVM after ONNX Runtime, then ONNX Runtime again', async () => {
  const out = mkdtempSync(path.join(tmpdir(), 'qat-executed-'));
  const exportPath = path.join(out, 'digits.qdq.onnx');
  writeFileSync(exportPath, '');
  mkdirSync(path.join(out, 'ort-cpu'));
  mkdirSync(path.join(out, 'tvm-x86-64'));
  const ortReport = path.join(out, 'ort-cpu', 'build-report.json');
  const tvmReport = path.join(out, 'tvm-x86-64', 'build-report.json');
  writeFileSync(ortReport, JSON.stringify({ ...report, onnx: exportPath }));
  writeFileSync(tvmReport, JSON.stringify({ ...tvm, onnx: exportPath }));
  utimesSync(ortReport, 1_000, 1_000);
  utimesSync(tvmReport, 2_000, 2_000);
  let found = await findExecutedOverlay(exportPath);
  assert.equal(found?.from, tvmReport);
  assert.match(found!.overlay.runtime, /^TVM /);
  utimesSync(ortReport, 3_000, 3_000);
  found = await findExecutedOverlay(exportPath);
  assert.equal(found?.from, ortReport);
  assert.equal(found!.overlay.ops.node_conv2d.ranAs, 'QLinearConv');
  // ORT's own files are described by the report beside them.
  found = await findExecutedOverlay(path.join(out, 'ort-cpu', 'model.optimized.onnx'));
  assert.equal(found?.from, ortReport);
  assert.equal(await findExecutedOverlay(path.join(out, 'unrelated.onnx')), undefined);
});
