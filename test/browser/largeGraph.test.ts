// A synthetic 5,000-node QDQ graph goes through the large-graph path: layered layout + canvas.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { artifactsDir, repoRoot, venvPython } from '../support/paths';
import { openWebview, postToWebview, useWebviewHarness, waitForSent } from '../support/webviewPage';

let onnxBase64: string;
let counts: { nodes: number; qdq: number };

const harness = useWebviewHarness(() => {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'qat-graph-')), 'g5k.onnx');
  execFileSync(venvPython, [path.join(repoRoot, 'scripts', 'gen_qdq_graph.py'), '--nodes', '5000', '--out', file]);
  counts = JSON.parse(
    execFileSync(
      venvPython,
      [
        '-c',
        `import onnx, json; g = onnx.load(${JSON.stringify(file)}).graph
print(json.dumps({"nodes": len(g.node), "qdq": sum(n.op_type in ("QuantizeLinear", "DequantizeLinear") for n in g.node)}))`,
      ],
      { encoding: 'utf8' },
    ),
  );
  onnxBase64 = readFileSync(file).toString('base64');
});

/** Shows the 5k-node graph flat (on canvas). */
const showFlat = (page: Page) =>
  postToWebview(page, {
    type: 'showGraph',
    title: 'g5k.onnx',
    onnx: Buffer.from(onnxBase64, 'base64'),
    layers: [],
    threshold: 0.99,
    groups: 'flat',
  });

test('a 5k-node QDQ graph renders on canvas with every node counted, and a click selects a node', async () => {
  const { page, violations } = await openWebview(harness.browser, harness.server.origin, { width: 1000, height: 800 });
  await showFlat(page);
  const rendered = await waitForSent<{
    nodes: number;
    qdq: number;
    renderer: string;
    inWorker: boolean;
    timings: Record<string, number>;
  }>(page, 'rendered', 30_000);
  assert.equal(rendered.renderer, 'canvas');
  assert.equal(rendered.inWorker, true);
  assert.equal(rendered.nodes, counts.nodes + 2, 'every ONNX node plus the graph input and output');
  assert.equal(rendered.qdq, counts.qdq);
  for (const k of ['decode', 'layout', 'render']) assert.ok(rendered.timings[k] >= 0, k);
  assert.equal(await page.locator('#canvas canvas').count(), 1);

  // Fit shows the top of the graph at full width; the single input node sits in the first row, centred.
  const box = (await page.locator('#canvas canvas').boundingBox())!;
  await page.screenshot({ path: path.join(artifactsDir, 'webview-5k-canvas.png') });
  let found = false;
  for (let y = 5; y < 80 && !found; y += 3) {
    await page.mouse.click(box.x + box.width / 2, box.y + y);
    found = !(await page.locator('#props').isHidden());
  }
  assert.ok(found, 'clicking the first row selected nothing');
  assert.match((await page.locator('#props h3').first().textContent()) ?? '', /^(Input|QuantizeLinear)$/);
  assert.deepEqual(violations, []);
  await page.close();
});

/**
 * In the page, before its scripts: the layout worker's answers with the graph's nodes ('packed') are held until
 * window.__release() runs, so the test sees what the page draws before they arrive.
 */
function holdNodes(): void {
  const w = window as unknown as { __held: Array<() => void>; __release: () => void; __released?: boolean };
  const desc = Object.getOwnPropertyDescriptor(Worker.prototype, 'onmessage')!;
  w.__held = [];
  w.__release = () => {
    w.__released = true;
    for (const f of w.__held.splice(0)) f();
  };
  Object.defineProperty(Worker.prototype, 'onmessage', {
    configurable: true,
    get() {
      return desc.get!.call(this);
    },
    set(fn: (ev: MessageEvent) => void) {
      desc.set!.call(this, (ev: MessageEvent) => {
        if ((ev.data as { type?: string })?.type === 'packed' && !w.__released) w.__held.push(() => fn.call(this, ev));
        else fn.call(this, ev);
      });
    },
  });
}

/** The canvas's pixels after the next two frames: how many differ from the background, and a digest of them. */
const canvasPixels = (page: Page, selector: string) =>
  page.locator(selector).evaluate(
    (c: HTMLCanvasElement) =>
      new Promise<{ inked: number; digest: string }>((resolve) =>
        requestAnimationFrame(() =>
          requestAnimationFrame(() => {
            const data = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
            let inked = 0;
            let h = 0;
            for (let i = 0; i < data.length; i += 4) {
              if (data[i + 3]) inked++;
              h = (Math.imul(h, 31) + data[i] * 16777216 + data[i + 1] * 65536 + data[i + 2] * 256 + data[i + 3]) | 0;
            }
            resolve({ inked, digest: `${c.width}x${c.height}:${h}` });
          }),
        ),
      ),
  );

