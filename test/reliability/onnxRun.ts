// Mutated and hostile .onnx files through the extension host's slimming (its worker thread) and the view's
// decode + layout (in a worker thread here, as in the webview): every input must return or fail with an Error
// within the hang bound. Shared by the reliability suite and `npm run bench reliability`.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { SlimError, SlimService } from '../../client/editors/slimService';
import { deeplyNested, duplicatedNodes, mutate, rng } from '../support/onnxShapes';
import type { DecodeReply } from '../support/decodeWorker';
import { repoRoot } from '../support/paths';

export const HANG_BOUND_MS = 2000;

export interface Outcome {
  label: string;
  /** slim: ok or a SlimError; decode: opened or failed with an Error. */
  slim: 'ok' | 'refused';
  decode: 'opened' | 'failed';
  ms: number;
}

export interface RunStats {
  tried: number;
  opened: number;
  failedCleanly: number;
  crashes: string[];
  hangs: string[];
  maxMs: number;
  maxLabel: string;
  rssGrowthMb: number;
  seconds: number;
}

class DecodeRunner {
  private worker: Worker | undefined;
  private id = 0;
  constructor(private readonly file: string) {}

  run(bytes: Uint8Array, boundMs: number, flat = false): Promise<DecodeReply | 'hang' | 'died'> {
    const w = (this.worker ??= new Worker(this.file));
    const id = ++this.id;
    return new Promise((resolve) => {
      const done = (r: DecodeReply | 'hang' | 'died') => {
        clearTimeout(timer);
        w.off('message', onMessage);
        w.off('error', onError);
        if (r === 'hang' || r === 'died') {
          void w.terminate();
          this.worker = undefined;
        }
        resolve(r);
      };
      const onMessage = (m: DecodeReply) => m.id === id && done(m);
      const onError = () => done('died');
      const timer = setTimeout(() => done('hang'), boundMs);
      w.on('message', onMessage);
      w.on('error', onError);
      w.postMessage({ id, bytes, ...(flat ? { expanded: null } : {}) });
    });
  }

  dispose(): void {
    void this.worker?.terminate();
  }
}

/** The special shapes of the reliability report, with the bound each must meet. */
export function specialShapes(): Array<{ label: string; bytes: Uint8Array; boundMs: number; flat?: boolean }> {
  const digits = seedModels()[0];
  return [
    { label: 'nested 10k levels', bytes: deeplyNested(10_000), boundMs: HANG_BOUND_MS },
    { label: 'nested 100k levels', bytes: deeplyNested(100_000), boundMs: HANG_BOUND_MS },
    { label: '16 MB of zeros', bytes: new Uint8Array(16 * 1024 ** 2), boundMs: HANG_BOUND_MS },
    { label: '64 MB of zeros', bytes: new Uint8Array(64 * 1024 ** 2), boundMs: HANG_BOUND_MS },
    // Decoding 90 MB of node protobuf with protobufjs takes seconds on a loaded 2-core machine: this one is held to
    // the view's own stop (LAYOUT_TIMEOUT_MS, 60 s), flat and grouped.
    { label: 'digits, nodes duplicated to 100k', bytes: duplicatedNodes(digits, 100_000), boundMs: 60_000 },
    {
      label: 'digits, nodes duplicated to 100k, flat',
      bytes: duplicatedNodes(digits, 100_000),
      boundMs: 60_000,
      flat: true,
    },
  ];
}

export function seedModels(): Uint8Array[] {
  const digits = new Uint8Array(readFileSync(path.join(repoRoot, 'test', 'fixtures', 'digits', 'digits.qdq.onnx')));
  // The digits export, and the same with its nodes repeated to 300 (a ResNet-sized node list).
  return [digits, duplicatedNodes(digits, 300, true)];
}

/** `withFlat100k`: also the 100k-node shape laid out flat (the bench; about 40 s on a loaded 2-core machine). */
export async function runOnnxReliability(count: number, seed = 20261204, withFlat100k = false): Promise<RunStats> {
  const started = Date.now();
  const slimmer = new SlimService(path.join(repoRoot, 'out', 'client', 'slimWorker.js'), { timeoutMs: HANG_BOUND_MS });
  const decoder = new DecodeRunner(path.join(repoRoot, 'out', 'test', 'support', 'decodeWorker.js'));
  const stats: RunStats = {
    tried: 0,
    opened: 0,
    failedCleanly: 0,
    crashes: [],
    hangs: [],
    maxMs: 0,
    maxLabel: '',
    rssGrowthMb: 0,
    seconds: 0,
  };
  const seeds = seedModels();
  const random = rng(seed);
  const inputs: Array<{ label: string; bytes: () => Uint8Array; boundMs: number; flat?: boolean }> = [];
  for (let i = 0; i < count; i++) {
    const src = seeds[i % seeds.length];
    inputs.push({
      label: `mutation ${i} (seed ${seed})`,
      bytes: () => {
        const m = mutate(src, random);
        return m.bytes;
      },
      boundMs: HANG_BOUND_MS,
    });
  }
  const rssBefore = process.memoryUsage().rss;
  const one = async (label: string, bytes: Uint8Array, boundMs: number, flat?: boolean) => {
    stats.tried++;
    const t0 = performance.now();
    let slimmed = bytes;
    try {
      slimmed = (await slimmer.slim(bytes, { timeoutMs: boundMs })).bytes;
    } catch (err) {
      if (!(err instanceof SlimError)) stats.crashes.push(`${label}: slim threw ${String(err)}`);
      else if (/took more than/.test(err.message)) stats.hangs.push(`${label}: slimming`);
    }
    const slimMs = performance.now() - t0;
    const r = await decoder.run(slimmed, Math.max(1, boundMs - slimMs), flat);
    const ms = performance.now() - t0;
    if (r === 'hang') stats.hangs.push(`${label}: decode + layout past ${boundMs} ms`);
    else if (r === 'died') stats.crashes.push(`${label}: the decode worker died`);
    else if (r.ok) stats.opened++;
    else if (r.error) stats.failedCleanly++;
    else stats.crashes.push(`${label}: threw a non-Error: ${r.message}`);
    if (ms > stats.maxMs && boundMs === HANG_BOUND_MS) {
      stats.maxMs = ms;
      stats.maxLabel = label;
    }
    return ms;
  };
  try {
    for (const input of inputs) await one(input.label, input.bytes(), input.boundMs, input.flat);
    for (const s of specialShapes().filter((x) => withFlat100k || !x.flat)) {
      const ms = await one(s.label, s.bytes, s.boundMs, s.flat);
      console.log(`# ${s.label}: ${ms.toFixed(0)} ms (bound ${s.boundMs} ms)`);
    }
  } finally {
    slimmer.dispose();
    decoder.dispose();
  }
  stats.rssGrowthMb = (process.memoryUsage().rss - rssBefore) / 1024 ** 2;
  stats.seconds = (Date.now() - started) / 1000;
  return stats;
}

export function describe(s: RunStats): string {
  return (
    `${s.tried} inputs: ${s.opened} opened, ${s.failedCleanly} failed cleanly, ${s.crashes.length} crashes, ` +
    `${s.hangs.length} hangs; max latency ${s.maxMs.toFixed(0)} ms (${s.maxLabel}); RSS growth ${s.rssGrowthMb.toFixed(0)} MB; ${s.seconds.toFixed(0)} s`
  );
}
