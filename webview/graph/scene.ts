// What the canvas draws, as flat arrays: each drawn node's box, fill, label, sub-label and precision badge, sorted
// by y so the visible rows are found by binary search, and each edge's points with its bounding box. The layout
// worker makes one with the layout and posts it (transferred, not copied) ahead of the graph, so the page draws
// the first frame of a large graph before the node objects have crossed over; the canvas renderer then draws
// from the same arrays. No DOM here: colours stay CSS (theme variables) until the page resolves them.
import type { LayerResult } from '../../protocol/kernel';
import type { ExecutedOverlay } from '../../protocol/webview';
import { qdqRole, type Graph, type Precision } from '../importers/types';
import type { Layout } from './layout';
import { Interned } from './interned';
import { layerShown } from './metrics';
import { nodeFill, QDQ_TAG, subLabel } from './nodeLook';
import { LEVELS, type StageLanes } from './stageLanes';

/** What a drawn view holds: its nodes, the Q/DQ among them and those coloured by a compared layer. */
export interface RenderStats {
  nodes: number;
  qdq: number;
  coloured: number;
}

export const PRECISIONS: readonly Precision[] = ['int8', 'fp16', 'bf16', 'fp32'];
const BADGED = new Set<string>(PRECISIONS);

export interface Scene {
  /** Per drawn node, in order of y: its index in the graph's nodes. */
  node: Int32Array;
  /** Per drawn node: centre x, centre y, width, height. */
  box: Float64Array;
  /** Per drawn node: its fill, an index into `fills` (CSS). */
  fill: Uint16Array;
  fills: string[];
  /** Per drawn node: its label and its second line (-1: none), indices into `texts`. */
  label: Int32Array;
  sub: Int32Array;
  texts: string[];
  /** Per drawn node: 0, or 1 + the index of its precision badge in PRECISIONS. */
  precision: Uint8Array;
  /** Per layout edge: its points (x, y) are points[2 * pointStart[k], 2 * pointStart[k + 1]). */
  pointStart: Int32Array;
  points: Float64Array;
  /** Per layout edge: its bounding box (min x, min y, max x, max y) and whether it stands for a collapsed Q/DQ pair. */
  edgeBox: Float64Array;
  int8Edge: Uint8Array;
  width: number;
  height: number;
  stats: RenderStats;
  /** Collapsed module groups drawn. */
  groups: number;
  /** With a runtime's precisions: how many of the model's compute ops run in each (set by the layout worker). */
  executedCounts?: Record<string, number>;
  /** Find Where INT8 Diverges: per drawn node, where its lane starts in `levels` (-1: none), each lane `stages`
   * long (indices into LEVELS), and 1 where a bisected pair first diverges. */
  lanes?: { at: Int32Array; levels: Uint8Array; stages: number; first: Uint8Array };
}

/** The arrays' buffers, to transfer with the scene. */
export const sceneBuffers = (s: Scene): ArrayBuffer[] =>
  [
    s.node,
    s.box,
    s.fill,
    s.label,
    s.sub,
    s.precision,
    s.pointStart,
    s.points,
    s.edgeBox,
    s.int8Edge,
    ...(s.lanes ? [s.lanes.at, s.lanes.levels, s.lanes.first] : []),
  ].map((a) => a.buffer as ArrayBuffer);

/**
 * `layers`: the compared layers as drawn (collapsed groups included); `executed`: a runtime's precisions, which
 * win over the file's for the badge (graph/executed.ts applies the same to the page's nodes); `lanes`: the stage
 * results, which colour the nodes instead of the layers and give them their lanes.
 */
