// Find Where INT8 Diverges in the graph view, without the DOM: the level of a stage pair's error, which drawn node
// of the digits QDQ export carries which layer's lane (by ONNX node names, else module), the fused marks, the
// fill from the worst bisected pair, the first divergent node, a stage id the kernel adds later, and the
// canvas scene's lanes; on the kernel's compare/stages fixture over the real ONNX file it names.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { CompareStagesResult } from '../../protocol/kernel';
import type { StageResults } from '../../protocol/webview';
import { groupGraph } from '../../webview/graph/groups';
import { sceneOf } from '../../webview/graph/scene';
import {
  LEVEL_LOOK,
  LEVELS,
  errorLevel,
  figure,
  layerLevels,
  pairLabel,
  predecessors,
  severity,
  stageLanes,
  worstLevel,
} from '../../webview/graph/stageLanes';
import { pairVerdicts, stageAccuracies } from '../../webview/graph/stageVerdicts';
import type { Graph, GraphNode } from '../../webview/importers/types';
import { decodeAndLayout } from '../../webview/worker/pipeline';
import { repoRoot } from '../support/paths';

const fixture = JSON.parse(
  readFileSync(path.join(repoRoot, 'protocol', 'fixtures', 'rpc', 'CompareStagesResult.json'), 'utf8'),
) as CompareStagesResult;
const onnx = readFileSync(path.join(repoRoot, 'test', 'fixtures', 'digits', 'digits.qdq.onnx'));
const laidOut = (options: Parameters<typeof decodeAndLayout>[2] = { expanded: null }) =>
  decodeAndLayout('digits.qdq.onnx', onnx, options, 'digits.qdq.onnx');
const digits = laidOut().graph;
const node = (g: Graph, name: string): GraphNode => g.nodes.find((n) => n.name === name)!;
// The kernel's result is what the view gets (the command passes these fields on).
const clone = (): StageResults => structuredClone(fixture);
const T = { roundingSteps: 1.5, floatSqnrDb: 30 };

/** conv2 (layer 1) six output steps apart in ONNX Runtime: the kernel's first divergence of int8:ort. */
function diverging(): StageResults {
  const r = clone();
  r.layers[1].pairs['int8:ort'].localSteps = 6.2;
  r.divergence['int8:ort'] = {
    pair: 'int8:ort',
    index: 1,
    module: 'conv2',
    op: 'conv2d',
    localSteps: 6.2,
    localSqnr: 40,
    cause: 'no known cause matched',
  };
  return r;
}

test('a pair is judged in output steps against rounding, else by SQNR against the float floor', () => {
  const m = (sqnr: number) => ({ sqnr, cosine: 1, mse: 0, maxAbs: 0, normalizedL2: 0 });
  assert.equal(errorLevel(undefined, 0, T), undefined);
  assert.equal(errorLevel(m(80), 1.0, T), 'agrees');
  assert.equal(errorLevel(m(80), 1.5, T), 'agrees');
  assert.equal(errorLevel(m(80), 2.9, T), 'slight');
  assert.equal(errorLevel(m(80), 3.1, T), 'diverges');
  // No steps (a float output): the SQNR decides, whatever the steps would have said.
  assert.equal(errorLevel(m(58.7), undefined, T), 'agrees');
  assert.equal(errorLevel(m(25), undefined, T), 'slight');
  assert.equal(errorLevel(m(12), undefined, T), 'diverges');
  const fc2 = fixture.layers[3].pairs['int8:ort'];
  assert.equal(figure(fc2, 'local'), '137.9 dB');
  assert.equal(figure(fixture.layers[3].pairs['fakeQuant:int8'], 'local'), 'identical');
  assert.equal(figure(fixture.layers[0].pairs['fakeQuant:int8'], 'local'), '0.0 steps');
  assert.equal(figure(fixture.layers[1].pairs['int8:ort'], 'propagated'), '1.0 steps');
  assert.equal(figure(fixture.layers[0].pairs['fp32:fakeQuant'], 'local'), undefined);
  // Worse sorts higher: steps as they are, SQNR under the floor at about 6 dB a step, nothing measured lowest.
  assert.ok(severity({ local: m(10) }, 'local', T) > severity({ local: m(80), localSteps: 1 }, 'local', T));
  assert.equal(severity(undefined, 'local', T), -Infinity);
});

