// A linear-time layered layout (the view's default at every size; dagre took seconds at 1k nodes): longest-path ranks, one barycentre
// sweep to order each rank, straight edges. Model graphs are long and narrow, so this reads well.
import type { Graph } from '../importers/types';
import type { Layout, Placed } from './layout';

export const NODE_HEIGHT = 26;
const RANK_GAP = 24;
const NODE_GAP = 16;

export function nodeWidth(op: string, module?: string): number {
  return Math.max(70, 7 * Math.max(op.length, (module ?? '').length) + 20);
}

export function fastLayout(graph: Graph): Layout {
  const n = graph.nodes.length;
  const index = new Map(graph.nodes.map((node, i) => [node.id, i]));
  const succ: number[][] = Array.from({ length: n }, () => []);
  const pred: number[][] = Array.from({ length: n }, () => []);
  const indegree = new Int32Array(n);
  for (const e of graph.edges) {
    const a = index.get(e.from),
      b = index.get(e.to);
    if (a === undefined || b === undefined || a === b) continue;
    succ[a].push(b);
    pred[b].push(a);
    indegree[b]++;
  }
  // Kahn's order gives longest-path ranks; nodes left on a cycle (invalid ONNX) go after their ranked preds.
  const rank = new Int32Array(n);
  const queue: number[] = [];
  for (let i = 0; i < n; i++) if (indegree[i] === 0) queue.push(i);
  const seen = new Uint8Array(n);
  for (let head = 0; head < queue.length; head++) {
    const v = queue[head];
    seen[v] = 1;
    for (const w of succ[v]) {
      rank[w] = Math.max(rank[w], rank[v] + 1);
      if (--indegree[w] === 0) queue.push(w);
    }
  }
  // Loops, not Math.max(...list): a node with 100k predecessors would overflow the argument stack.
  for (let i = 0; i < n; i++) {
    if (seen[i]) continue;
    let r = 0;
    for (const p of pred[i]) r = Math.max(r, rank[p] + 1);
    rank[i] = r;
  }
  // Sources other than graph inputs (weight DequantizeLinear, shape constants) sit just above their first
  // consumer instead of all piling up in the first row.
  for (let i = 0; i < n; i++) {
    if (pred[i].length || !succ[i].length || graph.nodes[i].kind === 'input') continue;
    let first = Infinity;
    for (const w of succ[i]) first = Math.min(first, rank[w]);
    rank[i] = Math.max(0, first - 1);
  }

  const ranks: number[][] = [];
  for (let i = 0; i < n; i++) (ranks[rank[i]] ??= []).push(i);
  const order = new Float64Array(n);
  const widths = graph.nodes.map((node) =>
    nodeWidth(node.kind === 'group' ? `+ ${node.op} (${node.size} nodes)` : node.op, node.module),
  );
  const heights = graph.nodes.map((node) => (node.module ? NODE_HEIGHT + 12 : NODE_HEIGHT));
  const x = new Float64Array(n);
  let y = 20;
  const nodes = new Map<string, Placed>();
  for (const row of ranks) {
    if (!row) continue;
    // Order by the mean position of predecessors so chains stay straight and branches sit side by side.
    const placedPreds = row.filter((v) => pred[v].length);
    const rowMean = placedPreds.length
      ? placedPreds.reduce((s, v) => s + pred[v].reduce((t, p) => t + x[p], 0) / pred[v].length, 0) / placedPreds.length
      : 0;
    for (const v of row)
      order[v] = pred[v].length ? pred[v].reduce((s, p) => s + x[p], 0) / pred[v].length : rowMean + 1e-6 * v;
    row.sort((a, b) => order[a] - order[b]);
    const rowWidth = row.reduce((s, v) => s + widths[v], 0) + NODE_GAP * (row.length - 1);
    const centre = row.reduce((s, v) => s + order[v], 0) / row.length;
    let left = centre - rowWidth / 2;
    let rowHeight = 0;
    for (const v of row) rowHeight = Math.max(rowHeight, heights[v]);
    for (const v of row) {
      x[v] = left + widths[v] / 2;
      left += widths[v] + NODE_GAP;
    }
    for (const v of row) {
      const node = graph.nodes[v];
      nodes.set(node.id, { id: node.id, x: x[v], y: y + rowHeight / 2, width: widths[v], height: heights[v] });
    }
    y += rowHeight + RANK_GAP;
  }
  // Shift right so every coordinate is positive.
  let minX = Infinity,
    maxX = -Infinity;
  for (const p of nodes.values()) {
    minX = Math.min(minX, p.x - p.width / 2);
    maxX = Math.max(maxX, p.x + p.width / 2);
  }
  const shift = 20 - (Number.isFinite(minX) ? minX : 0);
  for (const p of nodes.values()) p.x += shift;
  const width = (Number.isFinite(maxX) ? maxX - minX : 0) + 40;
  return { nodes, edges: straightEdges(graph, nodes), width, height: y };
}

/** Each edge as a straight line from the bottom of its source's box to the top of its target's. */
export function straightEdges(graph: Graph, nodes: Map<string, Placed>): Layout['edges'] {
  const edges: Layout['edges'] = [];
  for (const e of graph.edges) {
    const a = nodes.get(e.from),
      b = nodes.get(e.to);
    if (a && b)
      edges.push({
        from: e.from,
        to: e.to,
        points: [
          { x: a.x, y: a.y + a.height / 2 },
          { x: b.x, y: b.y - b.height / 2 },
        ],
      });
  }
  return edges;
}
