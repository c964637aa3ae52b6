// Google Model Explorer (ai-edge-model-explorer with its ONNX adapter model-explorer-onnx, both pinned in
// python-helpers/requirements-bench-model-explorer.txt) beside ours, on the same files in the same headless
// Chromium. Its local server runs headless on the loopback address with the model named on its command line;
// the page asks the server to convert the ONNX file (the adapter turns it into Model Explorer's graph JSON),
// processes and lays the graph out in a web worker, then draws it with WebGL (three.js). Measured: the
// conversion (the page's convert request, from sending it until its reply has arrived), first render (from
// navigation until the first animation frame after the one in which its renderer issued its first draw call
// on the graph canvas), the pan frame as ours (60 frames of dragging), JS heap and peak browser memory.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { launchChromium } from '../support/browser';
import { cacheDir, repoRoot } from '../support/paths';
import { sampleBrowserMemory } from '../support/procMemory';
import { conversionError, modelExplorerUrl } from './modelExplorerApi';

export const MODEL_EXPLORER_VERSION = '0.1.34';
export const MODEL_EXPLORER_ONNX_VERSION = '0.4.2';
const venv = path.join(cacheDir, 'venv-model-explorer');
/** QAT_BENCH_ME_SCREENSHOTS=<dir>: a screenshot of each run at its first render and after the pan, to check both by eye. */
const SCREENSHOTS = process.env.QAT_BENCH_ME_SCREENSHOTS;
const python = path.join(venv, 'bin', 'python');

/** Creates the pinned Model Explorer environment once (scripts/setup.sh bench; bench-only, never on the test path). */
export function ensureModelExplorer(): void {
  try {
    execFileSync('bash', [path.join(repoRoot, 'scripts', 'setup.sh'), 'bench'], { stdio: 'inherit' });
  } catch (err) {
    throw new Error(
      `could not make the Model Explorer environment (QAT_BENCH_MODEL_EXPLORER=0 leaves it out): ${(err as Error).message}`,
      { cause: err },
    );
  }
  if (!existsSync(python)) throw new Error(`no Model Explorer environment at ${venv}`);
}

export interface ModelExplorerServer {
  url: string;
  stop(): void;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Starts `model-explorer <file> --no_open_in_browser` on a free loopback port, resolved once it serves. */
export async function serveModelExplorer(file: string): Promise<ModelExplorerServer> {
  const port = await freePort();
  const args = ['-u', '-m', 'model_explorer', path.resolve(file), '--no_open_in_browser'];
  args.push('--host', '127.0.0.1', '--port', String(port), '--extensions', 'model_explorer_onnx');
  const proc: ChildProcess = spawn(python, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      proc.kill();
      reject(new Error(`Model Explorer did not start within 60 s: ${out}`));
    }, 60_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      // Printed after the server has answered its own health check.
      if (/Starting Model Explorer server at/.test(out)) {
        clearTimeout(timer);
        resolve({ url: modelExplorerUrl(`http://127.0.0.1:${port}`, file), stop: () => proc.kill() });
      }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
    proc.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`Model Explorer exited (${code}): ${out}`));
    });
  });
}

/**
 * Installed before any script of the page: wraps the draw calls of the WebGL context that Model Explorer's
 * renderer takes on its graph canvas (`<canvas class="main">` in `<webgl-renderer>`). Its renderer draws on
 * demand and the canvas gets no draw call before the laid-out graph is in the scene, so the first draw call
 * marks the first frame with the graph in it; the next animation frame after it marks that frame as done
 * (the same end mark as our own `rendered` timing).
 */
function markFirstGraphDraw(): void {
  const w = window as unknown as { __meFirstDraw?: number; __meDrawn?: number };
  const getContext = HTMLCanvasElement.prototype.getContext;
  HTMLCanvasElement.prototype.getContext = function (this: HTMLCanvasElement, type: string, ...rest: unknown[]) {
    const ctx = (getContext as (...a: unknown[]) => unknown).call(this, type, ...rest) as Record<string, unknown>;
    if (ctx && /^webgl/.test(type) && this.classList.contains('main') && !ctx.__meMarked) {
      ctx.__meMarked = true;
      for (const name of ['drawArrays', 'drawElements', 'drawArraysInstanced', 'drawElementsInstanced']) {
        const draw = ctx[name] as ((...a: unknown[]) => void) | undefined;
        if (!draw) continue;
        ctx[name] = function (this: unknown, ...a: unknown[]) {
          if (w.__meFirstDraw === undefined) {
            w.__meFirstDraw = performance.now();
            requestAnimationFrame(() => {
              w.__meDrawn = performance.now();
            });
          }
          return draw.apply(this, a);
        };
      }
    }
    return ctx;
  } as unknown as typeof getContext;
}

