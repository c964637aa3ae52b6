// Side-by-side graphs of one model: which views belong together and in which order, the relay of a selection
// between them, and the counterparts a selection finds in the FP32, fake-quant, INT8 and ONNX graphs of the digits
// model and in what ONNX Runtime and TVM run (fused kernels that cover several modules).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { SelectionSync, stageFiles, stageOf, syncKey, type SyncPeer } from '../../client/editors/graphSync';
import type { ToWebview } from '../../protocol/webview';
import type { Graph } from '../../webview/importers/types';
import { groupGraph } from '../../webview/graph/groups';
import { counterpart, counterparts, selectedOf } from '../../webview/view/sync';
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
  ort: load('digits.ort.onnx'),
  tvm: load('digits.tvm.qatgraph.json'),
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

test('the panes open in stage order: FP32, fake-quant, INT8, then what ONNX Runtime and TVM run', () => {
  const names = [
    'digits.tvm.qatgraph.json',
    'digits.ort.onnx',
    'digits.qdq.onnx',
    'digits.qdq.replaced.onnx',
    'digits.converted.qatgraph.json',
    'digits.zz.qatgraph.json',
    'digits.fp32.qatgraph.json',
    'digits.prepared.qatgraph.json',
    'other.ort.onnx',
    'digits.ort.onnx.tmp',
  ];
  const order = [
    'digits.fp32.qatgraph.json',
    'digits.prepared.qatgraph.json',
    'digits.converted.qatgraph.json',
    'digits.ort.onnx',
    'digits.tvm.qatgraph.json',
    'digits.zz.qatgraph.json',
  ];
  // Whichever of them the command starts from.
  for (const from of ['digits.tvm.qatgraph.json', 'digits.ort.onnx', 'digits.fp32.qatgraph.json'])
    assert.deepEqual(stageFiles(names, from), order);
  assert.equal(stageOf('digits.ort.onnx'), 'ort');
  assert.equal(stageOf('digits.tvm.qatgraph.json'), 'tvm');
  assert.equal(stageOf('digits.qdq.onnx'), undefined);
  assert.equal(stageOf('digits.qat.yaml'), undefined);
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
  // A fused kernel's modules go along.
  sync.relay(c, {
    type: 'selected',
    name: 'fused_conv2d',
    op: 'nn.conv2d',
    module: 'conv1',
    modules: ['conv1', 'relu1'],
  });
  assert.deepEqual(got.get('a')?.at(-1), {
    type: 'selectCounterpart',
    name: 'fused_conv2d',
    op: 'nn.conv2d',
    module: 'conv1',
    modules: ['conv1', 'relu1'],
  });
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

test('a fused kernel selects the node of every module it covers, and each of those nodes selects the kernel', () => {
  const names = (g: Graph, ids: string[]) => ids.map((id) => nameOf(g, id));
  // TVM: conv1, its ReLU and the Q/DQ around them are one int8 kernel; ONNX Runtime: one QLinearConv.
  const kernel = graphs.tvm.nodes.find((n) => n.modules?.[0] === 'conv1')!;
  assert.equal(kernel.precision, 'int8');
  assert.deepEqual(kernel.modules, ['conv1', 'relu1']);
  const qconv = graphs.ort.nodes.find((n) => n.op === 'QLinearConv' && n.module === 'conv1')!;
  assert.deepEqual(qconv.modules, ['conv1', 'relu1']);
  assert.equal(qconv.precision, 'int8', 'as ONNX Runtime runs it');
  assert.match(qconv.attributes?.['onnx nodes'] ?? '', /node_conv2d, .*node_relu/);
  for (const fused of [kernel, qconv]) {
    const sel = selectedOf(fused);
    assert.deepEqual(sel.modules, ['conv1', 'relu1']);
    // The conv first (it is shown), its ReLU with it.
    assert.deepEqual(names(graphs.fp32, counterparts(graphs.fp32, sel)), ['conv2d', 'relu']);
    assert.deepEqual(names(graphs.int8, counterparts(graphs.int8, sel)), ['conv2d_4', 'relu']);
    assert.deepEqual(
      counterparts(graphs.onnx, sel).map((id) => graphs.onnx.nodes.find((n) => n.id === id)?.op),
      ['Conv', 'Relu'],
    );
  }
  // Across the runtimes: one kernel for one kernel.
  assert.deepEqual(counterparts(graphs.ort, selectedOf(kernel)), [qconv.id]);
  assert.deepEqual(counterparts(graphs.tvm, selectedOf(qconv)), [kernel.id]);
  // The reverse: conv1's conv and relu1's ReLU each select the kernel that covers them.
  for (const name of ['conv2d', 'relu']) {
    const sel = selectedOf(byName(graphs.fp32, name));
    assert.deepEqual(counterparts(graphs.tvm, sel), [kernel.id], name);
    assert.deepEqual(counterparts(graphs.ort, sel), [qconv.id], name);
  }
  // fc2 stays a float Gemm in ONNX Runtime and a kernel of its own in TVM.
  const fc2 = selectedOf(byName(graphs.int8, 'linear_1'));
  assert.equal(graphs.ort.nodes.find((n) => n.id === counterpart(graphs.ort, fc2))?.op, 'Gemm');
  assert.deepEqual(graphs.tvm.nodes.find((n) => n.id === counterpart(graphs.tvm, fc2))?.modules, ['fc2']);
  // A node of no module (the input quantize) finds nothing by module.
  const quantize = graphs.tvm.nodes.find((n) => n.inputs.includes('x'))!;
  assert.equal(quantize.module, undefined);
  assert.deepEqual(counterparts(graphs.fp32, selectedOf(quantize)), []);
});
