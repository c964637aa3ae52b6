// The reference the ONNX importer is tested against: a full protobufjs decode of the ModelProto (the static module
// generated from the onnx wheel's onnx-ml.proto), every message materialized, then read into the view's Graph.
// The importer itself (webview/importers/onnxWire.ts) reads the same Graph straight off the wire.
import { onnx } from '../../build/generated/onnx-pb.js';
import { dtypeName, readTensor } from '../../webview/importers/onnxTensor';
import type { Graph, GraphNode, TensorInfo } from '../../webview/importers/types';

type NodeProto = onnx.NodeProto;

export function decodeOnnx(bytes: Uint8Array): onnx.ModelProto {
  return onnx.ModelProto.decode(bytes);
}

/**
 * Module scopes from the torch exporter's metadata. `pkg.torch.onnx.name_scopes` is a Python-literal list whose
 * entries are full paths, the last one being the op: "['', 'layer1', 'layer1.0', 'layer1.0.conv', 'conv2d_1']"
 * -> ['layer1', 'layer1.0', 'layer1.0.conv']. Nodes with only the op scope (Q/DQ inserted by convert) have none.
 */
export function scopesOf(node: NodeProto): string[] {
  const scopes = node.metadata_props?.find((e) => e.key === 'pkg.torch.onnx.name_scopes')?.value;
  if (!scopes) return [];
  return [...scopes.matchAll(/'([^']*)'/g)]
    .map((m) => m[1])
    .filter(Boolean)
    .slice(0, -1);
}

/** Attribute value as display text. */
export function attributeText(a: onnx.IAttributeProto): string {
  if (a.ints?.length) return `[${a.ints.map(Number).join(', ')}]`;
  if (a.floats?.length) return `[${a.floats.join(', ')}]`;
  if (a.strings?.length) return `[${a.strings.map((s) => new TextDecoder().decode(s)).join(', ')}]`;
  if (a.s?.length) return new TextDecoder().decode(a.s);
  if (a.t) {
    const t = readTensor(a.t, 16);
    return `${t.dtype}[${t.dims.join('×')}]${t.values ? ` ${JSON.stringify(Array.from(t.values))}` : ''}`;
  }
  if (a.g) return `graph ${a.g.name ?? ''} (${a.g.node?.length ?? 0} nodes)`;
  switch (a.type) {
    case 1:
      return String(a.f);
    case 2:
      return String(Number(a.i));
    default:
      return a.f ? String(a.f) : String(Number(a.i ?? 0));
  }
}

/**
 * A value's type as graph.input, graph.output or value_info declare it: element type and dims, each a dim_value,
 * or -1 with the dim_param's name (`batch`), or -1 unnamed when the file gives neither. Undefined for values that
 * are not tensors (sequences, maps, optionals) or that declare no type.
 */
export function readValueInfo(v: onnx.IValueInfoProto): TensorInfo | undefined {
  const tt = v.type?.tensor_type;
  if (!tt) return undefined;
  const dtype = tt.elem_type ? dtypeName(tt.elem_type) : '?';
  if (!tt.shape) return { dtype, dims: [], unranked: true };
  const dims: number[] = [];
  const names: string[] = [];
  for (const d of tt.shape.dim ?? []) {
    // protobufjs sets the oneof's name on decoded messages; plain objects (create()) may only carry the field.
    const which = d.value ?? (d.dim_param ? 'dim_param' : d.dim_value != null ? 'dim_value' : undefined);
    if (which === 'dim_value' && d.dim_value != null && Number(d.dim_value) >= 0) {
      dims.push(Number(d.dim_value));
      names.push('');
    } else {
      dims.push(-1);
      names.push(which === 'dim_param' ? (d.dim_param ?? '') : '');
    }
  }
  return { dtype, dims, ...(names.some(Boolean) ? { dimNames: names } : {}) };
}

/** The model's graph as the view shows it, from the full decode. */
export function referenceGraph(bytes: Uint8Array): Graph {
  const model = decodeOnnx(bytes);
  // Decoded messages are class instances whose unset fields read as defaults ('' and []).
  const g = model.graph as onnx.GraphProto | null;
  if (!g) throw new Error('This file has no graph: it is not an ONNX model, or it is truncated.');
  const hidden = new Set((g.initializer as onnx.TensorProto[]).map((t) => t.name));
  const tensors = new Map<string, TensorInfo>();
  for (const t of g.initializer as onnx.TensorProto[]) tensors.set(t.name, readTensor(t));
  // Declared types of the graph's inputs, outputs and intermediate values: the shapes drawn on edges.
  for (const v of [...g.input, ...g.output, ...g.value_info] as onnx.ValueInfoProto[]) {
    const info = v.name && !tensors.has(v.name) ? readValueInfo(v) : undefined;
    if (info) tensors.set(v.name, info);
  }
  const nodes: GraphNode[] = [];
  const producer = new Map<string, string>();
  for (const input of g.input as onnx.ValueInfoProto[]) {
    if (hidden.has(input.name)) continue;
    nodes.push({
      id: `input:${input.name}`,
      name: input.name,
      op: 'Input',
      inputs: [],
      outputs: [input.name],
      kind: 'input',
    });
  }
  (g.node as NodeProto[]).forEach((n, i) => {
    // Constants (scales, zero-points, shapes) read as attributes of their consumer, not as boxes.
    const attrs = n.attribute as onnx.AttributeProto[];
    if (n.op_type === 'Constant') {
      n.output.forEach((o) => hidden.add(o));
      const value = attrs.find((a) => a.name === 'value')?.t;
      if (value && n.output[0]) tensors.set(n.output[0], readTensor(value));
      return;
    }
    const attributes = Object.fromEntries(attrs.map((a) => [a.name, attributeText(a)]));
    const scopes = scopesOf(n);
    nodes.push({
      id: `node:${i}`,
      name: n.name || `${n.op_type}_${i}`,
      op: n.op_type,
      inputs: n.input,
      outputs: n.output,
      module: scopes.at(-1),
      scopes,
      kind: 'op',
      attributes,
      ...(n.domain && n.domain !== 'ai.onnx' ? { domain: n.domain } : {}),
    });
  });
  for (const output of g.output as onnx.ValueInfoProto[]) {
    nodes.push({
      id: `output:${output.name}`,
      name: output.name,
      op: 'Output',
      inputs: [output.name],
      outputs: [],
      kind: 'output',
    });
  }
  for (const n of nodes) for (const o of n.outputs) producer.set(o, n.id);
  const edges: Graph['edges'] = [];
  for (const n of nodes) {
    for (const t of n.inputs) {
      const from = producer.get(t);
      if (from && !hidden.has(t)) edges.push({ from, to: n.id, tensor: t });
    }
  }
  const opsets: Record<string, number> = {};
  for (const o of model.opset_import as onnx.OperatorSetIdProto[])
    opsets[o.domain || 'ai.onnx'] = Number(o.version ?? 0);
  return { name: g.name || 'graph', nodes, edges, opsets, tensors };
}
