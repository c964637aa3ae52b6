// One bad tensor in a user's .onnx (negative or overflowing dims, data that does not match its dims) is marked on
// that tensor, with no values; the rest of the model opens as it would without it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { onnx } from '../../build/generated/onnx-pb.js';
import { decodeOnnxGraph } from '../../webview/importers/onnxWire';
import { attachStats, elementCount, readTensor } from '../../webview/importers/onnxTensor';
import { field, floats, tensorProto, withGraphFields } from '../support/onnxShapes';
import { repoRoot } from './helpers/builder';

const digits = new Uint8Array(readFileSync(path.join(repoRoot, 'test', 'fixtures', 'digits', 'digits.qdq.onnx')));

test('an initializer with dims [-1, 4] is marked, not a "Invalid typed array length" for the whole model', () => {
  const plain = decodeOnnxGraph(digits);
  const graph = decodeOnnxGraph(
    withGraphFields(digits, [
      field(5, tensorProto('negative_dims', [-1, 4], floats(4))),
      field(5, tensorProto('short_data', [2, 4], floats(3))),
      field(5, tensorProto('long_data', [2], floats(3))),
      field(5, tensorProto('overflowing_dims', [2 ** 40, 2 ** 40], floats(1))),
      field(5, tensorProto('fine', [4], floats(4))),
    ]),
  );
  assert.equal(graph.nodes.length, plain.nodes.length);
  assert.equal(graph.edges.length, plain.edges.length);
  const problem = (name: string) => {
    const t = graph.tensors.get(name)!;
    assert.equal(t.values, undefined, `${name} has no values`);
    return t.problem;
  };
  assert.equal(problem('negative_dims'), 'its dims [-1, 4] hold -1, not a size');
  assert.equal(problem('short_data'), 'its raw_data holds 12 bytes; dims [2, 4] of float32 take 32');
  assert.equal(problem('long_data'), 'its raw_data holds 12 bytes; dims [2] of float32 take 8');
  assert.equal(
    problem('overflowing_dims'),
    'its dims [1099511627776, 1099511627776] make more elements than can be counted',
  );
  const fine = graph.tensors.get('fine')!;
  assert.deepEqual(Array.from(fine.values!), [0, 1, 2, 3]);
  assert.equal(fine.problem, undefined);
  // The model's own tensors are as they were.
  for (const [name, t] of plain.tensors) assert.deepEqual(graph.tensors.get(name), t, name);
});

test('a bad scale marks that scale; its DequantizeLinear and every other node still open', () => {
  const model = onnx.ModelProto.decode(digits);
  const dq = model.graph!.node!.find((n) => n.op_type === 'DequantizeLinear')!;
  const scale = dq.input![1];
  // A later initializer of the same name wins, as in a full decode.
  const graph = decodeOnnxGraph(withGraphFields(digits, [field(5, tensorProto(scale, [-3], floats(3)))]));
  assert.equal(graph.tensors.get(scale)!.problem, 'its dims [-3] hold -3, not a size');
  assert.ok(graph.nodes.some((n) => n.op === 'DequantizeLinear' && n.inputs[1] === scale));
  assert.equal(graph.nodes.length, decodeOnnxGraph(digits).nodes.length);
});

test('typed data (float_data, int64_data) of another length than the dims make is marked too', () => {
  assert.equal(
    readTensor({ dims: [], data_type: 1, float_data: [1, 2, 3] }).problem,
    'it holds 3 values; its dims [] make 1',
  );
  assert.equal(
    readTensor({ dims: [2], data_type: 7, int64_data: [5] }).problem,
    'it holds 1 values; its dims [2] make 2',
  );
  const ok = readTensor({ dims: [3], data_type: 1, float_data: [1, 2, 3] });
  assert.deepEqual([ok.values, ok.problem], [[1, 2, 3], undefined]);
  // Types whose typed fields pack several elements per entry (int4: two per int32) are not held to one per entry.
  assert.equal(readTensor({ dims: [4], data_type: 22, int32_data: [1, 2] }).problem, undefined);
});

test('elementCount: sizes of any rank, and what is wrong with dims that are not sizes', () => {
  assert.equal(elementCount([]), 1);
  assert.equal(elementCount([2, 3, 4]), 24);
  assert.equal(elementCount([0, 2 ** 40]), 0);
  assert.match(String(elementCount([2, -1])), /hold -1, not a size/);
  assert.match(String(elementCount([2 ** 30, 2 ** 30, 2 ** 30])), /more elements than can be counted/);
  assert.match(String(elementCount([2 ** 60])), /more elements than can be counted/);
  assert.match(String(elementCount([0, -2])), /hold -2, not a size/);
});

test("the host's summary of a cut tensor marks it when its count is not what the dims make", () => {
  const info = readTensor({ dims: [10, 10], data_type: 1 });
  attachStats(info, { bytes: 102_400, count: 25_600 });
  assert.equal(info.problem, 'it holds 25600 values; its dims [10, 10] make 100');
  const right = readTensor({ dims: [10, 10], data_type: 1 });
  attachStats(right, { bytes: 400, count: 100 });
  assert.deepEqual([right.problem, right.stats], [undefined, { bytes: 400, count: 100 }]);
  // A tensor marked already keeps its first problem.
  const negative = readTensor({ dims: [-1, 4], data_type: 1 });
  attachStats(negative, { bytes: 64, count: 16 });
  assert.equal(negative.problem, 'its dims [-1, 4] hold -1, not a size');
});
