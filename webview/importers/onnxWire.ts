// The ONNX decoder: ModelProto bytes -> the view's Graph in one pass over the protobuf wire, reading only what the
// view shows: each node's op, name, inputs, outputs, module scopes and one text per attribute; initializer names,
// dims and data types (values only for small tensors, read in place); graph inputs, outputs and opsets. No message
// tree is built and nothing is copied: tensor payloads are skipped, subgraphs only counted. What is read nests at
// most model > graph > node > attribute > tensor, so a file nested 100k deep costs no stack: there is no recursion.
import { read as utf8 } from 'protobufjs/src/util/utf8.js';
import type { onnx } from '../../build/generated/onnx-pb.js';
import { OnnxWireError, WireReader } from '../../common/wireReader';
import { dtypeName, readTensor, ValueArena } from './onnxTensor';
import type { Graph, GraphNode, Precision, TensorInfo } from './types';

const bytesOf = (key: string) => Uint8Array.from(key, (c) => c.charCodeAt(0));
/** Node metadata the view reads: the torch exporter's module scopes; and, in the graph ONNX Runtime runs as the
 * kernel writes it (graph/export's ort stage), the modules a fused node covers and the export nodes it came from
 * (JSON lists), and the precision it runs in. */
const METADATA_KEYS = [
  bytesOf('pkg.torch.onnx.name_scopes'),
  bytesOf('qat_studio.modules'),
  bytesOf('qat_studio.onnx_nodes'),
  bytesOf('qat_studio.precision'),
] as const;
const [SCOPES, MODULES, SOURCE_NODES, PRECISION] = [0, 1, 2, 3];
const PRECISIONS = new Set<string>(['int8', 'fp16', 'bf16', 'fp32']);

/** The wire reader with the arena where small tensors' values are copied. */
class Cursor extends WireReader {
  readonly arena = new ValueArena();
}

/** A repeated number field, packed (wire 2) or one value per field. */
function repeated(
  c: Cursor,
  wire: number,
  scalarWire: number,
  end: number,
  read: (e: number) => number,
  into: number[],
) {
  if (wire === 2) {
    const e = c.end(end);
    while (c.pos < e) into.push(read(e));
  } else if (wire === scalarWire) into.push(read(end));
  else c.skip(wire, end);
}

/** A TensorProto at [c.pos, end): what the view shows of it (values up to `limit` elements), and its name's id. */
function tensorAt(c: Cursor, end: number, limit: number, names?: Names): { id: number; info: TensorInfo } {
  const dims: number[] = [];
  let dataType = 0;
  let name: [number, number] = [end, end];
  let raw: [number, number] | undefined;
  // Typed payloads are only read when the tensor is small enough to show: their extents first.
  const typed: Array<[number, number, number, number]> = [];
  const int64 = (e: number) => c.int64(e);
  while (c.pos < end) {
    const key = c.key(end);
    const field = key >>> 3;
    const wire = key & 7;
    if (field === 1) repeated(c, wire, 0, end, int64, dims);
    else if (field === 2 && wire === 0) dataType = c.int32(end);
    else if (field === 8 && wire === 2) {
      const e = c.end(end);
      name = [c.pos, e];
      c.pos = e;
    } else if (field === 9 && wire === 2) {
      const e = c.end(end);
      raw = [c.pos, e];
      c.pos = e;
    } else if (field === 4 || field === 5 || field === 7 || field === 10) {
      const start = c.pos;
      c.skip(wire, end);
      typed.push([field, wire, start, c.pos]);
    } else c.skip(wire, end);
  }
  const t: onnx.ITensorProto = { dims, data_type: dataType };
  let count = 1;
  for (const d of dims) count *= d;
  if (count <= limit && raw) t.raw_data = c.buf.subarray(raw[0], raw[1]);
  if (count <= limit && typed.length) {
    const after = c.pos;
    const lists: Record<number, number[]> = { 4: [], 5: [], 7: [], 10: [] };
    for (const [field, wire, start, stop] of typed) {
      c.pos = start;
      if (field === 4) repeated(c, wire, 5, stop, (e) => c.float32(e), lists[4]);
      else if (field === 5) repeated(c, wire, 0, stop, (e) => c.int32(e), lists[5]);
      else if (field === 7) repeated(c, wire, 0, stop, int64, lists[7]);
      else repeated(c, wire, 1, stop, (e) => c.float64(e), lists[10]);
    }
    c.pos = after;
    t.float_data = lists[4];
    t.int32_data = lists[5];
    t.int64_data = lists[7];
    t.double_data = lists[10];
  }
  return { id: names ? names.id(name[0], name[1]) : -1, info: readTensor(t, limit, c.arena) };
}

