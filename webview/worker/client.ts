// Runs decode + layout in the layout worker (from a blob URL: webviews cannot start workers from their
// resource origin), falling back to the main thread where workers are unavailable.
//
// For a model of up to KEEP_WORKER_BYTES the worker is ended once it has answered every request sent to it,
// which gives back its isolate (about 10 MB of renderer memory; the V8 heap pages it grew while decoding and
// laying out stay with the renderer for reuse either way). The model's bytes are kept here instead, and a
// re-layout (groups, Q/DQ collapse) starts a new worker that decodes them again: about 0.1 s at that size,
// against 0.3 s at 2.4 MB (10k nodes) and 3 s at 25 MB (100k). A larger model therefore stays decoded in a
// worker kept running, and its re-layouts do not decode again.
import workerSource from '../../build/generated/layout-worker.js.txt';
import type { FromLayoutWorker, ToLayoutWorker } from './messages';
import type { Scene } from '../graph/scene';
import { decodeAndLayout, type LaidOut, type ViewOptions } from './pipeline';
import { unpack } from './transfer';

export const KEEP_WORKER_BYTES = 2 ** 20;
/** A request the worker has not answered by then ends the worker: the view shows a message, never hangs. */
export const LAYOUT_TIMEOUT_MS = 60_000;

let worker: Worker | undefined | null;
let workerUrl: string | undefined;
let nextId = 1;
const pending = new Map<
  number,
  {
    resolve: (r: LaidOut) => void;
    reject: (e: Error) => void;
    timer: ReturnType<typeof setTimeout>;
    onScene?: (scene: Scene, total: number) => void;
  }
>();
/** The model last sent; its bytes are kept only when the worker does not keep the decoded model. */
let model: { key: string; fileName: string; bytes?: Uint8Array } | undefined;
let keepWorker = false;

function getWorker(): Worker | null {
  if (worker !== undefined) return worker;
  try {
    workerUrl ??= URL.createObjectURL(new Blob([workerSource], { type: 'text/javascript' }));
    const w = new Worker(workerUrl);
    w.onmessage = (ev: MessageEvent<FromLayoutWorker>) => {
      const p = pending.get(ev.data.id);
      // The scene comes ahead of the answer to the same request.
      if (ev.data.type === 'scene') {
        p?.onScene?.(ev.data.scene, ev.data.total);
        return;
      }
      pending.delete(ev.data.id);
      if (p) clearTimeout(p.timer);
      if (!pending.size && !keepWorker && worker === w) {
        w.terminate();
        worker = undefined;
      }
      if (ev.data.type === 'laidOut') p?.resolve(ev.data);
      else if (ev.data.type === 'packed') p?.resolve(unpack(ev.data));
      else p?.reject(new Error(ev.data.message));
    };
    worker = w;
  } catch {
    worker = null;
  }
  return worker;
}

/**
 * Starts the worker now (its thread and its script's parse take tens of milliseconds), so it is ready when the
 * model arrives: the page calls this before anything else loads.
 */
export function startWorker(): void {
  getWorker();
}

/**
 * `bytes` may be left out to re-lay out the model last sent under the same key. With `options.colouring`, a view
 * drawn on canvas gets its scene (what its first frame draws) through `onScene` before the promise settles.
 */
export function layoutInWorker(
  key: string,
  bytes: Uint8Array | undefined,
  options: ViewOptions = {},
  fileName = '',
  onScene?: (scene: Scene, total: number) => void,
): Promise<LaidOut & { inWorker: boolean }> {
  const w = getWorker();
  if (!w) return Promise.resolve({ ...decodeAndLayout(key, bytes, options, fileName), inWorker: false });
  if (bytes) {
    keepWorker = bytes.length > KEEP_WORKER_BYTES;
    model = { key, fileName, bytes: keepWorker ? undefined : bytes };
  } else if (model?.key !== key) return Promise.reject(new Error('The model is no longer loaded; reopen it.'));
  // A worker that is ended gets a copy of the kept bytes; one kept running decoded them already.
  const send = bytes && keepWorker ? bytes : model!.bytes?.slice();
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      // The model stays with the worker; a re-layout has nothing to start from.
      w.terminate();
      if (worker === w) worker = undefined;
      model = undefined;
      const stopped = new Error(
        `Decoding and laying out this model took more than ${LAYOUT_TIMEOUT_MS / 1000} s and was stopped.`,
      );
      for (const p of pending.values()) {
        clearTimeout(p.timer);
        p.reject(stopped);
      }
      pending.clear();
    }, LAYOUT_TIMEOUT_MS);
    pending.set(id, { resolve: (r) => resolve({ ...r, inWorker: true }), reject, timer, onScene });
    w.postMessage(
      { type: 'layout', id, key, bytes: send, fileName: model!.fileName, options } satisfies ToLayoutWorker,
      send ? [send.buffer] : [],
    );
  });
}
