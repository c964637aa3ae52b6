// ONNX importer: decodes a ModelProto with protobufjs against the current onnx-ml.proto (from the onnx wheel).
import protobuf from 'protobufjs';
import onnxDescriptor from '../../build/generated/onnx-proto.json';
import type { Graph, GraphNode, Importer } from './types';

const root = protobuf.Root.fromJSON(onnxDescriptor as protobuf.INamespace);
const ModelProto = root.lookupType('onnx.ModelProto');

interface StringStringEntry { key: string; value: string }
interface NodeProto { name?: string; op_type: string; domain?: string; input: string[]; output: string[]; metadata_props?: StringStringEntry[] }
interface ValueInfo { name: string }
interface GraphProto { name?: string; node: NodeProto[]; input: ValueInfo[]; output: ValueInfo[]; initializer: ValueInfo[] }
interface Model { graph?: GraphProto; opset_import?: Array<{ domain?: string; version?: number | { toNumber(): number } }> }

export function decodeOnnx(bytes: Uint8Array): Model {
  return ModelProto.toObject(ModelProto.decode(bytes), { longs: Number, arrays: true, defaults: false }) as Model;
}

/** Module path from the exporter's scope metadata (e.g. name_scopes ['', 'conv1'] -> conv1). */
export function moduleOf(node: NodeProto): string | undefined {
  const meta = new Map((node.metadata_props ?? []).map((e) => [e.key, e.value]));
  const scopes = meta.get('pkg.torch.onnx.name_scopes');
  if (scopes) {
    const parts = [...scopes.matchAll(/'([^']*)'/g)].map((m) => m[1]).filter(Boolean);
    // The last scope is the op itself when it repeats the node name; module paths are the scopes before it.
    if (parts.length) return parts.join('.');
  }
  return undefined;
}

export const onnxImporter: Importer = {
  match(bytes, fileName) {
    return /\.onnx$/i.test(fileName) || (bytes.length > 2 && bytes[0] === 0x08);
  },
  open(bytes) {
    const model = decodeOnnx(bytes);
    const g = model.graph;
    if (!g) throw new Error('This file has no graph: it is not an ONNX model, or it is truncated.');
    const hidden = new Set(g.initializer.map((t) => t.name));
    const nodes: GraphNode[] = [];
    const producer = new Map<string, string>();
    for (const input of g.input) {
      if (hidden.has(input.name)) continue;
      nodes.push({ id: `input:${input.name}`, name: input.name, op: 'Input', inputs: [], outputs: [input.name], kind: 'input' });
    }
    g.node.forEach((n, i) => {
      // Constants (scales, zero-points, shapes) read as attributes of their consumer, not as boxes.
      if (n.op_type === 'Constant') { n.output.forEach((o) => hidden.add(o)); return; }
      nodes.push({ id: `node:${i}`, name: n.name || `${n.op_type}_${i}`, op: n.op_type, inputs: n.input, outputs: n.output, module: moduleOf(n), kind: 'op' });
    });
    for (const output of g.output) {
      nodes.push({ id: `output:${output.name}`, name: output.name, op: 'Output', inputs: [output.name], outputs: [], kind: 'output' });
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
    for (const o of model.opset_import ?? []) {
      opsets[o.domain || 'ai.onnx'] = typeof o.version === 'object' ? o.version.toNumber() : Number(o.version ?? 0);
    }
    return { name: g.name ?? 'graph', nodes, edges, opsets };
  },
};
