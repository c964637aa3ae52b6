// Decode + group + layout, shared by the worker and the main-thread fallback. The decoded graph is kept,
// so on the main thread expanding a group or toggling Q/DQ collapse re-lays out without decoding again
// (as in a worker kept running; a worker ended after each layout gets the bytes again: worker/client.ts).
import { openModel } from '../importers';
import type { Graph } from '../importers/types';
import { fastLayout } from '../graph/fastLayout';
import { firstBlockOpen, groupGraph, inheritScopes, repeatedBlocks, topScopes } from '../graph/groups';
import { DAGRE_LIMIT, SVG_LIMIT, dagreLayout, type Layout } from '../graph/layout';
import { collapseQdq, precisionOf, producerMap } from '../graph/qdq';
import { layoutFromBoxes, openGroupLayout } from '../graph/layoutReuse';
import { executedCounts } from '../graph/executed';
import type { LayoutSource } from '../../protocol/webview';
import type { LaidOut, LayoutOptions } from './messages';

export type { LaidOut };
export type ViewOptions = LayoutOptions;

/** Past these the view refuses the model with a message instead of trying (the worker would run for minutes). */
export const MAX_MODEL_BYTES = 1024 ** 3;
export const MAX_NODES = 2_000_000;

export class LimitError extends Error {}

let cached: { key: string; graph: Graph } | undefined;

function decode(key: string, bytes: Uint8Array | undefined, fileName: string, maxNodes = MAX_NODES): Graph {
  if (!bytes) {
    if (cached?.key !== key) throw new Error('The model is no longer loaded; reopen it.');
    return cached.graph;
  }
  if (bytes.length > MAX_MODEL_BYTES)
    throw new LimitError(
      `The model's graph is ${(bytes.length / 1024 ** 2).toFixed(0)} MB after its weights were left out; the view shows graphs up to ${MAX_MODEL_BYTES / 1024 ** 2} MB.`,
    );
  const graph = openModel(bytes, fileName);
  if (graph.nodes.length > maxNodes)
    throw new LimitError(
      `The model has ${graph.nodes.length.toLocaleString('en-US')} nodes; the view shows up to ${maxNodes.toLocaleString('en-US')}.`,
    );
  const producers = producerMap(graph);
  // A precision the file states (the kernel knows the config's overrides) wins over the one the QDQ structure implies.
  for (const n of graph.nodes) n.precision ??= precisionOf(n, graph, producers);
  inheritScopes(graph, producers);
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
  const full = decode(key, bytes, fileName, options.maxNodes);
  let graph = options.collapseQdq ? collapseQdq(full) : full;
  let expanded = options.expanded;
  // A stack of repeated blocks opens with its first block open and the others folded; any other large graph with
  // its top-level modules collapsed.
  const folds = repeatedBlocks(graph);
  if (expanded === undefined)
    expanded =
      firstBlockOpen(graph, folds) ?? (graph.nodes.length > DAGRE_LIMIT && topScopes(graph).length > 1 ? [] : null);
  if (expanded) graph = groupGraph(graph, new Set(expanded), folds);
  const t1 = performance.now();
  const renderer = options.renderer ?? 'auto';
  // The linear-time layered layout at every size (about 20 ms at 1k nodes where dagre took seconds); dagre only
  // when SVG is asked for explicitly (the bench's dagre + SVG baseline). big: drawn on canvas.
  const big = renderer === 'canvas' || (renderer !== 'svg' && graph.nodes.length > SVG_LIMIT);
  let layout: Layout | undefined;
  let layoutBy: LayoutSource = 'layered';
  let laidOutNodes = 0;
  if (options.reuse && renderer !== 'svg') {
    layout = layoutFromBoxes(graph, options.reuse);
    if (layout) layoutBy = 'reused';
  }
  if (!layout && options.opened && renderer !== 'svg') {
    const opened = openGroupLayout(graph, options.opened.scope, options.opened);
    if (opened) {
      ({ layout, laidOut: laidOutNodes } = opened);
      layoutBy = 'group';
    }
  }
  if (!layout) {
    laidOutNodes = graph.nodes.length;
    if (renderer === 'svg' && graph.nodes.length <= DAGRE_LIMIT) {
      ({ layout, by: layoutBy } = dagreOrFast(graph));
    } else layout = fastLayout(graph);
  }
  const executed = options.colouring?.executed;
  return {
    graph,
    layout,
    big,
    expanded,
    total: full.nodes.length,
    // Counted over the whole model: a collapsed group hides its nodes from the drawing, not from the model.
    ...(executed ? { executedCounts: executedCounts(full.nodes, executed) } : {}),
    timings: { decode: t1 - t0, layout: performance.now() - t1 },
    layoutBy,
    laidOutNodes,
  };
}

/** dagre recurses along long chains and can exhaust a worker's smaller stack; the layered layout cannot. */
function dagreOrFast(graph: Graph): { layout: Layout; by: LayoutSource } {
  try {
    return { layout: dagreLayout(graph), by: 'dagre' };
  } catch (err) {
    if (err instanceof RangeError) return { layout: fastLayout(graph), by: 'layered' };
    throw err;
  }
}
