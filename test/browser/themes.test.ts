// The graph view under VS Code's light, dark and high-contrast themes: the page gets the body class and the
// --vscode-* values VS Code 1.139 injects (read from a real VS Code by test/support/dumpThemeVars.ts), and the
// screenshot's pixels must show each theme's background, Q/DQ colour and foreground, with readable labels.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { CompareLayersResult } from '../../protocol/kernel';
import { contrast, over, parseRgb, type Rgba } from '../../webview/view/contrast';
import { artifactsDir, repoRoot } from '../support/paths';
import { openWebview, postToWebview, useWebviewHarness, waitForSent } from '../support/webviewPage';

interface Theme {
  theme: string;
  bodyClass: string;
  vars: Record<string, string>;
}
const themes = (
  JSON.parse(readFileSync(path.join(repoRoot, 'test', 'fixtures', 'themes', 'vscode-themes.json'), 'utf8')) as {
    themes: Record<string, Theme>;
  }
).themes;
// Not theme colours: VS Code sets these from the editor settings (its Linux defaults here).
const FONT_VARS = {
  '--vscode-font-family': 'system-ui, "Ubuntu", "Droid Sans", sans-serif',
  '--vscode-font-size': '13px',
  '--vscode-font-weight': 'normal',
  '--vscode-editor-font-family': '"Droid Sans Mono", "monospace", monospace',
  '--vscode-editor-font-size': '14px',
  '--vscode-editor-font-weight': 'normal',
};
const fixtures = path.join(repoRoot, 'test', 'fixtures', 'digits');
const FILE = 'digits.converted.qatgraph.json';
const graphBase64 = readFileSync(path.join(fixtures, FILE)).toString('base64');
const result = JSON.parse(readFileSync(path.join(fixtures, 'compare-layers.json'), 'utf8')) as CompareLayersResult;
const DPR = 2;

const harness = useWebviewHarness();

type Box = { x: number; y: number; width: number; height: number };
const hex = (c: Rgba) =>
  '#' +
  c
    .slice(0, 3)
    .map((v) => Math.round(v).toString(16).padStart(2, '0'))
    .join('');
const colourOf = (css: string, background: Rgba = [255, 255, 255, 1]) => over(parseCss(css), background);
function parseCss(css: string): Rgba {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})?$/i.exec(css);
  if (m) return [parseInt(m[1], 16), parseInt(m[2], 16), parseInt(m[3], 16), m[4] ? parseInt(m[4], 16) / 255 : 1];
  const rgb = parseRgb(css);
  assert.ok(rgb, `cannot read colour ${css}`);
  return rgb;
}
const distance = (a: Rgba, b: Rgba) => Math.max(...[0, 1, 2].map((i) => Math.abs(a[i] - b[i])));

/** The screenshot's pixels inside each box (CSS pixels; every `step`-th pixel each way), decoded in a plain page. */
async function pixelsIn(browser: Browser, png: Buffer, boxes: Array<Box & { step?: number }>): Promise<Rgba[][]> {
  const page = await browser.newPage();
  try {
    const raw = await page.evaluate(
      async ({ b64, boxes, dpr }) => {
        const img = new Image();
        img.src = `data:image/png;base64,${b64}`;
        await img.decode();
        const c = document.createElement('canvas');
        c.width = img.width;
        c.height = img.height;
        const ctx = c.getContext('2d', { willReadFrequently: true })!;
        ctx.drawImage(img, 0, 0);
        // As a base64 string of RGB bytes: nested arrays of millions of pixels cross the protocol slowly.
        return boxes.map((b) => {
          const x = Math.round(b.x * dpr),
            y = Math.round(b.y * dpr),
            w = Math.max(1, Math.round(b.width * dpr)),
            h = Math.max(1, Math.round(b.height * dpr));
          const d = ctx.getImageData(x, y, w, h).data;
          const step = b.step ?? 1;
          let s = '';
          for (let r = 0; r < h; r += step)
            for (let col = 0; col < w; col += step) {
              const i = 4 * (r * w + col);
              s += String.fromCharCode(d[i], d[i + 1], d[i + 2]);
            }
          return btoa(s);
        });
      },
      { b64: png.toString('base64'), boxes, dpr: DPR },
    );
    return raw.map((b64) => {
      const bytes = Buffer.from(b64, 'base64');
      const out: Rgba[] = [];
      for (let i = 0; i + 2 < bytes.length; i += 3) out.push([bytes[i], bytes[i + 1], bytes[i + 2], 1]);
      return out;
    });
  } finally {
    await page.close();
  }
}

