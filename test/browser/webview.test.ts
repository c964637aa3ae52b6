// The graph webview in Debian Chromium: real QDQ ONNX from the kernel, coloured by real compare/layers results.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { CompareLayersResult } from '../../protocol/kernel';
import { webviewHtml } from '../../client/editors/html';
import { BANDS, bandOf } from '../../common/bands';
import { artifactsDir, repoRoot } from '../support/paths';
import { openWebview, postToWebview, useWebviewHarness, waitForSent } from '../support/webviewPage';
import { slimOnnx } from '../../client/editors/slimOnnx';
import { decodeOnnxGraph } from '../../webview/importers/onnxWire';
import { field, floats, tensorProto, withGraphFields } from '../support/onnxShapes';
import type { BuildOrtResult, HistogramsResult, QatTrainResult } from '../../protocol/kernel';
import { executedOverlayFor } from '../../client/editors/executedOverlay';
import { change } from '../../webview/view/drift';

const repoRootDir = path.resolve(__dirname, '..', '..', '..');

const fixtures = path.join(repoRoot, 'test', 'fixtures', 'digits');
const result = JSON.parse(readFileSync(path.join(fixtures, 'compare-layers.json'), 'utf8')) as CompareLayersResult;
const onnxSummary = JSON.parse(readFileSync(path.join(fixtures, 'onnx-summary.json'), 'utf8')) as {
  ops: Record<string, number>;
};
const onnxBase64 = readFileSync(path.join(fixtures, 'digits.qdq.onnx')).toString('base64');

const harness = useWebviewHarness();
const openPage = () => openWebview(harness.browser, harness.server.origin);
const post = postToWebview;

/** A page showing the example's QDQ graph with its compare results, once the layers are drawn. */
async function openDigits() {
  const opened = await openPage();
  const { page } = opened;
  await post(page, {
    type: 'showGraph',
    title: 'digits.qdq.onnx',
    onnx: Buffer.from(onnxBase64, 'base64'),
    layers: result.layers,
    threshold: result.threshold,
  });
  await page.waitForSelector('svg g.node.layer', { timeout: 15_000, state: 'attached' }).catch(async (e) => {
    throw new Error(`${e.message}\nstatus: ${await page.locator('#canvas').textContent()}`);
  });
  return opened;
}

test('renders the example QDQ graph with Q/DQ marked and every compared layer coloured by cosine', async () => {
  const { page, violations } = await openDigits();
  const rendered = await waitForSent<{ qdq: number; renderer: string; inWorker: boolean }>(page, 'rendered', 5_000);
  assert.equal(rendered.renderer, 'svg');
  assert.equal(rendered.inWorker, true, 'decode and layout should run in the worker');
  const qdqExpected = (onnxSummary.ops.QuantizeLinear ?? 0) + (onnxSummary.ops.DequantizeLinear ?? 0);
  assert.ok(qdqExpected > 0, 'fixture has no Q/DQ nodes');
  assert.equal(rendered.qdq, qdqExpected);
  assert.equal(await page.locator('svg g.node.qdq').count(), qdqExpected);
  const qLabels = await page.locator('svg g.node.qdq text').allTextContents();
  assert.ok(
    qLabels.every((t) => /^(Q|DQ)\s/.test(t)),
    qLabels.join(','),
  );

  const opNodes = Object.entries(onnxSummary.ops)
    .filter(([op]) => op !== 'Constant')
    .reduce((n, [, c]) => n + c, 0);
  assert.equal(await page.locator('svg g.node.op').count(), opNodes);

  for (const layer of result.layers) {
    const node = page.locator(`svg g.node.layer[data-module="${layer.module}"]`).first();
    assert.equal(await node.getAttribute('data-cosine'), layer.cosine.toFixed(5), layer.module);
    const fill = await node.locator('rect').evaluate((r) => (r as SVGRectElement).style.fill);
    assert.equal(fill, bandOf(layer.cosine, result.threshold).colour, layer.module);
  }
  assert.equal(await page.locator('#legend .swatch').count(), BANDS.length + 1);
  assert.equal(await page.locator('#layers vscode-table-row').count(), result.layers.length);
  assert.ok(await page.evaluate(() => !!customElements.get('vscode-button')), '@vscode-elements button not defined');
  assert.deepEqual(violations, []);
  await page.screenshot({ path: path.join(artifactsDir, 'webview-graph.png') });
  await page.close();
});

