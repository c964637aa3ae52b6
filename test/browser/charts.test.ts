// The properties panel's small charts in Debian Chromium: histograms with a labelled value and count axis, and
// the observer-drift chart with a labelled value axis whose range shows a small change as small.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { CompareLayersResult, HistogramsResult, QatTrainResult } from '../../protocol/kernel';
import { niceTicks, tickLabel } from '../../common/axes';
import { artifactsDir, repoRoot } from '../support/paths';
import { openWebview, postToWebview, useWebviewHarness } from '../support/webviewPage';

const fixtures = path.join(repoRoot, 'test', 'fixtures', 'digits');
const rpc = (name: string) =>
  JSON.parse(readFileSync(path.join(repoRoot, 'protocol', 'fixtures', 'rpc', name), 'utf8'));
const result = JSON.parse(readFileSync(path.join(fixtures, 'compare-layers.json'), 'utf8')) as CompareLayersResult;
const onnx = readFileSync(path.join(fixtures, 'digits.qdq.onnx'));

const harness = useWebviewHarness();

async function showLayer(extra: Record<string, unknown>, module: string) {
  const opened = await openWebview(harness.browser, harness.server.origin);
  const { page } = opened;
  await postToWebview(page, {
    type: 'showGraph',
    title: 'digits.qdq.onnx',
    onnx,
    layers: result.layers,
    threshold: result.threshold,
    ...extra,
  });
  await page.waitForSelector('svg g.node.layer', { timeout: 15_000, state: 'attached' });
  const node = page.locator(`svg g.node.layer[data-module="${module}"]`).first();
  await node.dispatchEvent('pointerdown', { clientX: 0, clientY: 0 });
  await node.dispatchEvent('pointerup', { clientX: 0, clientY: 0 });
  return opened;
}

test('a layer histogram has a value axis and a count axis, with round ticks and their labels', async () => {
  const histograms = rpc('HistogramsResult.json') as HistogramsResult;
  const { page, violations } = await showLayer({ histograms: histograms.layers }, 'conv1');
  const h = histograms.layers.find((l) => l.module === 'conv1')!.weight!;
  const svg = page.locator('#props section.layer-histogram', { has: page.locator('h3:text-is("Weight (QAT)")') });
  const chart = svg.locator('svg.histogram');
  await chart.waitFor({ timeout: 5_000 });
  const xs = await chart.locator('text.x-tick').allTextContents();
  const values = niceTicks(h.range[0], h.range[1], 4);
  assert.deepEqual(
    xs,
    values.ticks.map((v) => tickLabel(v, values.step)),
  );
  assert.ok(xs.length >= 3, `value ticks: ${xs}`);
  const ys = await chart.locator('text.y-tick').allTextContents();
  assert.equal(ys[0], '0');
  assert.ok(ys.length >= 2, `count ticks: ${ys}`);
  assert.ok(Number(ys.at(-1)!.replace(/k$/, '000')) <= Math.max(...h.counts), `count ticks: ${ys}`);
  // The bars are still one per bin, with their counts; the labels are not clipped out of the chart.
  assert.equal(await chart.locator('rect').count(), h.counts.length);
  const outside = await chart.evaluate((svg: SVGSVGElement) => {
    const view = svg.viewBox.baseVal;
    return [...svg.querySelectorAll('text')]
      .filter((t) => {
        const b = t.getBBox();
        return b.x < view.x - 0.5 || b.x + b.width > view.x + view.width + 0.5 || b.y < view.y - 0.5;
      })
      .map((t) => t.textContent);
  });
  assert.deepEqual(outside, [], 'labels cut off by the chart');
  await svg.screenshot({ path: path.join(artifactsDir, 'browser-histogram-axes.png') });
  assert.deepEqual(violations, []);
});

test('the drift chart labels its value axis and draws a 1.2 % change as a small one', async () => {
  const train = rpc('QatTrainResult.json') as QatTrainResult;
  const drift = structuredClone(train.drift!);
  const act = drift.layers.find((l) => l.module === 'conv2' && l.role === 'activation')!;
  // A scale that grows by 1.2 % over the run.
  act.scaleMean = drift.steps.map((_, i) => 0.05 * (1 + (0.012 * i) / (drift.steps.length - 1)));
  act.scaleMin = act.scaleMean;
  act.scaleMax = act.scaleMean;
  const { page, violations } = await showLayer({ drift }, 'conv2');
  const plot = page.locator('#props section.observer-drift svg.drift').first();
  await plot.waitFor({ timeout: 5_000 });
  const ys = (await plot.locator('polyline.line').getAttribute('points'))!
    .trim()
    .split(' ')
    .map((p) => Number(p.split(',')[1]));
  const drawn = (Math.max(...ys) - Math.min(...ys)) / 56;
  assert.ok(drawn < 0.2, `a 1.2 % change spans ${(drawn * 100).toFixed(0)} % of the plot's height`);
  // The first value is the no-change baseline the line starts on.
  const base = Number(await plot.locator('line.baseline').getAttribute('y1'));
  assert.ok(Math.abs(base - ys[0]) < 0.2, `baseline ${base}, first point ${ys[0]}`);
  const labels = await plot.locator('text.y-tick').allTextContents();
  assert.ok(labels.length >= 2, `value ticks: ${labels}`);
  const numbers = labels.map(Number);
  assert.ok(
    numbers.every((v) => v > 0.04 && v < 0.06),
    `value ticks: ${labels}`,
  );
  assert.deepEqual(
    [...numbers].sort((a, b) => a - b),
    numbers,
    'ticks from bottom to top are listed low to high',
  );
  await page
    .locator('#props section.observer-drift')
    .screenshot({ path: path.join(artifactsDir, 'browser-drift-axis.png') });
  assert.deepEqual(violations, []);
});
