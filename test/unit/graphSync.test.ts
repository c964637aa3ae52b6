// Side-by-side graphs of one model: which views belong together, the relay of a selection between them, and the
// counterpart a selection finds in the FP32, fake-quant, INT8 and ONNX graphs of the digits model.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { SelectionSync, stageFiles, syncKey, type SyncPeer } from '../../client/editors/graphSync';
import type { ToWebview } from '../../protocol/webview';
import type { Graph } from '../../webview/importers/types';
import { groupGraph } from '../../webview/graph/groups';
import { counterpart, selectedOf } from '../../webview/view/sync';
import { decodeAndLayout } from '../../webview/worker/pipeline';
import { repoRoot } from '../support/paths';

const dir = path.join(repoRoot, 'test', 'fixtures', 'digits');
const load = (file: string): Graph =>
  decodeAndLayout(file, readFileSync(path.join(dir, file)), { expanded: null }, file).graph;
const graphs = {
  fp32: load('digits.fp32.qatgraph.json'),
  prepared: load('digits.prepared.qatgraph.json'),
  int8: load('digits.converted.qatgraph.json'),
  onnx: load('digits.qdq.onnx'),
};
const byName = (g: Graph, name: string) => g.nodes.find((n) => n.name === name)!;
const nameOf = (g: Graph, id: string | undefined) => g.nodes.find((n) => n.id === id)?.name;

test('files of one model share a key: same folder, same name up to the first dot', () => {
  assert.equal(syncKey('/w/out/digits.fp32.qatgraph.json'), '/w/out/digits');
  assert.equal(syncKey('file:///w/out/digits.qdq.onnx'), 'file:///w/out/digits');
  assert.equal(syncKey('C:\\w\\out\\digits.converted.qatgraph.json'), 'C:\\w\\out\\digits');
  assert.notEqual(syncKey('/w/a/digits.fp32.qatgraph.json'), syncKey('/w/b/digits.fp32.qatgraph.json'));
  assert.deepEqual(
    stageFiles(
      [
        'digits.converted.qatgraph.json',
        'digits.qat.yaml',
        'digits.fp32.qatgraph.json',
        'other.fp32.qatgraph.json',
        'digits.prepared.qatgraph.json',
        'digits.qdq.onnx',
      ],
      'digits.converted.qatgraph.json',
    ),
    ['digits.fp32.qatgraph.json', 'digits.prepared.qatgraph.json', 'digits.converted.qatgraph.json'],
  );
});

test('a selection goes to the other views of the same model only, never back, and not after a view closes', () => {
  const sync = new SelectionSync();
  const got = new Map<string, ToWebview[]>();
  const peer = (name: string): SyncPeer => ({
    post: (m) => {
      (got.get(name) ?? got.set(name, []).get(name)!).push(m);
    },
  });
  const [a, b, c, other] = [peer('a'), peer('b'), peer('c'), peer('other')];
  sync.join(a, '/w/out/digits');
  const leaving = sync.join(b, '/w/out/digits');
  sync.join(c, '/w/out/digits');
  sync.join(other, '/w/out/resnet');
  assert.equal(sync.relay(a, { type: 'selected', name: 'conv2d', op: 'conv2d', module: 'conv1' }), 2);
  assert.deepEqual(got.get('b'), [{ type: 'selectCounterpart', name: 'conv2d', op: 'conv2d', module: 'conv1' }]);
  assert.deepEqual(got.get('c'), got.get('b'));
  assert.equal(got.get('a'), undefined);
  assert.equal(got.get('other'), undefined);
  leaving.dispose();
  assert.equal(sync.relay(a, { type: 'selected', name: 'x', op: 'Input' }), 1);
  assert.equal(got.get('b')!.length, 1);
  assert.equal(sync.relay(peer('stranger'), { type: 'selected', name: 'x', op: 'Input' }), 0);
});

test('counterparts across FP32, fake-quant, INT8 and the QDQ ONNX: by name, else by module', () => {
  // conv1's conv: conv2d (FP32), conv2d_2 (prepared: QAT rewrites conv+BN), conv2d_4 (INT8), Conv (ONNX).
  const conv = selectedOf(byName(graphs.int8, 'conv2d_4'));
  assert.deepEqual(conv, { name: 'conv2d_4', op: 'conv2d', module: 'conv1' });
  assert.equal(nameOf(graphs.fp32, counterpart(graphs.fp32, conv)), 'conv2d');
  assert.equal(nameOf(graphs.prepared, counterpart(graphs.prepared, conv)), 'conv2d_2');
  assert.equal(graphs.onnx.nodes.find((n) => n.id === counterpart(graphs.onnx, conv))?.op, 'Conv');
  // Same name and op: flatten is flatten everywhere.
  const flatten = selectedOf(byName(graphs.fp32, 'flatten'));
  assert.equal(nameOf(graphs.int8, counterpart(graphs.int8, flatten)), 'flatten');
  // A Q/DQ node has no module of its own; it stands in the module it was drawn in (the conv it feeds).
  const dq = selectedOf(byName(graphs.int8, 'dequantize_per_channel_1'));
  assert.equal(dq.module, 'conv2');
  assert.equal(nameOf(graphs.fp32, counterpart(graphs.fp32, dq)), 'conv2d_1');
  // bn1 exists in FP32 only (folded into conv1 later): nothing in INT8 stands for it.
  assert.equal(counterpart(graphs.int8, selectedOf(byName(graphs.fp32, 'batch_norm'))), undefined);
  // In a collapsed view, the group that holds the module.
  const grouped = groupGraph(graphs.fp32, new Set(['relu1', 'conv2']));
  assert.equal(counterpart(grouped, conv), 'group:conv1');
});
