// Decode + group + layout, shared by the worker and the main-thread fallback. The decoded graph is kept,
// so on the main thread expanding a group or toggling Q/DQ collapse re-lays out without decoding again
// (as in a worker kept running; a worker ended after each layout gets the bytes again: worker/client.ts).
import { openModel } from '../importers';
import type { Graph } from '../importers/types';
import { fastLayout } from '../view/fastLayout';
import { groupGraph, inheritScopes, topScopes } from '../view/groups';
import { DAGRE_LIMIT, SVG_LIMIT, dagreLayout, type Layout } from '../view/layout';
import { collapseQdq, precisionOf, producerMap } from '../view/qdq';

export interface LaidOut {
  graph: Graph;
  layout: Layout;
  big: boolean;
  /** Expanded module groups, or null when the graph is shown flat. */
  expanded: string[] | null;
  /** Nodes in the whole model (groups stand for many). */
  total: number;
  timings: { decode: number; layout: number };
}

export interface ViewOptions {
  renderer?: 'auto' | 'svg' | 'canvas';
  collapseQdq?: boolean;
  /** Modules to show open; undefined: flat when small, top-level groups collapsed when large. */
  expanded?: string[] | null;
}

let cached: { key: string; graph: Graph } | undefined;

function decode(key: string, bytes: Uint8Array | undefined, fileName: string): Graph {
  if (!bytes) {
    if (cached?.key !== key) throw new Error('The model is no longer loaded; reopen it.');
    return cached.graph;
  }
  const graph = openModel(bytes, fileName);
  const producers = producerMap(graph);
  // A precision the file states (the kernel knows the config's overrides) wins over the one the QDQ structure implies.
  for (const n of graph.nodes) n.precision ??= precisionOf(n, graph, producers);
  inheritScopes(graph);
  cached = { key, graph };
  return graph;
}

export function decodeAndLayout(
  key: string,
  bytes: Uint8Array | undefined,
  options: ViewOptions = {},
  fileName = '',
): LaidOut {
  const t0 = performance.now();
  const full = decode(key, bytes, fileName);
  let graph = options.collapseQdq ? collapseQdq(full) : full;
  let expanded = options.expanded;
  if (expanded === undefined) expanded = graph.nodes.length > DAGRE_LIMIT && topScopes(graph).length > 1 ? [] : null;
  if (expanded) graph = groupGraph(graph, new Set(expanded));
  const t1 = performance.now();
  const renderer = options.renderer ?? 'auto';
  // big: drawn on canvas; past DAGRE_LIMIT also laid out by the linear-time layered layout.
  const fast = renderer === 'canvas' || (renderer !== 'svg' && graph.nodes.length > DAGRE_LIMIT);
  const big = fast || (renderer !== 'svg' && graph.nodes.length > SVG_LIMIT);
  const layout = fast ? fastLayout(graph) : dagreOrFast(graph);
  return {
    graph,
    layout,
    big,
    expanded,
    total: full.nodes.length,
    timings: { decode: t1 - t0, layout: performance.now() - t1 },
  };
}

/** dagre recurses along long chains and can exhaust a worker's smaller stack; the layered layout cannot. */
function dagreOrFast(graph: Graph): Layout {
  try {
    return dagreLayout(graph);
  } catch (err) {
    if (err instanceof RangeError) return fastLayout(graph);
    throw err;
  }
}
