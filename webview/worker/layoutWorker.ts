// Web worker: decodes the model and lays it out off the UI thread, so the view stays responsive.
import type { FromLayoutWorker, ToLayoutWorker } from '../../protocol/webview';
import { decodeAndLayout } from './pipeline';
import { pack } from './transfer';

const post = (m: FromLayoutWorker, transfer: Transferable[] = []) =>
  (self as unknown as Worker).postMessage(m, transfer);

self.onmessage = (ev: MessageEvent<ToLayoutWorker>) => {
  try {
    const laidOut = decodeAndLayout(ev.data.key, ev.data.bytes, ev.data.options, ev.data.fileName);
    const packed = pack(laidOut);
    if (packed) post({ type: 'packed', id: ev.data.id, ...packed.packed }, packed.transfer);
    else post({ type: 'laidOut', id: ev.data.id, ...laidOut });
  } catch (err) {
    post({ type: 'failed', id: ev.data.id, message: (err as Error).message });
  }
};
