// Messages between the extension host and the graph webview: one union per direction, and the data they carry.
// A contract imports nothing of client/, server/ or webview/ (eslint.config.mjs); the page and its layout worker
// talk in webview/worker/messages.ts.
import type { LayerHistograms, LayerResult, ObserverDrift, StageDivergence, StageLayer } from './kernel';

/** Summary of a tensor's values: what the properties panel shows for weights. The host makes one for each tensor
 * it keeps (client/editors/slimOnnx.ts), the webview one for a small constant whose values it has. */
export interface WeightStats {
  /** Bytes of the values (when they stayed in the extension host: the payload removed). */
  bytes?: number;
  /** Element count and summary, when the data type is one the host reads (float32/16, int8/uint8, int32/64). */
  count?: number;
  min?: number;
  max?: number;
  mean?: number;
  std?: number;
  /** Equal-width bins over [min, max]. */
  histogram?: number[];
}

/** What a runtime ran for one node of the file shown (by node name), from its build report. */
export interface ExecutedOp {
  /** int8 | fp32 | fp16 | conversion (Q/DQ, casts) | other (shape ops). */
  precision: string;
  role?: string;
  /** The optimised graph's op(s) that ran this node, when it is the source model (e.g. `QLinearConv`). */
  ranAs?: string;
  dtypes?: string;
  /** Why a node stayed fp32 (e.g. its input is not dequantized from int8). */
  reason?: string;
}

export interface ExecutedOverlay {
  /** e.g. `ONNX Runtime 1.32.0 (CPUExecutionProvider)`. */
  runtime: string;
  ops: Record<string, ExecutedOp>;
}

/** Top-1 accuracy of a model at the stages a run measured (fractions), on `samples` validation samples. */
export interface ModelAccuracy {
  samples: number;
  /** The float model before QAT. */
  fp32?: number;
  /** The QAT-trained model with fake quantization off. */
  qatFloat?: number;
  /** The QAT-trained model with fake quantization on. */
  fakeQuant?: number;
  /** The converted INT8 model. */
  int8?: number;
}

/** One stage Find Where INT8 Diverges compared, by the kernel's id (fp32, fakeQuant, int8, ort, c, ...: read
 * from the result, never a fixed list) and label. */
export interface StageInfo {
  id: string;
  label: string;
}

/** What Find Where INT8 Diverges (compare/stages) shows over the QDQ ONNX graph it ran: per quantized layer, each
 * stage pair's local and propagated error, and where each pair that should agree first parts. */
export interface StageResults {
  /** The stages compared, in pipeline order. */
  stages: StageInfo[];
  /** Pair keys compared ("int8:ort": earlier stage, then later). */
  pairs: string[];
  /** The pairs expected to compute the same numbers, searched for their first divergent layer. */
  bisected: string[];
  /** In graph order, each with its ONNX nodes (`onnx.nodes`, `onnx.output`) and its pairs. */
  layers: StageLayer[];
  /** Bisected pair key -> its first divergent layer and likely cause; absent where every layer agrees. */
  divergence: Record<string, StageDivergence>;
  /** Top-1 per stage id (null where the stage could not run) on `samples` validation samples. */
  accuracy: { samples: number; [stage: string]: number | null | undefined };
  /** Stage id -> why it could not run here. */
  missing?: Record<string, string>;
  /** More output quantization steps than this between two stages that should agree is a divergence. */
  roundingSteps: number;
  /** A float output (no quantization steps) diverges below this SQNR. */
  floatSqnrDb: number;
}

