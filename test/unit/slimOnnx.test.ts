// The extension host keeps large weights out of the webview: the wire-level rewrite must keep every
// message the graph needs, drop exactly the big payloads, and summarize them correctly.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { onnx } from '../../build/generated/onnx-pb.js';
import { OnnxWireError } from '../../common/wireReader';
import { SLIM_LIMIT_BYTES, slimOnnx } from '../../client/editors/slimOnnx';
import { MalformedOnnxError, SlimError, SlimService } from '../../client/editors/slimService';
import {
  concat,
  deeplyNested,
  duplicatedNodes,
  field,
  floats,
  tensorProto,
  withGraphFields,
  withModelFields,
} from '../support/onnxShapes';
import { repoRoot } from './helpers/builder';

const workerFile = path.join(repoRoot, 'out', 'client', 'slimWorker.js');
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

test('small models pass through untouched; a truncated one is reported with the byte and the field', () => {
  const same = slimOnnx(original, 1 << 30);
  assert.equal(same.bytes, original);
  assert.equal(same.removed.size, 0);
  const truncated = original.subarray(0, Math.floor(original.length / 2));
  assert.throws(
    () => slimOnnx(truncated, 1024),
    (e: unknown) =>
      e instanceof OnnxWireError &&
      /^This is not a valid ONNX file: a field runs past its message at byte \d+, in model \(field 7\)\.$/.test(
        e.message,
      ),
  );
});

/** Payload bytes of the model's initializers, by name. */
const initializerPayloads = (bytes: Uint8Array) =>
  new Map(onnx.ModelProto.decode(bytes).graph!.initializer!.map((t) => [t.name!, payloadBytes(t)]));

test('past the budget, the largest tensors under the limit lose their payload too, the smallest are kept', async () => {
  const mid = Array.from({ length: 50 }, (_, i) => field(5, tensorProto(`mid_${i}`, [1000], floats(1000))));
  const tiny = Array.from({ length: 50 }, (_, i) => field(5, tensorProto(`tiny_${i}`, [10], floats(10))));
  const bytes = withGraphFields(original, [...mid, ...tiny]);
  // Within the default budget, nothing under the limit is cut.
  const within = initializerPayloads(slimOnnx(bytes, SLIM_LIMIT_BYTES).bytes);
  for (let i = 0; i < 50; i++) assert.equal(within.get(`mid_${i}`), 4000);
  const budget = 64 * 1024;
  const { bytes: slimmed, removed } = slimOnnx(bytes, SLIM_LIMIT_BYTES, budget);
  const before = initializerPayloads(bytes);
  const after = initializerPayloads(slimmed);
  const kept = [...after.values()].filter((b) => b > 0);
  assert.ok(kept.reduce((a, b) => a + b, 0) <= budget, 'the payload kept is within the budget');
  const cutUnderLimit = [...before].filter(([name, b]) => b <= SLIM_LIMIT_BYTES && after.get(name) === 0 && b > 0);
  assert.ok(cutUnderLimit.length >= 50, `${cutUnderLimit.length} cut under the limit`);
  assert.ok(
    Math.max(...kept) < Math.min(...cutUnderLimit.map(([, b]) => b)),
    'every kept tensor is smaller than every cut one',
  );
  for (let i = 0; i < 50; i++) {
    assert.equal(after.get(`tiny_${i}`), 40, `tiny_${i} kept`);
    assert.equal(after.get(`mid_${i}`), 0, `mid_${i} cut`);
  }
  // A tensor cut by the budget is summarized like a big one.
  const stats = removed.get('mid_7')!;
  assert.deepEqual([stats.bytes, stats.count, stats.min, stats.max, stats.mean], [4000, 1000, 0, 999, 499.5]);
  assert.ok(Math.abs(stats.std! - Math.sqrt((1000 ** 2 - 1) / 12)) < 1e-9, `std ${stats.std}`);
  assert.equal(stats.histogram!.length, 32);
  assert.equal(
    stats.histogram!.reduce((a, b) => a + b, 0),
    1000,
  );
  assert.ok(
    stats.histogram!.every((n) => n === 31 || n === 32),
    'values 0..999 spread evenly',
  );
  // The worker cuts to the budget it is given.
  const service = new SlimService(workerFile);
  try {
    assert.deepEqual((await service.slim(bytes, { budgetBytes: budget })).bytes, slimmed);
  } finally {
    service.dispose();
  }
});

