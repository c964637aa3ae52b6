// The mixed-precision front and the sensitivity page in Debian Chromium, as VS Code shows them (their own HTML and
// CSP, acquireVsCodeApi stubbed), from results shaped as on the cifar MobileNetV2 example: no text of a chart
// overlaps another, the measured and emulated accuracies are told apart, a slow all-int8 end is explained, and the
// sensitivity page's bars, baselines, short suggestion and buttons work. Screenshots go to .test-artifacts.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { frontHtml } from '../../client/search/frontChart';
import { sensitivityHtml } from '../../client/search/sensitivityChart';
import { launchChromium } from '../support/browser';
import { cifarSearch, cifarSensitivity } from '../support/cifarResults';
import { artifactsDir } from '../support/paths';

const pages: Record<string, string> = {
  '/front': frontHtml(cifarSearch(), { nonce: 'frontnonce0123', title: 'Mixed precision: cifar.qat.yaml' }),
  '/sensitivity': sensitivityHtml(cifarSensitivity(), { nonce: 'sensnonce0123', title: 'Sensitivity: cifar.qat.yaml' }),
};

let server: Server;
let origin = '';
let browser: Browser;

before(async () => {
  server = createServer((req, res) => {
    const body = pages[req.url ?? ''];
    res.statusCode = body ? 200 : 404;
    res.setHeader('content-type', 'text/html');
    res.end(body ?? '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  browser = await launchChromium();
  mkdirSync(artifactsDir, { recursive: true });
});

after(async () => {
  await browser?.close();
  server?.close();
});

async function open(url: string, width = 1200): Promise<{ page: Page; violations: string[] }> {
  const page = await browser.newPage({ viewport: { width, height: 1000 } });
  const violations: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/.test(m.text())) violations.push(m.text());
  });
  page.on('pageerror', (e) => violations.push(`page error: ${e.message}`));
  page.on('request', (r) => {
    if (!r.url().startsWith(origin)) violations.push(`request: ${r.url()}`);
  });
  await page.addInitScript(() => {
    const w = window as unknown as { __sent: unknown[]; acquireVsCodeApi: () => unknown };
    w.__sent = [];
    w.acquireVsCodeApi = () => ({
      postMessage: (m: unknown) => w.__sent.push(m),
      getState: () => undefined,
      setState: () => undefined,
    });
  });
  await page.goto(origin + url);
  await page.waitForFunction(() =>
    (window as unknown as { __sent: Array<{ type: string }> }).__sent.some((m) => m.type === 'ready'),
  );
  return { page, violations };
}

/** Pairs of texts in `selector`'s SVGs whose boxes (as drawn, in page pixels) overlap. */
function overlappingTexts(page: Page, selector: string) {
  return page.evaluate((sel) => {
    const out: string[] = [];
    for (const svg of document.querySelectorAll(sel)) {
      const boxes = [...svg.querySelectorAll('text')].map((t) => ({
        t: t.textContent ?? '',
        r: t.getBoundingClientRect(),
      }));
      for (let i = 0; i < boxes.length; i++)
        for (let j = i + 1; j < boxes.length; j++) {
          const a = boxes[i].r;
          const b = boxes[j].r;
          if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5)
            out.push(`${boxes[i].t} / ${boxes[j].t}`);
        }
    }
    return out;
  }, selector);
}

