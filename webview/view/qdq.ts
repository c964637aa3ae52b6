// QDQ semantics on the importer's graph: which precision each op runs in, and the collapsed view where
// every Q -> DQ pair becomes one annotated int8 edge so the quantized graph reads like the float one.
import { isQdq, type Graph, type GraphNode } from '../importers/types';

export type Precision = 'int8' | 'fp16' | 'fp32';

const fmt = (v: number | undefined) => (v === undefined ? '?' : Number.isInteger(v) ? String(v) : v.toPrecision(3));

/**
 * An op runs in int8 when every activation input comes from a DequantizeLinear (what QDQ-aware backends fuse
 * into an integer kernel); fp16 when an input tensor is float16; fp32 otherwise.
 */
export function precisionOf(node: GraphNode, graph: Graph, producers: Map<string, GraphNode>): Precision | undefined {
  if (node.kind !== 'op' || isQdq(node.op)) return undefined;
  const inputs = node.inputs.filter((t) => t && (producers.has(t) || !graph.tensors.has(t)));
  if (inputs.some((t) => graph.tensors.get(t)?.dtype === 'float16' || producers.get(t)?.op === 'Cast' && producers.get(t)?.attributes?.to === '10')) return 'fp16';
  if (inputs.length && inputs.every((t) => producers.get(t)?.op === 'DequantizeLinear')) return 'int8';
  return 'fp32';
}

export function producerMap(graph: Graph): Map<string, GraphNode> {
  const m = new Map<string, GraphNode>();
  for (const n of graph.nodes) for (const o of n.outputs) m.set(o, n);
  return m;
}

/** Text for a quantized edge: scale and zero-point, or the channel count when per channel. */
function qLabel(q: GraphNode, graph: Graph): string {
  const scale = graph.tensors.get(q.inputs[1]);
  const zp = graph.tensors.get(q.inputs[2]);
  const dtype = zp?.dtype ?? 'uint8';
  if ((scale?.values?.length ?? 1) > 1) return `${dtype} · ${scale!.values!.length} channel scales`;
  return `${dtype} s=${fmt(scale?.values?.[0])} zp=${fmt(zp?.values?.[0])}`;
}

/**
 * Removes each QuantizeLinear whose outputs feed only DequantizeLinear nodes, together with those DQs, and
 * weight DQs fed by initializers; their consumers then read the float tensor over an edge labelled with
 * the quantization it went through.
 */
export function collapseQdq(graph: Graph): Graph {
  const producers = producerMap(graph);
  const consumers = new Map<string, GraphNode[]>();
  for (const n of graph.nodes) for (const t of n.inputs) (consumers.get(t) ?? consumers.set(t, []).get(t)!).push(n);
  const removed = new Set<string>();
  const rename = new Map<string, { tensor: string; label: string }>();
  for (const q of graph.nodes) {
    if (q.op !== 'QuantizeLinear') continue;
    const dqs = consumers.get(q.outputs[0]) ?? [];
    if (!dqs.length || !dqs.every((d) => d.op === 'DequantizeLinear')) continue;
    removed.add(q.id);
    for (const d of dqs) {
      removed.add(d.id);
      rename.set(d.outputs[0], { tensor: q.inputs[0], label: qLabel(q, graph) });
    }
  }
  for (const d of graph.nodes) {
    if (d.op !== 'DequantizeLinear' || removed.has(d.id) || producers.has(d.inputs[0])) continue;
    removed.add(d.id);
    rename.set(d.outputs[0], { tensor: d.inputs[0], label: `weights ${qLabel(d, graph)}` });
  }
  const nodes = graph.nodes.filter((n) => !removed.has(n.id)).map((n) => ({ ...n, inputs: n.inputs.map((t) => rename.get(t)?.tensor ?? t) }));
  const producer = new Map<string, string>();
  for (const n of nodes) for (const o of n.outputs) producer.set(o, n.id);
  const edges: Graph['edges'] = [];
  for (const n of graph.nodes) {
    if (removed.has(n.id)) continue;
    for (const t of n.inputs) {
      const via = rename.get(t);
      const from = producer.get(via?.tensor ?? t);
      if (from) edges.push({ from, to: n.id, tensor: via?.tensor ?? t, ...(via ? { label: via.label } : {}) });
    }
  }
  return { ...graph, nodes, edges };
}
