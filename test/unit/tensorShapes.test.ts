// Tensor shapes for the graph view's edges: the ONNX importer's reading of graph.input / output / value_info
// against the onnx package's own reading of the same files (the example's exported QDQ model, and a model the
// onnx helpers build with symbolic, unknown, zero and missing dims), and the kernel graph's shapes.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { onnxImporter } from '../../webview/importers/onnx';
import { dtypeName } from '../../webview/importers/onnxTensor';
import { qatGraphImporter } from '../../webview/importers/qatGraph';
import { dimsText } from '../../webview/importers/types';
import { edgeShapes, labelPlace, midpoint, shapeLabel } from '../../webview/view/shapes';
import { declaredByOnnx } from '../support/onnxDeclared';
import { repoRoot, venvPython } from '../support/paths';

const fixtures = path.join(repoRoot, 'test', 'fixtures', 'digits');

function assertSameAsOnnx(file: string): number {
  const graph = onnxImporter.open(readFileSync(file));
  const declared = declaredByOnnx(file);
  for (const [name, want] of Object.entries(declared)) {
    const got = graph.tensors.get(name);
    assert.ok(got, `${name}: no type kept`);
    assert.equal(got.dtype, dtypeName(want.elem), name);
    if (want.dims === null) {
      assert.equal(got.unranked, true, `${name}: unranked`);
      continue;
    }
    assert.deepEqual(
      got.dims,
      want.dims.map((d) => (typeof d === 'number' ? d : -1)),
      name,
    );
    assert.deepEqual(
      got.dimNames ?? want.dims.map(() => ''),
      want.dims.map((d) => (typeof d === 'string' ? d : '')),
      name,
    );
  }
  return Object.keys(declared).length;
}

test("the exported digits model's declared shapes read as the onnx package reads them", () => {
  const file = path.join(fixtures, 'digits.qdq.onnx');
  assert.ok(assertSameAsOnnx(file) >= 20, 'the fixture declares too few values to test');
  const graph = onnxImporter.open(readFileSync(file));
  assert.equal(dimsText(graph.tensors.get('x')!), 'batch×1×8×8');
  // Every edge out of a real op has its shape: the exporter declared every intermediate value.
  const shapes = edgeShapes(graph);
  const opEdges = graph.edges.filter((e) => graph.nodes.find((n) => n.id === e.from)?.kind !== 'input');
  for (const e of opEdges) assert.ok(shapes.has(`${e.from}>${e.to}`), `no shape on ${e.tensor}`);
});

test('symbolic, unknown, zero-sized, scalar and unranked dims, and non-tensor values, from the onnx helpers', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'shapes-'));
  const file = path.join(dir, 'dims.onnx');
  const script = `
import sys, onnx
from onnx import helper, TensorProto as T
x = helper.make_tensor_value_info('x', T.FLOAT, ['N', 3, None, 0])
y = helper.make_tensor_value_info('y', T.UINT8, None)
s = helper.make_tensor_value_info('s', T.INT64, [])
seq = helper.make_tensor_sequence_value_info('seq', T.FLOAT, [2])
mid = helper.make_tensor_value_info('mid', T.FLOAT16, ['N', 'seq_len'])
nodes = [helper.make_node('Identity', ['x'], ['mid']), helper.make_node('Cast', ['mid'], ['y'], to=T.UINT8),
         helper.make_node('Shape', ['x'], ['s0']), helper.make_node('ReduceMax', ['s0'], ['s'], keepdims=0),
         helper.make_node('SequenceConstruct', ['x'], ['seq'])]
g = helper.make_graph(nodes, 'dims', [x], [y, s, seq], value_info=[mid])
onnx.save(helper.make_model(g), sys.argv[1])
`;
  execFileSync(venvPython, ['-c', script, file]);
  assert.equal(assertSameAsOnnx(file), 4);
  const graph = onnxImporter.open(readFileSync(file));
  const t = (name: string) => graph.tensors.get(name);
  assert.deepEqual(t('x'), { dtype: 'float32', dims: [-1, 3, -1, 0], dimNames: ['N', '', '', ''] });
  assert.equal(dimsText(t('x')!), 'N×3×?×0');
  assert.equal(shapeLabel(t('x')), 'N×3×?×0');
  assert.equal(shapeLabel(t('mid')), 'float16 N×seq_len');
  assert.equal(shapeLabel(t('y')), 'uint8 ?');
  assert.equal(shapeLabel(t('s')), 'int64 scalar');
  // A sequence is not a tensor: no shape is made up for it, and a value nothing declares has none.
  assert.equal(t('seq'), undefined);
  assert.equal(t('s0'), undefined);
  assert.equal(shapeLabel(undefined), undefined);
});

test("the kernel's graph JSON carries a shape for every value an edge carries", () => {
  const graph = qatGraphImporter.open(readFileSync(path.join(fixtures, 'digits.converted.qatgraph.json')));
  const shapes = edgeShapes(graph);
  assert.ok(graph.edges.length > 10);
  for (const e of graph.edges) assert.ok(shapes.has(`${e.from}>${e.to}`), `no shape on ${e.tensor}`);
  const quantized = graph.edges.find((e) => graph.tensors.get(e.tensor)?.dtype === 'uint8');
  assert.ok(quantized, 'the converted graph has a uint8 value on an edge');
  assert.match(shapes.get(`${quantized.from}>${quantized.to}`)!.text, /^uint8 (\d+|\?)(×\d+)+$/);
});

test('a label sits halfway along its edge, by length', () => {
  assert.deepEqual(
    midpoint([
      { x: 0, y: 0 },
      { x: 0, y: 10 },
    ]),
    { x: 0, y: 5 },
  );
  assert.deepEqual(
    midpoint([
      { x: 0, y: 0 },
      { x: 0, y: 30 },
      { x: 10, y: 30 },
    ]),
    { x: 0, y: 20 },
  );
  assert.deepEqual(midpoint([{ x: 3, y: 4 }]), { x: 3, y: 4 });
});

test('labels of two edges into one node fall on either side of them', () => {
  const into = { x: 100, y: 100 };
  const fromLeft = labelPlace([{ x: 40, y: 60 }, into]);
  const fromRight = labelPlace([{ x: 160, y: 60 }, into]);
  assert.equal(fromLeft.anchor, 'end');
  assert.equal(fromRight.anchor, 'start');
  assert.ok(fromLeft.x < 70 && fromRight.x > 130);
  assert.equal(
    labelPlace([
      { x: 0, y: 0 },
      { x: 0, y: 10 },
    ]).anchor,
    'start',
  );
});
