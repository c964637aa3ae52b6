// Graph viewer benchmark in headless Chromium: real QDQ models the kernel exports (ResNet-50, MobileNetV3-Large)
// and synthetic QDQ graphs of 1k / 10k / 100k nodes. Our flat view (layered layout + canvas past 1,500 nodes)
// and our default grouped view against dagre + SVG (the Netron-style approach) and against Netron itself, run
// from its published source, and against Google Model Explorer from its PyPI packages (WebGL, its own ONNX
// adapter), on the same files, in the same run. First render counts from page navigation
// for every viewer (page load, decode, layout, draw). Each measured run gets a Chromium of its own, and the
// memory of its whole process tree (browser, renderer, GPU and utility processes) is sampled from launch
// until the run's measurements are done: the peak is the "peak browser" column.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { launchChromium } from '../support/browser';
import { repoRoot, venvPython } from '../support/paths';
import { duplicatedNodes } from '../support/onnxShapes';
import { formatBreakdown, sampleBrowserMemory } from '../support/procMemory';
import { openWebview, postToWebview, serveWebview, waitForSent } from '../support/webviewPage';
import { benchDecode } from './decode';
import { type BenchFigure, recordBench } from './results';
import { ensureNetron, measureNetron, NETRON_VERSION } from './netron';
import {
  ensureModelExplorer,
  measureModelExplorer,
  MODEL_EXPLORER_ONNX_VERSION,
  MODEL_EXPLORER_VERSION,
} from './modelExplorer';
import { SLIM_LIMIT_BYTES, slimOnnx } from '../../client/editors/slimOnnx';
import type { WeightStats } from '../../protocol/webview';

const SIZES = (process.env.QAT_BENCH_SIZES ?? '1000,10000,100000').split(',').map(Number);
const BASELINE_TIMEOUT_MS = Number(process.env.QAT_BENCH_BASELINE_TIMEOUT_MS ?? 120_000);
/** QAT_BENCH_NETRON=0 / QAT_BENCH_DAGRE=0 leave out the Netron / dagre + SVG runs (for quicker looks at ours alone). */
const WITH_NETRON = process.env.QAT_BENCH_NETRON !== '0';
const WITH_DAGRE = process.env.QAT_BENCH_DAGRE !== '0';
/** QAT_BENCH_MODEL_EXPLORER=0 leaves out the Model Explorer runs (which need its own Python environment, made once). */
const WITH_MODEL_EXPLORER = process.env.QAT_BENCH_MODEL_EXPLORER !== '0';
/** QAT_BENCH_BREAKDOWN=1: after each of our runs, the Pss of every process role at the peak and the layout worker's JS heap. */
const BREAKDOWN = process.env.QAT_BENCH_BREAKDOWN === '1';
/** QAT_BENCH_DECODE_ONLY=1: only the decode table (no browsers). */
const DECODE_ONLY = process.env.QAT_BENCH_DECODE_ONLY === '1';

interface Run {
  /** To the first frame with the graph drawn (for ours on canvas, the layout worker's scene). */
  firstRender: number;
  /** To the frame drawn with the graph's nodes on the page (clicks, search, properties work from here). */
  interactive: number;
  renderer: string;
  decode: number;
  layout: number;
  render: number;
  frameMs: number;
  heapMB: number;
  browserMB: number;
  breakdown?: string;
}

async function heapMB(page: Page): Promise<number> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  const { metrics } = await cdp.send('Performance.getMetrics');
  return (metrics.find((m) => m.name === 'JSHeapUsedSize')?.value ?? 0) / 2 ** 20;
}

/**
 * Used JS heap of each dedicated worker of the page in MiB (the worker shares the renderer process, so its
 * Pss cannot be told apart): attaches to the worker targets over the page's DevTools session and asks each one.
 */
