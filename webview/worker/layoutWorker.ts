// Web worker: decodes the model and lays it out off the UI thread, so the view stays responsive.
import type { FromLayoutWorker, ToLayoutWorker } from '../../protocol/webview';
import { decodeAndLayout } from './pipeline';

const post = (m: FromLayoutWorker) => (self as unknown as Worker).postMessage(m);

self.onmessage = (ev: MessageEvent<ToLayoutWorker>) => {
  try {
    post({
      type: 'laidOut',
      id: ev.data.id,
      ...decodeAndLayout(ev.data.key, ev.data.bytes, ev.data.options, ev.data.fileName),
    });
  } catch (err) {
    post({ type: 'failed', id: ev.data.id, message: (err as Error).message });
  }
};
