// Runs decode + layout in the layout worker (from a blob URL: webviews cannot start workers from their
// resource origin), falling back to the main thread where workers are unavailable.
import workerSource from '../../build/generated/layout-worker.js.txt';
import type { FromLayoutWorker, ToLayoutWorker } from '../../protocol/webview';
import { decodeAndLayout, type LaidOut, type ViewOptions } from './pipeline';

let worker: Worker | undefined | null;
let nextId = 1;
const pending = new Map<number, { resolve: (r: LaidOut) => void; reject: (e: Error) => void }>();

function getWorker(): Worker | null {
  if (worker !== undefined) return worker;
  try {
    worker = new Worker(URL.createObjectURL(new Blob([workerSource], { type: 'text/javascript' })));
    worker.onmessage = (ev: MessageEvent<FromLayoutWorker>) => {
      const p = pending.get(ev.data.id);
      pending.delete(ev.data.id);
      if (ev.data.type === 'laidOut') p?.resolve(ev.data as unknown as LaidOut);
      else p?.reject(new Error(ev.data.message));
    };
  } catch {
    worker = null;
  }
  return worker;
}

/** `bytes` may be left out to re-lay out the model last sent under the same key. */
export function layoutInWorker(key: string, bytes: Uint8Array | undefined, options: ViewOptions = {}, fileName = ''): Promise<LaidOut & { inWorker: boolean }> {
  const w = getWorker();
  if (!w) return Promise.resolve({ ...decodeAndLayout(key, bytes, options, fileName), inWorker: false });
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve: (r) => resolve({ ...r, inWorker: true }), reject });
    w.postMessage({ type: 'layout', id, key, bytes, fileName, options } satisfies ToLayoutWorker, bytes ? [bytes.buffer] : []);
  });
}
