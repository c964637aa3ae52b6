// The graph view's readability at 1400×900, in Debian Chromium: a collapsed module coloured by its worst layer,
// executed-op counts that do not change when a group collapses (the digits example); on cifar's MobileNetV2 QDQ
// export (about 300 nodes), an opening view that reads, a Fit that shows the whole graph, edge labels clear of
// frame labels, nodes and each other, Collapse Q/DQ keeping the zoom, and a collapsed block coloured by its worst
// layer.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import type { CompareLayersResult } from '../../protocol/kernel';
import type { ExecutedOverlay } from '../../protocol/webview';
import { bandOf } from '../../common/bands';
import { READABLE_SCALE } from '../../webview/graph/layout';
import { artifactsDir, repoRoot } from '../support/paths';
import {
  digitsResults,
  openDigitsResults,
  openWebview,
  postToWebview,
  useWebviewHarness,
  waitForSent,
} from '../support/webviewPage';

const { result } = digitsResults;
const harness = useWebviewHarness();
const open = (msg: Parameters<typeof openDigitsResults>[1] = {}, viewport?: { width: number; height: number }) =>
  openDigitsResults(harness, msg, viewport);

test('a collapsed module takes its worst layer’s colour; executed-op counts stay those of the model', async () => {
  // Every compute op ran in int8 (an ONNX Runtime build's report of this file, as the extension reads it).
  const overlay: ExecutedOverlay = {
    runtime: 'ONNX Runtime 1.32.0 (CPUExecutionProvider)',
    ops: Object.fromEntries(
      ['node_conv2d', 'node_conv2d_1', 'node_linear', 'node_linear_1'].map((n) => [
        n,
        { precision: 'int8', role: 'compute' },
      ]),
    ),
  };
  const { page, violations } = await open({ executed: overlay });
  const summary = () => page.locator('#summary').textContent();
  await page.waitForFunction(() => /compute ops as executed/.test(document.getElementById('summary')!.textContent!));
  assert.match(
    (await summary()) ?? '',
    /compute ops as executed by ONNX Runtime 1\.32\.0 \(CPUExecutionProvider\): 4 int8/,
  );
  // Collapse conv2's frame: its group is coloured like conv2, the only layer inside it.
  await page.evaluate(() => {
    (window as unknown as { __sent: unknown[] }).__sent = [];
  });
  await page.locator('svg g.frame[data-module="conv2"] .frame-label').dispatchEvent('pointerdown');
  await page.locator('svg g.frame[data-module="conv2"] .frame-label').dispatchEvent('pointerup');
  await waitForSent(page, 'rendered', 15_000);
  const group = page.locator('svg g.node.group[data-module="conv2"]');
  await group.waitFor({ state: 'attached' });
  const conv2 = result.layers.find((l) => l.module === 'conv2')!;
  assert.equal(
    await group.locator('rect').evaluate((r) => (r as SVGRectElement).style.fill),
    bandOf(conv2.cosine, result.threshold).colour,
  );
  assert.equal(await group.getAttribute('data-cosine'), conv2.cosine.toFixed(5));
  assert.match((await group.textContent()) ?? '', new RegExp(`lowest cos ${conv2.cosine.toFixed(4)}`));
  // The counts are the model's, not what is drawn (conv2's Conv is inside the group now).
  assert.match((await summary()) ?? '', /: 4 int8/);
  assert.deepEqual(violations, []);
  await page.close();
});

/** examples/cifar's MobileNetV2 as exported by Compare Layers (264 ONNX nodes; 4-bit per-tensor weights, so many
 * layers far under the threshold), with its compare/layers result. */
const cifarDir = path.join(repoRoot, 'test', 'fixtures', 'cifar');
const cifar = JSON.parse(readFileSync(path.join(cifarDir, 'compare-layers.json'), 'utf8')) as CompareLayersResult;
const cifarOnnx = readFileSync(path.join(cifarDir, 'mobilenetv2.qdq.onnx'));

async function openCifar() {
  const opened = await openWebview(harness.browser, harness.server.origin, { width: 1400, height: 900 });
  await postToWebview(opened.page, {
    type: 'showGraph',
    title: 'Layers: mobilenetv2.qat.yaml',
    onnx: cifarOnnx,
    layers: cifar.layers,
    threshold: cifar.threshold,
    accuracy: cifar.accuracy,
  });
  await waitForSent(opened.page, 'rendered', 30_000);
  await opened.page.waitForSelector('#layers vscode-table-row[data-module]', { timeout: 15_000 });
  return opened;
}

/** Pairs of drawn labels that overlap each other or a node box, by their boxes on screen. */
const collisions = (page: Page) =>
  page.evaluate(() => {
    const boxes = (sel: string) =>
      [...document.querySelectorAll(sel)]
        .filter((e) => getComputedStyle(e).display !== 'none' && !e.closest('[display="none"]'))
        .map((e) => ({ text: e.textContent ?? '', r: e.getBoundingClientRect() }));
    const labels = boxes('svg text.edge-shape, svg text.edge-label, svg text.frame-label');
    const nodes = boxes('svg g.node > rect');
    const hit = (a: DOMRect, b: DOMRect) =>
      Math.max(0, Math.min(a.right, b.right) - Math.max(a.left, b.left)) *
        Math.max(0, Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top)) >
      2;
    const out: string[] = [];
    labels.forEach((a, i) => {
      for (const b of labels.slice(i + 1)) if (hit(a.r, b.r)) out.push(`${a.text} / ${b.text}`);
      for (const n of nodes) if (hit(a.r, n.r)) out.push(`${a.text} on a node`);
    });
    return { count: labels.length, out };
  });

