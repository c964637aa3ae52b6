// QDQ semantics on the importer's graph: which precision each op runs in, and the collapsed view where
// every Q -> DQ pair becomes one annotated int8 edge so the quantized graph reads like the float one.
import { isQdq, qdqRole, type Graph, type GraphNode, type Precision, type TensorInfo } from '../importers/types';

export type { Precision };

const fmt = (v: number | undefined) => (v === undefined ? '?' : Number.isInteger(v) ? String(v) : v.toPrecision(3));

/**
 * An op runs in int8 when every activation input comes from a dequantize (what QDQ-aware backends fuse
 * into an integer kernel); fp16 when an input tensor is float16; fp32 otherwise.
 */
export function precisionOf(node: GraphNode, graph: Graph, producers: Map<string, GraphNode>): Precision | undefined {
  if (node.kind !== 'op' || isQdq(node.op)) return undefined;
  const inputs = node.inputs.filter((t) => t && (producers.has(t) || !graph.tensors.has(t)));
  if (
    inputs.some(
      (t) =>
        graph.tensors.get(t)?.dtype === 'float16' ||
        (producers.get(t)?.op === 'Cast' && producers.get(t)?.attributes?.to === '10'),
    )
  )
    return 'fp16';
  if (inputs.length && inputs.every((t) => qdqRole(producers.get(t)?.op ?? '') === 'dq')) return 'int8';
  return 'fp32';
}

export function producerMap(graph: Graph): Map<string, GraphNode> {
  const m = new Map<string, GraphNode>();
  for (const n of graph.nodes) for (const o of n.outputs) m.set(o, n);
  return m;
}

export interface QuantParams {
  scale?: TensorInfo;
  zeroPoint?: TensorInfo;
  axis?: string;
  range?: [number, number];
}

/**
 * Scale and zero-point of a Q/DQ node: carried by the node (graph JSON), or ONNX's inputs 1 and 2, per channel
 * when there is more than one scale.
 */
export function quantParams(node: GraphNode, graph: Graph): QuantParams {
  const q = node.qparams;
  if (!q)
    return {
      scale: graph.tensors.get(node.inputs[1]),
      zeroPoint: graph.tensors.get(node.inputs[2]),
      axis: node.attributes?.axis,
    };
  const dims = (v: number[]) => (v.length > 1 || q.axis !== undefined ? [v.length] : []);
  return {
    scale: { dtype: 'float32', dims: dims(q.scale), values: q.scale },
    zeroPoint: { dtype: q.dtype, dims: dims(q.zeroPoint), values: q.zeroPoint },
    ...(q.axis !== undefined ? { axis: String(q.axis) } : {}),
    ...(q.quantMin !== undefined && q.quantMax !== undefined
      ? { range: [q.quantMin, q.quantMax] as [number, number] }
      : {}),
  };
}

/** Text for a quantized edge: scale and zero-point, or the channel count when per channel. */
function qLabel(q: GraphNode, graph: Graph): string {
  const { scale, zeroPoint } = quantParams(q, graph);
  const dtype = zeroPoint?.dtype ?? 'uint8';
  if ((scale?.values?.length ?? 1) > 1) return `${dtype} · ${scale!.values!.length} channel scales`;
  return `${dtype} s=${fmt(scale?.values?.[0])} zp=${fmt(zeroPoint?.values?.[0])}`;
}

/**
 * Removes each quantize whose outputs feed only dequantize nodes, together with those DQs, weight DQs fed by
 * initializers, and fake-quant nodes; their consumers then read the float tensor over an edge labelled with
 * the quantization it went through.
 */
export function collapseQdq(graph: Graph): Graph {
  const producers = producerMap(graph);
  const consumers = new Map<string, GraphNode[]>();
  for (const n of graph.nodes) for (const t of n.inputs) (consumers.get(t) ?? consumers.set(t, []).get(t)!).push(n);
  const removed = new Set<string>();
  const rename = new Map<string, { tensor: string; label: string }>();
  for (const q of graph.nodes) {
    const role = qdqRole(q.op);
    if (role === 'fq' && q.inputs.length && q.outputs.length === 1) {
      removed.add(q.id);
      rename.set(q.outputs[0], { tensor: q.inputs[0], label: `fake-quant ${qLabel(q, graph)}` });
      continue;
    }
    if (role !== 'q') continue;
    const dqs = consumers.get(q.outputs[0]) ?? [];
    if (!dqs.length || !dqs.every((d) => qdqRole(d.op) === 'dq')) continue;
    removed.add(q.id);
    for (const d of dqs) {
      removed.add(d.id);
      rename.set(d.outputs[0], { tensor: q.inputs[0], label: qLabel(q, graph) });
    }
  }
  for (const d of graph.nodes) {
    if (qdqRole(d.op) !== 'dq' || removed.has(d.id) || producers.has(d.inputs[0])) continue;
    removed.add(d.id);
    rename.set(d.outputs[0], { tensor: d.inputs[0], label: `weights ${qLabel(d, graph)}` });
  }
  // Chains of fake-quants (rare) resolve to the first real producer.
  const resolve = (t: string) => {
    let r = rename.get(t);
    const label = r?.label;
    while (r && rename.has(r.tensor)) r = rename.get(r.tensor);
    return r ? { tensor: r.tensor, label: label! } : undefined;
  };
  const nodes = graph.nodes
    .filter((n) => !removed.has(n.id))
    .map((n) => ({ ...n, inputs: n.inputs.map((t) => resolve(t)?.tensor ?? t) }));
  const producer = new Map<string, string>();
  for (const n of nodes) for (const o of n.outputs) producer.set(o, n.id);
  const edges: Graph['edges'] = [];
  for (const n of graph.nodes) {
    if (removed.has(n.id)) continue;
    for (const t of n.inputs) {
      const via = resolve(t);
      const from = producer.get(via?.tensor ?? t);
      if (from) edges.push({ from, to: n.id, tensor: via?.tensor ?? t, ...(via ? { label: via.label } : {}) });
    }
  }
  return { ...graph, nodes, edges };
}