async function workerHeapsMB(page: Page): Promise<number[]> {
  const cdp = await page.context().newCDPSession(page);
  try {
    const sessions: string[] = [];
    const replies = new Map<string, (usedSize: number) => void>();
    cdp.on('Target.attachedToTarget', (ev) => {
      if (ev.targetInfo.type === 'worker') sessions.push(ev.sessionId);
    });
    cdp.on('Target.receivedMessageFromTarget', (ev) => {
      const reply = JSON.parse(ev.message) as { id?: number; result?: { usedSize: number } };
      if (reply.id === 1 && reply.result) replies.get(ev.sessionId)?.(reply.result.usedSize);
    });
    await cdp.send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: false, flatten: false });
    await new Promise((r) => setTimeout(r, 200));
    return await Promise.all(
      sessions.map(
        (sessionId) =>
          new Promise<number>((resolve) => {
            const timer = setTimeout(() => resolve(NaN), 5_000);
            replies.set(sessionId, (used) => {
              clearTimeout(timer);
              resolve(used / 2 ** 20);
            });
            void cdp.send('Target.sendMessageToTarget', {
              sessionId,
              message: JSON.stringify({ id: 1, method: 'Runtime.getHeapUsage' }),
            });
          }),
      ),
    );
  } finally {
    await cdp.detach();
  }
}

/** Mean milliseconds per frame while dragging the view for 60 frames. */
function panFrames(page: Page): Promise<number> {
  return page.evaluate(
    () =>
      new Promise<number>((resolve) => {
        const target = document.querySelector('#canvas canvas, #canvas svg') as Element;
        const r = target.getBoundingClientRect();
        let x = r.left + r.width / 2,
          y = r.top + r.height / 2;
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
          x += 7;
          y -= 11;
          target.dispatchEvent(new PointerEvent('pointermove', { clientX: x, clientY: y, bubbles: true }));
          requestAnimationFrame(step);
        };
        requestAnimationFrame(step);
      }),
  );
}

/**
 * First render = the page's navigation until the webview posted ready (the page's clock, as Model Explorer's
 * first draw is read; the harness's polling for the message is left out) + its own decode, layout and draw of the
 * model, to the first frame with the whole view drawn: on canvas, the layout worker's scene, drawn before the
 * graph's nodes have reached the page; `interactive` runs on to the frame drawn with them (selection, search and
 * properties work from there; for SVG the two are the same). It starts after the browser made the tab, as Netron's and Model Explorer's runs do (VS Code makes the
 * webview's frame in a renderer that is already running; a new headless tab costs ~150 ms of its own). The
 * harness hands the bytes over as base64 through the DevTools protocol (seconds for a 25 MB file), which
 * VS Code does not (it posts the bytes), so that transfer is left out. Peak browser memory covers launch,
 * load, first render, the pan and the heap reading.
 */
async function measure(
  origin: string,
  onnxBase64: string,
  renderer: 'auto' | 'svg',
  timeoutMs: number,
  groups: 'auto' | 'flat' = 'flat',
  weights?: Record<string, WeightStats>,
): Promise<Run | undefined> {
  const browser = await launchChromium();
  const memory = await sampleBrowserMemory(browser, undefined, BREAKDOWN).catch(async (err) => {
    await browser.close();
    throw err;
  });
  try {
    const { page, loadMs: pageReady } = await openWebview(browser, origin, { width: 1280, height: 900 });
    await postToWebview(page, {
      type: 'showGraph',
      title: 'bench',
      onnx: Buffer.from(onnxBase64, 'base64'),
      layers: [],
      threshold: 0.99,
      renderer,
      groups,
      ...(weights ? { weights } : {}),
    });
    const r = await waitForSent<{
      renderer: string;
      timings: { decode: number; layout: number; render: number; firstFrame?: number };
    }>(page, 'rendered', timeoutMs).catch(() => undefined);
    if (!r) return undefined;
    const interactive = pageReady + r.timings.decode + r.timings.layout + r.timings.render;
    const firstRender = r.timings.firstFrame !== undefined ? pageReady + r.timings.firstFrame : interactive;
    const frameMs = await panFrames(page);
    const heap = await heapMB(page);
    const workers = BREAKDOWN ? await workerHeapsMB(page) : [];
    const browserMB = await memory.stop();
    const breakdown = BREAKDOWN
      ? `${formatBreakdown(memory.peakBreakdown())} MB at the peak; JS heap: page ${heap.toFixed(1)} MB, ` +
        (workers.length ? workers.map((w) => `worker ${w.toFixed(1)} MB`).join(', ') : 'no worker')
      : undefined;
    return {
      firstRender,
      interactive,
      renderer: r.renderer,
      ...r.timings,
      frameMs,
      heapMB: heap,
      browserMB,
      breakdown,
    };
  } finally {
    await memory.stop();
    await browser.close();
  }
}