/** Mean milliseconds per frame while dragging Model Explorer's view for 60 frames (d3-zoom: mouse events). */
function panFrames(page: Page): Promise<number> {
  return page.evaluate(
    () =>
      new Promise<number>((resolve) => {
        const target = document.querySelector('webgl-renderer canvas.main') as Element;
        const r = target.getBoundingClientRect();
        let x = r.left + r.width / 2,
          y = r.top + r.height / 2;
        const mouse = (type: string) =>
          target.dispatchEvent(
            new MouseEvent(type, { clientX: x, clientY: y, bubbles: true, cancelable: true, view: window }),
          );
        mouse('mousedown');
        const stamps: number[] = [];
        const step = (t: number) => {
          stamps.push(t);
          if (stamps.length > 60) {
            mouse('mouseup');
            const d = stamps.slice(1).map((s, i) => s - stamps[i]);
            resolve(d.reduce((a, b) => a + b, 0) / d.length);
            return;
          }
          x += 7;
          y -= 11;
          mouse('mousemove');
          requestAnimationFrame(step);
        };
        requestAnimationFrame(step);
      }),
  );
}

export interface ModelExplorerRun {
  firstRender: number;
  /** The convert request: the ONNX adapter's conversion on the server plus the graph JSON's transfer. */
  convert: number;
  /** Bytes of the graph JSON the adapter produced. */
  jsonBytes: number;
  frameMs: number;
  heapMB: number;
  browserMB: number;
}

export type ModelExplorerResult = { ok: true; run: ModelExplorerRun } | { ok: false; reason: string };

/**
 * One measured run in a Chromium of its own whose process tree is sampled from launch until the pan and the
 * heap reading are done; the peak seen so far goes to onPeak in every case.
 */
export async function measureModelExplorer(
  file: string,
  timeoutMs: number,
  onPeak?: (browserMB: number) => void,
): Promise<ModelExplorerResult> {
  const server = await serveModelExplorer(file);
  const browser = await launchChromium().catch((err) => {
    server.stop();
    throw err;
  });
  const memory = await sampleBrowserMemory(browser).catch(async (err) => {
    await browser.close();
    server.stop();
    throw err;
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    // Offline and the same with a network: its web fonts from the internet and its version check stay out.
    await page.route(/^https?:\/\/(?!127\.0\.0\.1[:/])/, (route) => route.abort());
    await page.route('**/api/v1/check_new_version', (route) =>
      route.fulfill({ json: { version: '', runningVersion: '', releaseUrl: '', desktopAppUrl: '' } }),
    );
    await page.addInitScript(markFirstGraphDraw);
    let convert: { ms: number; bytes: number } | undefined;
    let failed: string | undefined;
    page.on('requestfinished', (request) => {
      if (!request.url().includes('/apipost/v1/send_command')) return;
      void request
        .response()
        .then(async (response) => {
          const body = (await response?.body()) ?? Buffer.alloc(0);
          const error = conversionError(body);
          if (error) failed = `conversion failed: ${error}`;
          convert = { ms: request.timing().responseEnd, bytes: body.length };
        })
        .catch(() => undefined);
    });
    // An uncaught error in the page or its worker leaves it at "Processing graph..." for good: a run whose
    // graph is not drawn within 15 s of one ends there, with that error.
    let uncaught: { error: string; at: number } | undefined;
    page.on('pageerror', (err) => {
      uncaught ??= { error: `${err.name}: ${err.message}`, at: Date.now() };
    });
    const start = Date.now();
    await page.goto(server.url);
    const deadline = start + timeoutMs;
    let drawn: number | undefined;
    while (Date.now() < deadline && !failed && !(uncaught && Date.now() - uncaught.at > 15_000)) {
      drawn = await page.evaluate(() => (window as unknown as { __meDrawn?: number }).__meDrawn);
      if (drawn !== undefined) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    if (failed) return { ok: false, reason: failed };
    if (drawn === undefined) {
      const where = convert ? `conversion took ${(convert.ms / 1000).toFixed(1)} s` : 'conversion still running';
      if (uncaught)
        return {
          ok: false,
          reason: `failed after ${((uncaught.at - start) / 1000).toFixed(0)} s, nothing drawn: ${uncaught.error} (${where})`,
        };
      return { ok: false, reason: `did not finish in ${(timeoutMs / 1000).toFixed(0)} s (${where})` };
    }
    // The convert reply's body is read asynchronously: it is in by the time the graph is drawn, or shortly after.
    for (let i = 0; i < 50 && !convert; i++) await new Promise((r) => setTimeout(r, 100));
    const timeOrigin = await page.evaluate(() => performance.timeOrigin);
    const firstRender = timeOrigin + drawn - start;
    const shot = (when: string) =>
      SCREENSHOTS ? page.screenshot({ path: path.join(SCREENSHOTS, `${path.basename(file)}-${when}.png`) }) : undefined;
    await shot('rendered');
    const frameMs = await panFrames(page);
    await shot('panned');
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Performance.enable');
    const { metrics } = await cdp.send('Performance.getMetrics');
    const heapMB = (metrics.find((m) => m.name === 'JSHeapUsedSize')?.value ?? 0) / 2 ** 20;
    const browserMB = await memory.stop();
    return {
      ok: true,
      run: { firstRender, convert: convert?.ms ?? NaN, jsonBytes: convert?.bytes ?? NaN, frameMs, heapMB, browserMB },
    };
  } finally {
    onPeak?.(await memory.stop());
    await browser.close();
    server.stop();
  }
}
