// The properties panel in Debian Chromium on the digits example's QDQ export: inputs named by their ONNX role
// (X, W, B; x, x_scale, x_zero_point), a bias summarised with a short preview and all its values behind an expander.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { artifactsDir } from '../support/paths';
import { openDigitsResults, useWebviewHarness } from '../support/webviewPage';

const harness = useWebviewHarness();
const open = (msg: Parameters<typeof openDigitsResults>[1] = {}, viewport?: { width: number; height: number }) =>
  openDigitsResults(harness, msg, viewport);

const click = async (page: Page, selector: string) => {
  const node = page.locator(selector).first();
  await node.dispatchEvent('pointerdown', { clientX: 0, clientY: 0 });
  await node.dispatchEvent('pointerup', { clientX: 0, clientY: 0 });
};

test('the properties panel names inputs by their ONNX role and summarises a bias, all values behind an expander', async () => {
  const { page, violations } = await open();
  await click(page, 'svg g.node[data-op="Conv"][data-module="conv1"]');
  const props = page.locator('#props');
  await props.locator('section.inputs').waitFor();
  assert.deepEqual(await props.locator('section.inputs dt').allTextContents(), ['X', 'W', 'B']);
  const bias = (await props.locator('section.inputs dt:text-is("B") + dd').textContent()) ?? '';
  assert.match(bias, /^conv1\.bias float32\[16\] \[(-?[0-9.e-]+, ){6}…\]$/);
  const values = props.locator('section.weights', { has: page.locator('h3:text-is("Values of conv1.bias")') });
  assert.equal(await values.locator('dt:text-is("input") + dd').textContent(), 'B');
  assert.equal(await values.locator('dt:text-is("values") + dd').textContent(), '16');
  assert.match((await values.locator('dt:text-is("range") + dd').textContent()) ?? '', /…/);
  const all = values.locator('details.all-values');
  assert.equal(await all.locator('pre').isVisible(), false, 'every value shown before asked for');
  await all.locator('summary').click();
  assert.equal(((await all.locator('pre').textContent()) ?? '').split(', ').length, 16);
  // A Q/DQ node: x, x_scale, x_zero_point.
  await click(page, 'svg g.node.qdq[data-op="DequantizeLinear"]');
  assert.deepEqual(await props.locator('section.inputs dt').allTextContents(), ['x', 'x_scale', 'x_zero_point']);
  await page.screenshot({ path: path.join(artifactsDir, 'results-properties.png') });
  assert.deepEqual(violations, []);
  await page.close();
});
