// Mutated and hostile .onnx files through the extension host's slimming (its worker thread) and the view's
// decode + layout (in a worker thread here, as in the webview): every input must return or fail with an Error
// within the hang bound, and each hostile shape must come to what its check says (refused as malformed, cut to
// the budget, opened with its bad tensors marked). Shared by the reliability suite and `npm run bench reliability`.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { MalformedOnnxError, SlimError, SlimService } from '../../client/editors/slimService';
import type { SlimResult } from '../../client/editors/slimOnnx';
import {
  deeplyNested,
  duplicatedNodes,
  field,
  floats,
  mutate,
  rng,
  tensorProto,
  withGraphFields,
  withModelFields,
} from '../support/onnxShapes';
import type { DecodeReply } from '../support/decodeWorker';
import { repoRoot } from '../support/paths';

export const HANG_BOUND_MS = 2000;

/** What the host's slimming and the view's decode made of one input. */
export interface Outcome {
  /** The slimmed model, or why the host refused it (then the view never gets it). */
  slim: SlimResult | SlimError;
  /** The view's decode + layout of the slimmed bytes (of the input's own bytes when the host refused it). */
  decode: DecodeReply | 'hang' | 'died';
}

/** A hostile shape: its bytes, the bound it must meet, and what it must come to (a message when it does not). */
export interface Shape {
  label: string;
  bytes: Uint8Array;
  boundMs: number;
  flat?: boolean;
  /** The slimmer's budget for the payload it keeps, where the shape scales it down. */
  budgetBytes?: number;
  check?: (o: Outcome) => string | undefined;
}

