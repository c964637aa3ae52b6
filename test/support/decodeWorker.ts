// worker_threads entry (out/test/support/decodeWorker.js): the webview's decode + layout pipeline on one input, so
// the reliability run can stop an input that does not return (a hang) without losing the process.
import { parentPort } from 'node:worker_threads';
import { decodeAndLayout } from '../../webview/worker/pipeline';

/** `problems`: the tensors the decoder marked, as `name: problem`. */
export type DecodeReply =
  | { id: number; ok: true; nodes: number; problems: string[] }
  | { id: number; ok: false; error: boolean; message: string };

parentPort?.on('message', (m: { id: number; bytes: Uint8Array; expanded?: null }) => {
  let reply: DecodeReply;
  try {
    const r = decodeAndLayout(`input-${m.id}`, m.bytes, m.expanded === null ? { expanded: null } : {}, 'input.onnx');
    const problems = [...r.graph.tensors].filter(([, t]) => t.problem).map(([name, t]) => `${name}: ${t.problem}`);
    reply = { id: m.id, ok: true, nodes: r.layout.nodes.size, problems };
  } catch (err) {
    reply = { id: m.id, ok: false, error: err instanceof Error, message: String((err as Error)?.message ?? err) };
  }
  parentPort!.postMessage(reply);
});
