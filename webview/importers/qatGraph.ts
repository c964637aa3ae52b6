// Importer for the kernel's graph JSON (`graph/export` writes `*.qatgraph.json`): the FX graph of the float,
// QAT-prepared or converted model with module paths, source lines, quantization parameters and precisions; and
// the kernels a TVM build runs (build/tvm's `tvm` stage), each with the modules and ONNX nodes it came from.
// Checked against the ModelGraph definition of protocol/kernel-rpc.schema.json, the contract the kernel writes to.
import type { ErrorObject } from 'ajv';
import type { GraphNodeJson, GraphQParams, ModelGraph } from '../../build/generated/kernel-rpc';
import { validateModelGraph } from '../../build/generated/model-graph-validate.js';
import type { Graph, GraphNode, Importer, ModuleInfo, QParams, TensorInfo } from './types';

export const QAT_GRAPH_FORMAT = 'qat-studio.graph/1';
const FORMAT_FAMILY = 'qat-studio.graph/';

/** FX get_attr nodes (weights, biases, per-channel scales) read as tensors of their consumer, like ONNX initializers. */
const isAttribute = (n: GraphNodeJson) => n.op === 'get_attr';

// Namespaces and overloads torch prints around an op (`quantized_decomposed.quantize_per_tensor.default`): the
// view shows the op alone, like Netron, and keeps the full target as an attribute.
const NAMESPACES = new Set([
  'aten',
  'prims',
  'quantized_decomposed',
  'quantized',
  'torchao',
  'operator',
  '_operator',
  'torch',
  'nn',
  'functional',
]);

export function shortOp(op: string): string {
  const builtin = /^<(?:built-in )?function ([\w.]+)(?: at 0x[0-9a-f]+)?>$/.exec(op);
  if (builtin) return builtin[1];
  const parts = op.replace(/^torch\.ops\./, '').split('.');
  while (parts.length > 1 && NAMESPACES.has(parts[0])) parts.shift();
  // What is left is `op` or `op.overload` (default, Tensor, using_ints, ...).
  return parts.length === 2 ? parts[0] : parts.join('.');
}

/** Module paths enclosing `module`, outermost first: layer1.0.conv -> [layer1, layer1.0, layer1.0.conv]. */
export function scopesOfPath(module: string | undefined): string[] {
  if (!module) return [];
  const parts = module.split('.');
  return parts.map((_, i) => parts.slice(0, i + 1).join('.'));
}

function sniffText(bytes: Uint8Array, max: number): string {
  return new TextDecoder('utf-8').decode(bytes.subarray(0, max)).replace(/^\uFEFF/, '');
}

/** Where in the file an ajv error points, as a reader would say it: nodes[3].qparams.scale (node "relu_1"). */
function where(data: unknown, instancePath: string): string {
  const parts = instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (!parts.length) return 'the graph';
  let text = '';
  for (const p of parts) text += /^\d+$/.test(p) ? `[${p}]` : text ? `.${p}` : p;
  const node =
    parts[0] === 'nodes' && /^\d+$/.test(parts[1] ?? '')
      ? (data as { nodes: unknown[] }).nodes[Number(parts[1])]
      : undefined;
  const id = node && typeof node === 'object' ? (node as { id?: unknown }).id : undefined;
  return typeof id === 'string' ? `${text} (node "${id}")` : text;
}

