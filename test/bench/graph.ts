// Graph viewer benchmark: synthetic QDQ graphs of 1k / 10k / 100k nodes in headless Chromium. Our flat view
// (layered layout + canvas past 1,500 nodes) and our default grouped view against dagre + SVG (the Netron-style
// approach) in the same run.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/browser';
import { repoRoot, venvPython } from '../support/paths';
import { openWebview, postToWebview, serveWebview, waitForSent } from '../support/webviewPage';

const SIZES = (process.env.QAT_BENCH_SIZES ?? '1000,10000,100000').split(',').map(Number);
const BASELINE_TIMEOUT_MS = Number(process.env.QAT_BENCH_BASELINE_TIMEOUT_MS ?? 120_000);
// Netron 9.2.1 on this kind of machine, as recorded in issue 5 (not measured by this script).
const NETRON_SECONDS: Record<number, number> = { 1000: 1.5, 10000: 7.8, 100000: 96 };

interface Run { firstRender: number; decode: number; layout: number; render: number; frameMs: number; heapMB: number }

async function heapMB(page: Page): Promise<number> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  const { metrics } = await cdp.send('Performance.getMetrics');
  return (metrics.find((m) => m.name === 'JSHeapUsedSize')?.value ?? 0) / 2 ** 20;
}

/** Mean milliseconds per frame while dragging the view for 60 frames. */
function panFrames(page: Page): Promise<number> {
  return page.evaluate(() => new Promise<number>((resolve) => {
    const target = document.querySelector('#canvas canvas, #canvas svg') as Element;
    const r = target.getBoundingClientRect();
    let x = r.left + r.width / 2, y = r.top + r.height / 2;
    target.dispatchEvent(new PointerEvent('pointerdown', { clientX: x, clientY: y, bubbles: true }));
    const stamps: number[] = [];
    const step = (t: number) => {
      stamps.push(t);
      if (stamps.length > 60) {
        target.dispatchEvent(new PointerEvent('pointerup', { clientX: x, clientY: y, bubbles: true }));
        const d = stamps.slice(1).map((s, i) => s - stamps[i]);
        resolve(d.reduce((a, b) => a + b, 0) / d.length);
        return;
      }
      x += 7; y -= 11;
      target.dispatchEvent(new PointerEvent('pointermove', { clientX: x, clientY: y, bubbles: true }));
      requestAnimationFrame(step);
    };
    requestAnimationFrame(step);
  }));
}

async function measure(browser: Browser, origin: string, onnxBase64: string, renderer: 'auto' | 'svg', timeoutMs: number, groups: 'auto' | 'flat' = 'flat'): Promise<Run | undefined> {
  const { page } = await openWebview(browser, origin, { width: 1280, height: 900 });
  try {
    const start = Date.now();
    await postToWebview(page, { type: 'showGraph', title: 'bench', onnxBase64, layers: [], threshold: 0.99, renderer, groups });
    const r = await waitForSent<{ timings: { decode: number; layout: number; render: number } }>(page, 'rendered', timeoutMs).catch(() => undefined);
    if (!r) return undefined;
    const firstRender = Date.now() - start;
    return { firstRender, ...r.timings, frameMs: await panFrames(page), heapMB: await heapMB(page) };
  } finally {
    await page.close();
  }
}

const fmt = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`);

export async function benchGraph(): Promise<void> {
  const dir = path.join(repoRoot, 'build', 'bench');
  mkdirSync(dir, { recursive: true });
  const server = await serveWebview();
  const browser = await launchChromium();
  console.log('\n## Graph viewer (synthetic QDQ graphs, headless Chromium, 1280x900)');
  console.log('nodes   | path          | first render | decode  | layout  | draw    | pan frame | JS heap  | baseline/ours');
  try {
    for (const size of SIZES) {
      const file = path.join(dir, `qdq-${size}.onnx`);
      if (!existsSync(file)) execFileSync(venvPython, [path.join(repoRoot, 'scripts', 'gen_qdq_graph.py'), '--nodes', String(size), '--out', file]);
      const b64 = readFileSync(file).toString('base64');
      const ours = await measure(browser, server.origin, b64, 'auto', 300_000);
      const base = await measure(browser, server.origin, b64, 'svg', BASELINE_TIMEOUT_MS);
      const row = (name: string, r: Run | undefined, ratio: string, timeoutMs = BASELINE_TIMEOUT_MS) => console.log(r
        ? `${String(size).padEnd(7)} | ${name.padEnd(13)} | ${fmt(r.firstRender).padEnd(12)} | ${fmt(r.decode).padEnd(7)} | ${fmt(r.layout).padEnd(7)} | ${fmt(r.render).padEnd(7)} | ${r.frameMs.toFixed(1).padStart(6)} ms | ${r.heapMB.toFixed(0).padStart(5)} MB | ${ratio}`
        : `${String(size).padEnd(7)} | ${name.padEnd(13)} | did not render within ${fmt(timeoutMs)} | ${ratio}`);
      row(size > 1500 ? 'flat, canvas' : 'flat, svg', ours, '', 300_000);
      if (size > 1500) row('module groups', await measure(browser, server.origin, b64, 'auto', 300_000, 'auto'), 'opens collapsed to top-level modules', 300_000);
      const ratio = ours && base ? `${(base.firstRender / ours.firstRender).toFixed(1)}x first render, ${(base.heapMB / ours.heapMB).toFixed(1)}x heap` : ours ? `> ${(BASELINE_TIMEOUT_MS / ours.firstRender).toFixed(0)}x first render` : '';
      row('dagre + svg', base, ratio);
      if (ours && NETRON_SECONDS[size]) console.log(`        | Netron 9.2.1 figure recorded in issue 5 (not run here): ${NETRON_SECONDS[size]} s -> ${(NETRON_SECONDS[size] * 1000 / ours.firstRender).toFixed(1)}x`);
    }
  } finally {
    await browser.close();
    server.close();
  }
}