test("each stage's badge compares it with the stage before it that should agree; the others are references", () => {
  const r = clone();
  assert.deepEqual(
    [...predecessors(r)],
    [
      ['int8', 'fakeQuant:int8'],
      ['ort', 'int8:ort'],
      ['c', 'int8:c'],
      ['tvm', 'int8:tvm'],
    ],
  );
  assert.deepEqual(layerLevels(r, r.layers[0]), ['reference', 'reference', 'agrees', 'agrees', 'agrees', 'agrees']);
  assert.equal(worstLevel(r, r.layers[0]), 'agrees');
  const bad = diverging();
  assert.deepEqual(layerLevels(bad, bad.layers[1]), [
    'reference',
    'reference',
    'agrees',
    'diverges',
    'agrees',
    'agrees',
  ]);
  assert.equal(worstLevel(bad, bad.layers[1]), 'diverges');
  assert.equal(pairLabel(r, 'int8:ort'), 'PyTorch INT8 → ONNX Runtime');
});

test("the lane with the figures sits on the node that writes the layer's output; its other nodes mark runtimes fused", () => {
  const lanes = stageLanes(clone(), digits);
  // conv1's output is quantize_per_tensor_1, written by the Q that also starts conv2: it carries conv1.
  const out = lanes.laneOf(node(digits, 'node_quantize_per_tensor_1'))!;
  assert.equal(out.layer, 0);
  assert.equal(out.output, true);
  assert.deepEqual(out.levels, ['reference', 'reference', 'agrees', 'agrees', 'agrees', 'agrees']);
  // Inside conv1 (its Conv, the ReLU in module relu1, the input Q): ONNX Runtime, the C runner and TVM fused them away.
  for (const name of ['node_conv2d', 'node_relu', 'node_quantize_per_tensor', 'node_dequantize_per_tensor']) {
    const lane = lanes.laneOf(node(digits, name))!;
    assert.equal(lane.layer, 0, name);
    assert.equal(lane.output, false, name);
    assert.deepEqual(lane.levels, ['reference', 'reference', 'agrees', 'fused', 'fused', 'fused'], name);
  }
  // fc2 ends in a float Gemm: the Gemm writes the tapped tensor.
  assert.equal(lanes.laneOf(node(digits, 'node_linear_1'))!.output, true);
  assert.equal(lanes.laneOf(node(digits, 'node_linear_1'))!.layer, 3);
  // Not in any layer: the pool, the reshape, the weights' DQ, the graph's input.
  for (const name of ['node_max_pool2d', 'node_Reshape_35', 'node_dequantize_per_channel_2', 'x'])
    assert.equal(lanes.laneOf(node(digits, name)), undefined, name);
  // The node a layer's row selects: its own op, not a Q/DQ.
  assert.equal(lanes.nodeOf(0), node(digits, 'node_conv2d').id);
  assert.equal(lanes.nodeOf(2), node(digits, 'node_linear').id);
  assert.equal(lanes.first, undefined);
});

test('a node is filled by its layer worst bisected pair; Q/DQ keep theirs; the first divergence is marked', () => {
  const lanes = stageLanes(diverging(), digits);
  const red = LEVEL_LOOK.diverges.colour;
  assert.equal(lanes.fillOf(node(digits, 'node_conv2d_1')), red);
  assert.equal(lanes.fillOf(node(digits, 'node_relu_1')), red);
  assert.equal(lanes.fillOf(node(digits, 'node_quantize_per_tensor_2')), undefined);
  assert.equal(lanes.fillOf(node(digits, 'node_conv2d')), LEVEL_LOOK.agrees.colour);
  assert.equal(lanes.fillOf(node(digits, 'node_max_pool2d')), undefined);
  assert.deepEqual(lanes.firstAt(node(digits, 'node_conv2d_1')), ['int8:ort']);
  assert.equal(lanes.firstAt(node(digits, 'node_conv2d')), undefined);
  assert.equal(lanes.first?.module, 'conv2');
  assert.equal(lanes.nodeOf(lanes.first!.index), node(digits, 'node_conv2d_1').id);
  // The earliest in graph order is the one the view opens on, whichever pair found it.
  const two = diverging();
  two.divergence['fakeQuant:int8'] = { ...two.divergence['int8:ort'], pair: 'fakeQuant:int8', index: 2, module: 'fc1' };
  assert.equal(stageLanes(two, digits).first?.pair, 'int8:ort');
});