export function describeSchemaError(data: unknown, errors: ErrorObject[]): string {
  // A failed oneOf reports each branch's error first and its own last; the last one speaks for the value.
  const e = errors[errors.length - 1];
  const at = where(data, e.instancePath);
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return `${at} is missing the required field "${p.missingProperty}"`;
    case 'additionalProperties':
      return `${at} has a field the format does not define: "${p.additionalProperty}"`;
    case 'enum':
      return `${at} must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'type':
      return `${at} must be ${p.type === 'array' ? 'a list' : p.type === 'object' ? 'an object' : `a${/^[aeiou]/.test(String(p.type)) ? 'n' : ''} ${p.type}`}`;
    case 'oneOf':
      return `${at} must be ${/zero_point$/.test(e.instancePath) ? 'an integer or a list of integers' : /scale$/.test(e.instancePath) ? 'a number or a list of numbers' : 'one of the forms the format allows'}`;
    default:
      return `${at} ${e.message ?? 'is invalid'}`;
  }
}

/** V8 says where JSON broke as a character position; editors count lines and columns. */
function jsonErrorText(err: Error, text: string): string {
  const m = /at position (\d+)/.exec(err.message);
  if (!m || /line \d+/.test(err.message)) return err.message;
  const before = text.slice(0, Number(m[1]));
  const line = before.split('\n').length;
  return `${err.message} (line ${line}, column ${before.length - before.lastIndexOf('\n')})`;
}

const asList = (v: number | number[]) => (Array.isArray(v) ? v : [v]);

/** torch spells dtypes torch.quint8 / torch.uint8; the view says uint8 like ONNX does. */
export function plainDtype(dtype: string): string {
  const d = dtype.replace(/^torch\./, '');
  return d === 'quint8' ? 'uint8' : d === 'qint8' ? 'int8' : d === 'qint32' ? 'int32' : d;
}

function qparamsOf(q: GraphQParams, id: string): QParams {
  const scale = asList(q.scale),
    zeroPoint = asList(q.zero_point);
  if (Array.isArray(q.scale) && Array.isArray(q.zero_point) && scale.length !== zeroPoint.length) {
    throw new Error(
      `Not a valid QAT Studio graph: node "${id}" has ${scale.length} scales but ${zeroPoint.length} zero-points`,
    );
  }
  if (scale.some((s) => !(s > 0) || !Number.isFinite(s)))
    throw new Error(`Not a valid QAT Studio graph: node "${id}" has a scale that is not a positive number`);
  return {
    dtype: plainDtype(q.dtype),
    scale,
    zeroPoint,
    ...(q.axis !== undefined ? { axis: q.axis } : {}),
    ...(q.quant_min !== undefined ? { quantMin: q.quant_min } : {}),
    ...(q.quant_max !== undefined ? { quantMax: q.quant_max } : {}),
  };
}

/** Parses and checks the file; every problem is an Error whose message says what and where. */
export function parseModelGraph(bytes: Uint8Array): ModelGraph {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes).replace(/^\uFEFF/, '');
  } catch {
    throw new Error('This file is not UTF-8 text, so it is not a QAT Studio graph (*.qatgraph.json).');
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new Error(
      `This file is not valid JSON: ${jsonErrorText(err as Error, text)}. A graph file cut short while the kernel wrote it? Export it again.`,
      { cause: err },
    );
  }
  if (!data || typeof data !== 'object' || Array.isArray(data))
    throw new Error('Not a QAT Studio graph: the file holds JSON, but not an object.');
  const format = (data as { format?: unknown }).format;
  if (typeof format !== 'string')
    throw new Error(`Not a QAT Studio graph: there is no "format": "${QAT_GRAPH_FORMAT}" field.`);
  if (format !== QAT_GRAPH_FORMAT) {
    throw new Error(
      format.startsWith(FORMAT_FAMILY)
        ? `This graph is in format ${format}; this version of QAT Studio reads ${QAT_GRAPH_FORMAT}. Update the extension, or export the graph again with this one.`
        : `Not a QAT Studio graph: format is "${format}", expected "${QAT_GRAPH_FORMAT}".`,
    );
  }
  if (!validateModelGraph(data))
    throw new Error(`Not a valid QAT Studio graph: ${describeSchemaError(data, validateModelGraph.errors ?? [])}.`);
  return data;
}

export function graphFromModel(model: ModelGraph): Graph {
  const modules: Record<string, ModuleInfo> = {};
  for (const m of model.modules)
    if (m.path) modules[m.path] = { type: m.type, ...(m.source ? { source: m.source } : {}) };
  const tensors = new Map<string, TensorInfo>();
  for (const [name, t] of Object.entries(model.tensors ?? {}))
    tensors.set(name, { dtype: plainDtype(t.dtype), dims: t.dims });

  const ids = new Set<string>();
  const producers = new Map<string, string>();
  const hidden = new Set<string>();
  const nodes: GraphNode[] = [];
  for (const n of model.nodes) {
    if (ids.has(n.id)) throw new Error(`Not a valid QAT Studio graph: two nodes have the id "${n.id}".`);
    ids.add(n.id);
    for (const o of n.outputs) {
      const other = producers.get(o);
      if (other !== undefined)
        throw new Error(`Not a valid QAT Studio graph: value "${o}" is produced by both "${other}" and "${n.id}".`);
      producers.set(o, n.id);
    }
    if (isAttribute(n)) {
      for (const o of n.outputs) {
        hidden.add(o);
        if (!tensors.has(o)) tensors.set(o, { dtype: '?', dims: [] });
      }
      continue;
    }
    const scopes = (n.scopes ?? scopesOfPath(n.module)).filter(Boolean);
    const module = n.module || scopes.at(-1);
    const op = n.kind === 'input' ? 'Input' : n.kind === 'output' ? 'Output' : shortOp(n.op);
    const attributes = {
      ...(n.kind === 'op' && op !== n.op ? { target: n.op } : {}),
      ...n.attributes,
      ...(n.onnx_nodes?.length ? { 'onnx nodes': n.onnx_nodes.join(', ') } : {}),
    };
    nodes.push({
      id: `node:${n.id}`,
      name: n.name,
      op,
      kind: n.kind,
      inputs: n.inputs,
      outputs: n.outputs,
      ...(module ? { module } : {}),
      ...(scopes.length ? { scopes } : {}),
      ...(n.modules?.length ? { modules: n.modules } : {}),
      ...(Object.keys(attributes).length ? { attributes } : {}),
      ...(n.precision ? { precision: n.precision } : {}),
      ...(n.source ? { source: n.source } : {}),
      ...(n.qparams ? { qparams: qparamsOf(n.qparams, n.id) } : {}),
    });
  }
  const edges: Graph['edges'] = [];
  for (const n of nodes) {
    for (const t of n.inputs) {
      // A value no node produces (not in the contract, but an older kernel may leave one) is drawn as no edge.
      const from = producers.get(t);
      if (from !== undefined && !hidden.has(t)) edges.push({ from: `node:${from}`, to: n.id, tensor: t });
    }
  }
  return {
    name: model.name,
    nodes,
    edges,
    opsets: {},
    tensors,
    modules,
    stage: model.stage,
    ...(model.config ? { config: model.config } : {}),
  };
}

export const qatGraphImporter: Importer = {
  format: 'QAT Studio graph',
  match(bytes, fileName) {
    if (/\.qatgraph\.json$/i.test(fileName)) return true;
    // Renamed or unsaved: the kernel writes `format` first.
    const head = sniffText(bytes, 4096).trimStart();
    return head.startsWith('{') && /"format"\s*:\s*"qat-studio\.graph\//.test(head);
  },
  open(bytes) {
    return graphFromModel(parseModelGraph(bytes));
  },
};
