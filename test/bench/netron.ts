// Netron's web viewer run from its published source (the `netron` PyPI package serves the same
// HTML/JS as netron.app) beside ours, on the same files in the same headless Chromium: time until the
// model is laid out and drawn (Netron switches its page to the `default` screen then), JS heap, and the
// peak memory of a browser launched for that run alone.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { launchChromium } from '../support/browser';
import { cacheDir, venvPython } from '../support/paths';
import { sampleBrowserMemory } from '../support/procMemory';

export const NETRON_VERSION = '9.3.3';
const target = path.join(cacheDir, `netron-${NETRON_VERSION}`);

/** Installs the pinned netron package once into the cache (bench-only; the extension never uses it). */
export function ensureNetron(): void {
  if (existsSync(path.join(target, 'netron', 'index.html'))) return;
  execFileSync(
    venvPython,
    ['-m', 'pip', 'install', '--quiet', '--no-deps', '--target', target, `netron==${NETRON_VERSION}`],
    { stdio: 'inherit' },
  );
}

export interface NetronServer {
  url: string;
  stop(): void;
}

export function serveNetron(file: string): Promise<NetronServer> {
  const code =
    'import sys; sys.path.insert(0, sys.argv[1]); import netron; ' +
    "a = netron.serve(sys.argv[2], address=('127.0.0.1', 0), browse=False); print('PORT', a[1], flush=True); netron.wait()";
  const proc: ChildProcess = spawn(venvPython, ['-c', code, target, file], { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      proc.kill();
      reject(new Error(`netron did not start: ${out}`));
    }, 30_000);
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /PORT (\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ url: `http://127.0.0.1:${m[1]}/`, stop: () => proc.kill() });
      }
    });
    proc.stderr!.on('data', (d: Buffer) => {
      out += d.toString();
    });
    proc.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`netron exited (${code}): ${out}`));
    });
  });
}

export interface NetronRun {
  firstRender: number;
  heapMB: number;
  browserMB: number;
}

/**
 * Milliseconds from navigation until Netron shows the drawn graph, in a Chromium of its own whose process
 * tree is sampled from launch until then; undefined on timeout or error, with the peak seen so far passed
 * to onPeak in every case.
 */
export async function measureNetron(
  file: string,
  timeoutMs: number,
  onPeak?: (browserMB: number) => void,
): Promise<NetronRun | undefined> {
  const server = await serveNetron(file);
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
    // Netron asks for cookie consent first (after a lookup that needs the internet): answered beforehand.
    await page.context().addCookies([{ name: 'consent', value: String(Date.now()), url: server.url }]);
    const start = Date.now();
    await page.goto(server.url);
    // Netron replaces window.eval, so page.evaluate cannot run there; locators work from an isolated world.
    const done = await page
      .locator('body.default, body.alert')
      .waitFor({ state: 'attached', timeout: timeoutMs })
      .then(async () =>
        ((await page.locator('body').getAttribute('class')) ?? '').includes('default') ? 'default' : 'alert',
      )
      .catch(() => undefined);
    if (done !== 'default') return undefined;
    const firstRender = Date.now() - start;
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Performance.enable');
    const { metrics } = await cdp.send('Performance.getMetrics');
    const heapMB = (metrics.find((m) => m.name === 'JSHeapUsedSize')?.value ?? 0) / 2 ** 20;
    return { firstRender, heapMB, browserMB: await memory.stop() };
  } finally {
    onPeak?.(await memory.stop());
    await browser.close();
    server.stop();
  }
}