/** Peak Pss of a Chromium launched the same way that opens about:blank and waits 3 s, with its breakdown. */
async function idleBrowser(): Promise<string> {
  const browser = await launchChromium();
  const memory = await sampleBrowserMemory(browser, undefined, true).catch(async (err) => {
    await browser.close();
    throw err;
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto('about:blank');
    await new Promise((r) => setTimeout(r, 3_000));
    const peak = await memory.stop();
    return `${peak.toFixed(0)} MB (${formatBreakdown(memory.peakBreakdown())} MB)`;
  } finally {
    await memory.stop();
    await browser.close();
  }
}

const fmt = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`);
const mb = (v: number) => `${v.toFixed(0).padStart(9)} MB`;
/** "x slower, y× heap" of a run against ours. */
const ratio = (other: { firstRender: number; heapMB: number }, ours: Run) =>
  `${(other.firstRender / ours.firstRender).toFixed(1)}x slower, ${(other.heapMB / ours.heapMB).toFixed(1)}x heap`;

const REAL_MODELS = (process.env.QAT_BENCH_MODELS ?? 'resnet50,mobilenet_v3_large').split(',').filter(Boolean);
const NETRON_TIMEOUT_MS = Number(process.env.QAT_BENCH_NETRON_TIMEOUT_MS ?? 150_000);
const MODEL_EXPLORER_TIMEOUT_MS = Number(process.env.QAT_BENCH_MODEL_EXPLORER_TIMEOUT_MS ?? 150_000);

/** The kernel's PT2E x86 QDQ export of a vision model (random weights), generated once. */
function realModel(dir: string, name: string): string {
  const file = path.join(dir, `${name}.qdq.onnx`);
  if (!existsSync(file)) {
    execFileSync(venvPython, ['-m', 'benchmarks.vision_models', name, file], {
      cwd: path.join(repoRoot, 'python-helpers'),
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }
  return file;
}

export async function benchGraph(): Promise<void> {
  const dir = path.join(repoRoot, 'build', 'bench');
  mkdirSync(dir, { recursive: true });
  benchDecode(decodeInputs(dir));
  if (DECODE_ONLY) return;
  if (WITH_NETRON) ensureNetron();
  if (WITH_MODEL_EXPLORER) ensureModelExplorer();
  const server = await serveWebview();
  // The first launch reads Chromium's files from disk; every timed run (ours and the baselines') gets a warm one.
  const warm = await launchChromium();
  await (await warm.newPage()).goto('about:blank');
  await warm.close();
  console.log(
    `\n## Graph viewer (headless Chromium, 1280x900, a fresh browser per run; Netron ${NETRON_VERSION} from its PyPI package, same browser build)`,
  );
  if (WITH_MODEL_EXPLORER)
    console.log(
      `Model Explorer ${MODEL_EXPLORER_VERSION} with model-explorer-onnx ${MODEL_EXPLORER_ONNX_VERSION}, same browser (WebGL on SwiftShader): ` +
        'first render ends one frame after its first WebGL draw call on the graph canvas; it includes the conversion by its ONNX adapter on its local server',
    );
  console.log(
    'model           | nodes   | path          | first render | interactive | decode  | layout  | draw    | pan frame | JS heap  | peak browser | vs ours',
  );
  const figures: BenchFigure[] = [];
  const vsFigure = (model: string, nodes: number, tool: string, theirs: number, ours: Run) =>
    figures.push({
      model: `${model}, ${nodes} nodes`,
      measure: `first render, ours vs ${tool}`,
      value: fmt(ours.firstRender),
      baseline: `${tool} ${fmt(theirs)}`,
      ratio: theirs / ours.firstRender,
      spread: 'one run',
    });
  const row = (model: string, nodes: number, name: string, r: Run | undefined, note: string, timeoutMs: number) => {
    if (r && name !== 'dagre + svg')
      figures.push({
        model: `${model}, ${nodes} nodes`,
        measure: `ours (${name}): first render / interactive`,
        value: `${fmt(r.firstRender)} / ${fmt(r.interactive)}`,
        spread: `one run; pan frame ${r.frameMs.toFixed(1)} ms, peak browser ${r.browserMB.toFixed(0)} MB`,
      });
    console.log(
      r
        ? `${model.padEnd(15)} | ${String(nodes).padEnd(7)} | ${name.padEnd(13)} | ${fmt(r.firstRender).padEnd(12)} | ${fmt(r.interactive).padEnd(11)} | ${fmt(r.decode).padEnd(7)} | ${fmt(r.layout).padEnd(7)} | ${fmt(r.render).padEnd(7)} | ${r.frameMs.toFixed(1).padStart(6)} ms | ${r.heapMB.toFixed(0).padStart(5)} MB | ${mb(r.browserMB)} | ${note}`
        : `${model.padEnd(15)} | ${String(nodes).padEnd(7)} | ${name.padEnd(13)} | did not render within ${fmt(timeoutMs)} | ${note}`,
    );
    if (r?.breakdown) console.log(`  ${' '.repeat(13)}processes: ${r.breakdown}`);
  };
  const netronRow = async (model: string, nodes: number, file: string, ours: Run | undefined) => {
    if (!WITH_NETRON) return;
    let peak = 0;
    const n = await measureNetron(file, NETRON_TIMEOUT_MS, (mbSeen) => {
      peak = mbSeen;
    });
    if (ours) vsFigure(model, nodes, 'Netron', n ? n.firstRender : NETRON_TIMEOUT_MS, ours);
    const vs =
      n && ours
        ? `${ratio(n, ours)}, ${(n.browserMB / ours.browserMB).toFixed(1)}x browser memory`
        : !n && ours
          ? `> ${(NETRON_TIMEOUT_MS / ours.firstRender).toFixed(0)}x slower, > ${(peak / ours.browserMB).toFixed(1)}x browser memory`
          : '';
    console.log(
      n
        ? `${model.padEnd(15)} | ${String(nodes).padEnd(7)} | ${'Netron'.padEnd(13)} | ${fmt(n.firstRender).padEnd(12)} | ${fmt(n.firstRender).padEnd(11)} | ${'-'.padEnd(7)} | ${'-'.padEnd(7)} | ${'-'.padEnd(7)} | ${'-'.padStart(9)} | ${n.heapMB.toFixed(0).padStart(5)} MB | ${mb(n.browserMB)} | ${vs}`
        : `${model.padEnd(15)} | ${String(nodes).padEnd(7)} | ${'Netron'.padEnd(13)} | did not render within ${fmt(NETRON_TIMEOUT_MS)} (peak browser so far ${peak.toFixed(0)} MB) | ${vs}`,
    );
  };
  const modelExplorerRow = async (model: string, nodes: number, file: string, ours: Run | undefined) => {
    if (!WITH_MODEL_EXPLORER) return;
    let peak = 0;
    const m = await measureModelExplorer(file, MODEL_EXPLORER_TIMEOUT_MS, (mbSeen) => {
      peak = mbSeen;
    });
    const head = `${model.padEnd(15)} | ${String(nodes).padEnd(7)} | ${'ModelExplorer'.padEnd(13)} |`;
    if (!m.ok) {
      const vs =
        ours && m.reason.startsWith('did not finish')
          ? ` | > ${(MODEL_EXPLORER_TIMEOUT_MS / ours.firstRender).toFixed(0)}x slower, > ${(peak / ours.browserMB).toFixed(1)}x browser memory`
          : '';
      console.log(`${head} ${m.reason} (peak browser so far ${peak.toFixed(0)} MB)${vs}`);
      return;
    }
    const r = m.run;
    if (ours) vsFigure(model, nodes, 'Model Explorer', r.firstRender, ours);
    const vs = ours ? `${ratio(r, ours)}, ${(r.browserMB / ours.browserMB).toFixed(1)}x browser memory; ` : '';
    console.log(
      `${head} ${fmt(r.firstRender).padEnd(12)} | ${fmt(r.firstRender).padEnd(11)} | ${'-'.padEnd(7)} | ${'-'.padEnd(7)} | ${'-'.padEnd(7)} | ${r.frameMs.toFixed(1).padStart(6)} ms | ${r.heapMB.toFixed(0).padStart(5)} MB | ${mb(r.browserMB)} | ` +
        `${vs}conversion ${fmt(r.convert)} of it (${(r.jsonBytes / 2 ** 20).toFixed(1)} MB graph JSON); opens collapsed to its top-level layers`,
    );
  };
  if (BREAKDOWN) console.log(`idle browser (about:blank): ${await idleBrowser()}`);
  try {
    for (const name of REAL_MODELS) {
      const file = realModel(dir, name);
      const bytes = readFileSync(file);
      // As the extension host sends it: large weights stay behind, summarized (client/editors/slimOnnx.ts).
      const slim = slimOnnx(new Uint8Array(bytes), SLIM_LIMIT_BYTES);
      const b64 = Buffer.from(slim.bytes).toString('base64');
      const nodes = countNodes(file);
      const ours = await measure(server.origin, b64, 'auto', 300_000, 'auto', Object.fromEntries(slim.removed));
      row(
        name,
        nodes,
        'ours',
        ours,
        `${(bytes.length / 2 ** 20).toFixed(1)} MB file, ${(slim.bytes.length / 2 ** 20).toFixed(2)} MB sent`,
        300_000,
      );
      await netronRow(name, nodes, file, ours);
      await modelExplorerRow(name, nodes, file, ours);
    }
    for (const size of SIZES) {
      const file = syntheticModel(dir, size);
      const b64 = readFileSync(file).toString('base64');
      const ours = await measure(server.origin, b64, 'auto', 300_000);
      const base = WITH_DAGRE ? await measure(server.origin, b64, 'svg', BASELINE_TIMEOUT_MS) : undefined;
      row('synthetic', size, `flat, ${ours?.renderer ?? 'canvas'}`, ours, '', 300_000);
      if (size > 1500)
        row(
          'synthetic',
          size,
          'module groups',
          await measure(server.origin, b64, 'auto', 300_000, 'auto'),
          'opens collapsed to top-level modules',
          300_000,
        );
      const vs =
        ours && base
          ? `${ratio(base, ours)}, ${(base.browserMB / ours.browserMB).toFixed(1)}x browser memory`
          : ours
            ? `> ${(BASELINE_TIMEOUT_MS / ours.firstRender).toFixed(0)}x slower`
            : '';
      if (WITH_DAGRE) row('synthetic', size, 'dagre + svg', base, vs, BASELINE_TIMEOUT_MS);
      if (WITH_DAGRE && ours)
        vsFigure('synthetic', size, 'dagre + SVG', base?.firstRender ?? BASELINE_TIMEOUT_MS, ours);
      await netronRow('synthetic', size, file, ours);
      await modelExplorerRow('synthetic', size, file, ours);
    }
  } finally {
    server.close();
    recordBench({
      area: 'graph',
      title: 'Graph viewer in headless Chromium',
      ratio:
        "the other viewer's first render over ours (above 1: ours is faster; a viewer that did not render counts at its time limit)",
      figures,
    });
  }
}

