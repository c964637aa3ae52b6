// worker_threads entry (out/client/slimWorker.js): slims .onnx bytes off the extension host's thread. One request at
// a time; the host ends this worker when a request outlives its time limit (slimService.ts).
import { parentPort } from 'node:worker_threads';
import type { WeightStats } from '../../protocol/webview';
import { OnnxWireError } from '../../common/wireReader';
import { slimOnnx } from './slimOnnx';

export interface SlimRequest {
  id: number;
  bytes: Uint8Array;
  limitBytes: number;
  budgetBytes: number;
}
export type SlimReply =
  | { id: number; ok: true; bytes: Uint8Array; removed: Array<[string, WeightStats]> }
  /** `malformed`: the file cannot be read as ONNX (with the byte where the reader found the problem). */
  | { id: number; ok: false; message: string; malformed?: { offset?: number } };

parentPort?.on('message', (req: SlimRequest) => {
  let reply: SlimReply;
  try {
    const { bytes, removed } = slimOnnx(req.bytes, req.limitBytes, req.budgetBytes);
    reply = { id: req.id, ok: true, bytes, removed: [...removed] };
  } catch (err) {
    reply =
      err instanceof OnnxWireError
        ? { id: req.id, ok: false, message: err.message, malformed: { offset: err.offset } }
        : { id: req.id, ok: false, message: (err as Error).message ?? String(err) };
  }
  // The slimmed copy (or the input, when nothing was cut) goes back without a copy.
  parentPort!.postMessage(reply, reply.ok ? [reply.bytes.buffer as ArrayBuffer] : []);
});
