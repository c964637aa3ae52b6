// Hostile .onnx shapes built at the protobuf wire level: deep nesting, zeros, duplicated nodes, added tensors and
// fields, and mutations.
// Shared by the unit tests, the reliability suite and its bench figure.

function varint(out: number[], value: number): void {
  while (value >= 0x80) {
    out.push((value % 128) | 0x80);
    value = Math.floor(value / 128);
  }
  out.push(value);
}

function varintLength(value: number): number {
  let n = 1;
  while (value >= 0x80) {
    value = Math.floor(value / 128);
    n++;
  }
  return n;
}

/**
 * A ModelProto nested `depth` messages deep along model.graph -> node -> attribute.g -> node -> ...: each message
 * holds only the next one, so the file is the headers, outermost first.
 */
export function deeplyNested(depth: number): Uint8Array {
  const cycle = [1, 5, 6]; // graph.node, node.attribute, attribute.g
  const fields = [7];
  for (let i = 1; i < depth; i++) fields.push(cycle[(i - 1) % 3]);
  // Lengths inside out: the innermost message is empty.
  const lengths = new Array<number>(fields.length);
  let inner = 0;
  for (let i = fields.length - 1; i >= 0; i--) {
    lengths[i] = inner;
    inner += varintLength(fields[i] * 8 + 2) + varintLength(inner);
  }
  const out: number[] = [];
  for (let i = 0; i < fields.length; i++) {
    varint(out, fields[i] * 8 + 2);
    varint(out, lengths[i]);
  }
  return Uint8Array.from(out);
}

interface RawField {
  number: number;
  start: number;
  dataStart: number;
  end: number;
}

function readVarint(buf: Uint8Array, pos: number): [number, number] {
  let value = 0;
  let mul = 1;
  for (;;) {
    const b = buf[pos++];
    value += (b & 0x7f) * mul;
    if (b < 0x80) return [value, pos];
    mul *= 128;
  }
}

function topFields(buf: Uint8Array, start = 0, end = buf.length): RawField[] {
  const out: RawField[] = [];
  for (let pos = start; pos < end;) {
    const fieldStart = pos;
    const [key, after] = readVarint(buf, pos);
    const wire = key & 7;
    let dataStart = after;
    if (wire === 0) pos = readVarint(buf, after)[1];
    else if (wire === 1) pos = after + 8;
    else if (wire === 5) pos = after + 4;
    else {
      const [len, a] = readVarint(buf, after);
      dataStart = a;
      pos = a + len;
    }
    out.push({ number: Math.floor(key / 8), start: fieldStart, dataStart, end: pos });
  }
  return out;
}

function lengthDelimited(number: number, body: Uint8Array[]): Uint8Array[] {
  const header: number[] = [];
  varint(header, number * 8 + 2);
  varint(
    header,
    body.reduce((n, b) => n + b.length, 0),
  );
  return [Uint8Array.from(header), ...body];
}

export function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** One length-delimited field: its key, its length, then `body`. */
export function field(number: number, body: Uint8Array): Uint8Array {
  return concat(lengthDelimited(number, [body]));
}

/** A signed 64-bit varint (a negative one takes 10 bytes, as protobuf writes an int64). */
function varint64(out: number[], value: number): void {
  let v = BigInt.asUintN(64, BigInt(value));
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
}

/** A TensorProto: its dims (packed, as given: negative ones too), data type (1: float32), name and raw_data. */
export function tensorProto(name: string, dims: number[], raw: Uint8Array, dataType = 1): Uint8Array {
  const packed: number[] = [];
  for (const d of dims) varint64(packed, d);
  const type: number[] = [2 << 3];
  varint(type, dataType);
  return concat([
    ...(dims.length ? [field(1, Uint8Array.from(packed))] : []),
    Uint8Array.from(type),
    field(8, new TextEncoder().encode(name)),
    field(9, raw),
  ]);
}

/** The model with `fields` (whole fields: key, length, body) added at the end of its graph. */
export function withGraphFields(model: Uint8Array, fields: Uint8Array[]): Uint8Array {
  const graphField = topFields(model).find((f) => f.number === 7);
  if (!graphField) throw new Error('no graph');
  const body = [model.subarray(graphField.dataStart, graphField.end), ...fields];
  return concat([model.subarray(0, graphField.start), ...lengthDelimited(7, body), model.subarray(graphField.end)]);
}

/** The model with `fields` added after its own. */
export function withModelFields(model: Uint8Array, fields: Uint8Array[]): Uint8Array {
  return concat([model, ...fields]);
}

/** float32 raw data of `count` values 0, 1, 2, ... */
export function floats(count: number): Uint8Array {
  return new Uint8Array(Float32Array.from({ length: count }, (_, i) => i).buffer);
}

/**
 * The model with its graph's node list repeated until it has at least `count` nodes: same names and outputs,
 * so every copy consumes the outputs of the last copy (a graph full of duplicates and cycles).
 * With `withWeights`, the initializers are repeated as often (the 88 MB digits export of the reliability report).
 */
export function duplicatedNodes(model: Uint8Array, count: number, withWeights = false): Uint8Array {
  const top = topFields(model);
  const graphField = top.find((f) => f.number === 7);
  if (!graphField) throw new Error('no graph');
  const graph = topFields(model, graphField.dataStart, graphField.end);
  const nodes = graph.filter((f) => f.number === 1);
  const weights = graph.filter((f) => f.number === 5);
  const copies = Math.ceil(count / nodes.length);
  const body: Uint8Array[] = [model.subarray(graphField.dataStart, graphField.end)];
  for (let i = 1; i < copies; i++) {
    for (const n of nodes) body.push(model.subarray(n.start, n.end));
    if (withWeights) for (const w of weights) body.push(model.subarray(w.start, w.end));
  }
  return concat([model.subarray(0, graphField.start), ...lengthDelimited(7, body), model.subarray(graphField.end)]);
}

/** Deterministic PRNG (mulberry32) so a failing mutation can be replayed from its seed. */
export function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const MUTATIONS = ['truncate', 'flip bytes', 'append noise', 'noise', 'splice', 'varint bomb'] as const;

/** One mutation of `src` (a copy; `src` is not changed). */
export function mutate(src: Uint8Array, random: () => number): { kind: (typeof MUTATIONS)[number]; bytes: Uint8Array } {
  const kind = MUTATIONS[Math.floor(random() * MUTATIONS.length)];
  const at = () => Math.floor(random() * src.length);
  const noise = (n: number) => Uint8Array.from({ length: n }, () => Math.floor(random() * 256));
  let bytes: Uint8Array;
  if (kind === 'truncate') bytes = src.slice(0, at());
  else if (kind === 'flip bytes') {
    bytes = src.slice();
    for (let k = 0; k < 1 + random() * 8; k++) bytes[at()] = Math.floor(random() * 256);
  } else if (kind === 'append noise') bytes = concat([src.subarray(0, at()), noise(16)]);
  else if (kind === 'noise') bytes = noise(Math.floor(random() * 512));
  else if (kind === 'splice') {
    const a = at();
    const b = at();
    bytes = concat([
      src.subarray(0, a),
      src.subarray(b, Math.min(src.length, b + 1 + Math.floor(random() * 256))),
      src.subarray(a),
    ]);
  } else {
    // A length prefix rewritten to a huge value: 0xff 0xff 0xff 0xff 0x0f.
    bytes = src.slice();
    const p = at();
    bytes.set([0xff, 0xff, 0xff, 0xff, 0x0f].slice(0, Math.max(0, bytes.length - p)), p);
  }
  return { kind, bytes };
}