/** The colour most pixels have: a box's fill, a region's background. */
function mode(px: Rgba[]): Rgba {
  const counts = new Map<string, { n: number; c: Rgba }>();
  for (const p of px) {
    const k = p.slice(0, 3).join();
    const e = counts.get(k) ?? counts.set(k, { n: 0, c: p }).get(k)!;
    e.n++;
  }
  return [...counts.values()].sort((a, b) => b.n - a.n)[0].c;
}

/** Text pixels are the ones furthest from the fill; the extreme one is the glyphs' ink. */
const ink = (px: Rgba[], fill: Rgba) =>
  px.reduce((best, p) => (contrast(p, fill) > contrast(best, fill) ? p : best), fill);

async function themedPage(kind: string): Promise<{ page: Page; violations: string[] }> {
  const t = themes[kind];
  const opened = await openWebview(harness.browser, harness.server.origin, { width: 1000, height: 900 }, DPR);
  // What VS Code's webview host does on load and on every theme change.
  await opened.page.evaluate(
    ({ cls, vars }) => {
      document.body.classList.add(cls);
      document.body.dataset.vscodeThemeKind = cls;
      for (const [k, v] of Object.entries(vars)) document.documentElement.style.setProperty(k, v);
    },
    { cls: t.bodyClass, vars: { ...t.vars, ...FONT_VARS } },
  );
  await postToWebview(opened.page, {
    type: 'showGraph',
    title: FILE,
    onnx: Buffer.from(graphBase64, 'base64'),
    baseDir: fixtures,
    layers: result.layers,
    threshold: result.threshold,
  });
  await waitForSent(opened.page, 'rendered', 15_000);
  // Zoom in on the middle of the graph (pool, flatten, fc1), where Q/DQ, plain and coloured boxes sit together.
  const main = (await opened.page.locator('#canvas').boundingBox())!;
  await opened.page.mouse.move(main.x + main.width / 2, main.y + main.height / 2);
  for (let i = 0; i < 3; i++) await opened.page.mouse.wheel(0, -100);
  await opened.page.locator('#search input').fill('flatten');
  await opened.page.locator('#search input').press('Enter');
  await opened.page.keyboard.press('Escape');
  return opened;
}

interface Measured {
  background: Rgba;
  qdqFill: Rgba;
  labels: Record<string, { fill: Rgba; ink: Rgba; ratio: number }>;
}
const measured: Record<string, Measured> = {};

// Boxes to read: a Q/DQ node, a plain op, a layer coloured by its cosine band (fc1 is green, fc2 and conv2 yellow).
const NODES = ['quantize_per_tensor_default_4', 'dequantize_per_tensor_default_4', 'flatten', 'linear', 'max_pool2d'];