export interface RunStats {
  tried: number;
  opened: number;
  failedCleanly: number;
  crashes: string[];
  hangs: string[];
  /** Shapes that did not come to what they must (Shape.check). */
  unexpected: string[];
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

const malformed = (where: RegExp) => (o: Outcome) =>
  o.slim instanceof MalformedOnnxError && where.test(o.slim.message)
    ? undefined
    : `not reported as malformed (${where}): ${o.slim instanceof Error ? o.slim.message : 'slimmed'}`;

const opened = (o: Outcome) =>
  o.slim instanceof SlimError
    ? `refused by the host: ${o.slim.message}`
    : typeof o.decode !== 'object' || !o.decode.ok
      ? `did not open: ${typeof o.decode === 'object' ? o.decode.message : o.decode}`
      : undefined;

/** The scaled-down budget of the shape with tensors just under the per-tensor cut (1,000 of 4 KB). */
const SMALL_BUDGET = 1024 ** 2;

/** The special shapes of the reliability report, with the bound each must meet. */
export function specialShapes(): Shape[] {
  const digits = seedModels()[0];
  // 1M values on a scalar (4 MB the view would read), behind 4 bytes the slimmer cannot read.
  const scalar = tensorProto('scalar_with_1M_values', [], floats(1_000_000));
  const garbage = withModelFields(withGraphFields(digits, [field(5, scalar)]), [
    field(25, Uint8Array.of(0xff, 0xff, 0xff, 0xff)),
  ]);
  const underCut = Array.from({ length: 1000 }, (_, i) => field(5, tensorProto(`small_${i}`, [1022], floats(1022))));
  const badTensors = [
    tensorProto('negative_dims', [-1, 4], floats(4)),
    tensorProto('short_data', [2, 4], floats(3)),
    tensorProto('overflowing_dims', [2 ** 40, 2 ** 40], floats(1)),
  ].map((t) => field(5, t));
  const tooDeep = malformed(
    /messages nested more than 256 deep at byte \d+, in model\.graph\.node\[0\]\.attribute\[0\]\./,
  );
  const zeros = malformed(/field number 0 at byte 0, in model\.$/);
  return [
    { label: 'nested 10k levels', bytes: deeplyNested(10_000), boundMs: HANG_BOUND_MS, check: tooDeep },
    { label: 'nested 100k levels', bytes: deeplyNested(100_000), boundMs: HANG_BOUND_MS, check: tooDeep },
    { label: '16 MB of zeros', bytes: new Uint8Array(16 * 1024 ** 2), boundMs: HANG_BOUND_MS, check: zeros },
    { label: '64 MB of zeros', bytes: new Uint8Array(64 * 1024 ** 2), boundMs: HANG_BOUND_MS, check: zeros },
    {
      label: '4 garbage bytes in model.functions, a scalar with 1M values',
      bytes: garbage,
      boundMs: HANG_BOUND_MS,
      check: malformed(/at byte \d+, in model\.functions\[0\]\.$/),
    },
    {
      label: '1,000 tensors just under the 4 KB cut, 1 MB budget',
      bytes: withGraphFields(digits, underCut),
      boundMs: HANG_BOUND_MS,
      budgetBytes: SMALL_BUDGET,
      check: (o) => {
        if (o.slim instanceof SlimError) return opened(o);
        const cut = [...o.slim.removed.keys()].filter((n) => n.startsWith('small_')).length;
        const mostKept = Math.floor(SMALL_BUDGET / 4088);
        if (cut < 1000 - mostKept) return `only ${cut} of the 1,000 tensors were cut`;
        if (o.slim.bytes.length > digits.length + SMALL_BUDGET + 64 * 1024)
          return `${o.slim.bytes.length} bytes reach the view`;
        return opened(o);
      },
    },
    {
      label: 'tensors with dims [-1, 4], too short data and overflowing dims',
      bytes: withGraphFields(digits, badTensors),
      boundMs: HANG_BOUND_MS,
      check: (o) => {
        const problems = typeof o.decode === 'object' && o.decode.ok ? o.decode.problems : [];
        const marked = ['negative_dims', 'short_data', 'overflowing_dims'].filter((n) =>
          problems.some((p) => p.startsWith(`${n}: `)),
        );
        return opened(o) ?? (marked.length === 3 && problems.length === 3 ? undefined : `marked: ${problems}`);
      },
    },
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
    unexpected: [],
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
  const one = async (label: string, bytes: Uint8Array, boundMs: number, flat?: boolean, budgetBytes?: number) => {
    stats.tried++;
    const t0 = performance.now();
    let slim: SlimResult | SlimError;
    try {
      slim = await slimmer.slim(bytes, { timeoutMs: boundMs, ...(budgetBytes ? { budgetBytes } : {}) });
    } catch (err) {
      if (!(err instanceof SlimError)) stats.crashes.push(`${label}: slim threw ${String(err)}`);
      else if (/took more than/.test(err.message)) stats.hangs.push(`${label}: slimming`);
      slim = err instanceof SlimError ? err : new SlimError(String(err));
    }
    const slimMs = performance.now() - t0;
    // A refused file never reaches the view; its bytes still go through the decoder, which must cope with anything.
    const refused = slim instanceof SlimError;
    const decode = await decoder.run(
      slim instanceof SlimError ? bytes : slim.bytes,
      Math.max(1, boundMs - slimMs),
      flat,
    );
    const ms = performance.now() - t0;
    if (decode === 'hang') stats.hangs.push(`${label}: decode + layout past ${boundMs} ms`);
    else if (decode === 'died') stats.crashes.push(`${label}: the decode worker died`);
    else if (!decode.ok && !decode.error) stats.crashes.push(`${label}: threw a non-Error: ${decode.message}`);
    else if (decode.ok && !refused) stats.opened++;
    else stats.failedCleanly++;
    if (ms > stats.maxMs && boundMs === HANG_BOUND_MS) {
      stats.maxMs = ms;
      stats.maxLabel = label;
    }
    return { ms, outcome: { slim, decode } };
  };
  try {
    for (const input of inputs) await one(input.label, input.bytes(), input.boundMs, input.flat);
    for (const s of specialShapes().filter((x) => withFlat100k || !x.flat)) {
      const { ms, outcome } = await one(s.label, s.bytes, s.boundMs, s.flat, s.budgetBytes);
      const wrong = s.check?.(outcome);
      if (wrong) stats.unexpected.push(`${s.label}: ${wrong}`);
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
    `${s.hangs.length} hangs, ${s.unexpected.length} unexpected; max latency ${s.maxMs.toFixed(0)} ms (${s.maxLabel}); RSS growth ${s.rssGrowthMb.toFixed(0)} MB; ${s.seconds.toFixed(0)} s`
  );
}