/** CSS pixels per graph unit of the SVG view. */
const scaleOf = (page: Page) =>
  page.evaluate(() => {
    const svg = document.querySelector('#canvas svg')!;
    const [, , w, h] = svg.getAttribute('viewBox')!.split(' ').map(Number);
    const r = svg.getBoundingClientRect();
    return Math.min(r.width / w, r.height / h);
  });

test('MobileNetV2: readable when it opens, Fit shows all of it, labels clear of frames, nodes and each other', async () => {
  const { page, violations } = await openCifar();
  assert.ok((await scaleOf(page)) >= READABLE_SCALE, 'opens zoomed out past readable');
  const opened = await collisions(page);
  assert.ok(opened.count > 200, `only ${opened.count} labels drawn`);
  assert.deepEqual(opened.out, [], 'labels overlap');
  await page.screenshot({ path: path.join(artifactsDir, 'readability-open.png') });
  await page.locator('#fit').click();
  await page.waitForFunction(() => document.querySelector('#canvas svg')!.classList.contains('far'));
  // Every node within the view, top to bottom.
  const outside = await page.evaluate(() => {
    const view = document.querySelector('#canvas')!.getBoundingClientRect();
    return [...document.querySelectorAll('svg g.node > rect')].filter((n) => {
      const r = n.getBoundingClientRect();
      return r.top < view.top - 1 || r.bottom > view.bottom + 1 || r.left < view.left - 1 || r.right > view.right + 1;
    }).length;
  });
  assert.equal(outside, 0, 'Fit left nodes outside the view');
  await page.screenshot({ path: path.join(artifactsDir, 'readability-fit.png') });
  assert.deepEqual(violations, []);
  await page.close();
});

test('MobileNetV2: Collapse Q/DQ keeps the zoom and the place, and its labels stay clear of each other', async () => {
  const { page, violations } = await openCifar();
  const before = await scaleOf(page);
  await page.evaluate(() => {
    (window as unknown as { __sent: unknown[] }).__sent = [];
  });
  await page.locator('#collapse').click();
  await waitForSent(page, 'rendered', 30_000);
  await page.waitForSelector('svg text.edge-label', { state: 'attached' });
  const after = await scaleOf(page);
  assert.ok(Math.abs(after - before) / before < 0.01, `zoom changed from ${before} to ${after}`);
  // The top of the graph still in view (not an empty band above it).
  const top = await page.evaluate(() => {
    const first = document.querySelector('svg g.node[data-op="Input"] > rect')!.getBoundingClientRect();
    const view = document.querySelector('#canvas')!.getBoundingClientRect();
    return first.top - view.top;
  });
  assert.ok(top >= 0 && top < 60, `the graph's first node ${top} px below the view's top`);
  const shapes = await page
    .locator('svg text.edge-shape')
    .evaluateAll((ts) => ts.map((t) => t.getBoundingClientRect().height).filter((h) => h > 0));
  assert.ok(Math.min(...shapes) >= 9, `shape labels drawn ${Math.min(...shapes)} px tall`);
  assert.deepEqual((await collisions(page)).out, [], 'labels overlap');
  await page.screenshot({ path: path.join(artifactsDir, 'readability-collapsed.png') });
  assert.deepEqual(violations, []);
  await page.close();
});

test('MobileNetV2: a collapsed block takes the colour of its worst layer; the loss reads as one', async () => {
  const { page, violations } = await openCifar();
  assert.equal(await page.locator('#layers .model-accuracy').getAttribute('data-verdict'), 'loss');
  assert.match(
    (await page.locator('#layers .model-accuracy').textContent()) ?? '',
    /FP32 42\.96 %\s*INT8 29\.26 %.*INT8 loses 13\.70 pts against FP32/,
  );
  await page.evaluate(() => {
    (window as unknown as { __sent: unknown[] }).__sent = [];
  });
  const label = page.locator('svg g.frame[data-module="features.16"] .frame-label');
  await label.dispatchEvent('pointerdown');
  await label.dispatchEvent('pointerup');
  await waitForSent(page, 'rendered', 30_000);
  const group = page.locator('svg g.node.group[data-module="features.16"]');
  await group.waitFor({ state: 'attached' });
  const inside = cifar.layers.filter((l) => l.module.startsWith('features.16.'));
  const worst = inside.reduce((a, b) => (a.cosine <= b.cosine ? a : b));
  assert.equal(await group.getAttribute('data-cosine'), worst.cosine.toFixed(5));
  assert.equal(
    await group.locator('rect').evaluate((r) => (r as SVGRectElement).style.fill),
    bandOf(worst.cosine, cifar.threshold).colour,
  );
  assert.match(
    (await group.locator('title').textContent()) ?? '',
    new RegExp(`worst of ${inside.length}: ${worst.module}`),
  );
  // Found by name, the block opens in view, its convolutions a group of their own, coloured the same way.
  await page.evaluate(() => {
    (window as unknown as { __sent: unknown[] }).__sent = [];
  });
  await page.locator('#search input').fill('features.16');
  await page.locator('#search input').press('Enter');
  await waitForSent(page, 'rendered', 30_000);
  const conv = page.locator('svg g.node.group[data-module="features.16.conv"]');
  await conv.waitFor({ state: 'attached' });
  assert.equal(await conv.getAttribute('data-cosine'), worst.cosine.toFixed(5));
  assert.match((await conv.textContent()) ?? '', new RegExp(`lowest cos ${worst.cosine.toFixed(4)}`));
  await page.screenshot({ path: path.join(artifactsDir, 'readability-group.png') });
  assert.deepEqual(violations, []);
  await page.close();
});
