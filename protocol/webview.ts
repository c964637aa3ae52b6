// Messages between the extension host and the graph webview: one union per direction.
import type { LayerResult } from './kernel';

export type ToWebview =
  | {
      type: 'showGraph';
      /** Title shown above the graph (file name). */
      title: string;
      /** The ONNX model bytes, base64 (postMessage of large typed arrays is not portable across hosts). */
      onnxBase64: string;
      /** Per-layer results from compare/layers; empty when only the graph is shown. */
      layers: LayerResult[];
      /** Cosine threshold below which a layer is flagged. */
      threshold: number;
    }
  | { type: 'error'; message: string };

export type FromWebview =
  | { type: 'ready' }
  | { type: 'rendered'; nodes: number; qdq: number; coloured: number }
  | { type: 'error'; message: string };
