// The view's decode + layout on hostile shapes: a row of 200k nodes, a digits export with its nodes duplicated, and
// a model over the node limit. Each returns a layout or fails with a LimitError saying why.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { Graph } from '../../webview/importers/types';
import { fastLayout } from '../../webview/graph/fastLayout';
import { LimitError, decodeAndLayout } from '../../webview/worker/pipeline';
import { duplicatedNodes } from '../support/onnxShapes';
import { repoRoot } from '../support/paths';

const digits = new Uint8Array(readFileSync(path.join(repoRoot, 'test', 'fixtures', 'digits', 'digits.qdq.onnx')));

test('a node fed by 200k inputs (one rank of 200k nodes) is laid out, not a RangeError', () => {
  const width = 200_000;
  const nodes: Graph['nodes'] = Array.from({ length: width }, (_, i) => ({
    id: `in${i}`,
    name: `in${i}`,
    op: 'Input',
    inputs: [],
    outputs: [`t${i}`],
    kind: 'input' as const,
  }));
  nodes.push({ id: 'sum', name: 'sum', op: 'Sum', inputs: nodes.map((n) => n.outputs[0]), outputs: [], kind: 'op' });
  const edges = nodes.slice(0, width).map((n) => ({ from: n.id, to: 'sum', tensor: n.outputs[0] }));
  const layout = fastLayout({ name: 'wide', nodes, edges, opsets: {}, tensors: new Map() });
  assert.equal(layout.nodes.size, width + 1);
  assert.ok(layout.nodes.get('sum')!.y > layout.nodes.get('in0')!.y, 'the sum sits below its inputs');
});

test('a cycle through a node with 200k predecessors is laid out (invalid ONNX still opens)', () => {
  const width = 200_000;
  const nodes: Graph['nodes'] = [];
  const edges: Graph['edges'] = [];
  for (let i = 0; i < width; i++) {
    nodes.push({ id: `a${i}`, name: `a${i}`, op: 'Relu', inputs: ['loop'], outputs: [`t${i}`], kind: 'op' });
    edges.push({ from: 'hub', to: `a${i}`, tensor: 'loop' }, { from: `a${i}`, to: 'hub', tensor: `t${i}` });
  }
  nodes.push({ id: 'hub', name: 'hub', op: 'Sum', inputs: [], outputs: ['loop'], kind: 'op' });
  const layout = fastLayout({ name: 'cycle', nodes, edges, opsets: {}, tensors: new Map() });
  assert.equal(layout.nodes.size, width + 1);
});

test('the digits export with its nodes duplicated to 20k opens flat and grouped', () => {
  const bytes = duplicatedNodes(digits, 20_000);
  const flat = decodeAndLayout('dup-flat', bytes, { expanded: null }, 'dup.onnx');
  assert.ok(flat.total >= 20_000);
  assert.equal(flat.layout.nodes.size, flat.graph.nodes.length);
  const grouped = decodeAndLayout('dup-grouped', bytes, {}, 'dup.onnx');
  assert.ok(grouped.graph.nodes.length < grouped.total, 'large models open as module groups');
  assert.equal(grouped.layout.nodes.size, grouped.graph.nodes.length);
});

test('a model over the node limit is refused with the count and the limit, before any layout', () => {
  const bytes = duplicatedNodes(digits, 5_000);
  assert.throws(
    () => decodeAndLayout('over', bytes, { maxNodes: 1_000 }, 'dup.onnx'),
    (e: Error) => e instanceof LimitError && /has [\d,]+ nodes; the view shows up to 1,000/.test(e.message),
  );
});

test('model-sized graphs get the layered layout: every edge points down', () => {
  const { layout, graph } = decodeAndLayout('digits', digits, {}, 'digits.qdq.onnx');
  assert.ok(graph.nodes.length > 10);
  for (const e of layout.edges)
    assert.ok(layout.nodes.get(e.to)!.y > layout.nodes.get(e.from)!.y, `${e.from} -> ${e.to}`);
});
