// Folding of repeated blocks in the graph view (webview/graph/groups.ts) on real exported graphs: the kernel's FP32
// graph of a 4-layer Llama (transformers' LlamaForCausalLM from its config, examples/tinylm's build at width 32)
// and the cifar MobileNetV2's QDQ ONNX, whose blocks repeat op sequences without being a stack.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { LayerResult } from '../../protocol/kernel';
import {
  firstBlockOpen,
  foldKey,
  groupGraph,
  groupMetrics,
  inheritScopes,
  repeatedBlocks,
} from '../../webview/graph/groups';
import { openModel } from '../../webview/importers';
import { decodeAndLayout } from '../../webview/worker/pipeline';
import { repoRoot } from '../support/paths';

const fixture = (...p: string[]) => path.join(repoRoot, 'test', 'fixtures', ...p);
const LLAMA = fixture('tinylm', 'tinylm4.fp32.qatgraph.json');

function open(file: string) {
  const graph = openModel(new Uint8Array(readFileSync(file)), path.basename(file));
  inheritScopes(graph);
  return graph;
}

test('the four decoder layers of a Llama are one family of repeated blocks', () => {
  const folds = repeatedBlocks(open(LLAMA));
  assert.deepEqual(
    [...folds.keys()].sort(),
    [0, 1, 2, 3].map((i) => `model.layers.${i}`),
  );
  assert.ok([...folds.values()].every((base) => base === 'model.layers'));
});

test('a Llama opens with its first layer open and the other three folded into one box', () => {
  const graph = open(LLAMA);
  const expanded = firstBlockOpen(graph)!;
  assert.ok(expanded.includes('model.layers.0') && expanded.includes('model.layers.0.self_attn'), String(expanded));
  assert.ok(!expanded.some((s) => /^model\.layers\.[123]/.test(s)), String(expanded));
  const grouped = groupGraph(graph, new Set(expanded));
  const folds = grouped.nodes.filter((n) => n.folded);
  assert.equal(folds.length, 1);
  const [fold] = folds;
  assert.equal(fold.name, 'model.layers.1–3 ×3');
  assert.equal(fold.module, foldKey('model.layers'));
  assert.deepEqual(fold.folded, ['model.layers.1', 'model.layers.2', 'model.layers.3']);
  // the fold stands for three layers' nodes, the open layer shows its own: about a quarter of the blocks each
  const inLayer = (i: number) => graph.nodes.filter((n) => n.scopes?.includes(`model.layers.${i}`)).length;
  assert.equal(fold.size, inLayer(1) + inLayer(2) + inLayer(3));
  assert.equal(grouped.nodes.length, graph.nodes.length - fold.size! + 1);
  // the chain runs through it: the open layer feeds the fold, the fold feeds what comes after the layers
  assert.ok(grouped.edges.some((e) => e.to === fold.id) && grouped.edges.some((e) => e.from === fold.id));
  // the decoded view the worker lays out opens the same way
  const laid = decodeAndLayout('tinylm4', new Uint8Array(readFileSync(LLAMA)), {}, path.basename(LLAMA));
  assert.deepEqual(
    laid.graph.nodes.filter((n) => n.folded).map((n) => n.name),
    ['model.layers.1–3 ×3'],
  );
});

test('expanding the fold shows each folded layer as its own box; its worst layer colours the fold', () => {
  const graph = open(LLAMA);
  const expanded = new Set(firstBlockOpen(graph)!);
  const layers: LayerResult[] = ['model.layers.0.mlp.down_proj', 'model.layers.2.mlp.down_proj', 'lm_head'].map(
    (module, i) => ({
      module,
      op: 'linear',
      group: ['linear'],
      cosine: [0.999, 0.9, 0.95][i],
      sqnr: 20,
      mse: 0,
      maxAbs: 0,
    }),
  );
  const folded = groupGraph(graph, expanded);
  const fold = folded.nodes.find((n) => n.folded)!;
  const worst = groupMetrics(folded, layers).find((l) => l.module === fold.module)!;
  assert.equal(worst.cosine, 0.9);
  assert.deepEqual(worst.group, ['worst of 1: model.layers.2.mlp.down_proj']);
  expanded.add(foldKey('model.layers'));
  const unfolded = groupGraph(graph, expanded);
  assert.deepEqual(
    unfolded.nodes.filter((n) => n.kind === 'group').map((n) => n.name),
    ['model.layers.1', 'model.layers.2', 'model.layers.3'],
  );
  assert.ok(!unfolded.nodes.some((n) => n.folded));
});

test('a CNN whose blocks repeat op sequences is not folded: MobileNetV2 opens as before', () => {
  const file = fixture('cifar', 'mobilenetv2.qdq.onnx');
  const graph = open(file);
  assert.equal(repeatedBlocks(graph).size, 0);
  assert.equal(firstBlockOpen(graph), null);
});
