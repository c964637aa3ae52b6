// How the graph view draws a model of a few hundred nodes, decided without a browser: a collapsed group coloured by
// its worst layer, edge labels kept off node boxes, frame labels and each other, and Fit showing the whole graph.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { CompareLayersResult, LayerResult } from '../../protocol/kernel';
import { groupGraph, groupMetrics } from '../../webview/graph/groups';
import { Occupancy, placeLabels } from '../../webview/view/labelPlace';
import { fitView } from '../../webview/graph/layout';
import { bandOf } from '../../common/bands';
import { layerShown } from '../../webview/graph/metrics';
import { nodeFill, subLabel } from '../../webview/graph/nodeLook';
import { decodeAndLayout } from '../../webview/worker/pipeline';
import { repoRoot } from '../support/paths';

const fixtures = path.join(repoRoot, 'test', 'fixtures', 'digits');
const digits = JSON.parse(readFileSync(path.join(fixtures, 'compare-layers.json'), 'utf8')) as CompareLayersResult;

test('a collapsed group takes the colour of the worst compared layer inside it', () => {
  const graph = decodeAndLayout('digits', readFileSync(path.join(fixtures, 'digits.qdq.onnx')), {
    expanded: null,
  }).graph;
  const layers: LayerResult[] = digits.layers;
  const grouped = groupGraph(graph, new Set());
  const byModule = new Map([...layers, ...groupMetrics(grouped, layers)].map((l) => [l.module, l]));
  const conv2 = grouped.nodes.find((n) => n.kind === 'group' && n.module === 'conv2')!;
  assert.ok(conv2, grouped.nodes.map((n) => n.id).join(' '));
  const shown = layerShown(conv2, byModule);
  const want = layers.find((l) => l.module === 'conv2')!;
  assert.equal(shown?.cosine, want.cosine);
  assert.equal(nodeFill(conv2, shown, digits.threshold), bandOf(want.cosine, digits.threshold).colour);
  assert.equal(subLabel(conv2, shown, 200), `lowest cos ${want.cosine.toFixed(4)}`);
  // Q/DQ and graph inputs show no layer.
  const dq = graph.nodes.find((n) => n.op === 'DequantizeLinear' && n.module === 'conv2');
  if (dq) assert.equal(layerShown(dq, byModule), undefined);
});

test('edge labels keep off node boxes, frame labels and each other', () => {
  const taken = new Occupancy();
  const node = { x0: 0, y0: 0, x1: 100, y1: 30 };
  const frameLabel = { x0: 40, y0: 40, x1: 160, y1: 50 };
  taken.add(node);
  taken.add(frameLabel);
  // Two vertical edges close together, from under the node through the frame label's row.
  const edge = (x: number) => ({
    points: [
      { x, y: 30 },
      { x, y: 70 },
    ],
    width: 60,
    height: 13,
  });
  const [a, b] = placeLabels([edge(30), edge(34)], taken);
  const overlaps = (p: typeof a, q: typeof a) =>
    Math.min(p.x1, q.x1) > Math.max(p.x0, q.x0) && Math.min(p.y1, q.y1) > Math.max(p.y0, q.y0);
  for (const r of [a, b]) {
    assert.ok(!overlaps(r, node), `on the node: ${JSON.stringify(r)}`);
    assert.ok(!overlaps(r, frameLabel), `on the frame label: ${JSON.stringify(r)}`);
  }
  assert.ok(!overlaps(a, b), 'two labels on each other');
});

test('Fit shows the whole of a tall graph, both dimensions; the opening view stays readable', () => {
  const viewport = { width: 1000, height: 600 };
  const tall = { width: 400, height: 6000 };
  const whole = fitView(viewport, tall, true);
  assert.ok(whole.h >= tall.height && whole.w >= tall.width, JSON.stringify(whole));
  assert.ok(whole.y <= 0 && whole.y + whole.h >= tall.height);
  const opening = fitView(viewport, tall);
  assert.ok(opening.scale >= 0.75, `opens at ${opening.scale}`);
  assert.equal(opening.y, 0, 'opens at the top');
});
