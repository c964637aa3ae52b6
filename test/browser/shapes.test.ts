// Tensor shapes on the graph's edges, in Debian Chromium, for the example's exported QDQ ONNX file: each label reads
// the dims the onnx package reads from the file, is readable at the default zoom, and the toolbar's Shapes toggle
// hides and shows the labels (SVG and canvas renderers) and is remembered when the webview's page is reloaded.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import type { ToWebview } from '../../protocol/webview';
import { dtypeName } from '../../webview/importers/onnxTensor';
import { declaredByOnnx } from '../support/onnxDeclared';
import { artifactsDir, repoRoot } from '../support/paths';
import { openWebview, postToWebview, useWebviewHarness, waitForSent } from '../support/webviewPage';

const file = path.join(repoRoot, 'test', 'fixtures', 'digits', 'digits.qdq.onnx');
const onnx = readFileSync(file);
const harness = useWebviewHarness();

const showDigits = (page: Page, renderer: 'auto' | 'canvas' = 'auto') =>
  postToWebview(page, {
    type: 'showGraph',
    title: 'digits.qdq.onnx',
    onnx,
    layers: [],
    threshold: 0.99,
    renderer,
  } satisfies ToWebview);

/** What a label must read for a value, from the onnx package's reading of the file. */
function expectedLabel(elem: number, dims: Array<number | string | null> | null): string {
  const text = dims === null ? '?' : dims.length ? dims.map((d) => (d === null ? '?' : String(d))).join('×') : 'scalar';
  const dtype = dtypeName(elem);
  return dtype === 'float32' ? text : `${dtype} ${text}`;
}

const visibleShapes = (page: Page) => page.locator('svg text.edge-shape:visible').count();

test('shape labels on the SVG graph read the file’s declared dims, readable at the default zoom, and toggle', async () => {
  const declared = declaredByOnnx(file);
  const { page, violations } = await openWebview(harness.browser, harness.server.origin);
  await showDigits(page);
  await page.waitForSelector('svg text.edge-shape', { timeout: 15_000 });
  // A small graph opens with shapes on.
  assert.equal(await page.locator('#shapes').evaluate((c) => (c as HTMLInputElement).checked), true);
  const labels = await page.locator('svg text.edge-shape').evaluateAll((ts) =>
    ts.map((t) => ({
      tensors: t.getAttribute('data-tensor')!.split(' '),
      text: t.textContent!,
      height: t.getBoundingClientRect().height,
    })),
  );
  assert.ok(labels.length >= 20, `only ${labels.length} shape labels`);
  for (const l of labels) {
    const want = l.tensors
      .map((t) => {
        assert.ok(declared[t], `label for ${t}, which the file does not declare`);
        return expectedLabel(declared[t].elem, declared[t].dims);
      })
      .join(', ');
    assert.equal(l.text, want, l.tensors.join(' '));
  }
  // The graph input's dynamic batch keeps its name.
  assert.ok(
    labels.some((l) => l.text === 'batch×1×8×8'),
    labels.map((l) => l.text).join(' | '),
  );
  // Readable at the zoom the view opens with: drawn at least 9 CSS pixels tall (11px text at the fit's scale).
  const smallest = Math.min(...labels.map((l) => l.height));
  assert.ok(smallest >= 9, `shape labels drawn ${smallest.toFixed(1)} px tall at the default zoom`);
  await page.screenshot({ path: path.join(artifactsDir, 'shapes-on.png') });

  await page.locator('#shapes').click();
  await page.waitForFunction(() => !document.querySelector('svg text.edge-shape')!.getBoundingClientRect().width);
  assert.equal(await visibleShapes(page), 0);
  await page.locator('#shapes').click();
  await page.waitForSelector('svg text.edge-shape', { state: 'visible' });
  assert.equal(await visibleShapes(page), labels.length);
  assert.deepEqual(violations, []);
  await page.close();
});

test('the Shapes toggle is kept in the webview state across a reload of the page', async () => {
  const { page } = await openWebview(harness.browser, harness.server.origin);
  await showDigits(page);
  await page.waitForSelector('svg text.edge-shape', { state: 'visible', timeout: 15_000 });
  await page.locator('#shapes').click();
  await page.waitForFunction(() => !document.querySelector('svg text.edge-shape')!.getBoundingClientRect().width);
  await page.reload();
  await page.waitForFunction(() =>
    (window as unknown as { __sent: Array<{ type: string }> }).__sent.some((m) => m.type === 'ready'),
  );
  await showDigits(page);
  await waitForSent(page, 'rendered', 15_000);
  await page.waitForSelector('svg text.edge-shape', { state: 'attached' });
  assert.equal(await page.locator('#shapes').evaluate((c) => (c as HTMLInputElement).checked), false);
  assert.equal(await visibleShapes(page), 0);
  await page.close();
});

test('on the canvas renderer the toggle draws and removes the shape labels', async () => {
  const { page, violations } = await openWebview(harness.browser, harness.server.origin);
  await showDigits(page, 'canvas');
  await page.waitForSelector('#canvas canvas[data-shapes]', { timeout: 15_000 });
  const canvas = page.locator('#canvas canvas');
  // Canvas graphs (large ones) open with shapes off.
  assert.equal(await page.locator('#shapes').evaluate((c) => (c as HTMLInputElement).checked), false);
  assert.equal(await canvas.getAttribute('data-shapes'), '0');
  const off = await canvas.screenshot();
  await page.locator('#shapes').click();
  await page.waitForFunction(() => Number(document.querySelector('#canvas canvas')!.getAttribute('data-shapes')) > 0);
  const drawn = Number(await canvas.getAttribute('data-shapes'));
  assert.ok(drawn >= 20, `only ${drawn} shape labels drawn`);
  const on = await canvas.screenshot();
  assert.ok(!on.equals(off), 'the canvas looks the same with shapes on and off');
  await page.locator('#shapes').click();
  await page.waitForFunction(() => document.querySelector('#canvas canvas')!.getAttribute('data-shapes') === '0');
  assert.ok((await canvas.screenshot()).equals(off), 'turning shapes off again does not give the first picture');
  assert.deepEqual(violations, []);
  await page.close();
});