export function sceneOf(
  graph: Graph,
  layout: Layout,
  layers: readonly LayerResult[],
  threshold: number,
  executed?: ExecutedOverlay,
  lanes?: StageLanes,
): Scene {
  const byModule = new Map(layers.map((l) => [l.module, l]));
  const stats: RenderStats = { nodes: 0, qdq: 0, coloured: 0 };
  const drawn: number[] = [];
  const placed = graph.nodes.map((n, i) => {
    const p = layout.nodes.get(n.id);
    if (p) drawn.push(i);
    return p;
  });
  drawn.sort((a, b) => placed[a]!.y - placed[b]!.y || a - b);
  const count = drawn.length;
  const node = Int32Array.from(drawn);
  const box = new Float64Array(count * 4);
  const fill = new Uint16Array(count);
  const label = new Int32Array(count);
  const sub = new Int32Array(count);
  const precision = new Uint8Array(count);
  const fills = new Interned();
  const texts = new Interned();
  const laneAt = lanes ? new Int32Array(count).fill(-1) : undefined;
  const laneFirst = lanes ? new Uint8Array(count) : undefined;
  const laneLevels: number[] = [];
  for (let j = 0; j < count; j++) {
    const n = graph.nodes[node[j]];
    const p = placed[node[j]]!;
    box[4 * j] = p.x;
    box[4 * j + 1] = p.y;
    box[4 * j + 2] = p.width;
    box[4 * j + 3] = p.height;
    const role = qdqRole(n.op);
    const layer = layerShown(n, byModule);
    const stageFill = lanes?.fillOf(n);
    stats.nodes++;
    if (role) stats.qdq++;
    if (layer || stageFill) stats.coloured++;
    fill[j] = fills.id(stageFill ?? nodeFill(n, layer, threshold));
    const lane = lanes?.laneOf(n);
    if (lane && laneAt) {
      laneAt[j] = laneLevels.length;
      for (const level of lane.levels) laneLevels.push(LEVELS.indexOf(level));
    }
    if (laneFirst && lanes?.firstAt(n)) laneFirst[j] = 1;
    label[j] = texts.id(role ? QDQ_TAG[role] : n.kind === 'group' ? `+ ${n.op} (${n.size} nodes)` : n.op);
    const second = subLabel(n, layer, p.width);
    sub[j] = second ? texts.id(second) : -1;
    const ran = executed?.ops[n.name]?.precision;
    const badge = ran && BADGED.has(ran) ? ran : n.precision;
    precision[j] = badge ? PRECISIONS.indexOf(badge as Precision) + 1 : 0;
  }
  const quantized = new Set(graph.edges.filter((e) => e.label).map((e) => `${e.from}>${e.to}`));
  const edges = layout.edges;
  const pointStart = new Int32Array(edges.length + 1);
  let total = 0;
  for (const e of edges) total += e.points.length;
  const points = new Float64Array(total * 2);
  const edgeBox = new Float64Array(edges.length * 4);
  const int8Edge = new Uint8Array(edges.length);
  let at = 0;
  for (let k = 0; k < edges.length; k++) {
    const e = edges[k];
    pointStart[k] = at / 2;
    let minX = Infinity,
      minY = Infinity,
      maxX = -Infinity,
      maxY = -Infinity;
    for (const q of e.points) {
      points[at++] = q.x;
      points[at++] = q.y;
      minX = Math.min(minX, q.x);
      maxX = Math.max(maxX, q.x);
      minY = Math.min(minY, q.y);
      maxY = Math.max(maxY, q.y);
    }
    edgeBox[4 * k] = minX;
    edgeBox[4 * k + 1] = minY;
    edgeBox[4 * k + 2] = maxX;
    edgeBox[4 * k + 3] = maxY;
    int8Edge[k] = quantized.size && quantized.has(`${e.from}>${e.to}`) ? 1 : 0;
  }
  pointStart[edges.length] = at / 2;
  return {
    node,
    box,
    fill,
    fills: fills.list,
    label,
    sub,
    texts: texts.list,
    precision,
    pointStart,
    points,
    edgeBox,
    int8Edge,
    width: layout.width,
    height: layout.height,
    stats,
    groups: graph.nodes.filter((n) => n.kind === 'group').length,
    ...(lanes && laneAt && laneFirst
      ? {
          lanes: {
            at: laneAt,
            levels: Uint8Array.from(laneLevels),
            stages: lanes.results.stages.length,
            first: laneFirst,
          },
        }
      : {}),
  };
}