const text = new TextDecoder();

/** An AttributeProto at [c.pos, end): its name and its value as display text. */
function attributeAt(c: Cursor, end: number): [string, string] {
  let name = '';
  let f = 0;
  let i = 0;
  let type = 0;
  let s: [number, number] | undefined;
  let t: [number, number] | undefined;
  let g: [number, number] | undefined;
  const ints: number[] = [];
  const floats: number[] = [];
  const strings: Array<[number, number]> = [];
  while (c.pos < end) {
    const key = c.key(end);
    const field = key >>> 3;
    const wire = key & 7;
    if (field === 1 && wire === 2) name = c.string(end);
    else if (field === 2 && wire === 5) f = c.float32(end);
    else if (field === 3 && wire === 0) i = c.int64(end);
    else if (field === 7) repeated(c, wire, 5, end, (e) => c.float32(e), floats);
    else if (field === 8) repeated(c, wire, 0, end, (e) => c.int64(e), ints);
    else if (field === 20 && wire === 0) type = c.int32(end);
    else if (wire === 2 && (field === 4 || field === 5 || field === 6 || field === 9)) {
      const e = c.end(end);
      const range: [number, number] = [c.pos, e];
      if (field === 4) s = range;
      else if (field === 5) t = range;
      else if (field === 6) g = range;
      else strings.push(range);
      c.pos = e;
    } else c.skip(wire, end);
  }
  const bytes = (r: [number, number]) => c.buf.subarray(r[0], r[1]);
  let value: string;
  if (ints.length) value = `[${ints.join(', ')}]`;
  else if (floats.length) value = `[${floats.join(', ')}]`;
  else if (strings.length) value = `[${strings.map((r) => text.decode(bytes(r))).join(', ')}]`;
  else if (s && s[1] > s[0]) value = text.decode(bytes(s));
  else if (t) {
    c.pos = t[0];
    const info = tensorAt(c, t[1], 16).info;
    value = `${info.dtype}[${info.dims.join('×')}]${info.values ? ` ${JSON.stringify(Array.from(info.values))}` : ''}`;
    if (info.problem) value += ` (invalid: ${info.problem})`;
  } else if (g) {
    c.pos = g[0];
    const sub = subgraphSummary(c, g[1]);
    value = `graph ${sub.name} (${sub.nodes} nodes)`;
  } else if (type === 1) value = String(f);
  else if (type === 2) value = String(i);
  else value = f ? String(f) : String(i);
  c.pos = end;
  return [name, value];
}

/** A subgraph (If/Loop/Scan bodies) is named and counted, not read. */
function subgraphSummary(c: Cursor, end: number): { name: string; nodes: number } {
  let name = '';
  let nodes = 0;
  while (c.pos < end) {
    const key = c.key(end);
    const field = key >>> 3;
    const wire = key & 7;
    if (field === 2 && wire === 2) name = c.string(end);
    else {
      if (field === 1 && wire === 2) nodes++;
      c.skip(wire, end);
    }
  }
  return { name, nodes };
}

/**
 * Strings by their bytes: each distinct tensor name (or op type, or scope list) in the file is decoded once and
 * gets a small integer id, so the names a graph repeats (each tensor is an output and one or more inputs) are
 * neither decoded nor kept twice, and edges are found by id instead of by hashing strings.
 */
class Names {
  readonly strings: string[] = [];
  private readonly starts: number[] = [];
  private readonly lengths: number[] = [];
  private readonly hashes: number[] = [];
  private table = new Int32Array(1024);

  constructor(private readonly buf: Uint8Array) {}

  get size(): number {
    return this.strings.length;
  }