test('clicking a node shows its properties: quantization parameters for Q/DQ, metrics for a layer', async () => {
  const { page, violations } = await openDigits();
  const props = page.locator('#props');
  assert.equal(await props.isHidden(), true);

  // The weight DequantizeLinear feeding conv1 is per channel (one scale per output channel).
  const dq = page.locator('svg g.node.qdq[data-op="DequantizeLinear"]');
  let perChannel = -1;
  for (let i = 0; i < (await dq.count()); i++) {
    await dq.nth(i).dispatchEvent('pointerdown', { clientX: 0, clientY: 0 });
    await dq.nth(i).dispatchEvent('pointerup', { clientX: 0, clientY: 0 });
    if ((await props.locator('h3').allTextContents()).includes('Quantization (per channel)')) {
      perChannel = i;
      break;
    }
  }
  assert.ok(perChannel >= 0, 'no per-channel DequantizeLinear found');
  assert.equal(await props.locator('.formula').textContent(), 'real = scale * (q - zero_point)');
  const scale = await props.locator('dt:text-is("scale") + dd').textContent();
  assert.match(scale ?? '', /^float32\[(16|32|64|10)\] \[[0-9.e-]+(, [0-9.e-]+)+/);

  const conv1 = page.locator('svg g.node.layer[data-module="conv1"]').first();
  await conv1.dispatchEvent('pointerdown', { clientX: 0, clientY: 0 });
  await conv1.dispatchEvent('pointerup', { clientX: 0, clientY: 0 });
  const layer = result.layers.find((l) => l.module === 'conv1')!;
  assert.equal(await props.locator('dt:text-is("cosine") + dd').textContent(), layer.cosine.toFixed(5));
  assert.equal(await props.locator('dt:text-is("module") + dd').textContent(), 'conv1');
  assert.match((await props.locator('dt:text-is("kernel_shape") + dd').textContent()) ?? '', /^\[3, 3\]$/);
  assert.equal(await page.locator('svg g.node.selected').count(), 1);
  assert.deepEqual(violations, []);
  await page.screenshot({ path: path.join(artifactsDir, 'webview-properties.png') });
  await page.close();
});

test('precision badges, the Q/DQ collapse toggle and search', async () => {
  const { page, violations } = await openDigits();
  // Convs and Gemms read only dequantized inputs: QDQ backends run them in int8.
  for (const op of ['Conv', 'Gemm']) {
    const badges = await page.locator(`svg g.node[data-op="${op}"] text.badge`).allTextContents();
    assert.deepEqual(
      badges,
      badges.map(() => 'int8'),
      op,
    );
    assert.ok(badges.length > 0, op);
  }
  assert.equal(await page.locator('svg g.node.qdq text.badge').count(), 0);
  const before = await page.locator('svg g.node').count();
  const qdq = await page.locator('svg g.node.qdq').count();

  await page.locator('#collapse').click();
  await page.waitForFunction(
    () =>
      document.querySelectorAll('svg g.node.qdq').length === 0 && document.querySelectorAll('svg g.node').length > 0,
    null,
    { timeout: 10_000 },
  );
  assert.equal(await page.locator('svg g.node').count(), before - qdq);
  const labels = await page.locator('svg text.edge-label').allTextContents();
  assert.ok(labels.length >= 4, `only ${labels.length} int8 edges`);
  assert.ok(
    labels.every((l) => /^(uint8|int8) s=[0-9.e-]+ zp=-?\d+$/.test(l)),
    labels.join(' | '),
  );
  assert.equal(await page.locator('svg path.edge.int8').count(), labels.length);
  assert.equal(await page.locator('svg g.node.layer').count(), 4, 'the overlay survives the collapse');
  await page.screenshot({ path: path.join(artifactsDir, 'webview-collapsed.png') });

  await page.locator('#search input').fill('conv2');
  await page.locator('#search input').press('Enter');
  await page.waitForSelector('svg g.node.selected', { state: 'attached', timeout: 5_000 });
  assert.equal(await page.locator('svg g.node.selected').getAttribute('data-module'), 'conv2');
  assert.match((await page.locator('#matches').textContent()) ?? '', /^1 of [2-9]$/);
  assert.equal(await page.locator('#props dt:text-is("module") + dd').textContent(), 'conv2');
  await page.locator('#search input').fill('no-such-node');
  await page.locator('#search input').press('Enter');
  assert.equal(await page.locator('#matches').textContent(), 'no match');
  assert.deepEqual(violations, []);
  await page.close();
});

test('exports SVG and PNG of the view and a standalone HTML report with no scripts', async () => {
  const { page, violations } = await openDigits();
  const exported = async (format: string) => {
    await page.evaluate(() => {
      (window as unknown as { __sent: Array<{ type: string }> }).__sent = [];
    });
    await page.locator(`#export-${format}`).click();
    return waitForSent<{ format: string; fileName: string; data: string }>(page, 'export', 15_000);
  };
  const svg = await exported('svg');
  assert.equal(svg.fileName, 'digits.qdq.svg');
  assert.match(svg.data, /^<svg[^>]+xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  assert.equal((svg.data.match(/<g [^>]*class="node /g) ?? []).length, await page.locator('svg g.node').count());
  assert.ok(!svg.data.includes('var(--'), 'theme variables must be resolved in the export');
  assert.ok(!svg.data.includes('data-vscode-context'));

  const png = await exported('png');
  assert.equal(Buffer.from(png.data, 'base64').subarray(0, 8).toString('hex'), '89504e470d0a1a0a');

  const html = await exported('html');
  assert.equal(html.fileName, 'digits.qdq.report.html');
  assert.ok(!/<script/i.test(html.data), 'the report must not need scripts');
  const report = await harness.browser.newPage();
  await report.setContent(html.data);
  assert.equal(await report.locator('table tbody tr').count(), result.layers.length);
  assert.equal(
    await report.locator('table tbody tr').first().locator('td').first().textContent(),
    [...result.layers].sort((a, b) => a.cosine - b.cosine)[0].module,
  );
  assert.ok((await report.locator('.graph svg g.node').count()) > 20);
  assert.equal(
    await report.locator('svg[aria-label="Cosine similarity per layer"] rect').count(),
    result.layers.length,
  );
  await report.screenshot({ path: path.join(artifactsDir, 'report.png'), fullPage: true });
  await report.close();
  assert.deepEqual(violations, []);
  await page.close();
});

test('the layer table sorts by column, and a row click selects the layer and asks to reveal its source', async () => {
  const { page, violations } = await openDigits();
  const modules = () =>
    page
      .locator('#layers vscode-table-row[data-module]')
      .evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.module));
  assert.deepEqual(
    await modules(),
    [...result.layers].sort((a, b) => a.cosine - b.cosine).map((l) => l.module),
    'worst first by default',
  );
  await page.locator('#layers vscode-table-header-cell', { hasText: /^layer/ }).click();
  assert.deepEqual(await modules(), result.layers.map((l) => l.module).sort());
  await page.locator('#layers vscode-table-header-cell', { hasText: /^layer/ }).click();
  assert.deepEqual(
    await modules(),
    result.layers
      .map((l) => l.module)
      .sort()
      .reverse(),
  );
  assert.equal(await page.locator('.chart svg rect').count(), result.layers.length);

  const target = result.layers.find((l) => l.source)!;
  await page.evaluate(() => {
    (window as unknown as { __sent: unknown[] }).__sent = [];
  });
  await page.locator(`#layers vscode-table-row[data-module="${target.module}"]`).click();
  assert.equal(await page.locator('svg g.node.selected').getAttribute('data-module'), target.module);
  const reveal = await waitForSent<{ file: string; line: number }>(page, 'revealSource', 5_000);
  assert.deepEqual({ file: reveal.file, line: reveal.line }, { file: target.source!.file, line: target.source!.line });
  assert.deepEqual(violations, []);
  await page.close();
});

test('keyboard: arrows walk the graph along its edges, Escape clears the selection', async () => {
  const { page, violations } = await openDigits();
  await page.locator('#canvas').focus();
  const selectedOp = () => page.locator('svg g.node.selected').getAttribute('data-op');
  await page.keyboard.press('ArrowDown');
  assert.equal(await selectedOp(), 'Input');
  await page.keyboard.press('ArrowDown');
  assert.equal(await selectedOp(), 'QuantizeLinear');
  await page.keyboard.press('ArrowDown');
  assert.equal(await selectedOp(), 'DequantizeLinear');
  await page.keyboard.press('ArrowDown');
  assert.equal(await selectedOp(), 'Conv');
  await page.keyboard.press('ArrowUp');
  assert.equal(await selectedOp(), 'DequantizeLinear');
  await page.keyboard.press('Escape');
  assert.equal(await page.locator('#props').isHidden(), true);
  assert.deepEqual(violations, []);
  await page.close();
});

test('dragging the graph moves it with the pointer: as a layer while dragging, in the viewBox once released', async () => {
  const { page, violations } = await openDigits();
  const node = page.locator('svg g.node.layer').first();
  const svg = page.locator('#canvas svg');
  const centre = async () => {
    const b = (await node.boundingBox())!;
    return { x: b.x + b.width / 2, y: b.y + b.height / 2 };
  };
  const start = await centre();
  const viewBox = await svg.getAttribute('viewBox');
  // From a point beside the node, 30 px right and 20 px down: well within a quarter of the view.
  const from = { x: start.x - 60, y: start.y };
  await page.mouse.move(from.x, from.y);
  await page.mouse.down();
  await page.mouse.move(from.x + 30, from.y + 20, { steps: 3 });
  let at = await centre();
  assert.ok(Math.abs(at.x - start.x - 30) < 1 && Math.abs(at.y - start.y - 20) < 1, JSON.stringify({ start, at }));
  assert.equal(await svg.getAttribute('viewBox'), viewBox, 'no repaint while dragging');
  assert.match((await svg.getAttribute('style')) ?? '', /translate\(30px, 20px\)/);
  await page.mouse.up();
  at = await centre();
  assert.ok(Math.abs(at.x - start.x - 30) < 1 && Math.abs(at.y - start.y - 20) < 1, JSON.stringify({ start, at }));
  assert.notEqual(await svg.getAttribute('viewBox'), viewBox, 'the drag is in the viewBox once released');
  assert.doesNotMatch((await svg.getAttribute('style')) ?? '', /translate/);
  assert.ok(await page.locator('#props').isHidden(), 'a drag is not a click');
  assert.deepEqual(violations, []);
  await page.close();
});

test('a malformed model shows an error panel instead of a graph', async () => {
  const { page, violations } = await openPage();
  const garbage = Buffer.from(Array.from({ length: 200 }, (_, i) => (i * 37 + 11) % 256)).toString('base64');
  await post(page, {
    type: 'showGraph',
    title: 'broken.onnx',
    onnx: Buffer.from(garbage, 'base64'),
    layers: [],
    threshold: 0.99,
  });
  const status = page.locator('#status.error');
  await status.waitFor({ timeout: 10_000 });
  assert.match((await status.textContent()) ?? '', /^Cannot show this model: /);
  assert.equal(await page.locator('svg g.node').count(), 0);
  assert.deepEqual(violations, []);
  await page.screenshot({ path: path.join(artifactsDir, 'webview-error.png') });
  await page.close();
});

test('a tensor whose dims cannot be right is marked in the properties panel; the rest of the model opens', async () => {
  const digits = new Uint8Array(readFileSync(path.join(fixtures, 'digits.qdq.onnx')));
  const dq = decodeOnnxGraph(digits).nodes.find((n) => n.op === 'DequantizeLinear')!;
  const scale = dq.inputs[1];
  // That scale again with dims [-1, 4] (the last initializer of a name wins), through the host's slimming as sent.
  const slim = slimOnnx(withGraphFields(digits, [field(5, tensorProto(scale, [-1, 4], floats(4)))]));
  const { page, violations } = await openPage();
  await post(page, {
    type: 'showGraph',
    title: 'digits.qdq.onnx',
    onnx: slim.bytes,
    layers: result.layers,
    threshold: result.threshold,
    weights: Object.fromEntries(slim.removed),
  });
  await page.waitForSelector('svg g.node.layer', { timeout: 15_000, state: 'attached' });
  const qdqExpected = (onnxSummary.ops.QuantizeLinear ?? 0) + (onnxSummary.ops.DequantizeLinear ?? 0);
  assert.equal(await page.locator('svg g.node.qdq').count(), qdqExpected);
  const node = page.locator(`svg g.node[data-name="${dq.name}"]`);
  await node.dispatchEvent('pointerdown', { clientX: 0, clientY: 0 });
  await node.dispatchEvent('pointerup', { clientX: 0, clientY: 0 });
  const props = page.locator('#props');
  assert.equal(
    await props.locator('dt:text-is("scale") + dd').textContent(),
    'float32[?×4] (invalid: its dims [-1, 4] hold -1, not a size)',
  );
  assert.equal(await page.locator('#status.error').count(), 0);
  assert.deepEqual(violations, []);
  await page.screenshot({ path: path.join(artifactsDir, 'webview-invalid-tensor.png') });
  await page.close();
});

test('the page carries a default-src none CSP with a nonce and no inline handlers', () => {
  const html = webviewHtml({
    cspSource: 'vscode-resource:',
    nonce: 'N0nce',
    scriptUri: 'vscode-resource:/main.js',
    title: '<b>x</b>',
  });
  assert.match(html, /default-src 'none'/);
  assert.match(html, /script-src 'nonce-N0nce'/);
  assert.ok(!/\son\w+=/.test(html), 'inline event handler found');
  assert.ok(html.includes('&#60;b&#62;x&#60;/b&#62;'), 'title must be escaped');
});

test('weights kept in the extension host show their summary and histogram in the properties panel', async () => {
  // What the graph panel does before posting: large payloads removed, summarized.
  const slim = slimOnnx(new Uint8Array(readFileSync(path.join(fixtures, 'digits.qdq.onnx'))), 1024);
  assert.ok(slim.removed.size >= 2);
  const { page, violations } = await openPage();
  await post(page, {
    type: 'showGraph',
    title: 'digits.qdq.onnx',
    onnx: slim.bytes,
    layers: [],
    threshold: 0.99,
    weights: Object.fromEntries(slim.removed),
  });
  await page.waitForSelector('svg g.node.qdq', { timeout: 15_000, state: 'attached' });
  const props = page.locator('#props');
  const dq = page.locator('svg g.node.qdq[data-op="DequantizeLinear"]');
  let found: string | undefined;
  for (let i = 0; i < (await dq.count()) && !found; i++) {
    await dq.nth(i).dispatchEvent('pointerdown', { clientX: 0, clientY: 0 });
    await dq.nth(i).dispatchEvent('pointerup', { clientX: 0, clientY: 0 });
    const kept = props.locator('section.weights', { hasText: 'kept in the extension host' });
    if (await kept.count()) found = (await kept.first().locator('h3').textContent()) ?? '';
  }
  assert.ok(found, 'no DequantizeLinear of a large weight shows a summary');
  const name = found.replace(/^Values of /, '');
  const stats = slim.removed.get(name)!;
  const section = props.locator('section.weights').first();
  assert.equal(await section.locator('dt:text-is("values") + dd').textContent(), String(stats.count));
  const bars = await section
    .locator('svg.histogram rect')
    .evaluateAll((rs) => rs.map((r) => Number(r.getAttribute('data-count'))));
  assert.equal(bars.length, 32);
  assert.equal(
    bars.reduce((a, b) => a + b, 0),
    stats.count,
  );
  assert.deepEqual(violations, []);
});

test('a compared layer shows its weight and input-activation histograms with the clipped fraction', async () => {
  const histograms = JSON.parse(
    readFileSync(path.join(repoRootDir, 'protocol', 'fixtures', 'rpc', 'HistogramsResult.json'), 'utf8'),
  ) as HistogramsResult;
  const { page, violations } = await openPage();
  await post(page, {
    type: 'showGraph',
    title: 'digits.qdq.onnx',
    onnx: Buffer.from(onnxBase64, 'base64'),
    layers: result.layers,
    threshold: result.threshold,
    histograms: histograms.layers,
  });
  await page.waitForSelector('svg g.node.layer', { timeout: 15_000, state: 'attached' });
  const conv1 = page.locator('svg g.node.layer[data-module="conv1"]').first();
  await conv1.dispatchEvent('pointerdown', { clientX: 0, clientY: 0 });
  await conv1.dispatchEvent('pointerup', { clientX: 0, clientY: 0 });
  const props = page.locator('#props');
  const expected = histograms.layers.find((l) => l.module === 'conv1')!;
  for (const [title, h] of [
    ['Weight (QAT)', expected.weight!],
    ['Input activation', expected.activation!],
  ] as const) {
    const sec = props.locator('section.layer-histogram', { has: page.locator(`h3:text-is("${title}")`) });
    assert.equal(
      await sec.locator('dt:text-is("clipped") + dd').textContent(),
      `${(h.clippedFraction * 100).toFixed(2)} %`,
    );
    const bars = await sec
      .locator('svg.histogram rect')
      .evaluateAll((rs) => rs.map((r) => Number(r.getAttribute('data-count'))));
    assert.deepEqual(bars, h.counts);
  }
  // A layer without histograms (conv2 is not in this result) shows none.
  const conv2 = page.locator('svg g.node.layer[data-module="conv2"]').first();
  await conv2.dispatchEvent('pointerdown', { clientX: 0, clientY: 0 });
  await conv2.dispatchEvent('pointerup', { clientX: 0, clientY: 0 });
  assert.equal(await props.locator('section.layer-histogram').count(), 0);
  assert.deepEqual(violations, []);
});

test('a compared layer shows how its observers drifted during QAT, epochs marked', async () => {
  const train = JSON.parse(
    readFileSync(path.join(repoRootDir, 'protocol', 'fixtures', 'rpc', 'QatTrainResult.json'), 'utf8'),
  ) as QatTrainResult;
  const drift = train.drift!;
  const { page, violations } = await openPage();
  await post(page, {
    type: 'showGraph',
    title: 'digits.qdq.onnx',
    onnx: Buffer.from(onnxBase64, 'base64'),
    layers: result.layers,
    threshold: result.threshold,
    drift,
  });
  await page.waitForSelector('svg g.node.layer', { timeout: 15_000, state: 'attached' });
  const conv2 = page.locator('svg g.node.layer[data-module="conv2"]').first();
  await conv2.dispatchEvent('pointerdown', { clientX: 0, clientY: 0 });
  await conv2.dispatchEvent('pointerup', { clientX: 0, clientY: 0 });
  const sec = page.locator('#props section.observer-drift');
  await sec.waitFor({ timeout: 5_000 });
  const act = drift.layers.find((l) => l.module === 'conv2' && l.role === 'activation')!;
  const weight = drift.layers.find((l) => l.module === 'conv2' && l.role === 'weight')!;
  const captions = await sec.locator('.drift-caption').allTextContents();
  assert.match(captions[0], new RegExp(`^${drift.steps.length} samples over steps 1–${drift.steps.at(-1)}, 2 epochs`));
  assert.ok(
    captions.some((c) => c.startsWith(`input activation scale ${change(act.scaleMean)}`)),
    captions.join(' | '),
  );
  assert.ok(
    captions.some((c) => c.includes(`weight scale (mean; band: channel min–max) ${change(weight.scaleMean)}`)),
    captions.join(' | '),
  );
  const plots = sec.locator('svg.drift');
  assert.equal(await plots.count(), 2);
  // One point per sampled step, the per-channel band on the weight plot, one boundary between the two epochs.
  const points = await plots.nth(0).locator('polyline.line').getAttribute('points');
  assert.equal(points!.trim().split(' ').length, drift.steps.length);
  assert.equal(await plots.nth(0).locator('polygon.band').count(), 0);
  assert.equal(await plots.nth(1).locator('polygon.band').count(), 1);
  assert.equal(await plots.nth(1).locator('line.epoch').count(), 1);
  // The line follows the values: the highest sample is drawn highest (smallest y).
  const ys = points!
    .trim()
    .split(' ')
    .map((p) => Number(p.split(',')[1]));
  const top = act.scaleMean.indexOf(Math.max(...act.scaleMean));
  assert.equal(ys[top], Math.min(...ys));
  // A layer without a series (fc1 has no activation quantizer of its own here) shows only what it has.
  const fc1 = page.locator('svg g.node.layer[data-module="fc1"]').first();
  await fc1.dispatchEvent('pointerdown', { clientX: 0, clientY: 0 });
  await fc1.dispatchEvent('pointerup', { clientX: 0, clientY: 0 });
  assert.equal(await page.locator('#props section.observer-drift svg.drift').count(), 1);
  assert.deepEqual(violations, []);
});

test("precision as executed: ONNX Runtime's build report laid over the QDQ model it was given", async () => {
  const report = JSON.parse(
    readFileSync(path.join(repoRootDir, 'protocol', 'fixtures', 'rpc', 'BuildOrtResult.json'), 'utf8'),
  ) as BuildOrtResult;
  const executed = executedOverlayFor('/ws/out/ort-cpu/model.qdq.onnx', report)!;
  const { page, violations } = await openPage();
  await post(page, {
    type: 'showGraph',
    title: 'model.qdq.onnx',
    onnx: Buffer.from(onnxBase64, 'base64'),
    layers: [],
    threshold: 0.99,
    executed,
  });
  await page.waitForSelector('svg g.node[data-name="node_linear_1"]', { timeout: 15_000, state: 'attached' });
  // The Gemm ORT left in fp32 carries an fp32 badge; the convs it fused into QLinearConv an int8 one.
  assert.equal(await page.locator('svg g.node[data-name="node_linear_1"]').getAttribute('data-precision'), 'fp32');
  assert.equal(await page.locator('svg g.node[data-name="node_conv2d"]').getAttribute('data-precision'), 'int8');
  const summary = await page.locator('#summary').textContent();
  const compute = Object.values(executed.ops).filter((o) => o.role === 'compute');
  const int8 = compute.filter((o) => o.precision === 'int8').length;
  assert.ok(
    summary?.includes(
      `compute ops as executed by ONNX Runtime ${report.ortVersion} (CPUExecutionProvider): 1 fp32, ${int8} int8`,
    ),
    summary ?? '',
  );
  const gemm = page.locator('svg g.node[data-name="node_linear_1"]');
  await gemm.dispatchEvent('pointerdown', { clientX: 0, clientY: 0 });
  await gemm.dispatchEvent('pointerup', { clientX: 0, clientY: 0 });
  const sec = page.locator('#props section.executed');
  assert.equal(await sec.locator('dt:text-is("precision") + dd').textContent(), 'fp32');
  assert.equal(await sec.locator('dt:text-is("ran as") + dd').textContent(), 'Gemm');
  assert.match((await sec.locator('dt:text-is("why fp32") + dd').textContent()) ?? '', /not fused into QGemm/);
  assert.deepEqual(violations, []);
});

test('reopening the same content draws the layout kept from the first open, without laying out again', async () => {
  const show = {
    type: 'showGraph' as const,
    title: 'digits.qdq.onnx',
    onnx: Buffer.from(onnxBase64, 'base64'),
    layers: result.layers,
    threshold: result.threshold,
    contentKey: 'digits-content',
  };
  const boxesDrawn = (p: import('playwright-core').Page) =>
    p.evaluate(() => [...document.querySelectorAll('svg g.node')].map((g) => g.getAttribute('transform')));
  const first = await openPage();
  await post(first.page, show);
  const r1 = await waitForSent<{ layoutBy: string; laidOutNodes: number; nodes: number }>(
    first.page,
    'rendered',
    15_000,
  );
  assert.equal(r1.layoutBy, 'layered');
  assert.equal(r1.laidOutNodes, r1.nodes);
  // After the first frame the view hands its layout to the extension host, under the content's key.
  const kept = await waitForSent<{
    contentKey: string;
    options: string;
    boxes: number[];
    width: number;
    height: number;
  }>(first.page, 'layoutComputed', 15_000);
  assert.equal(kept.contentKey, 'digits-content');
  assert.equal(kept.boxes.length, 4 * r1.nodes);
  const drawn = await boxesDrawn(first.page);
  await first.page.close();

  const again = await openPage();
  const { options, width, height } = kept;
  await post(again.page, { ...show, layouts: [{ options, boxes: new Float64Array(kept.boxes), width, height }] });
  const r2 = await waitForSent<{ layoutBy: string; laidOutNodes: number; nodes: number }>(
    again.page,
    'rendered',
    15_000,
  );
  assert.equal(r2.layoutBy, 'reused', 'the layout step did not run');
  assert.equal(r2.laidOutNodes, 0);
  assert.equal(r2.nodes, r1.nodes);
  assert.deepEqual(await boxesDrawn(again.page), drawn, 'every node where the first open drew it');
  // A reused layout is not reported again.
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(
    await again.page.evaluate(
      () =>
        (window as unknown as { __sent: Array<{ type: string }> }).__sent.filter((m) => m.type === 'layoutComputed')
          .length,
    ),
    0,
  );
  assert.deepEqual(again.violations, []);
  await again.page.close();
});
