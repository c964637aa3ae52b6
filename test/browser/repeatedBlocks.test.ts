// A language model's graph in the graph webview (Debian Chromium): the FP32 graph the kernel exported of a 4-layer
// Llama (examples/tinylm's build at width 32) with compare/layers' torchao result on it. The decoder layers fold into
// one box after the first, coloured by the worst layer inside; a Linear carries its scheme badge; its properties
// show the group-wise weight error with its heat map.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { CompareLayersResult } from '../../protocol/kernel';
import { bandOf } from '../../common/bands';
import { artifactsDir, repoRoot } from '../support/paths';
import { openWebview, postToWebview, useWebviewHarness, waitForSent } from '../support/webviewPage';

const fixtures = path.join(repoRoot, 'test', 'fixtures', 'tinylm');
const FILE = 'tinylm4.fp32.qatgraph.json';
const text = readFileSync(path.join(fixtures, FILE), 'utf8');
const result = JSON.parse(readFileSync(path.join(fixtures, 'compare-layers.json'), 'utf8')) as CompareLayersResult;

const harness = useWebviewHarness();

const click = async (loc: import('playwright-core').Locator) => {
  await loc.dispatchEvent('pointerdown', { clientX: 0, clientY: 0 });
  await loc.dispatchEvent('pointerup', { clientX: 0, clientY: 0 });
};

test('a 4-layer Llama opens with layer 0 open and layers 1-3 folded; the fold opens into its layers', async () => {
  const { page, violations } = await openWebview(harness.browser, harness.server.origin);
  await postToWebview(page, {
    type: 'showGraph',
    title: FILE,
    onnx: Buffer.from(text),
    baseDir: fixtures,
    layers: result.layers,
    threshold: result.threshold,
  });
  const rendered = await waitForSent<{ nodes: number; groups: number; total: number }>(page, 'rendered', 15_000);
  assert.equal(rendered.groups, 1);
  assert.ok(rendered.nodes < rendered.total / 2, JSON.stringify(rendered));
  const fold = page.locator('svg g.node.group');
  assert.match((await fold.locator('text').first().textContent()) ?? '', /^\+ model\.layers\.1–3 ×3 \(\d+ nodes\)$/);
  // coloured by the worst compared layer of layers 1-3
  const worst = result.layers
    .filter((l) => /^model\.layers\.[123]\./.test(l.module))
    .reduce((a, b) => (a.cosine <= b.cosine ? a : b));
  assert.equal(
    await fold
      .locator('rect')
      .first()
      .evaluate((r) => (r as SVGRectElement).style.fill),
    bandOf(worst.cosine, result.threshold).colour,
  );
  // layer 0's Linears are drawn one by one, with their scheme badge
  const q = page.locator('svg g.node.layer[data-module="model.layers.0.self_attn.q_proj"]').first();
  assert.match((await q.textContent()) ?? '', /8da4w g32/);

  // its properties: the weight error per group and its heat map, a cell per group (32 rows, 1 group of 32)
  await click(q);
  const props = page.locator('#props');
  const section = props.locator('section.weight-error');
  assert.equal(await section.locator('h3').textContent(), 'Weight error per group');
  const row = (k: string) => section.locator(`dt:text-is("${k}") + dd`).first().textContent();
  const layer = result.layers.find((l) => l.module === 'model.layers.0.self_attn.q_proj')!;
  const w = layer.weightError!;
  assert.equal(await row('scheme'), '8da4w (group 32)');
  assert.equal(await row('groups'), `${w.rows} rows × ${w.groups} of 32`);
  assert.equal(
    await row('worst group'),
    `${w.worst.sqnr!.toFixed(1)} dB at row ${w.worst.row}, group ${w.worst.group}`,
  );
  const cells = section.locator('svg.weight-heat rect');
  assert.equal(await cells.count(), w.heat.sqnr.length * w.heat.sqnr[0].length);
  // the reddest cell is the worst group's
  const worstCell = await cells.evaluateAll((rs) =>
    rs.reduce((a, r) => Math.min(a, Number(r.getAttribute('data-sqnr'))), Infinity),
  );
  assert.equal(worstCell, w.worst.sqnr);

  // opening the fold shows layers 1-3 as their own boxes
  await page.evaluate(() => {
    (window as unknown as { __sent: unknown[] }).__sent = [];
  });
  await click(fold);
  const unfolded = await waitForSent<{ groups: number }>(page, 'rendered', 10_000);
  assert.equal(unfolded.groups, 3);
  assert.deepEqual(
    (await page.locator('svg g.node.group text:first-of-type').allTextContents()).map((t) => t.split(' (')[0]).sort(),
    ['+ model.layers.1', '+ model.layers.2', '+ model.layers.3'],
  );
  assert.deepEqual(violations, []);
  await page.screenshot({ path: path.join(artifactsDir, 'tinylm-folded.png') });
  await page.close();
});
