// The graph view in Debian Chromium on the digits example: a collapsed module coloured by its worst layer, and
// executed-op counts that do not change when a group collapses.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { CompareLayersResult } from '../../protocol/kernel';
import type { ExecutedOverlay, ToWebview } from '../../protocol/webview';
import { bandOf } from '../../webview/view/metrics';
import { repoRoot } from '../support/paths';
import { openWebview, postToWebview, useWebviewHarness, waitForSent } from '../support/webviewPage';

const fixtures = path.join(repoRoot, 'test', 'fixtures', 'digits');
const result = JSON.parse(readFileSync(path.join(fixtures, 'compare-layers.json'), 'utf8')) as CompareLayersResult;
const onnx = readFileSync(path.join(fixtures, 'digits.qdq.onnx'));
const harness = useWebviewHarness();

async function open(
  msg: Partial<Extract<ToWebview, { type: 'showGraph' }>> = {},
  viewport = { width: 1400, height: 900 },
) {
  const opened = await openWebview(harness.browser, harness.server.origin, viewport);
  await postToWebview(opened.page, {
    type: 'showGraph',
    title: 'Layers: digits.qat.yaml',
    onnx,
    layers: result.layers,
    threshold: result.threshold,
    accuracy: result.accuracy,
    ...msg,
  } as ToWebview);
  await opened.page.waitForSelector('#layers vscode-table-row[data-module]', { timeout: 15_000 });
  return opened;
}

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
