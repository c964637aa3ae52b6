// The results view (graph + per-layer table) in a narrow editor column, 600 px wide, in Debian Chromium: nothing
// overflows the page, the table's header stays in view while its rows scroll, the column chooser hides and
// shows columns, and no text reads "[object Object]" after the messages Compare Layers sends.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { CompareLayersResult, LayerResult } from '../../protocol/kernel';
import { COLUMNS } from '../../webview/view/layerTable';
import { artifactsDir, repoRoot } from '../support/paths';
import { openWebview, postToWebview, readableText, useWebviewHarness } from '../support/webviewPage';

const fixtures = path.join(repoRoot, 'test', 'fixtures', 'digits');
const result = JSON.parse(readFileSync(path.join(fixtures, 'compare-layers.json'), 'utf8')) as CompareLayersResult;
const onnx = readFileSync(path.join(fixtures, 'digits.qdq.onnx'));

const harness = useWebviewHarness();

/** Twelve layers (the example's four, three times over) so the table has rows to scroll at 600 px. */
const manyLayers: LayerResult[] = [0, 1, 2].flatMap((k) =>
  result.layers.map((l) => ({ ...l, module: k ? `${l.module}_${k}` : l.module, cosine: l.cosine - k * 0.001 })),
);

async function openNarrow() {
  const opened = await openWebview(harness.browser, harness.server.origin, { width: 600, height: 700 });
  await postToWebview(opened.page, {
    type: 'showGraph',
    title: 'digits.qdq.onnx',
    onnx,
    layers: manyLayers,
    threshold: result.threshold,
  });
  await opened.page.waitForSelector('#layers tr[data-module]', { timeout: 15_000 });
  return opened;
}

test('at 600 px the results view fits the column: no page overflow, chart and table stacked', async () => {
  const { page, violations } = await openNarrow();
  const sizes = await page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth,
    client: document.documentElement.clientWidth,
    toolbar: document.getElementById('toolbar')!.scrollWidth,
  }));
  assert.ok(sizes.scroll <= sizes.client, `page scrolls sideways: ${sizes.scroll} > ${sizes.client}`);
  assert.ok(sizes.toolbar <= sizes.client, `toolbar overflows: ${sizes.toolbar}`);
  const chart = (await page.locator('#layers .chart').boundingBox())!;
  const table = (await page.locator('#layers .table-wrap').boundingBox())!;
  assert.ok(table.y >= chart.y + chart.height - 1, 'table should sit below the chart in a narrow column');
  assert.ok(chart.x + chart.width <= 600 && table.x + table.width <= 600, 'chart or table wider than the view');
  // Narrow: the optional columns start hidden, the essential ones are there.
  const heads = await page
    .locator('#layers th')
    .evaluateAll((ths) => ths.map((t) => (t as HTMLElement).dataset.column));
  assert.deepEqual(
    heads,
    COLUMNS.filter((c) => !c.optional).map((c) => c.id),
  );
  assert.deepEqual(violations, []);
  await page.screenshot({ path: path.join(artifactsDir, 'results-600px.png') });
  await page.close();
});

test('at 600 px the table header stays in view while the rows scroll', async () => {
  const { page } = await openNarrow();
  const wrap = page.locator('#layers .table-wrap');
  const before = (await page.locator('#layers th').first().boundingBox())!;
  const scrolled = await wrap.evaluate((w) => {
    w.scrollTop = w.scrollHeight;
    return w.scrollTop;
  });
  assert.ok(scrolled > 0, 'the table does not scroll: the test needs more rows than fit');
  const firstRow = (await page.locator('#layers tbody tr').first().boundingBox())!;
  const after = (await page.locator('#layers th').first().boundingBox())!;
  assert.ok(firstRow.y < before.y, 'rows did not move');
  assert.ok(Math.abs(after.y - before.y) <= 1, `header moved from ${before.y} to ${after.y}`);
  await page.close();
});

test('the column chooser shows and hides columns, and the layer column stays', async () => {
  const { page } = await openNarrow();
  await page.locator('#layers details.columns summary').click();
  const box = (id: string) => page.locator(`#layers details.columns input[value="${id}"]`);
  assert.equal(await box('layer').isDisabled(), true);
  await box('mse').check();
  await page.waitForSelector('#layers th[data-column="mse"]');
  assert.equal(await page.locator('#layers tbody tr').first().locator('td[data-column="mse"]').count(), 1);
  await box('cosine').uncheck();
  await page.waitForSelector('#layers th[data-column="cosine"]', { state: 'detached' });
  assert.equal(await page.locator('#layers td[data-column="cosine"]').count(), 0);
  assert.match((await page.locator('#layers details.columns summary').textContent()) ?? '', /Columns \(\d+\/\d+\)/);
  // Still sortable after a change: worst first on cosine is gone, sort by layer name.
  await page.locator('#layers th', { hasText: /^layer/ }).click();
  const modules = await page
    .locator('#layers tr[data-module]')
    .evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.module));
  assert.deepEqual(
    modules,
    manyLayers.map((l) => l.module).sort((a, b) => a.localeCompare(b)),
  );
  await page.close();
});

test('after the messages Compare Layers sends, no text reads [object Object]', async () => {
  const { page, violations } = await openNarrow();
  // What the extension sends to focus a layer after Compare Layers, for a layer that is there and one that is not.
  await postToWebview(page, { type: 'selectCounterpart', name: '', op: '', module: 'conv2' });
  await page.waitForSelector('svg g.node.selected');
  await postToWebview(page, { type: 'selectCounterpart', name: '', op: '', module: 'no_such_layer' });
  await page.waitForFunction(() => /no_such_layer/.test(document.getElementById('matches')!.textContent ?? ''));
  assert.equal(await page.locator('#matches').textContent(), 'No layer no_such_layer in this graph');
  await page.locator('#layers tr[data-module="fc1"]').click();
  await page.waitForSelector('#props:not([hidden])');
  const text = await readableText(page);
  assert.ok(!text.includes('[object Object]'), 'a text reads [object Object]');
  assert.ok(!/\bundefined\b|\bNaN\b/.test(text), `a text reads undefined or NaN`);
  assert.deepEqual(violations, []);
  await page.close();
});