  /** The id of the string in buf[start, end). */
  id(start: number, end: number): number {
    const buf = this.buf;
    const length = end - start;
    let h = 0x811c9dc5;
    for (let i = start; i < end; i++) h = Math.imul(h ^ buf[i], 0x01000193);
    const mask = this.table.length - 1;
    let slot = h & mask;
    for (let v = this.table[slot]; v !== 0; v = this.table[slot]) {
      const id = v - 1;
      if (this.hashes[id] === h && this.lengths[id] === length) {
        const at = this.starts[id];
        let k = 0;
        while (k < length && buf[at + k] === buf[start + k]) k++;
        if (k === length) return id;
      }
      slot = (slot + 1) & mask;
    }
    const id = this.strings.length;
    this.strings.push(utf8(buf, start, end));
    this.starts.push(start);
    this.lengths.push(length);
    this.hashes.push(h);
    this.table[slot] = id + 1;
    if (2 * (id + 1) > mask) this.grow();
    return id;
  }

  /** The id of a length-delimited string field at c.pos. */
  read(c: Cursor, end: number): number {
    const e = c.end(end);
    const id = this.id(c.pos, e);
    c.pos = e;
    return id;
  }

  private grow(): void {
    const table = new Int32Array(this.table.length * 2);
    const mask = table.length - 1;
    for (let id = 0; id < this.strings.length; id++) {
      let slot = this.hashes[id] & mask;
      while (table[slot]) slot = (slot + 1) & mask;
      table[slot] = id + 1;
    }
    this.table = table;
  }
}

/** A StringStringEntryProto at [c.pos, end) whose key is one of METADATA_KEYS: [which, value start, value end]. */
function metadataEntry(c: Cursor, end: number): [number, number, number] | undefined {
  let which = -1;
  let value: [number, number] = [end, end];
  while (c.pos < end) {
    const key = c.key(end);
    const field = key >>> 3;
    const wire = key & 7;
    if (wire === 2 && (field === 1 || field === 2)) {
      const e = c.end(end);
      if (field === 2) value = [c.pos, e];
      else which = METADATA_KEYS.findIndex((k) => e - c.pos === k.length && k.every((b, i) => c.buf[c.pos + i] === b));
      c.pos = e;
    } else c.skip(wire, end);
  }
  return which < 0 ? undefined : [which, value[0], value[1]];
}

/** A JSON list of strings the kernel wrote, or [] when it is not one. */
function jsonList(c: Cursor, at: [number, number] | undefined): string[] {
  if (!at) return [];
  try {
    const list: unknown = JSON.parse(utf8(c.buf, at[0], at[1]));
    return Array.isArray(list) ? list.filter((v): v is string => typeof v === 'string') : [];
  } catch {
    return [];
  }
}

/**
 * Module scopes from the torch exporter's metadata. `pkg.torch.onnx.name_scopes` is a Python-literal list whose
 * entries are full paths, the last one being the op: "['', 'layer1', 'layer1.0', 'layer1.0.conv', 'conv2d_1']"
 * -> ['layer1', 'layer1.0', 'layer1.0.conv']. Nodes with only the op scope (Q/DQ inserted by convert) have none.
 */
export function parseScopes(list: string | undefined): string[] {
  const out: string[] = [];
  if (!list) return out;
  for (let from = 0; ;) {
    const open = list.indexOf("'", from);
    if (open < 0) break;
    const close = list.indexOf("'", open + 1);
    if (close < 0) break;
    if (close > open + 1) out.push(list.slice(open + 1, close));
    from = close + 1;
  }
  out.pop();
  return out;
}

/** What a graph's fields hold, read in one pass; tensor names by id (GraphReader.tensorNames). */
class GraphReader {
  name = '';
  readonly tensorNames: Names;
  private readonly opTypes: Names;
  private readonly scopeLists: Names;
  /** Parsed scopes by scope-list id. */
  private readonly scopes: string[][] = [];
  readonly ops: GraphNode[] = [];
  /** The ops' input and output tensor ids, flat, with where each op's start (and one past the last op). */
  readonly opInputs: number[] = [];
  readonly opInputStart: number[] = [];
  readonly opOutputs: number[] = [];
  readonly opOutputStart: number[] = [];
  /** Initializers in file order, then Constant nodes' values in node order (later ones win, as in a Map). */
  readonly initializers: Array<[number, TensorInfo]> = [];
  readonly constants: Array<[string, TensorInfo]> = [];
  readonly constantOutputs: number[] = [];
  readonly inputs: number[] = [];
  readonly outputs: number[] = [];
  /** Types that graph.input, graph.output and value_info declare, in that file's order. */
  readonly declared: Array<[number, TensorInfo]> = [];
  private index = 0;