/** The files the viewer bench opens, as the webview receives them, for the decode table. */
function decodeInputs(dir: string): Array<{ label: string; nodes: number; bytes: Uint8Array }> {
  const out: Array<{ label: string; nodes: number; bytes: Uint8Array }> = [];
  for (const name of REAL_MODELS) {
    const file = realModel(dir, name);
    out.push({
      label: name,
      nodes: countNodes(file),
      bytes: slimOnnx(new Uint8Array(readFileSync(file)), SLIM_LIMIT_BYTES).bytes,
    });
  }
  for (const size of SIZES)
    out.push({ label: 'synthetic', nodes: size, bytes: new Uint8Array(readFileSync(syntheticModel(dir, size))) });
  const digits = new Uint8Array(readFileSync(path.join(repoRoot, 'test', 'fixtures', 'digits', 'digits.qdq.onnx')));
  out.push({ label: 'digits x100k', nodes: 100_000, bytes: duplicatedNodes(digits, 100_000) });
  return out;
}

/** The synthetic QDQ graph of `size` nodes (scripts/gen_qdq_graph.py), generated once. */
function syntheticModel(dir: string, size: number): string {
  const file = path.join(dir, `qdq-${size}.onnx`);
  if (!existsSync(file))
    execFileSync(venvPython, [
      path.join(repoRoot, 'scripts', 'gen_qdq_graph.py'),
      '--nodes',
      String(size),
      '--out',
      file,
    ]);
  return file;
}

/** Node count of the main graph, as the onnx package reports it. */
function countNodes(file: string): number {
  return Number(
    execFileSync(
      venvPython,
      ['-c', 'import onnx, sys; print(len(onnx.load(sys.argv[1], load_external_data=False).graph.node))', file],
      { encoding: 'utf8' },
    ).trim(),
  );
}
