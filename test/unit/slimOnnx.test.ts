// The extension host keeps large weights out of the webview: the wire-level rewrite must keep every
// message the graph needs, drop exactly the big payloads, and summarize them correctly.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { onnx } from '../../build/generated/onnx-pb.js';
import { slimOnnx } from '../../client/editors/slimOnnx';
import { SlimError, SlimService } from '../../client/editors/slimService';
import { deeplyNested, duplicatedNodes } from '../support/onnxShapes';
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

// Hostile shapes: the contract is "return the input unchanged" for anything that is not a sane model.
test('deeply nested messages (10k and 100k levels) come back unchanged instead of overflowing the stack', () => {
  for (const depth of [10_000, 100_000]) {
    const bytes = deeplyNested(depth);
    const out = slimOnnx(bytes, 1024);
    assert.equal(out.bytes, bytes, `${depth} levels`);
    assert.equal(out.removed.size, 0);
  }
});

test('16 MB and 64 MB of zeros come back unchanged, read no further than the first field', () => {
  for (const size of [16, 64]) {
    const zeros = new Uint8Array(size * 1024 * 1024);
    assert.equal(slimOnnx(zeros, 1024).bytes, zeros);
  }
});

test('a model with its node list duplicated to 20k nodes slims to the same graph', () => {
  const big = duplicatedNodes(original, 20_000, true);
  const { bytes, removed } = slimOnnx(big, 1024);
  assert.ok(removed.size >= 2);
  const before = onnx.ModelProto.decode(big);
  const after = onnx.ModelProto.decode(bytes);
  assert.equal(after.graph!.node!.length, before.graph!.node!.length);
  assert.ok(after.graph!.node!.length >= 20_000);
  assert.equal(after.graph!.initializer!.length, before.graph!.initializer!.length);
});

const workerFile = path.join(repoRoot, 'out', 'client', 'slimWorker.js');

test('the worker thread slims exactly as the function does, and the caller keeps its bytes', async () => {
  const service = new SlimService(workerFile);
  try {
    const input = original.slice();
    const viaWorker = await service.slim(input, 1024);
    const direct = slimOnnx(original, 1024);
    assert.deepEqual(viaWorker.bytes, direct.bytes);
    assert.deepEqual([...viaWorker.removed], [...direct.removed]);
    assert.deepEqual(input, original, 'the input is not detached or changed');
    // A file as read (a Node Buffer, as Compare Layers reads the export): usable again after it was slimmed once,
    // as when a closed results view is shown again.
    const file = Buffer.from(original);
    await service.slim(file, 1024);
    assert.equal(file.byteLength, original.byteLength, 'the Buffer was detached');
    assert.deepEqual((await service.slim(file, 1024)).bytes, direct.bytes);
    // Hostile shapes through the worker: unchanged, not an error.
    const deep = deeplyNested(100_000);
    assert.deepEqual((await service.slim(deep)).bytes, deep);
  } finally {
    service.dispose();
  }
});

test('past its size or time limit the worker is stopped with a clear message, and the next file still opens', async () => {
  const small = new SlimService(workerFile, { maxInputBytes: 1000 });
  await assert.rejects(small.slim(original), (e: Error) => e instanceof SlimError && /up to 0 MB/.test(e.message));
  small.dispose();
  // A time limit the first request cannot meet (starting the worker alone takes longer than 1 ms).
  const service = new SlimService(workerFile, { timeoutMs: 1 });
  await assert.rejects(
    service.slim(duplicatedNodes(original, 20_000, true)),
    (e: Error) => e instanceof SlimError && /took more than .* and was stopped/.test(e.message),
  );
  service.dispose();
  const again = new SlimService(workerFile);
  try {
    assert.ok((await again.slim(original, 1024)).removed.size >= 2);
  } finally {
    again.dispose();
  }
});

test('a worker that runs out of heap ends with a message, not a crash of the caller', async () => {
  // 1 MB of heap cannot even load the worker's code: the worker dies, the promise rejects.
  const service = new SlimService(workerFile, { maxHeapMb: 1 });
  await assert.rejects(service.slim(original), (e: Error) => e instanceof SlimError);
  service.dispose();
});
