// The graph's nodes and tensors as columns for the trip from the layout worker to the page. Structured clone
// builds every object it receives property by property, which made the clone of 100k node objects (each with
// its inputs, outputs, scopes and attributes) take most of a flat 100k-node view's first render; arrays of
// strings and typed arrays clone several times faster, and the page builds plain objects from them in one pass.
// Keys are kept exactly: a key present with an undefined value (the decoder's `module: undefined`) stays present.
import type { GraphNode, TensorInfo, TensorValues } from '../importers/types';
import { Interned } from '../graph/interned';

/** Per-node fields with a column of their own, by the bit that marks them present. */
const NODE_KEYS = ['module', 'scopes', 'size', 'attributes', 'precision'] as const;
const NODE_BIT = Object.fromEntries(NODE_KEYS.map((k, i) => [k, 1 << i])) as Record<(typeof NODE_KEYS)[number], number>;
/** Always present, each a column. */
const NODE_BASE = new Set(['id', 'name', 'op', 'kind', 'inputs', 'outputs', ...NODE_KEYS]);

/** Lists of strings, flat: list k is values[starts[k], starts[k + 1]). */
interface StringLists {
  starts: Int32Array;
  values: string[];
}

export interface NodeColumns {
  count: number;
  id: string[];
  name: string[];
  /** Op, kind, module and precision: indices into `words` (-1: undefined); a model has few distinct ones. */
  words: string[];
  op: Int32Array;
  kind: Int32Array;
  inputs: StringLists;
  outputs: StringLists;
  /** Which of NODE_KEYS each node has. */
  present: Uint8Array;
  module: Int32Array;
  scopes: StringLists;
  size: Float64Array;
  /** Attribute names and texts, one list each per node. */
  attrKeys: StringLists;
  attrValues: StringLists;
  precision: Int32Array;
  /** Fields few nodes have (source, qparams, executed, ...), as they are. */
  extras: Array<[number, Partial<GraphNode>]>;
}

class ListWriter {
  readonly starts: Int32Array;
  readonly values: string[] = [];
  constructor(count: number) {
    this.starts = new Int32Array(count + 1);
  }
  add(k: number, list: readonly string[] | undefined): void {
    if (list) for (const s of list) this.values.push(s);
    this.starts[k + 1] = this.values.length;
  }
  get lists(): StringLists {
    return { starts: this.starts, values: this.values };
  }
}

const listAt = (l: StringLists, k: number) => l.values.slice(l.starts[k], l.starts[k + 1]);

export function packNodes(nodes: readonly GraphNode[]): { columns: NodeColumns; transfer: ArrayBuffer[] } {
  const count = nodes.length;
  const id = new Array<string>(count);
  const name = new Array<string>(count);
  const words = new Interned();
  const word = (s: string | undefined) => (s === undefined ? -1 : words.id(s));
  const op = new Int32Array(count);
  const kind = new Int32Array(count);
  const module = new Int32Array(count);
  const precision = new Int32Array(count);
  const present = new Uint8Array(count);
  const size = new Float64Array(count);
  const inputs = new ListWriter(count);
  const outputs = new ListWriter(count);
  const scopes = new ListWriter(count);
  const attrKeys = new ListWriter(count);
  const attrValues = new ListWriter(count);
  const extras: Array<[number, Partial<GraphNode>]> = [];
  for (let k = 0; k < count; k++) {
    const n = nodes[k];
    id[k] = n.id;
    name[k] = n.name;
    op[k] = word(n.op);
    kind[k] = word(n.kind);
    inputs.add(k, n.inputs);
    outputs.add(k, n.outputs);
    let bits = 0;
    if ('module' in n) bits |= NODE_BIT.module;
    module[k] = word(n.module);
    if ('scopes' in n) bits |= NODE_BIT.scopes;
    scopes.add(k, n.scopes);
    if ('size' in n) bits |= NODE_BIT.size;
    size[k] = n.size ?? 0;
    if ('attributes' in n) bits |= NODE_BIT.attributes;
    const attrs = n.attributes ? Object.keys(n.attributes) : undefined;
    attrKeys.add(k, attrs);
    attrValues.add(
      k,
      attrs?.map((a) => n.attributes![a]),
    );
    if ('precision' in n) bits |= NODE_BIT.precision;
    precision[k] = word(n.precision);
    present[k] = bits;
    let extra: Record<string, unknown> | undefined;
    for (const key in n) if (!NODE_BASE.has(key)) (extra ??= {})[key] = (n as unknown as Record<string, unknown>)[key];
    if (extra) extras.push([k, extra as Partial<GraphNode>]);
  }
  const columns: NodeColumns = {
    count,
    id,
    name,
    words: words.list,
    op,
    kind,
    inputs: inputs.lists,
    outputs: outputs.lists,
    present,
    module,
    scopes: scopes.lists,
    size,
    attrKeys: attrKeys.lists,
    attrValues: attrValues.lists,
    precision,
    extras,
  };
  const transfer = [
    op,
    kind,
    module,
    precision,
    present,
    size,
    inputs.starts,
    outputs.starts,
    scopes.starts,
    attrKeys.starts,
    attrValues.starts,
  ].map((a) => a.buffer as ArrayBuffer);
  return { columns, transfer };
}

