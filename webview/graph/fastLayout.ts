// A linear-time layered layout (the view's default at every size; dagre took seconds at 1k nodes): longest-path ranks, one barycentre
// sweep to order each rank, straight edges. Model graphs are long and narrow, so this reads well.
import type { Graph } from '../importers/types';
import { nodeWidth, type Layout, type Placed } from './layout';

export const NODE_HEIGHT = 26;
const RANK_GAP = 24;
const NODE_GAP = 16;

export function fastLayout(graph: Graph): Layout {
  // Typed arrays throughout (adjacency as offsets into one list, ranks bucketed the same way): at 100k nodes
  // arrays of arrays per node cost more in allocation and garbage collection than the layout itself.
  const n = graph.nodes.length;
  const index = new Map<string, number>();
  for (let i = 0; i < n; i++) index.set(graph.nodes[i].id, i);
  const m = graph.edges.length;
  const from = new Int32Array(m),
    to = new Int32Array(m);
  const outStart = new Int32Array(n + 1),
    inStart = new Int32Array(n + 1);
  let kept = 0;
  for (const e of graph.edges) {
    const a = index.get(e.from),
      b = index.get(e.to);
    if (a === undefined || b === undefined || a === b) continue;
    from[kept] = a;
    to[kept++] = b;
    outStart[a + 1]++;
    inStart[b + 1]++;
  }
  for (let i = 0; i < n; i++) {
    outStart[i + 1] += outStart[i];
    inStart[i + 1] += inStart[i];
  }
  // Successors and predecessors of each node in edge order.
  const succ = new Int32Array(kept),
    pred = new Int32Array(kept);
  const outAt = outStart.slice(0, n),
    inAt = inStart.slice(0, n);
  for (let k = 0; k < kept; k++) {
    succ[outAt[from[k]]++] = to[k];
    pred[inAt[to[k]]++] = from[k];
  }
  const indegree = new Int32Array(n);
  for (let i = 0; i < n; i++) indegree[i] = inStart[i + 1] - inStart[i];
  // Kahn's order gives longest-path ranks; nodes left on a cycle (invalid ONNX) go after their ranked preds.
  const rank = new Int32Array(n);
  const queue = new Int32Array(n);
  let tail = 0;
  for (let i = 0; i < n; i++) if (indegree[i] === 0) queue[tail++] = i;
  const seen = new Uint8Array(n);
  for (let head = 0; head < tail; head++) {
    const v = queue[head];
    seen[v] = 1;
    for (let k = outStart[v]; k < outStart[v + 1]; k++) {
      const w = succ[k];
      if (rank[v] + 1 > rank[w]) rank[w] = rank[v] + 1;
      if (--indegree[w] === 0) queue[tail++] = w;
    }
  }
  for (let i = 0; i < n; i++) {
    if (seen[i]) continue;
    let r = 0;
    for (let k = inStart[i]; k < inStart[i + 1]; k++) r = Math.max(r, rank[pred[k]] + 1);
    rank[i] = r;
  }
  // Sources other than graph inputs (weight DequantizeLinear, shape constants) sit just above their first
  // consumer instead of all piling up in the first row.
  for (let i = 0; i < n; i++) {
    if (inStart[i + 1] > inStart[i] || outStart[i + 1] === outStart[i] || graph.nodes[i].kind === 'input') continue;
    let first = Infinity;
    for (let k = outStart[i]; k < outStart[i + 1]; k++) first = Math.min(first, rank[succ[k]]);
    rank[i] = Math.max(0, first - 1);
  }

  // Rows: the nodes of each rank in node order.
  let ranks = 0;
  for (let i = 0; i < n; i++) if (rank[i] + 1 > ranks) ranks = rank[i] + 1;
  const rowStart = new Int32Array(ranks + 1);
  for (let i = 0; i < n; i++) rowStart[rank[i] + 1]++;
  for (let r = 0; r < ranks; r++) rowStart[r + 1] += rowStart[r];
  const rows = new Int32Array(n);
  const rowAt = rowStart.slice(0, ranks);
  for (let i = 0; i < n; i++) rows[rowAt[rank[i]]++] = i;

  const order = new Float64Array(n);
  const widths = new Float64Array(n),
    heights = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const node = graph.nodes[i];
    widths[i] = nodeWidth(node.kind === 'group' ? `+ ${node.op} (${node.size} nodes)` : node.op, node.module);
    heights[i] = node.module ? NODE_HEIGHT + 12 : NODE_HEIGHT;
  }
  const x = new Float64Array(n);
  const meanPredX = (v: number) => {
    let s = 0;
    for (let k = inStart[v]; k < inStart[v + 1]; k++) s += x[pred[k]];
    return s / (inStart[v + 1] - inStart[v]);
  };
  let y = 20;
  const nodes = new Map<string, Placed>();
  for (let r = 0; r < ranks; r++) {
    if (rowStart[r + 1] === rowStart[r]) continue;
    const row = Array.from(rows.subarray(rowStart[r], rowStart[r + 1]));
    // Order by the mean position of predecessors so chains stay straight and branches sit side by side.
    let placedPreds = 0,
      sum = 0;
    for (const v of row)
      if (inStart[v + 1] > inStart[v]) {
        placedPreds++;
        sum += meanPredX(v);
      }
    const rowMean = placedPreds ? sum / placedPreds : 0;
    for (const v of row) order[v] = inStart[v + 1] > inStart[v] ? meanPredX(v) : rowMean + 1e-6 * v;
    row.sort((a, b) => order[a] - order[b]);
    let rowWidth = NODE_GAP * (row.length - 1),
      centre = 0,
      rowHeight = 0;
    for (const v of row) {
      rowWidth += widths[v];
      centre += order[v];
      rowHeight = Math.max(rowHeight, heights[v]);
    }
    centre /= row.length;
    let left = centre - rowWidth / 2;
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
