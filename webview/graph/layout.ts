// Layered layout (dagre) of the importer's graph; node boxes sized from their labels.
import dagre from '@dagrejs/dagre';
import type { Graph } from '../importers/types';

/** Above this many nodes dagre's layout takes seconds; the linear-time layered layout (fastLayout) takes over. */
export const DAGRE_LIMIT = 1500;
/** Above this many drawn nodes the canvas renderer takes over from SVG (panning SVG repaints every node: ~45 ms
 * a frame at 1,100 nodes in headless Chromium), also for views dagre still lays out. */
export const SVG_LIMIT = 1000;

export interface Placed {
  id: string;
  x: number;
  y: number;
  width: number;
  height: number;
}
export interface Layout {
  nodes: Map<string, Placed>;
  edges: Array<{ from: string; to: string; points: Array<{ x: number; y: number }> }>;
  width: number;
  height: number;
}

/** A node's box width from its label (op and module), the same in both layouts. */
export function nodeWidth(op: string, module?: string): number {
  return Math.max(70, 7 * Math.max(op.length, (module ?? '').length) + 20);
}

export function dagreLayout(graph: Graph): Layout {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: 'TB', nodesep: 18, ranksep: 26, marginx: 20, marginy: 20 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of graph.nodes)
    g.setNode(n.id, {
      width: nodeWidth(n.kind === 'group' ? `+ ${n.op} (${n.size} nodes)` : n.op, n.module),
      height: n.module ? 38 : 26,
    });
  for (const e of graph.edges) g.setEdge(e.from, e.to);
  dagre.layout(g);
  const nodes = new Map<string, Placed>();
  for (const id of g.nodes()) {
    const n = g.node(id);
    nodes.set(id, { id, x: n.x, y: n.y, width: n.width, height: n.height });
  }
  const edges = g.edges().map((e) => ({ from: e.v, to: e.w, points: g.edge(e).points ?? [] }));
  const { width = 0, height = 0 } = g.graph();
  return { nodes, edges, width, height };
}

/** Below this scale 11px labels are drawn under 8 CSS pixels: a graph opens at a readable zoom instead. */
export const READABLE_SCALE = 0.75;

/**
 * The view a graph opens with: the whole graph when it fits at a readable scale; else the width fits (at most
 * 1:1, at least READABLE_SCALE) and the top of the graph shows, centred on `topX` (the first node) when the
 * graph is wider than the view. `whole` (the Fit button): the whole graph, both dimensions, at whatever scale
 * that takes. x, y: top-left in graph units; w, h: the visible extent.
 */
export function fitView(
  viewport: { width: number; height: number },
  layout: Pick<Layout, 'width' | 'height'>,
  whole = false,
  topX?: number,
): { scale: number; x: number; y: number; w: number; h: number } {
  const W = layout.width || 1,
    H = layout.height || 1;
  let scale = Math.min(viewport.width / W, viewport.height / H) || 1;
  if (!whole && scale < READABLE_SCALE) scale = Math.max(READABLE_SCALE, Math.min(1, viewport.width / W));
  const w = (viewport.width || W) / scale,
    h = (viewport.height || H) / scale;
  const x = w < W && topX !== undefined ? Math.min(Math.max(topX - w / 2, 0), W - w) : (W - w) / 2;
  return { scale, x, y: scale * H < viewport.height ? (H - h) / 2 : 0, w, h };
}