export function unpackNodes(c: NodeColumns): GraphNode[] {
  const nodes = new Array<GraphNode>(c.count);
  const word = (k: number) => (k < 0 ? undefined : c.words[k]);
  for (let k = 0; k < c.count; k++) {
    const n: GraphNode = {
      id: c.id[k],
      name: c.name[k],
      op: c.words[c.op[k]],
      inputs: listAt(c.inputs, k),
      outputs: listAt(c.outputs, k),
      kind: c.words[c.kind[k]] as GraphNode['kind'],
    };
    const bits = c.present[k];
    if (bits & NODE_BIT.module) n.module = word(c.module[k]);
    if (bits & NODE_BIT.scopes) n.scopes = listAt(c.scopes, k);
    if (bits & NODE_BIT.size) n.size = c.size[k];
    if (bits & NODE_BIT.attributes) {
      const attributes: Record<string, string> = {};
      for (let a = c.attrKeys.starts[k]; a < c.attrKeys.starts[k + 1]; a++)
        attributes[c.attrKeys.values[a]] = c.attrValues.values[a];
      n.attributes = attributes;
    }
    if (bits & NODE_BIT.precision) n.precision = word(c.precision[k]) as GraphNode['precision'];
    nodes[k] = n;
  }
  for (const [k, extra] of c.extras) Object.assign(nodes[k], extra);
  return nodes;
}

/** Typed arrays a small tensor's values may be, by the code they travel under. */
const VALUE_TYPES = [Float32Array, Float64Array, Int8Array, Uint8Array, Int16Array, Uint16Array, Int32Array] as const;
type ValueType = (typeof VALUE_TYPES)[number];

export interface TensorColumns {
  names: string[];
  dtype: string[];
  dims: { starts: Int32Array; values: Float64Array };
  /** Per tensor: -1 no values, else the index of the buffer its typed array views (with type, offset, length). */
  valueBuffer: Int32Array;
  valueType: Uint8Array;
  valueOffset: Float64Array;
  valueLength: Int32Array;
  /** The buffers the values view: the decoder packs small tensors' bytes into a few shared ones. */
  buffers: ArrayBuffer[];
  /** Fields few tensors have (dimNames, unranked, plain-number values, stats, ...), as they are. */
  extras: Array<[number, Partial<TensorInfo>]>;
}

const typeCode = (v: TensorValues) => VALUE_TYPES.findIndex((T) => v instanceof T);

export function packTensors(tensors: ReadonlyMap<string, TensorInfo>): {
  columns: TensorColumns;
  transfer: ArrayBuffer[];
} {
  const count = tensors.size;
  const names: string[] = [];
  const dtype: string[] = [];
  const dimStarts = new Int32Array(count + 1);
  const dimValues: number[] = [];
  const valueBuffer = new Int32Array(count).fill(-1);
  const valueType = new Uint8Array(count);
  const valueOffset = new Float64Array(count);
  const valueLength = new Int32Array(count);
  const buffers: ArrayBuffer[] = [];
  const bufferIndex = new Map<ArrayBufferLike, number>();
  const extras: Array<[number, Partial<TensorInfo>]> = [];
  let k = 0;
  for (const [name, t] of tensors) {
    names.push(name);
    dtype.push(t.dtype);
    for (const d of t.dims) dimValues.push(d);
    dimStarts[k + 1] = dimValues.length;
    let extra: Record<string, unknown> | undefined;
    for (const key in t) {
      if (key === 'dtype' || key === 'dims') continue;
      const v = (t as unknown as Record<string, unknown>)[key];
      const code = key === 'values' && ArrayBuffer.isView(v) ? typeCode(v as TensorValues) : -1;
      if (code < 0) {
        (extra ??= {})[key] = v;
        continue;
      }
      const view = v as Exclude<TensorValues, number[]>;
      let b = bufferIndex.get(view.buffer);
      if (b === undefined) {
        b = buffers.length;
        buffers.push(view.buffer as ArrayBuffer);
        bufferIndex.set(view.buffer, b);
      }
      valueBuffer[k] = b;
      valueType[k] = code;
      valueOffset[k] = view.byteOffset;
      valueLength[k] = view.length;
    }
    if (extra) extras.push([k, extra as Partial<TensorInfo>]);
    k++;
  }
  const columns: TensorColumns = {
    names,
    dtype,
    dims: { starts: dimStarts, values: Float64Array.from(dimValues) },
    valueBuffer,
    valueType,
    valueOffset,
    valueLength,
    buffers,
    extras,
  };
  // The value buffers stay with the worker's decoded model (they are copied); the columns are its own.
  const transfer = [dimStarts, columns.dims.values, valueBuffer, valueType, valueOffset, valueLength].map(
    (a) => a.buffer as ArrayBuffer,
  );
  return { columns, transfer };
}

export function unpackTensors(c: TensorColumns): Map<string, TensorInfo> {
  const infos: TensorInfo[] = [];
  for (let k = 0; k < c.names.length; k++) {
    const dims: number[] = [];
    for (let d = c.dims.starts[k]; d < c.dims.starts[k + 1]; d++) dims.push(c.dims.values[d]);
    const t: TensorInfo = { dtype: c.dtype[k], dims };
    const b = c.valueBuffer[k];
    if (b >= 0) {
      const T: ValueType = VALUE_TYPES[c.valueType[k]];
      t.values = new T(c.buffers[b], c.valueOffset[k], c.valueLength[k]);
    }
    infos.push(t);
  }
  for (const [k, extra] of c.extras) Object.assign(infos[k], extra);
  return new Map(c.names.map((name, k) => [name, infos[k]]));
}
