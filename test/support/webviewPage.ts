// Serves the built webview page the way VS Code would (same HTML and CSP) with acquireVsCodeApi stubbed,
// for the browser tests and the graph benchmark.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { mkdirSync } from 'node:fs';
import { after, before } from 'node:test';
import type { Browser, Frame, Page } from 'playwright-core';
import type { CompareLayersResult } from '../../protocol/kernel';
import type { ToWebview } from '../../protocol/webview';
import { webviewHtml } from '../../client/editors/html';
import { launchChromium } from './browser';
import { artifactsDir, repoRoot } from './paths';

export interface WebviewServer {
  origin: string;
  close(): void;
}

export async function serveWebview(): Promise<WebviewServer> {
  const webviewDir = path.join(repoRoot, 'out', 'webview');
  let origin = '';
  const server: Server = createServer((req, res) => {
    if (req.url === '/') {
      res.setHeader('content-type', 'text/html');
      res.end(
        webviewHtml({
          cspSource: origin,
          nonce: 'testnonce0123456789',
          scriptUri: `${origin}/main.js`,
          title: 'graph',
        }),
      );
      return;
    }
    try {
      const body = readFileSync(path.join(webviewDir, path.basename(req.url ?? '')));
      res.setHeader('content-type', req.url?.endsWith('.js') ? 'text/javascript' : 'application/octet-stream');
      res.end(body);
    } catch {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return { origin, close: () => server.close() };
}

export interface OpenedPage {
  page: Page;
  violations: string[];
  /** From the navigation's start (after the tab exists, as a VS Code webview's frame does) until the page posted
   * `ready`, by the page's own clock (as Model Explorer's first draw is timed): the harness's polling for the
   * message, tens to hundreds of ms under load, is not the page's time. */
  loadMs: number;
}

/** Opens the page, records CSP violations and page errors, and waits for the webview's `ready`. */
export async function openWebview(
  browser: Browser,
  origin: string,
  viewport = { width: 1100, height: 1100 },
  deviceScaleFactor = 1,
  /** Runs in the page before its own scripts (as page.addInitScript). */
  beforeLoad?: () => void,
): Promise<OpenedPage> {
  const page = await browser.newPage({ viewport, deviceScaleFactor });
  if (beforeLoad) await page.addInitScript(beforeLoad);
  const violations: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/.test(m.text())) violations.push(m.text());
  });
  page.on('pageerror', (e) => violations.push(`page error: ${e.message}`));
  await page.addInitScript(() => {
    const w = window as unknown as { __sent: unknown[]; __readyAt?: number; acquireVsCodeApi: () => unknown };
    w.__sent = [];
    // VS Code keeps a webview's state across reloads of its page; sessionStorage does the same here.
    w.acquireVsCodeApi = () => ({
      postMessage: (m: { type?: string }) => {
        if (m?.type === 'ready') w.__readyAt ??= performance.timeOrigin + performance.now();
        w.__sent.push(m);
      },
      getState: () => JSON.parse(sessionStorage.getItem('vscode-state') ?? 'null') ?? undefined,
      setState: (s: unknown) => sessionStorage.setItem('vscode-state', JSON.stringify(s)),
    });
  });
  const navigating = Date.now();
  await page.goto(origin + '/');
  await page.waitForFunction(
    () => (window as unknown as { __sent: Array<{ type: string }> }).__sent.some((m) => m.type === 'ready'),
    null,
    { timeout: 10_000 },
  );
  const readyAt = await page.evaluate(() => (window as unknown as { __readyAt: number }).__readyAt);
  return { page, violations, loadMs: readyAt - navigating };
}

/** Posts as the extension host does; a showGraph's bytes cross the DevTools protocol as base64 and arrive as a
 * Uint8Array, as VS Code's postMessage delivers them. */
export const postToWebview = (page: Page, msg: ToWebview) =>
  msg.type === 'showGraph'
    ? page.evaluate(
        ({ m, b64, layouts }) => {
          const bin = atob(b64);
          const onnx = new Uint8Array(bin.length);
          for (let i = 0; i < bin.length; i++) onnx[i] = bin.charCodeAt(i);
          window.postMessage(
            {
              ...m,
              onnx,
              ...(layouts ? { layouts: layouts.map((l) => ({ ...l, boxes: new Float64Array(l.boxes) })) } : {}),
            },
            '*',
          );
        },
        {
          m: { ...msg, onnx: undefined, layouts: undefined },
          b64: Buffer.from(msg.onnx).toString('base64'),
          // Kept layouts' boxes (Float64Array) cross as plain arrays.
          layouts: msg.layouts?.map((l) => ({ ...l, boxes: [...l.boxes] })),
        },
      )
    : page.evaluate((m) => window.postMessage(m, '*'), msg);

/** The webview's last message of a type, waiting for it (typed arrays in it come back as plain arrays). */
export async function waitForSent<T>(page: Page, type: string, timeoutMs: number): Promise<T> {
  const handle = await page.waitForFunction(
    (t) => (window as unknown as { __sent: Array<{ type: string }> }).__sent.filter((m) => m.type === t).pop(),
    type,
    { timeout: timeoutMs, polling: 50 },
  );
  return handle.evaluate((m) =>
    JSON.parse(JSON.stringify(m, (_k, v: unknown) => (ArrayBuffer.isView(v) ? Array.from(v as Float64Array) : v))),
  ) as Promise<T>;
}

/** For a browser test file: one page server and one Chromium, started before its tests and closed after. */
export function useWebviewHarness(setup?: () => void | Promise<void>): {
  readonly server: WebviewServer;
  readonly browser: Browser;
} {
  let server: WebviewServer | undefined;
  let browser: Browser | undefined;
  before(async () => {
    await setup?.();
    server = await serveWebview();
    browser = await launchChromium();
    mkdirSync(artifactsDir, { recursive: true });
  });
  after(async () => {
    await browser?.close();
    server?.close();
  });
  return {
    get server() {
      return server!;
    },
    get browser() {
      return browser!;
    },
  };
}

/** The digits example's comparison and its QDQ export, as the extension sends them to the results view. */
export const digitsResults = {
  result: JSON.parse(
    readFileSync(path.join(repoRoot, 'test', 'fixtures', 'digits', 'compare-layers.json'), 'utf8'),
  ) as CompareLayersResult,
  onnx: readFileSync(path.join(repoRoot, 'test', 'fixtures', 'digits', 'digits.qdq.onnx')),
};

/** A results view opened on the digits comparison (`msg` over its showGraph message), its layer table drawn. */
export async function openDigitsResults(
  harness: ReturnType<typeof useWebviewHarness>,
  msg: Partial<Extract<ToWebview, { type: 'showGraph' }>> = {},
  viewport = { width: 1400, height: 900 },
): Promise<OpenedPage> {
  const { result, onnx } = digitsResults;
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

/** Every text a user can read in a page or webview frame: text nodes, titles, labels and placeholders. */
export async function readableText(page: Page | Frame): Promise<string> {
  return page.evaluate(() => {
    const parts = [document.body?.textContent ?? ''];
    for (const e of document.querySelectorAll('*'))
      for (const a of ['title', 'aria-label', 'placeholder', 'label']) {
        const v = e.getAttribute(a);
        if (v) parts.push(v);
      }
    return parts.join('\n');
  });
}
