// worker_threads entry (out/test/support/decodeWorker.js): the webview's decode + layout pipeline on one input, so
// the reliability run can stop an input that does not return (a hang) without losing the process.
import { parentPort } from 'node:worker_threads';
import { decodeAndLayout } from '../../webview/worker/pipeline';

export type DecodeReply =
  { id: number; ok: true; nodes: number } | { id: number; ok: false; error: boolean; message: string };

parentPort?.on('message', (m: { id: number; bytes: Uint8Array; expanded?: null }) => {
  let reply: DecodeReply;
  try {
    const r = decodeAndLayout(`input-${m.id}`, m.bytes, m.expanded === null ? { expanded: null } : {}, 'input.onnx');
    reply = { id: m.id, ok: true, nodes: r.layout.nodes.size };
  } catch (err) {
    reply = { id: m.id, ok: false, error: err instanceof Error, message: String((err as Error)?.message ?? err) };
  }
  parentPort!.postMessage(reply);
});
