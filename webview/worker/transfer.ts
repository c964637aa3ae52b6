// A laid-out graph as it crosses from the layout worker to the page. Structured clone copies every object and
// every string one by one: at 100k nodes the graph's edges and the layout (a Map of boxes, edges with point
// objects) took as long to clone as the nodes themselves. Here the edges and the layout go as typed arrays
// (transferred, not copied) of indices into the node list and into one table of tensor names, the nodes and
// tensors as columns (worker/columns.ts), and the page rebuilds the same objects from them. Only the tensors
// the drawn nodes read go along (the properties panel shows a node's inputs; a collapsed group has none).
import type { LaidOut, PackedLaidOut } from './messages';
import type { Graph, TensorInfo } from '../importers/types';
import type { Layout, Placed } from '../graph/layout';
import { Interned } from '../graph/interned';
import { packNodes, packTensors, unpackNodes, unpackTensors } from './columns';

/** undefined when the layout places something that is not a node of the graph (then it goes as it is). */
export function pack(laidOut: LaidOut): { packed: PackedLaidOut; transfer: ArrayBuffer[] } | undefined {
  const { graph, layout } = laidOut;
  const index = new Map<string, number>();
  graph.nodes.forEach((n, i) => index.set(n.id, i));
  const names = new Interned();
  const tensors = new Map<string, TensorInfo>();
  for (const node of graph.nodes)
    for (const t of node.inputs) {
      const info = graph.tensors.get(t);
      if (info) tensors.set(t, info);
    }
  const edges = new Int32Array(graph.edges.length * 3);
  const edgeLabels: Array<[number, string]> = [];
  for (let k = 0; k < graph.edges.length; k++) {
    const e = graph.edges[k];
    const from = index.get(e.from);
    const to = index.get(e.to);
    if (from === undefined || to === undefined) return undefined;
    edges[3 * k] = from;
    edges[3 * k + 1] = to;
    edges[3 * k + 2] = names.id(e.tensor);
    if (e.label !== undefined) edgeLabels.push([k, e.label]);
  }
  const placedOrder = new Int32Array(layout.nodes.size);
  const boxes = new Float64Array(layout.nodes.size * 4);
  let j = 0;
  for (const p of layout.nodes.values()) {
    const i = index.get(p.id);
    if (i === undefined) return undefined;
    placedOrder[j] = i;
    boxes[4 * j] = p.x;
    boxes[4 * j + 1] = p.y;
    boxes[4 * j + 2] = p.width;
    boxes[4 * j + 3] = p.height;
    j++;
  }
  const routes = new Int32Array(layout.edges.length * 2);
  const pointStart = new Int32Array(layout.edges.length + 1);
  let pointCount = 0;
  for (const e of layout.edges) pointCount += e.points.length;
  const points = new Float64Array(pointCount * 2);
  let at = 0;
  for (let k = 0; k < layout.edges.length; k++) {
    const e = layout.edges[k];
    const from = index.get(e.from);
    const to = index.get(e.to);
    if (from === undefined || to === undefined) return undefined;
    routes[2 * k] = from;
    routes[2 * k + 1] = to;
    pointStart[k] = at / 2;
    for (const q of e.points) {
      points[at++] = q.x;
      points[at++] = q.y;
    }
  }
  pointStart[layout.edges.length] = at / 2;
  const rest: Partial<Graph> = { ...graph };
  delete rest.edges;
  delete rest.nodes;
  delete rest.tensors;
  const nodes = packNodes(graph.nodes);
  const tensorColumns = packTensors(tensors);
  const { big, expanded, total, timings, layoutBy, laidOutNodes, executedCounts } = laidOut;
  const packed: PackedLaidOut = {
    ...(executedCounts ? { executedCounts } : {}),
    graph: rest as PackedLaidOut['graph'],
    nodes: nodes.columns,
    tensors: tensorColumns.columns,
    big,
    expanded,
    total,
    timings,
    layoutBy,
    laidOutNodes,
    names: names.list,
    edges,
    edgeLabels,
    placedOrder,
    boxes,
    routes,
    pointStart,
    points,
    width: layout.width,
    height: layout.height,
  };
  const transfer = [
    ...[edges, placedOrder, boxes, routes, pointStart, points].map((a) => a.buffer as ArrayBuffer),
    ...nodes.transfer,
    ...tensorColumns.transfer,
  ];
  return { packed, transfer };
}

/** The laid-out graph again, as the worker had it (nodes, edges and layout objects rebuilt). */
export function unpack(p: PackedLaidOut): LaidOut {
  const { names } = p;
  const nodes = unpackNodes(p.nodes);
  const labels = new Map(p.edgeLabels);
  const edges: Graph['edges'] = [];
  for (let k = 0; k < p.edges.length / 3; k++) {
    const from = nodes[p.edges[3 * k]].id;
    const to = nodes[p.edges[3 * k + 1]].id;
    const tensor = names[p.edges[3 * k + 2]];
    const label = labels.get(k);
    edges.push(label === undefined ? { from, to, tensor } : { from, to, tensor, label });
  }
  const placed = new Map<string, Placed>();
  for (let j = 0; j < p.placedOrder.length; j++) {
    const id = nodes[p.placedOrder[j]].id;
    const b = 4 * j;
    placed.set(id, { id, x: p.boxes[b], y: p.boxes[b + 1], width: p.boxes[b + 2], height: p.boxes[b + 3] });
  }
  const routes: Layout['edges'] = [];
  for (let k = 0; k < p.routes.length / 2; k++) {
    const points: Array<{ x: number; y: number }> = [];
    for (let q = p.pointStart[k]; q < p.pointStart[k + 1]; q++)
      points.push({ x: p.points[2 * q], y: p.points[2 * q + 1] });
    routes.push({ from: nodes[p.routes[2 * k]].id, to: nodes[p.routes[2 * k + 1]].id, points });
  }
  const { graph, big, expanded, total, timings, layoutBy, laidOutNodes, executedCounts } = p;
  return {
    ...(executedCounts ? { executedCounts } : {}),
    graph: { ...graph, nodes, edges, tensors: unpackTensors(p.tensors) },
    layout: { nodes: placed, edges: routes, width: p.width, height: p.height },
    big,
    expanded,
    total,
    timings,
    layoutBy,
    laidOutNodes,
  };
}
