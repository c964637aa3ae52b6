// Web worker: decodes the model and lays it out off the UI thread, so the view stays responsive. A view drawn on
// canvas gets its scene first (typed arrays, transferred): the page draws it while the graph's nodes are packed,
// cloned and rebuilt on its side, which at 100k nodes takes longer than decoding and laying out did.
import type { FromLayoutWorker, ToLayoutWorker } from './messages';
import { groupMetrics } from '../graph/groups';
import { sceneBuffers, sceneOf } from '../graph/scene';
import { stageLanes } from '../graph/stageLanes';
import { decodeAndLayout } from './pipeline';
import { pack } from './transfer';

const post = (m: FromLayoutWorker, transfer: Transferable[] = []) =>
  (self as unknown as Worker).postMessage(m, transfer);

self.onmessage = (ev: MessageEvent<ToLayoutWorker>) => {
  const { id, options } = ev.data;
  try {
    const laidOut = decodeAndLayout(ev.data.key, ev.data.bytes, options, ev.data.fileName);
    const colouring = options.colouring;
    if (laidOut.big && colouring) {
      const { graph, layout } = laidOut;
      const layers = [...colouring.layers, ...groupMetrics(graph, colouring.layers)];
      const lanes = colouring.stages && stageLanes(colouring.stages, graph);
      const scene = sceneOf(graph, layout, layers, colouring.threshold, colouring.executed, lanes);
      if (laidOut.executedCounts) scene.executedCounts = laidOut.executedCounts;
      post({ type: 'scene', id, scene, total: laidOut.total }, sceneBuffers(scene));
    }
    const packed = pack(laidOut);
    if (packed) post({ type: 'packed', id, ...packed.packed }, packed.transfer);
    else post({ type: 'laidOut', id, ...laidOut });
  } catch (err) {
    post({ type: 'failed', id, message: (err as Error).message });
  }
};
