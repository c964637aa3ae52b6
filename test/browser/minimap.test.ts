// The minimap: an overview of the whole graph with the visible part outlined; pressing or dragging on it pans the
// main view, with either renderer, without redrawing the overview.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { artifactsDir, repoRoot } from '../support/paths';
import { openWebview, postToWebview, useWebviewHarness, waitForSent } from '../support/webviewPage';

const onnxBase64 = readFileSync(path.join(repoRoot, 'test', 'fixtures', 'digits', 'digits.qdq.onnx')).toString(
  'base64',
);
const harness = useWebviewHarness();

type Box = { x: number; y: number; width: number; height: number };
const outline = (page: Page) => page.locator('#minimap .viewport').boundingBox() as Promise<Box>;
const centre = (b: Box) => ({ x: b.x + b.width / 2, y: b.y + b.height / 2 });

/** The main view's transform as the renderer holds it: the SVG viewBox, or the canvas's x, y and scale. */
const transform = (page: Page, renderer: 'svg' | 'canvas') =>
  renderer === 'svg'
    ? page.locator('#canvas svg').getAttribute('viewBox')
    : page.locator('#canvas canvas').getAttribute('data-view');

for (const renderer of ['svg', 'canvas'] as const) {
  test(`${renderer}: the minimap outlines the view; pressing and dragging on it pans the main view`, async () => {
    const { page, violations } = await openWebview(harness.browser, harness.server.origin, {
      width: 1000,
      height: 800,
    });
    await postToWebview(page, {
      type: 'showGraph',
      title: 'digits.qdq.onnx',
      onnx: Buffer.from(onnxBase64, 'base64'),
      layers: [],
      threshold: 0.99,
      renderer,
    });
    const rendered = await waitForSent<{ renderer: string }>(page, 'rendered', 15_000);
    assert.equal(rendered.renderer, renderer);
    const map = page.locator('#minimap');
    assert.equal(await map.isVisible(), true);
    const mapBox = (await map.locator('canvas').boundingBox())!;
    assert.ok(
      mapBox.width >= 36 && mapBox.width <= 181 && mapBox.height >= 36 && mapBox.height <= 181,
      JSON.stringify(mapBox),
    );
    // The overview is a picture of the nodes: not blank.
    const inked = await map.locator('canvas').evaluate((c: HTMLCanvasElement) => {
      const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
      return n / (d.length / 4);
    });
    assert.ok(inked > 0.05, `only ${(inked * 100).toFixed(1)}% of the minimap is drawn`);

    // Zoom the main view in: the outline shrinks to the part on screen.
    const before = await outline(page);
    const main = (await page.locator('#canvas').boundingBox())!;
    await page.mouse.move(main.x + main.width / 2, main.y + main.height / 2);
    for (let i = 0; i < 8; i++) await page.mouse.wheel(0, -100);
    await page.waitForFunction(
      (b) => {
        const r = document.querySelector('#minimap .viewport')!.getBoundingClientRect();
        return r.width * r.height < b.width * b.height * 0.5;
      },
      before,
      { timeout: 5_000 },
    );
    const zoomed = await transform(page, renderer);

    // A press on the minimap centres the main view there.
    const draws = await map.getAttribute('data-draws');
    const target = { x: mapBox.x + mapBox.width / 2, y: mapBox.y + mapBox.height * 0.8 };
    await page.mouse.click(target.x, target.y);
    await page.waitForFunction(
      ([r, t]) =>
        (r === 'svg'
          ? document.querySelector('#canvas svg')!.getAttribute('viewBox')
          : document.querySelector('#canvas canvas')!.getAttribute('data-view')) !== t,
      [renderer, zoomed] as const,
      { timeout: 5_000 },
    );
    let c = centre(await outline(page));
    assert.ok(
      Math.abs(c.x - target.x) < 3 && Math.abs(c.y - target.y) < 3,
      `outline centred at ${JSON.stringify(c)}, pressed at ${JSON.stringify(target)}`,
    );

    // A drag moves it along; the overview itself is not redrawn.
    const pressed = await transform(page, renderer);
    await page.mouse.move(target.x, target.y);
    await page.mouse.down();
    const to = { x: target.x, y: mapBox.y + mapBox.height * 0.3 };
    await page.mouse.move(to.x, to.y, { steps: 6 });
    await page.mouse.up();
    await page.waitForFunction(
      ([r, t]) =>
        (r === 'svg'
          ? document.querySelector('#canvas svg')!.getAttribute('viewBox')
          : document.querySelector('#canvas canvas')!.getAttribute('data-view')) !== t,
      [renderer, pressed] as const,
      { timeout: 5_000 },
    );
    c = centre(await outline(page));
    assert.ok(Math.abs(c.y - to.y) < 3, `outline centred at ${c.y}, dragged to ${to.y}`);
    const after = await transform(page, renderer);
    // The view moved up the graph (smaller y), at the same zoom.
    const parts = (t: string | null) => t!.split(' ').map(Number);
    assert.ok(parts(after)[1] < parts(pressed)[1], `${pressed} -> ${after}`);
    // Third of each: the viewBox width (svg), the scale (canvas).
    assert.equal(parts(after)[2], parts(pressed)[2], 'panning keeps the zoom');
    assert.equal(await map.getAttribute('data-draws'), draws, 'panning must not redraw the overview');
    assert.deepEqual(violations, []);
    await page.screenshot({ path: path.join(artifactsDir, `minimap-${renderer}.png`) });
    await page.close();
  });
}
