// Messages between the graph page and its layout worker (worker/layoutWorker.ts, started by worker/client.ts).
import type { LayerResult } from '../../protocol/kernel';
import type { Boxes, ExecutedOverlay, LayoutSource, StageResults } from '../../protocol/webview';
import type { BaseLayout } from '../graph/layoutReuse';
import type { Layout } from '../graph/layout';
import type { Scene } from '../graph/scene';
import type { Graph } from '../importers/types';
import type { NodeColumns, TensorColumns } from './columns';

/** What the layout worker is asked: decode (when `bytes` come) and lay out, with these view options. */
export interface LayoutOptions {
  renderer?: 'auto' | 'svg' | 'canvas';
  collapseQdq?: boolean;
  /** Modules to show open; undefined: flat when small, top-level groups collapsed when large. */
  expanded?: string[] | null;
  /** Refuse models with more nodes than this (default MAX_NODES in webview/worker/pipeline.ts). */
  maxNodes?: number;
  /** This view's layout from an earlier open of the same file content: drawn as it is, not laid out again. */
  reuse?: Boxes;
  /** The view as drawn with module `scope` still closed (the request opens it): only its contents are laid out. */
  opened?: BaseLayout & { scope: string };
  /** What colours the nodes: with it, a view drawn on canvas gets its scene (graph/scene.ts) posted first. */
  colouring?: { layers: LayerResult[]; threshold: number; executed?: ExecutedOverlay; stages?: StageResults };
}

/** A laid-out view of a model: the graph as drawn (groups stand for collapsed modules) and where each node sits. */
export interface LaidOut {
  /** The graph drawn (module groups collapsed as asked) and its placement; structured-cloned, Maps included. */
  graph: Graph;
  layout: Layout;
  /** Drawn on canvas (past the SVG limit, or asked for). */
  big: boolean;
  /** Expanded module groups, or null when the graph is shown flat. */
  expanded: string[] | null;
  /** Nodes in the whole model (groups stand for many). */
  total: number;
  /** With a runtime's precisions (options.colouring.executed): how many of the model's compute ops run in each. */
  executedCounts?: Record<string, number>;
  /** Milliseconds spent decoding (with grouping) and laying out. */
  timings: { decode: number; layout: number };
  layoutBy: LayoutSource;
  /** Nodes the layout step placed (0 for a reused layout). */
  laidOutNodes: number;
}

/** The webview's layout worker: decode and lay out off the UI thread. */
export type ToLayoutWorker = {
  type: 'layout';
  id: number;
  /** Identifies the model; without `bytes` the worker re-lays out the one it decoded last under this key. */
  key: string;
  bytes?: Uint8Array;
  /** The model's file name, which with the bytes picks the importer. */
  fileName?: string;
  options: LayoutOptions;
};
export type FromLayoutWorker =
  | ({ type: 'laidOut'; id: number } & LaidOut)
  /** The same, with its edges, tensor lists and layout as typed arrays (webview/worker/transfer.ts). */
  | ({ type: 'packed'; id: number } & PackedLaidOut)
  /** Ahead of the laid-out graph, for a view drawn on canvas: what the first frame draws. */
  | { type: 'scene'; id: number; scene: Scene; total: number }
  | { type: 'failed'; id: number; message: string };

/** A LaidOut as it crosses to the page: its edges, tensor lists and layout as typed arrays (worker/transfer.ts). */
export interface PackedLaidOut extends Omit<LaidOut, 'graph' | 'layout'> {
  /** The graph's other fields (name, opsets, modules, ...) as they are. */
  graph: Omit<Graph, 'edges' | 'nodes' | 'tensors'>;
  nodes: NodeColumns;
  tensors: TensorColumns;
  /** The edges' tensor names. */
  names: string[];
  /** Per edge: from and to (node indices) and the tensor (name index); labels of the few labelled edges. */
  edges: Int32Array;
  edgeLabels: Array<[number, string]>;
  /** The layout's boxes in its own order: node index, then x, y, width, height. */
  placedOrder: Int32Array;
  boxes: Float64Array;
  /** Layout edges: from, to; their points flat (x, y) with where each edge's start. */
  routes: Int32Array;
  pointStart: Int32Array;
  points: Float64Array;
  width: number;
  height: number;
}