for (const kind of Object.keys(themes)) {
  test(`${kind} theme (${themes[kind].theme}): background, Q/DQ colour and readable labels from the screenshot`, async () => {
    const t = themes[kind];
    const { page, violations } = await themedPage(kind);
    assert.equal(await page.evaluate(() => document.body.className), t.bodyClass);
    const boxes: Array<Box & { step?: number }> = [{ ...(await page.locator('#canvas').boundingBox())!, step: 6 }];
    for (const name of NODES) {
      const node = page.locator(`svg g.node[data-name="${name}"]`);
      const rect = (await node.locator('rect').boundingBox())!;
      const label = (await node.locator('text:not(.badge)').first().boundingBox())!;
      assert.ok(rect.y > boxes[0].y && rect.y + rect.height < boxes[0].y + boxes[0].height, `${name} is off screen`);
      assert.ok(label.height * DPR >= 16, `${name}'s label is ${label.height} px high: zoom in further`);
      // Inside the stroke, and the label's own box.
      boxes.push({ x: rect.x + 3, y: rect.y + 3, width: rect.width - 6, height: rect.height - 6 }, label);
    }
    const png = await page.screenshot({ path: path.join(artifactsDir, `theme-${kind}.png`) });
    const [area, ...rest] = await pixelsIn(harness.browser, png, boxes);
    const background = mode(area);
    const editorBg = colourOf(t.vars['--vscode-editor-background']);
    assert.ok(distance(background, editorBg) <= 2, `background ${hex(background)}, theme says ${hex(editorBg)}`);

    const labels: Measured['labels'] = {};
    NODES.forEach((name, i) => {
      const fill = mode(rest[2 * i]);
      const text = ink(rest[2 * i + 1], fill);
      labels[name] = { fill, ink: text, ratio: contrast(text, fill) };
    });
    const qdqFill = labels.quantize_per_tensor_default_4.fill;
    const purple = colourOf(t.vars['--vscode-charts-purple'], editorBg);
    assert.ok(distance(qdqFill, purple) <= 2, `Q/DQ box ${hex(qdqFill)}, theme's charts.purple ${hex(purple)}`);
    assert.ok(distance(labels.dequantize_per_tensor_default_4.fill, purple) <= 2);
    // Ops by category (Netron's palette): flatten is layout, max_pool2d pooling; deep tones in the dark theme,
    // light tints in the light one, and in high contrast the plain widget background with the editor's ink.
    const widget = colourOf(t.vars['--vscode-editorWidget-background'], editorBg);
    const CATEGORY = {
      dark: { flatten: '#6c4f47', max_pool2d: '#335533' },
      light: { flatten: '#e6d6cf', max_pool2d: '#cfe8cf' },
    } as Record<string, Record<string, string>>;
    for (const name of ['flatten', 'max_pool2d']) {
      const want = CATEGORY[kind] ? colourOf(CATEGORY[kind][name]) : widget;
      assert.ok(distance(labels[name].fill, want) <= 2, `${name} box ${hex(labels[name].fill)}, want ${hex(want)}`);
    }
    assert.ok(distance(labels.flatten.fill, labels.max_pool2d.fill) > 20 || !CATEGORY[kind], 'categories look alike');
    if (!CATEGORY[kind]) {
      const fg = colourOf(t.vars['--vscode-editor-foreground'], widget);
      assert.ok(
        distance(labels.flatten.ink, fg) <= 40,
        `op label ${hex(labels.flatten.ink)}, theme's editor.foreground ${hex(fg)}`,
      );
    }
    // fc1 is within the threshold: green.
    const green = colourOf(t.vars['--vscode-charts-green'], editorBg);
    assert.ok(
      distance(labels.linear.fill, green) <= 2,
      `fc1 ${hex(labels.linear.fill)}, theme's charts.green ${hex(green)}`,
    );

    // WCAG AA for text (4.5:1) on every kind of box, in every theme, high contrast included.
    for (const [name, l] of Object.entries(labels)) {
      assert.ok(l.ratio >= 4.5, `${kind}: ${name} label ${hex(l.ink)} on ${hex(l.fill)} is ${l.ratio.toFixed(2)}:1`);
    }
    measured[kind] = { background, qdqFill, labels };
    assert.deepEqual(violations, []);
    await page.close();
  });
}

test('the themes differ as VS Code defines them: backgrounds, foregrounds and the Q/DQ colour', () => {
  assert.deepEqual(Object.keys(measured).sort(), ['dark', 'high-contrast', 'light'], 'each theme was measured');
  const { light, dark } = measured;
  const hc = measured['high-contrast'];
  const lum = (c: Rgba) => contrast(c, [0, 0, 0, 1]);
  assert.ok(
    lum(light.background) > lum(dark.background) && lum(dark.background) > lum(hc.background),
    'light > dark > HC (black)',
  );
  assert.equal(hex(hc.background), '#000000');
  // Light themes get dark text on light boxes, dark themes the reverse.
  assert.ok(lum(light.labels.flatten.ink) < lum(light.labels.flatten.fill));
  assert.ok(lum(dark.labels.flatten.ink) > lum(dark.labels.flatten.fill));
  assert.ok(lum(hc.labels.flatten.ink) > lum(hc.labels.flatten.fill));
  // Light Modern's purple is darker than Dark Modern's; HC shares Dark's purple on a black background.
  assert.ok(distance(light.qdqFill, dark.qdqFill) > 40, `${hex(light.qdqFill)} vs ${hex(dark.qdqFill)}`);
  assert.ok(lum(light.qdqFill) < lum(dark.qdqFill));
  assert.ok(distance(dark.qdqFill, hc.qdqFill) <= 2);
  // On that purple the label takes whichever side reads: light on Light's dark purple, dark on Dark's light one.
  assert.ok(lum(light.labels.quantize_per_tensor_default_4.ink) > lum(light.qdqFill));
  assert.ok(lum(dark.labels.quantize_per_tensor_default_4.ink) < lum(dark.qdqFill));
});
