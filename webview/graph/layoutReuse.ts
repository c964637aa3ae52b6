// Layouts that are not computed again: one kept from an earlier open of the same file content (the extension
// host caches it by a hash of the bytes), and the layout around a module group that opens, where only the
// group's own contents are laid out and the rest of the view moves aside to make room.
import type { Boxes } from '../../protocol/webview';
import type { Graph } from '../importers/types';
import { fastLayout, straightEdges } from './fastLayout';
import type { Layout, Placed } from './layout';
import { groupId } from './groups';

/** A view as drawn: its nodes' ids (in order) and their boxes. */
export interface BaseLayout extends Boxes {
  ids: string[];
}

/** The layout's boxes in node order; undefined when some node has no box. */
export function boxesOf(graph: Graph, layout: Layout): Boxes | undefined {
  const boxes = new Float64Array(graph.nodes.length * 4);
  for (let i = 0; i < graph.nodes.length; i++) {
    const p = layout.nodes.get(graph.nodes[i].id);
    if (!p) return undefined;
    boxes[4 * i] = p.x;
    boxes[4 * i + 1] = p.y;
    boxes[4 * i + 2] = p.width;
    boxes[4 * i + 3] = p.height;
  }
  return { boxes, width: layout.width, height: layout.height };
}

/** The layout that `boxes` describe for this graph (straight edges, as the layered layout draws them). */
export function layoutFromBoxes(graph: Graph, { boxes, width, height }: Boxes): Layout | undefined {
  if (boxes.length !== graph.nodes.length * 4) return undefined;
  const nodes = new Map<string, Placed>();
  for (let i = 0; i < graph.nodes.length; i++) {
    const id = graph.nodes[i].id;
    const b = 4 * i;
    nodes.set(id, { id, x: boxes[b], y: boxes[b + 1], width: boxes[b + 2], height: boxes[b + 3] });
  }
  return { nodes, edges: straightEdges(graph, nodes), width, height };
}

const MARGIN = 20;

/**
 * The layout of `graph` (the view with module `scope` just opened) from `base` (the view as drawn with it
 * closed): the nodes inside `scope` are laid out on their own, as a block where the group's box was; rows
 * below the group move down by the block's extra height and the group's row moves apart by its extra width.
 * Nothing else is laid out again. undefined when `base` is not the same view with only that group closed.
 */
export function openGroupLayout(
  graph: Graph,
  scope: string,
  base: BaseLayout,
): { layout: Layout; laidOut: number } | undefined {
  const before = new Map<string, number>();
  base.ids.forEach((id, i) => before.set(id, i));
  const g = before.get(groupId(scope));
  if (g === undefined) return undefined;
  const inside: Graph['nodes'] = [];
  for (const n of graph.nodes) {
    if (n.scopes?.includes(scope)) inside.push(n);
    else if (!before.has(n.id)) return undefined;
  }
  if (!inside.length) return undefined;
  const ids = new Set(inside.map((n) => n.id));
  const block = fastLayout({
    ...graph,
    nodes: inside,
    edges: graph.edges.filter((e) => ids.has(e.from) && ids.has(e.to)),
  });
  let left = Infinity,
    right = -Infinity,
    top = Infinity,
    bottom = -Infinity;
  for (const p of block.nodes.values()) {
    left = Math.min(left, p.x - p.width / 2);
    right = Math.max(right, p.x + p.width / 2);
    top = Math.min(top, p.y - p.height / 2);
    bottom = Math.max(bottom, p.y + p.height / 2);
  }
  const b = base.boxes;
  const [gx, gy, gw, gh] = [b[4 * g], b[4 * g + 1], b[4 * g + 2], b[4 * g + 3]];
  const dx = Math.max(0, right - left - gw) / 2;
  const dy = bottom - top - gh;
  const nodes = new Map<string, Placed>();
  for (const n of graph.nodes) {
    const i = before.get(n.id);
    if (i === undefined || ids.has(n.id)) continue;
    let x = b[4 * i];
    let y = b[4 * i + 1];
    // Rows are centred on one y: a larger y is a row below the group, the same y the group's own row.
    if (y > gy + 0.5) y += dy;
    else if (Math.abs(y - gy) <= 0.5) x += x < gx ? -dx : dx;
    nodes.set(n.id, { id: n.id, x, y, width: b[4 * i + 2], height: b[4 * i + 3] });
  }
  const blockLeft = gx - (right - left) / 2;
  const blockTop = gy - gh / 2;
  for (const p of block.nodes.values())
    nodes.set(p.id, { ...p, x: blockLeft + (p.x - left), y: blockTop + (p.y - top) });
  // Back to a left margin of MARGIN, as a full layout has it.
  let minX = Infinity,
    maxX = -Infinity,
    maxY = 0;
  for (const p of nodes.values()) {
    minX = Math.min(minX, p.x - p.width / 2);
    maxX = Math.max(maxX, p.x + p.width / 2);
    maxY = Math.max(maxY, p.y + p.height / 2);
  }
  const shift = MARGIN - minX;
  if (shift) for (const p of nodes.values()) p.x += shift;
  // Keep the graph's node order in the layout's map.
  const ordered = new Map<string, Placed>();
  for (const n of graph.nodes) ordered.set(n.id, nodes.get(n.id)!);
  return {
    layout: {
      nodes: ordered,
      edges: straightEdges(graph, ordered),
      width: maxX - minX + 2 * MARGIN,
      height: Math.max(base.height + dy, maxY + MARGIN),
    },
    laidOut: inside.length,
  };
}
