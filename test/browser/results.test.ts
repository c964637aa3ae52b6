// The results view (graph + per-layer table and chart in @vscode-elements tabs) in a narrow editor column, 600 px
// wide, in Debian Chromium: nothing overflows the page, the table's header stays in view while its rows scroll, the
// column chooser hides and shows columns, and no text reads "[object Object]" after the messages Compare Layers sends.
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
  await opened.page.waitForSelector('#layers vscode-table-row[data-module]', { timeout: 15_000 });
  return opened;
}

test('at 600 px the results view fits the column: no page overflow, table and chart as tabs', async () => {
  const { page, violations } = await openNarrow();
  const sizes = await page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth,
    client: document.documentElement.clientWidth,
    toolbar: document.getElementById('toolbar')!.scrollWidth,
  }));
  assert.ok(sizes.scroll <= sizes.client, `page scrolls sideways: ${sizes.scroll} > ${sizes.client}`);
  assert.ok(sizes.toolbar <= sizes.client, `toolbar overflows: ${sizes.toolbar}`);
  // The results are @vscode-elements components: a vscode-table in vscode-tabs, table first, chart a tab away.
  assert.equal(await page.locator('#layers vscode-tabs vscode-tab-panel vscode-table').count(), 1);
  const table = (await page.locator('#layers vscode-table').boundingBox())!;
  assert.ok(table.x + table.width <= 600, `table wider than the view: ${table.x + table.width}`);
  assert.equal(await page.locator('#layers .chart').isVisible(), false, 'the chart should wait behind its tab');
  await page.locator('#layers vscode-tab-header[data-tab="chart"]').click();
  await page.locator('#layers .chart svg').waitFor({ state: 'visible' });
  const chart = (await page.locator('#layers .chart').boundingBox())!;
  assert.ok(chart.x + chart.width <= 600, `chart wider than the view: ${chart.x + chart.width}`);
  assert.equal(await page.locator('#layers vscode-table').isVisible(), false);
  assert.ok(
    (await page.evaluate(() => document.documentElement.scrollWidth)) <= sizes.client,
    'page scrolls sideways with the chart shown',
  );
  await page.locator('#layers vscode-tab-header[data-tab="table"]').click();
  await page.locator('#layers vscode-table').waitFor({ state: 'visible' });
  // Narrow: the optional columns start hidden, the essential ones are there.
  const heads = await page
    .locator('#layers vscode-table-header-cell')
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
  const header = page.locator('#layers vscode-table-header-cell').first();
  const rows = page.locator('#layers vscode-table-row');
  const before = (await header.boundingBox())!;
  const firstBefore = (await rows.first().boundingBox())!;
  // Scroll the rows as the mouse wheel does, over the table's body, until the last row is in view.
  const table = (await page.locator('#layers vscode-table').boundingBox())!;
  await page.mouse.move(table.x + table.width / 2, table.y + table.height - 10);
  for (let i = 0; i < 10; i++) await page.mouse.wheel(0, 200);
  await page.waitForFunction(() => {
    const t = document.querySelector('#layers vscode-table')!.getBoundingClientRect();
    const all = document.querySelectorAll('#layers vscode-table-row');
    return all[all.length - 1].getBoundingClientRect().bottom <= t.bottom + 1;
  });
  const firstRow = (await rows.first().boundingBox())!;
  const after = (await header.boundingBox())!;
  assert.ok(firstRow.y < firstBefore.y, 'rows did not move: the test needs more rows than fit');
  assert.ok(Math.abs(after.y - before.y) <= 1, `header moved from ${before.y} to ${after.y}`);
  // The last row shows under the header, not behind it.
  const last = (await rows.last().boundingBox())!;
  assert.ok(last.y >= after.y + after.height - 1, 'last row hidden behind the header');
  await page.close();
});

test('the column chooser shows and hides columns, and the layer column stays', async () => {
  const { page } = await openNarrow();
  const chooser = page.locator('#layers vscode-collapsible.columns');
  await chooser.click({ position: { x: 40, y: 10 } });
  const box = (id: string) => page.locator(`#layers vscode-collapsible.columns vscode-checkbox[value="${id}"]`);
  await box('mse').waitFor({ state: 'visible' });
  assert.equal(await box('layer').evaluate((b) => (b as HTMLInputElement).disabled), true);
  assert.equal(await box('mse').evaluate((b) => (b as HTMLInputElement).checked), false);
  await box('mse').click();
  await page.waitForSelector('#layers vscode-table-header-cell[data-column="mse"]');
  assert.equal(
    await page.locator('#layers vscode-table-row').first().locator('vscode-table-cell[data-column="mse"]').count(),
    1,
  );
  // The chooser stays open after a change, so several columns can be picked in a row.
  await box('cosine').click();
  await page.waitForSelector('#layers vscode-table-header-cell[data-column="cosine"]', { state: 'detached' });
  assert.equal(await page.locator('#layers vscode-table-cell[data-column="cosine"]').count(), 0);
  assert.match((await chooser.getAttribute('heading')) ?? '', /^Columns \(\d+\/\d+\)$/);
  assert.equal(await page.locator('#layers vscode-table-header-cell[data-column="layer"]').count(), 1);
  // Still sortable after a change: worst first on cosine is gone, sort by layer name.
  await page.locator('#layers vscode-table-header-cell', { hasText: /^layer/ }).click();
  const modules = await page
    .locator('#layers vscode-table-row[data-module]')
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
  await page.locator('#layers vscode-table-row[data-module="fc1"]').click();
  await page.waitForSelector('#props:not([hidden])');
  const text = await readableText(page);
  assert.ok(!text.includes('[object Object]'), 'a text reads [object Object]');
  assert.ok(!/\bundefined\b|\bNaN\b/.test(text), `a text reads undefined or NaN`);
  assert.deepEqual(violations, []);
  await page.close();
});