  constructor(private readonly c: Cursor) {
    this.tensorNames = new Names(c.buf);
    this.opTypes = new Names(c.buf);
    this.scopeLists = new Names(c.buf);
  }

  read(end: number): void {
    const c = this.c;
    while (c.pos < end) {
      const key = c.key(end);
      const field = key >>> 3;
      const wire = key & 7;
      if (wire !== 2) c.skip(wire, end);
      else if (field === 2) this.name = c.string(end);
      else if (field === 1 || field === 5 || field === 11 || field === 12 || field === 13) {
        const e = c.end(end);
        if (field === 1) this.node(e);
        else if (field === 5) {
          const t = tensorAt(c, e, 1024, this.tensorNames);
          this.initializers.push([t.id, t.info]);
        } else {
          const id = this.valueInfo(e);
          if (field !== 13) (field === 11 ? this.inputs : this.outputs).push(id);
        }
        c.pos = e;
      } else c.skip(wire, end);
    }
    this.opInputStart.push(this.opInputs.length);
    this.opOutputStart.push(this.opOutputs.length);
  }

  /** A ValueInfoProto's name, by id; its declared tensor type, if any, goes to `declared`. */
  private valueInfo(end: number): number {
    const c = this.c;
    let id = -1;
    let type: TensorInfo | undefined;
    while (c.pos < end) {
      const key = c.key(end);
      if (key === ((1 << 3) | 2)) id = this.tensorNames.read(c, end);
      else if (key === ((2 << 3) | 2)) {
        const e = c.end(end);
        type = typeAt(c, e);
        c.pos = e;
      } else c.skip(key & 7, end);
    }
    if (id < 0) return this.tensorNames.id(end, end);
    if (type && this.tensorNames.strings[id]) this.declared.push([id, type]);
    return id;
  }

  /** A NodeProto at [c.pos, end). */
  private node(end: number): void {
    const c = this.c;
    const index = this.index++;
    const names = this.tensorNames;
    const inputStart = this.opInputs.length;
    const outputStart = this.opOutputs.length;
    let name = '';
    let op = -1;
    let domain = '';
    let scopeList: [number, number] | undefined;
    let modulesValue: [number, number] | undefined;
    let sourcesValue: [number, number] | undefined;
    let precision: string | undefined;
    const attributes: number[] = [];
    while (c.pos < end) {
      const key = c.key(end);
      const field = key >>> 3;
      const wire = key & 7;
      if (wire !== 2) c.skip(wire, end);
      else if (field === 1) this.opInputs.push(names.read(c, end));
      else if (field === 2) this.opOutputs.push(names.read(c, end));
      else if (field === 3) name = c.string(end);
      else if (field === 4) op = this.opTypes.read(c, end);
      else if (field === 7) domain = c.string(end);
      else if (field === 5 || field === 9) {
        const e = c.end(end);
        if (field === 5) attributes.push(c.pos, e);
        else {
          const entry = metadataEntry(c, e);
          if (entry?.[0] === SCOPES) scopeList ??= [entry[1], entry[2]];
          else if (entry?.[0] === MODULES) modulesValue = [entry[1], entry[2]];
          else if (entry?.[0] === SOURCE_NODES) sourcesValue = [entry[1], entry[2]];
          else if (entry?.[0] === PRECISION) precision = utf8(c.buf, entry[1], entry[2]);
        }
        c.pos = e;
      } else c.skip(wire, end);
    }
    const opType = op < 0 ? '' : this.opTypes.strings[op];
    // Constants (scales, zero-points, shapes) read as attributes of their consumer, not as boxes.
    if (opType === 'Constant') {
      for (let k = outputStart; k < this.opOutputs.length; k++) this.constantOutputs.push(this.opOutputs[k]);
      const first = this.opOutputs.length > outputStart ? names.strings[this.opOutputs[outputStart]] : '';
      this.opInputs.length = inputStart;
      this.opOutputs.length = outputStart;
      for (let k = 0; k < attributes.length; k += 2) {
        c.pos = attributes[k];
        if (attributeName(c, attributes[k + 1]) !== 'value') continue;
        c.pos = attributes[k];
        const t = attributeTensor(c, attributes[k + 1]);
        if (t && first) {
          c.pos = t[0];
          this.constants.push([first, tensorAt(c, t[1], 1024).info]);
        }
        break;
      }
      c.pos = end;
      return;
    }
    const entries: Array<[string, string]> = [];
    for (let k = 0; k < attributes.length; k += 2) {
      c.pos = attributes[k];
      entries.push(attributeAt(c, attributes[k + 1]));
    }
    c.pos = end;
    let scopes: string[] = [];
    if (scopeList && scopeList[1] > scopeList[0]) {
      const id = this.scopeLists.id(scopeList[0], scopeList[1]);
      // Nodes of one module share the array (nothing changes a node's scopes in place).
      scopes = this.scopes[id] ??= parseScopes(this.scopeLists.strings[id]);
    }
    const modules = jsonList(c, modulesValue);
    const sources = jsonList(c, sourcesValue);
    if (sources.length) entries.push(['onnx nodes', sources.join(', ')]);
    const inputs: string[] = [];
    for (let k = inputStart; k < this.opInputs.length; k++) inputs.push(names.strings[this.opInputs[k]]);
    const outputs: string[] = [];
    for (let k = outputStart; k < this.opOutputs.length; k++) outputs.push(names.strings[this.opOutputs[k]]);
    this.opInputStart.push(inputStart);
    this.opOutputStart.push(outputStart);
    this.ops.push({
      id: `node:${index}`,
      name: name || `${opType}_${index}`,
      op: opType,
      inputs,
      outputs,
      module: scopes.at(-1),
      scopes,
      ...(modules.length ? { modules } : {}),
      ...(precision && PRECISIONS.has(precision) ? { precision: precision as Precision } : {}),
      kind: 'op',
      attributes: Object.fromEntries(entries),
      // Only ops outside the default domain (com.microsoft's QLinearAdd, ...) carry it.
      ...(domain && domain !== 'ai.onnx' ? { domain } : {}),
    });
  }