test("a large graph's first frame is drawn from the layout worker's scene before its nodes arrive, and it is the picture the renderer then draws", async () => {
  const { page, violations } = await openWebview(
    harness.browser,
    harness.server.origin,
    { width: 1000, height: 800 },
    1,
    holdNodes,
  );
  await showFlat(page);
  await page.locator('#canvas canvas[data-preview]').waitFor({ timeout: 30_000 });
  const preview = await canvasPixels(page, '#canvas canvas[data-preview]');
  const early = await page.evaluate(() => ({
    held: (window as unknown as { __held: unknown[] }).__held.length,
    sent: (window as unknown as { __sent: Array<{ type: string }> }).__sent.map((m) => m.type),
  }));
  assert.equal(early.held, 1, "the graph's nodes had not reached the page");
  assert.ok(!early.sent.includes('rendered'), 'nothing was rendered from the nodes yet');
  assert.ok(preview.inked > 1000, `the first frame drew the graph (${preview.inked} pixels)`);

  await page.evaluate(() => (window as unknown as { __release: () => void }).__release());
  const rendered = await waitForSent<{ renderer: string; timings: Record<string, number> }>(page, 'rendered', 30_000);
  assert.equal(rendered.renderer, 'canvas');
  const { firstFrame, decode, layout, render } = rendered.timings;
  assert.ok(firstFrame > 0 && firstFrame < decode + layout + render, JSON.stringify(rendered.timings));
  assert.equal(await page.locator('#canvas canvas[data-preview]').count(), 0, 'the renderer replaced the first frame');
  const full = await canvasPixels(page, '#canvas canvas');
  assert.equal(full.digest, preview.digest, 'the renderer draws the same picture');
  assert.deepEqual(violations, []);
  await page.close();
});

test('a large model with module scopes opens as collapsed groups; clicking one opens it, and it collapses again', async () => {
  const { page, violations } = await openWebview(harness.browser, harness.server.origin, { width: 1000, height: 800 });
  await postToWebview(page, {
    type: 'showGraph',
    title: 'g5k.onnx',
    onnx: Buffer.from(onnxBase64, 'base64'),
    layers: [],
    threshold: 0.99,
  });
  const first = await waitForSent<{ nodes: number; groups: number; total: number; renderer: string }>(
    page,
    'rendered',
    30_000,
  );
  assert.equal(first.total, counts.nodes + 2);
  assert.ok(
    first.groups >= 3 && first.nodes < 100,
    `expected a few top-level groups, got ${first.groups} groups / ${first.nodes} boxes`,
  );
  assert.equal(first.renderer, 'svg', 'a grouped view is small enough for SVG');
  const group = page.locator('svg g.node.group').first();
  const label = await group.locator('text').first().textContent();
  assert.match(label ?? '', /^\+ layer0 \(\d+ nodes\)$/);
  await page.evaluate(() => {
    (window as unknown as { __sent: unknown[] }).__sent = [];
  });
  await group.dispatchEvent('pointerdown', { clientX: 0, clientY: 0 });
  await group.dispatchEvent('pointerup', { clientX: 0, clientY: 0 });
  const second = await waitForSent<{ nodes: number; groups: number; layoutBy: string; laidOutNodes: number }>(
    page,
    'rendered',
    30_000,
  );
  assert.ok(second.nodes > first.nodes, 'opening a group shows its children');
  // Only layer0's contents were laid out: the boxes it opened into, not the rest of the view.
  assert.equal(second.layoutBy, 'group');
  assert.equal(second.laidOutNodes, second.nodes - (first.nodes - 1), 'layer0 opened into its children');
  assert.ok(
    (await page.locator('svg g.node.group text', { hasText: /^\+ layer0\.\d+ / }).count()) > 0,
    'layer0 opens into its blocks',
  );

  // Select a node inside layer0 and collapse layer0 again from the properties panel.
  const inner = page.locator('svg g.node.group', { hasText: /^\+ layer0\.0 / }).first();
  await page.evaluate(() => {
    (window as unknown as { __sent: unknown[] }).__sent = [];
  });
  await inner.dispatchEvent('pointerdown', { clientX: 0, clientY: 0 });
  await inner.dispatchEvent('pointerup', { clientX: 0, clientY: 0 });
  await waitForSent(page, 'rendered', 30_000);
  const conv = page.locator('svg g.node[data-op="Conv"]').first();
  await conv.dispatchEvent('pointerdown', { clientX: 0, clientY: 0 });
  await conv.dispatchEvent('pointerup', { clientX: 0, clientY: 0 });
  await page.evaluate(() => {
    (window as unknown as { __sent: unknown[] }).__sent = [];
  });
  await page.locator('#props').getByRole('button', { name: 'Collapse layer0', exact: true }).click();
  const third = await waitForSent<{ nodes: number; groups: number; layoutBy: string }>(page, 'rendered', 30_000);
  assert.equal(third.nodes, first.nodes);
  assert.equal(third.layoutBy, 'reused', 'the view as first drawn comes back without a layout');
  assert.deepEqual(violations, []);
  await page.screenshot({ path: path.join(artifactsDir, 'webview-groups.png') });
  await page.close();
});