test('a stage the kernel adds later gets its badge from the result; a layer it lacks is grey', () => {
  const r = clone();
  r.stages.push({ id: 'npu', label: 'NPU' });
  r.pairs.push('int8:npu');
  r.bisected.push('int8:npu');
  for (const l of r.layers) {
    l.stages.npu = l.module !== 'fc2';
    if (l.module !== 'fc2') l.pairs['int8:npu'] = { ...l.pairs['int8:ort'], localSteps: 9 };
  }
  (r.accuracy as Record<string, number | null>).npu = 0.5;
  const lanes = stageLanes(r, digits);
  assert.deepEqual(lanes.laneOf(node(digits, 'node_quantize_per_tensor_1'))!.levels, [
    'reference',
    'reference',
    'agrees',
    'agrees',
    'agrees',
    'agrees',
    'diverges',
  ]);
  assert.equal(lanes.laneOf(node(digits, 'node_conv2d'))!.levels[6], 'fused');
  assert.equal(lanes.laneOf(node(digits, 'node_linear_1'))!.levels[6], 'absent');
  // Inside fc2 too: a stage without the layer is grey, not fused.
  assert.equal(lanes.laneOf(node(digits, 'node_dequantize_per_tensor_5'))!.levels[6], 'absent');
  assert.equal(lanes.laneOf(node(digits, 'node_dequantize_per_tensor_5'))!.levels[3], 'fused');
  assert.deepEqual(
    stageAccuracies(r).map((a) => a.text),
    ['97.04 %', '97.78 %', '97.78 %', '97.78 %', '97.78 %', '97.78 %', '50.00 %'],
  );
  assert.equal(pairVerdicts(r).length, 5);
});

test('with Q/DQ collapsed the last node of the layer still drawn carries its figures', () => {
  const collapsed = laidOut({ collapseQdq: true, expanded: null }).graph;
  const lanes = stageLanes(clone(), collapsed);
  assert.equal(
    collapsed.nodes.some((n) => n.name === 'node_quantize_per_tensor_1'),
    false,
  );
  const relu = lanes.laneOf(node(collapsed, 'node_relu'))!;
  assert.equal(relu.output, true);
  assert.equal(relu.layer, 0);
  assert.equal(lanes.laneOf(node(collapsed, 'node_conv2d'))!.output, false);
});

test('a layer without ONNX nodes maps to its module; a collapsed module group takes its worst layer', () => {
  const r = diverging();
  delete r.layers[2].onnx;
  const lanes = stageLanes(r, digits);
  const gemm = lanes.laneOf(node(digits, 'node_linear'))!;
  assert.equal(gemm.layer, 2);
  assert.equal(gemm.output, true);
  assert.equal(lanes.nodeOf(2), node(digits, 'node_linear').id);
  const grouped = groupGraph(digits, new Set());
  const groups = stageLanes(r, grouped);
  const conv2 = grouped.nodes.find((n) => n.kind === 'group' && n.module === 'conv2')!;
  assert.equal(groups.fillOf(conv2), LEVEL_LOOK.diverges.colour);
  assert.equal(groups.nodeOf(1), conv2.id);
  assert.deepEqual(groups.firstAt(conv2), ['int8:ort']);
});

test("the canvas scene carries each drawn node's lane and the first divergence", () => {
  const { graph, layout } = laidOut({ renderer: 'canvas', expanded: null });
  const lanes = stageLanes(diverging(), graph);
  const scene = sceneOf(graph, layout, [], 0, undefined, lanes);
  const at = (name: string) => scene.node.indexOf(graph.nodes.findIndex((n) => n.name === name));
  const s = scene.lanes!;
  assert.equal(s.stages, 6);
  const levels = (name: string) => {
    const j = at(name);
    return s.at[j] < 0 ? undefined : [...s.levels.subarray(s.at[j], s.at[j] + s.stages)].map((k) => LEVELS[k]);
  };
  assert.deepEqual(levels('node_quantize_per_tensor_2'), [
    'reference',
    'reference',
    'agrees',
    'diverges',
    'agrees',
    'agrees',
  ]);
  assert.deepEqual(levels('node_conv2d_1'), ['reference', 'reference', 'agrees', 'fused', 'fused', 'fused']);
  assert.equal(levels('node_max_pool2d'), undefined);
  assert.equal(s.first[at('node_conv2d_1')], 1);
  assert.equal(s.first[at('node_conv2d')], 0);
  assert.equal(scene.fills[scene.fill[at('node_conv2d_1')]], LEVEL_LOOK.diverges.colour);
  // Coloured: the ops of the four layers (conv, ReLU, conv, ReLU, Gemm, ReLU, Gemm).
  assert.equal(scene.stats.coloured, 7);
});