  /** Graph inputs that are not weights, the ops, the graph outputs, and an edge per consumed tensor with a producer. */
  graph(opsets: Record<string, number>): Graph {
    const names = this.tensorNames.strings;
    const count = this.tensorNames.size;
    const tensors = new Map<string, TensorInfo>();
    // 1: a weight (hidden, and not a graph input box); 2: a Constant's output (hidden).
    const hidden = new Uint8Array(count);
    for (const [id, info] of this.initializers) {
      hidden[id] = 1;
      tensors.set(names[id], info);
    }
    // A weight's own dims win over a declaration; the first declaration of a name wins over later ones.
    for (const [id, info] of this.declared) if (!tensors.has(names[id])) tensors.set(names[id], info);
    for (const [name, info] of this.constants) tensors.set(name, info);
    for (const id of this.constantOutputs) hidden[id] |= 2;
    const nodes: GraphNode[] = [];
    // The last node that writes a tensor is its producer.
    const producer = new Int32Array(count).fill(-1);
    for (const id of this.inputs) {
      if (hidden[id] & 1) continue;
      const name = names[id];
      producer[id] = nodes.length;
      nodes.push({ id: `input:${name}`, name, op: 'Input', inputs: [], outputs: [name], kind: 'input' });
    }
    const first = nodes.length;
    for (let k = 0; k < this.ops.length; k++) {
      for (let j = this.opOutputStart[k]; j < this.opOutputStart[k + 1]; j++) producer[this.opOutputs[j]] = first + k;
      nodes.push(this.ops[k]);
    }
    const edges: Graph['edges'] = [];
    const edge = (id: number, to: string) => {
      const from = producer[id];
      if (from >= 0 && !hidden[id]) edges.push({ from: nodes[from].id, to, tensor: names[id] });
    };
    for (let k = 0; k < this.ops.length; k++) {
      const to = this.ops[k].id;
      for (let j = this.opInputStart[k]; j < this.opInputStart[k + 1]; j++) edge(this.opInputs[j], to);
    }
    for (const id of this.outputs) {
      const name = names[id];
      const to = `output:${name}`;
      nodes.push({ id: to, name, op: 'Output', inputs: [name], outputs: [], kind: 'output' });
      edge(id, to);
    }
    return { name: this.name || 'graph', nodes, edges, opsets, tensors };
  }
}

