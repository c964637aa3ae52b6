// The extension host keeps large weights out of the webview: the wire-level rewrite must keep every
// message the graph needs, drop exactly the big payloads, and summarize them correctly.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { onnx } from '../../build/generated/onnx-pb.js';
import { slimOnnx } from '../../client/editors/slimOnnx';
import { repoRoot } from './helpers/builder';

const original = new Uint8Array(readFileSync(path.join(repoRoot, 'test', 'fixtures', 'digits', 'digits.qdq.onnx')));

const payloadBytes = (t: onnx.ITensorProto) =>
  (t.raw_data?.length ?? 0) +
  4 * (t.float_data?.length ?? 0) +
  4 * (t.int32_data?.length ?? 0) +
  8 * (t.int64_data?.length ?? 0);

test('tensors above the limit lose their payload; everything else is byte-identical in meaning', () => {
  const limit = 1024;
  const { bytes, removed } = slimOnnx(original, limit);
  const before = onnx.ModelProto.decode(original);
  const after = onnx.ModelProto.decode(bytes);
  assert.ok(bytes.length < original.length / 2, `${bytes.length} vs ${original.length}`);
  const big = before.graph!.initializer!.filter((t) => payloadBytes(t) > limit).map((t) => t.name);
  assert.ok(big.length >= 2, 'conv2 and fc1 weights are over 1 KB');
  assert.deepEqual([...removed.keys()].sort(), [...big].sort());
  for (const [i, t] of after.graph!.initializer!.entries()) {
    const was = before.graph!.initializer![i];
    assert.equal(t.name, was.name);
    assert.deepEqual(t.dims?.map(Number), was.dims?.map(Number));
    assert.equal(t.data_type, was.data_type);
    if (big.includes(t.name!)) assert.equal(payloadBytes(t), 0, `${t.name} still has data`);
    else assert.deepEqual(t.raw_data, was.raw_data);
  }
  // Nodes, attributes (incl. tensor attributes) and opsets are untouched.
  assert.deepEqual(after.graph!.node, before.graph!.node);
  assert.deepEqual(after.opset_import, before.opset_import);
  assert.deepEqual(after.graph!.value_info, before.graph!.value_info);
});

test('summaries match the removed values', () => {
  const { removed } = slimOnnx(original, 1024);
  const model = onnx.ModelProto.decode(original);
  for (const [name, stats] of removed) {
    const t = model.graph!.initializer!.find((x) => x.name === name)!;
    assert.ok(t.raw_data && t.raw_data.length > 0, `${name}: raw data expected in the export`);
    const raw = t.raw_data;
    const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
    const values =
      t.data_type === onnx.TensorProto.DataType.FLOAT
        ? Array.from({ length: raw.length / 4 }, (_, i) => view.getFloat32(i * 4, true))
        : t.data_type === onnx.TensorProto.DataType.INT8
          ? Array.from(raw as Uint8Array, (b) => (b << 24) >> 24)
          : t.data_type === onnx.TensorProto.DataType.INT32
            ? Array.from({ length: raw.length / 4 }, (_, i) => view.getInt32(i * 4, true))
            : undefined;
    assert.ok(values, `${name}: data type ${t.data_type} not covered by the test`);
    assert.equal(stats.bytes, raw.length);
    assert.equal(stats.count, values.length);
    assert.equal(stats.min, Math.min(...values));
    assert.equal(stats.max, Math.max(...values));
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    assert.ok(Math.abs(stats.mean! - mean) < 1e-9 * Math.max(1, Math.abs(mean)));
    assert.equal(
      stats.histogram!.reduce((a, b) => a + b, 0),
      values.length,
    );
  }
});

test('small models pass through untouched, and broken bytes are returned as they came', () => {
  const same = slimOnnx(original, 1 << 30);
  assert.equal(same.bytes, original);
  assert.equal(same.removed.size, 0);
  const truncated = original.subarray(0, Math.floor(original.length / 2));
  assert.equal(slimOnnx(truncated, 1024).bytes, truncated);
});