/** The OnnxWireError slimOnnx throws on `bytes`. */
function malformed(bytes: Uint8Array): OnnxWireError {
  try {
    slimOnnx(bytes, 1024);
  } catch (err) {
    if (err instanceof OnnxWireError) return err;
    throw err;
  }
  assert.fail('slimmed a malformed file');
}

test('4 garbage bytes in model.functions: malformed, at the byte of the bad key, whatever the rest holds', () => {
  // A scalar with 1M values (4 MB) besides: the file must not reach the view whole.
  const scalar = field(5, tensorProto('scalar', [], floats(1_000_000)));
  const bytes = withModelFields(withGraphFields(original, [scalar]), [
    field(25, Uint8Array.of(0xff, 0xff, 0xff, 0xff)),
  ]);
  const err = malformed(bytes);
  const functionData = bytes.length - 4;
  assert.equal(err.offset, functionData);
  assert.equal(
    err.message,
    `This is not a valid ONNX file: a number runs past its message at byte ${functionData}, in model.functions[0].`,
  );
});

test('a broken tensor deep inside is named by its path: training_info, its graph, the initializer', () => {
  const broken = field(5, Uint8Array.of((9 << 3) | 2, 100, 1, 2, 3)); // raw_data claims 100 bytes, has 3
  const graph = concat([field(5, tensorProto('ok', [2], floats(2))), broken]);
  const bytes = withModelFields(original, [field(20, field(1, graph))]);
  const err = malformed(bytes);
  assert.match(
    err.message,
    /a field runs past its message at byte \d+, in model\.training_info\[0\]\.initialization\.initializer\[1\] \(field 9\)\.$/,
  );
  assert.equal(bytes[err.offset! - 1], 100, 'the offset is just after the length that runs past');
});

// Hostile shapes that are not sane models are reported, fast, without a stack that grows with them.
test('deeply nested messages (10k and 100k levels) are reported as nested too deeply, not overflowing the stack', () => {
  for (const depth of [10_000, 100_000]) {
    const err = malformed(deeplyNested(depth));
    assert.match(err.message, /messages nested more than 256 deep at byte \d+, in model\.graph\.node\[0\]/);
    assert.match(err.message, /…/, 'the path leaves out the middle');
    assert.ok(err.message.length < 300, err.message);
  }
});

test('16 MB and 64 MB of zeros are reported at their first byte, read no further than the first field', () => {
  for (const size of [16, 64]) {
    const err = malformed(new Uint8Array(size * 1024 * 1024));
    assert.equal(err.message, 'This is not a valid ONNX file: field number 0 at byte 0, in model.');
    assert.equal(err.offset, 0);
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

test('the worker thread slims exactly as the function does, and the caller keeps its bytes', async () => {
  const service = new SlimService(workerFile);
  try {
    const input = original.slice();
    const viaWorker = await service.slim(input, { limitBytes: 1024 });
    const direct = slimOnnx(original, 1024);
    assert.deepEqual(viaWorker.bytes, direct.bytes);
    assert.deepEqual([...viaWorker.removed], [...direct.removed]);
    assert.deepEqual(input, original, 'the input is not detached or changed');
    // A file as read (a Node Buffer, as Compare Layers reads the export): usable again after it was slimmed once,
    // as when a closed results view is shown again.
    const file = Buffer.from(original);
    await service.slim(file, { limitBytes: 1024 });
    assert.equal(file.byteLength, original.byteLength, 'the Buffer was detached');
    assert.deepEqual((await service.slim(file, { limitBytes: 1024 })).bytes, direct.bytes);
    // A malformed file through the worker: a MalformedOnnxError with the reader's message and byte, and the worker
    // goes on with the next file.
    const truncated = original.subarray(0, 1000);
    await assert.rejects(
      service.slim(truncated),
      (e: unknown) =>
        e instanceof MalformedOnnxError &&
        e.message === malformed(truncated).message &&
        e.offset === malformed(truncated).offset,
    );
    assert.deepEqual((await service.slim(original, { limitBytes: 1024 })).bytes, direct.bytes);
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
    assert.ok((await again.slim(original, { limitBytes: 1024 })).removed.size >= 2);
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