export type ToWebview =
  | {
      type: 'showGraph';
      /** Title shown above the graph (file name). */
      title: string;
      /** The model file's bytes (slimmed of large weights), posted as bytes, not text: ONNX, or the kernel's graph
       * JSON (*.qatgraph.json). The title (a file name) and the bytes pick the importer. */
      onnx: Uint8Array;
      /** Folder that relative source paths in the model resolve against (the opened file's folder). */
      baseDir?: string;
      /** Tensors whose values the extension host kept (large weights), summarized, by tensor name. */
      weights?: Record<string, WeightStats>;
      /** Per layer (module path): its weight and input-activation histograms from analyze/histograms. */
      histograms?: LayerHistograms[];
      /** Precision as executed by a runtime, per node name (an ONNX Runtime build's report beside the file). */
      executed?: ExecutedOverlay;
      /** How each layer's observers moved during the QAT run that trained the model, for the properties panel. */
      drift?: ObserverDrift;
      /** Per-layer results from compare/layers; empty when only the graph is shown. */
      layers: LayerResult[];
      /** Cosine threshold below which a layer is flagged. */
      threshold: number;
      /** The model's accuracy at each stage the run measured (Compare Layers: FP32 and INT8). */
      accuracy?: ModelAccuracy;
      /** Find Where INT8 Diverges: each stage's error per quantized node (stage lanes), the stage table and the
       * bisect verdicts, in place of the per-layer cosine (`layers` is empty then). */
      stages?: StageResults;
      /** The QAT config the layers came from: node context-menu commands (keep FP16, reveal) act on it. */
      config?: string;
      /** auto: the layered layout, drawn as SVG up to SVG_LIMIT nodes and on canvas beyond; svg: dagre + SVG. */
      renderer?: 'auto' | 'svg' | 'canvas';
      /** auto: large models with module scopes open as collapsed module groups; flat: every node. */
      groups?: 'auto' | 'flat';
      /** Names the bytes' content (a hash): layouts the view reports under it come back with the next open. */
      contentKey?: string;
      /** Layouts of this content the view reported before (layoutComputed), each for its view options. */
      layouts?: CachedLayout[];
    }
  | { type: 'error'; message: string }
  /** Another view of the same model selected a node: select its counterpart (same name, else same module); a
   * runtime's fused kernel names every module it covers (`modules`), and each one's node is selected. */
  | { type: 'selectCounterpart'; name: string; op: string; module?: string; modules?: string[] };

export type FromWebview =
  | { type: 'ready' }
  | {
      type: 'rendered';
      nodes: number;
      qdq: number;
      coloured: number;
      renderer: 'svg' | 'canvas';
      inWorker: boolean;
      /** Collapsed module groups drawn, and nodes in the whole model. */
      groups: number;
      total: number;
      /** Milliseconds spent decoding, laying out and drawing (to the frame that has the graph's nodes), and for a
       * view drawn on canvas, from the model's arrival to the first frame (the layout worker's scene), when that came first. */
      timings: { decode: number; layout: number; render: number; firstFrame?: number };
      layoutBy: LayoutSource;
      /** Nodes the layout step placed: all drawn for a new layout, an opened group's for 'group', 0 when reused. */
      laidOutNodes: number;
    }
  /** A layout the view computed for the content named `contentKey` with view options `options`, to keep. */
  | ({ type: 'layoutComputed'; contentKey: string } & CachedLayout)
  | { type: 'error'; message: string }
  /** Open a layer's definition in the editor. */
  | { type: 'revealSource'; file: string; line: number }
  /** Open the Markdown report of the stages shown (the host knows which file). */
  | { type: 'openStageReport' }
  /** Save an export; `data` is text for svg/html and base64 for png. */
  | { type: 'export'; format: 'svg' | 'png' | 'html'; fileName: string; data: string }
  /** The user selected a node (click, search, keyboard); `module` is its module, or the one it was drawn in;
   * `modules`, for a runtime's fused kernel, every module it covers. */
  | { type: 'selected'; name: string; op: string; module?: string; modules?: string[] };

/** What the webview puts in `data-vscode-context` on a layer node: the arguments of its context-menu commands. */
export interface LayerContext {
  webviewSection?: 'layer';
  preventDefaultContextMenuItems?: boolean;
  module?: string;
  config?: string;
  hasSource?: boolean;
  sourceFile?: string;
  sourceLine?: number;
}

/** Boxes of a graph's nodes in the graph's node order: x, y, width, height each (what a cache keeps). */
export interface Boxes {
  boxes: Float64Array;
  width: number;
  height: number;
}

/** A view's layout as kept for its file content: `options` names the view options it was made for. */
export interface CachedLayout extends Boxes {
  options: string;
}

/** Where a view's layout came from: the layered layout (or dagre) of the whole view, a layout kept from an
 * earlier open of the same content, or the view before with only an opened group's contents laid out. */
export type LayoutSource = 'layered' | 'dagre' | 'reused' | 'group';

/** The mixed-precision front page (client/search/frontChart.ts) to the extension: a point picked, or loaded. */
export type SearchFrontFromWebview = { type: 'ready' } | { type: 'pick'; id: string };

/** The extension to the mixed-precision front page: what writing the picked point's overrides did. */
export type SearchFrontToWebview = { type: 'picked'; id: string; message: string };

/** The sensitivity page (client/search/sensitivityChart.ts) to the extension: loaded, write the suggestion, or
 * Apply Fix on a layer. */
export type SensitivityFromWebview = { type: 'ready' } | { type: 'write' } | { type: 'fix'; module: string };

/** The extension to the sensitivity page: what writing the suggestion did. */
export type SensitivityToWebview = { type: 'done'; message: string };