let g100k: string | undefined;

test(
  'a 100k-node model opens as ~1,100 module groups (dagre ran out of stack in the worker here once)',
  { timeout: 120_000 },
  async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'qat-graph-')), 'g100k.onnx');
    execFileSync(venvPython, [path.join(repoRoot, 'scripts', 'gen_qdq_graph.py'), '--nodes', '100000', '--out', file]);
    g100k = readFileSync(file).toString('base64');
    const { page, violations } = await openWebview(harness.browser, harness.server.origin, {
      width: 1000,
      height: 800,
    });
    await postToWebview(page, {
      type: 'showGraph',
      title: 'g100k.onnx',
      onnx: Buffer.from(g100k, 'base64'),
      layers: [],
      threshold: 0.99,
    });
    const rendered = await waitForSent<{ groups: number; total: number }>(page, 'rendered', 90_000).catch(
      async (err) => {
        throw new Error(`${(err as Error).message}\n${await page.locator('#canvas').textContent()}`);
      },
    );
    assert.ok(rendered.total > 100_000);
    assert.ok(rendered.groups > 1000, `${rendered.groups} groups`);
    assert.deepEqual(violations, []);
    await page.close();
  },
);

test(
  'all 100k nodes flat on canvas: the minimap is drawn once, and dragging on it pans without redrawing it',
  { timeout: 120_000 },
  async () => {
    assert.ok(g100k, 'the 100k model comes from the test before');
    const { page, violations } = await openWebview(harness.browser, harness.server.origin, {
      width: 1000,
      height: 800,
    });
    await postToWebview(page, {
      type: 'showGraph',
      title: 'g100k.onnx',
      onnx: Buffer.from(g100k, 'base64'),
      layers: [],
      threshold: 0.99,
      groups: 'flat',
    });
    const rendered = await waitForSent<{ nodes: number; renderer: string; timings: Record<string, number> }>(
      page,
      'rendered',
      90_000,
    );
    assert.equal(rendered.renderer, 'canvas');
    assert.ok(rendered.nodes > 100_000);
    const map = page.locator('#minimap');
    assert.equal(await map.getAttribute('data-draws'), '1');
    const box = (await map.locator('canvas').boundingBox())!;
    const view = () => page.locator('#canvas canvas').getAttribute('data-view');
    const start = await view();
    // 30 drag steps down the whole overview, each waiting for the main canvas's next frame.
    const ms = await page.evaluate(
      async ({ x, y0, y1 }) => {
        const host = document.getElementById('minimap')!;
        const fire = (type: string, y: number) =>
          host.dispatchEvent(
            new PointerEvent(type, { clientX: x, clientY: y, pointerId: 1, bubbles: true, isPrimary: true }),
          );
        const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
        const t0 = performance.now();
        fire('pointerdown', y0);
        for (let i = 1; i <= 30; i++) {
          fire('pointermove', y0 + ((y1 - y0) * i) / 30);
          await frame();
        }
        fire('pointerup', y1);
        return (performance.now() - t0) / 30;
      },
      { x: box.x + box.width / 2, y0: box.y + 2, y1: box.y + box.height - 2 },
    );
    const end = await view();
    assert.notEqual(end, start);
    assert.ok(
      Number(end!.split(' ')[1]) > Number(start!.split(' ')[1]),
      `${start} -> ${end}: the view should have moved down the graph`,
    );
    assert.equal(await map.getAttribute('data-draws'), '1', 'panning must not redraw the overview');
    // Two animation frames per step; a redraw of 100k boxes per step would take far longer.
    assert.ok(ms < 250, `${ms.toFixed(1)} ms per pan step`);
    console.log(
      `# 100k flat: decode ${rendered.timings.decode.toFixed(0)} ms, layout ${rendered.timings.layout.toFixed(0)} ms, render ${rendered.timings.render.toFixed(0)} ms; minimap pan step ${ms.toFixed(1)} ms`,
    );
    assert.deepEqual(violations, []);
    await page.screenshot({ path: path.join(artifactsDir, 'webview-100k-minimap.png') });
    await page.close();
  },
);