test('the front: no chart text overlaps, measured and emulated told apart, slow int8 explained', async () => {
  const { page, violations } = await open('/front');
  assert.deepEqual(await overlappingTexts(page, 'svg.front-chart'), []);
  // The end labels are not on top of any point either.
  const onPoints = await page.evaluate(() => {
    const out: string[] = [];
    for (const svg of document.querySelectorAll('svg.front-chart')) {
      const marks = [...svg.querySelectorAll('circle, path.emulated')].map((c) => c.getBoundingClientRect());
      for (const t of svg.querySelectorAll('text.end')) {
        const r = t.getBoundingClientRect();
        if (marks.some((m) => r.left < m.right && m.left < r.right && r.top < m.bottom && m.top < r.bottom))
          out.push(t.textContent ?? '');
      }
    }
    return out;
  });
  assert.deepEqual(onPoints, []);
  for (const chart of ['latency', 'size']) {
    const ends = await page.locator(`svg[data-view="${chart}"] text.end`).allTextContents();
    assert.deepEqual(ends.sort(), ['all fp16', 'all fp32', 'all int8']);
  }
  // Measured on the y axis and in the first accuracy column; the emulated figure labelled as such.
  assert.equal(await page.locator('svg.front-chart text.axis', { hasText: 'top-1 on ONNX Runtime (%)' }).count(), 2);
  assert.match(
    (await page.locator('#legend').textContent()) ?? '',
    /measured on ONNX Runtime.*fake-quant \(emulated\)/s,
  );
  const heads = await page.locator('#candidates th').allTextContents();
  assert.deepEqual(heads.slice(1, 3), ['top-1 on ONNX Runtime', 'fake-quant (emulated)']);
  const int8Row = page.locator('#candidates tr[data-id="c0"] td');
  assert.equal(await int8Row.nth(1).textContent(), '52.20 %');
  assert.equal(await int8Row.nth(2).textContent(), '75.40 %');
  // The all-int8 point is drawn lower (52.2 %) than its emulated diamond (75.4 %).
  const point = (await page.locator('svg[data-view="latency"] circle[data-id="c0"]').boundingBox())!;
  const diamond = (await page.locator('svg[data-view="latency"] path.emulated[data-id="c0"]').boundingBox())!;
  assert.ok(point.y > diamond.y + 20, `measured at ${point.y}, emulated at ${diamond.y}`);
  // Round ticks only.
  const yTicks = (await page.locator('svg[data-view="latency"] text.y-tick').allTextContents()).map(Number);
  assert.ok(
    yTicks.every((t) => t % 5 === 0),
    `y ticks ${yTicks}`,
  );
  // Why int8 is slower, from precision as executed.
  const slow = page.locator('#slow-int8');
  assert.ok(await slow.isVisible());
  const text = (await slow.textContent()) ?? '';
  assert.match(text, /All int8 is slower than all fp32 on ONNX Runtime: 1\.36 ms against 0\.92 ms at batch 16/);
  assert.match(text, /298 nodes against 71/);
  // The float-layers column is short, its full list in the tooltip.
  const cell = page.locator('#candidates tr td.floats').filter({ hasText: 'all 53' }).first();
  assert.equal((await cell.getAttribute('title'))!.split('\n').length, 53);
  const widths = await page.evaluate(() => ({ page: document.documentElement.scrollWidth, view: innerWidth }));
  assert.ok(widths.page <= widths.view, `the page scrolls sideways: ${widths.page} > ${widths.view}`);
  // A point's "Write overrides" is a message to the extension.
  await page.locator('#candidates button.pick[data-id="c5"]').click();
  const sent = await page.evaluate(() => (window as unknown as { __sent: unknown[] }).__sent);
  assert.deepEqual(sent.at(-1), { type: 'pick', id: 'c5' });
  await page.screenshot({ path: path.join(artifactsDir, 'mixed-precision-front.png'), fullPage: true });
  assert.deepEqual(violations, []);
  await page.close();
});

test('the sensitivity page: baselines, ranked bars without overlapping names, a short suggestion, its buttons', async () => {
  const { page, violations } = await open('/sensitivity', 900);
  const baselines = await page.locator('#baselines').textContent();
  assert.match(baselines ?? '', /FP32\s*86\.11 %/);
  assert.match(baselines ?? '', /INT8, fake-quant \(emulated\)\s*75\.40 %/);
  const chart = page.locator('.chart:not([hidden]) svg.bars');
  assert.equal(await chart.getAttribute('data-metric'), 'drop');
  assert.equal(await chart.locator('g.row').count(), 53);
  assert.equal(await chart.locator('rect.bar.suggested').count(), 8);
  assert.deepEqual(await overlappingTexts(page, '.chart:not([hidden]) svg.bars'), []);
  // The suggestion: a few names and "+N more", not 53 regex-escaped ones.
  const items = await page.locator('#suggestion ul.suggested li').allTextContents();
  assert.equal(items.length, 4);
  assert.equal(items.at(-1), '+5 more');
  assert.ok(!items.some((i) => i.includes('\\')));
  assert.match(
    (await page.locator('#suggestion p').textContent()) ?? '',
    /Keep 8 layers in FP16.*meets the target 84\.37 %/,
  );
  // The other metrics are a tab away, ranked too.
  await page.locator('button.metric[data-metric="sqnr"]').click();
  const sqnr = page.locator('.chart:not([hidden]) svg.bars');
  assert.equal(await sqnr.getAttribute('data-metric'), 'sqnr');
  assert.deepEqual(await overlappingTexts(page, '.chart:not([hidden]) svg.bars'), []);
  const values = (await sqnr.locator('text.value').allTextContents()).map(Number);
  assert.deepEqual(
    values,
    [...values].sort((a, b) => a - b),
  );
  await page.locator('button.metric[data-metric="drop"]').click();
  // Pick a layer, then Apply Fix and Write go to the extension.
  const first = page.locator('.chart:not([hidden]) g.row').first();
  const module = await first.getAttribute('data-module');
  await first.click();
  assert.equal(await page.locator('#fix').isDisabled(), false);
  await page.locator('#fix').click();
  await page.locator('#write').click();
  const sent = await page.evaluate(() => (window as unknown as { __sent: unknown[] }).__sent);
  assert.deepEqual(sent.slice(-2), [{ type: 'fix', module }, { type: 'write' }]);
  await page.screenshot({ path: path.join(artifactsDir, 'sensitivity-page.png'), fullPage: true });
  assert.deepEqual(violations, []);
  await page.close();
});