/**
 * A TypeProto's tensor type: element type and dims, each a dim_value, or -1 with the dim_param's name (`batch`), or
 * -1 unnamed when the file gives neither; unranked when it gives no shape. Undefined for values that are not tensors
 * (sequences, maps, optionals, sparse tensors). Of fields given twice, the last counts, as in a full decode.
 */
function typeAt(c: Cursor, end: number): TensorInfo | undefined {
  let tensor: [number, number] | undefined;
  while (c.pos < end) {
    const key = c.key(end);
    if (key === ((1 << 3) | 2)) {
      const e = c.end(end);
      tensor = [c.pos, e];
      c.pos = e;
    } else c.skip(key & 7, end);
  }
  if (!tensor) return undefined;
  c.pos = tensor[0];
  let elem = 0;
  let shape: [number, number] | undefined;
  while (c.pos < tensor[1]) {
    const key = c.key(tensor[1]);
    if (key === ((1 << 3) | 0)) elem = c.int32(tensor[1]);
    else if (key === ((2 << 3) | 2)) {
      const e = c.end(tensor[1]);
      shape = [c.pos, e];
      c.pos = e;
    } else c.skip(key & 7, tensor[1]);
  }
  const dtype = elem ? dtypeName(elem) : '?';
  if (!shape) return { dtype, dims: [], unranked: true };
  const dims: number[] = [];
  const dimNames: string[] = [];
  c.pos = shape[0];
  while (c.pos < shape[1]) {
    const key = c.key(shape[1]);
    if (key !== ((1 << 3) | 2)) {
      c.skip(key & 7, shape[1]);
      continue;
    }
    const e = c.end(shape[1]);
    // dim_value and dim_param are a oneof: the last one on the wire is the one set.
    let value: number | undefined;
    let param: string | undefined;
    while (c.pos < e) {
      const k = c.key(e);
      if (k === ((1 << 3) | 0)) {
        value = c.int64(e);
        param = undefined;
      } else if (k === ((2 << 3) | 2)) {
        param = c.string(e);
        value = undefined;
      } else c.skip(k & 7, e);
    }
    c.pos = e;
    dims.push(value !== undefined && value >= 0 ? value : -1);
    dimNames.push(param ?? '');
  }
  return { dtype, dims, ...(dimNames.some(Boolean) ? { dimNames } : {}) };
}

function attributeName(c: Cursor, end: number): string {
  let name = '';
  while (c.pos < end) {
    const key = c.key(end);
    if (key === ((1 << 3) | 2)) name = c.string(end);
    else c.skip(key & 7, end);
  }
  return name;
}

/** The extent of an attribute's `t` (the last one, as a decoder keeps it). */
function attributeTensor(c: Cursor, end: number): [number, number] | undefined {
  let t: [number, number] | undefined;
  while (c.pos < end) {
    const key = c.key(end);
    if (key === ((5 << 3) | 2)) {
      const e = c.end(end);
      t = [c.pos, e];
      c.pos = e;
    } else c.skip(key & 7, end);
  }
  return t;
}

/** Decodes a ModelProto into the view's graph. Throws OnnxWireError on a malformed file. */
export function decodeOnnxGraph(bytes: Uint8Array): Graph {
  const c = new Cursor(bytes);
  const end = bytes.length;
  let graph: GraphReader | undefined;
  const opsets: Record<string, number> = {};
  while (c.pos < end) {
    const key = c.key(end);
    const field = key >>> 3;
    const wire = key & 7;
    if (wire === 2 && (field === 7 || field === 8)) {
      const e = c.end(end);
      if (field === 7) {
        graph = new GraphReader(c);
        graph.read(e);
      } else {
        let domain = '';
        let version = 0;
        while (c.pos < e) {
          const k = c.key(e);
          if (k === ((1 << 3) | 2)) domain = c.string(e);
          else if (k === ((2 << 3) | 0)) version = c.int64(e);
          else c.skip(k & 7, e);
        }
        opsets[domain || 'ai.onnx'] = version;
      }
      c.pos = e;
    } else c.skip(wire, end);
  }
  if (!graph) throw new OnnxWireError('This file has no graph: it is not an ONNX model, or it is truncated.');
  return graph.graph(opsets);
}
