// Large weights stay in the extension host: the .onnx bytes are rewritten at the protobuf wire level with
// the payload of every tensor above a size limit removed (its name, dims and data type kept), and each
// removed tensor summarized (min, max, mean, std, a histogram) for the properties panel. The graph view
// never needs the values of a big tensor, so a 500 MB model reaches the webview as a few hundred KB. The small
// tensors kept have a budget in all: past it, the largest of them are cut too (100k tensors just under the limit
// are 400 MB). A file the walk cannot read is reported as malformed (OnnxWireError, naming the byte and the
// message), never handed on whole: the view would get every payload.
// A wire walk, not a decode: the host never materializes the model's messages. It reads the wire with the
// webview's reader (common/wireReader.ts).
import type { WeightStats } from '../../protocol/webview';
import { WireReader } from '../../common/wireReader';

export interface SlimResult {
  bytes: Uint8Array;
  /** Removed tensors by name, with the payload bytes removed (`bytes`). */
  removed: Map<string, WeightStats>;
}

const HISTOGRAM_BINS = 32;

/** What the graph panel strips: the webview reads values of tensors up to 1,024 elements (4 KB of float32). */
export const SLIM_LIMIT_BYTES = 4096;
/** The payload bytes of the tensors under the limit that the view gets, all together. */
export const SLIM_BUDGET_BYTES = 16 * 1024 ** 2;

// Which fields hold which message types (onnx.proto field numbers), and their names in errors ([]: repeated).
type Kind = 'model' | 'graph' | 'node' | 'attribute' | 'function' | 'sparse' | 'training' | 'tensor';
const CHILDREN: Record<Exclude<Kind, 'tensor'>, Record<number, [Kind, string]>> = {
  model: { 7: ['graph', 'graph'], 20: ['training', 'training_info[]'], 25: ['function', 'functions[]'] },
  graph: { 1: ['node', 'node[]'], 5: ['tensor', 'initializer[]'], 15: ['sparse', 'sparse_initializer[]'] },
  node: { 5: ['attribute', 'attribute[]'] },
  attribute: {
    5: ['tensor', 't'],
    6: ['graph', 'g'],
    10: ['tensor', 'tensors[]'],
    11: ['graph', 'graphs[]'],
    22: ['sparse', 'sparse_tensor'],
    23: ['sparse', 'sparse_tensors[]'],
  },
  function: { 7: ['node', 'node[]'], 11: ['attribute', 'attribute_proto[]'] },
  sparse: { 1: ['tensor', 'values'], 2: ['tensor', 'indices'] },
  training: { 1: ['graph', 'initialization'], 2: ['graph', 'algorithm'] },
};
// TensorProto payload fields: float_data, int32_data, string_data, int64_data, raw_data, double_data, uint64_data.
const PAYLOAD = new Set([4, 5, 6, 7, 9, 10, 11]);

/** Appends a varint (a key or a length). */
function writeVarint(out: number[], value: number): void {
  while (value >= 0x80) {
    out.push((value % 128) | 0x80);
    value = Math.floor(value / 128);
  }
  out.push(value);
}

/** Deeper than any real model (graphs nest through If/Loop/Scan attributes); a deeper file is reported. */
export const MAX_NESTING = 256;

/** A message being walked: [start, end) of its bytes, the field that holds it, the bytes cut from inside it. */
interface Frame {
  kind: Kind;
  end: number;
  pos: number;
  /** Where the field holding this message starts (its key), and where its data starts (after the length). */
  fieldStart: number;
  dataStart: number;
  fieldNumber: number;
  removed: number;
  /** The field's name in errors (`initializer[]`: repeated). */
  name: string;
}

/** Replace buf[start, end) by `bytes` (nothing when undefined). */
interface Edit {
  start: number;
  end: number;
  bytes?: Uint8Array;
}

/** The field being read, for errors (0 while its key is read). */
let reading = 0;

/** Reads one field's key and extent at r.pos and moves past it; returns [number, wire, dataStart] (dataStart:
 * after the length of a length-delimited field). */
function readField(r: WireReader, end: number): [number, number, number] {
  reading = 0;
  const key = r.key(end);
  reading = key >>> 3;
  const wire = key & 7;
  if (wire === 2) {
    const e = r.end(end);
    const dataStart = r.pos;
    r.pos = e;
    return [key >>> 3, wire, dataStart];
  }
  const dataStart = r.pos;
  r.skip(wire, end);
  return [key >>> 3, wire, dataStart];
}

/**
 * Rewrites the model: tensors whose payload is over `limitBytes` lose it, and so do the largest of the others when
 * together they are over `budgetBytes`. Throws OnnxWireError on a file it cannot read. One pass with an explicit
 * stack (no recursion on the file's nesting depth) that records only the cuts: memory is bounded by the number of
 * removed tensors, not by the number of fields. Past the budget, a second pass cuts at a lower limit.
 */
export function slimOnnx(
  input: Uint8Array,
  limitBytes = SLIM_LIMIT_BYTES,
  budgetBytes = SLIM_BUDGET_BYTES,
): SlimResult {
  const r = new WireReader(input);
  let slim = slimAt(r, limitBytes);
  if (slim.keptBytes > budgetBytes) slim = slimAt(r, keptLimit(slim.kept, budgetBytes));
  if (slim.removed.size === 0) return { bytes: input, removed: slim.removed };
  return { bytes: applyEdits(input, slim.edits), removed: slim.removed };
}

/** The cuts at one limit, and the tensors kept: how many of each payload size (at most limit + 1 sizes). */
function slimAt(r: WireReader, limit: number) {
  const removed = new Map<string, WeightStats>();
  const kept = new Map<number, number>();
  let keptBytes = 0;
  const edits = walk(r, (start, end, out) => {
    const p = payloadOf(r, start, end);
    if (p.bytes > limit) return cut(r.buf, p, removed, out);
    kept.set(p.bytes, (kept.get(p.bytes) ?? 0) + 1);
    keptBytes += p.bytes;
    return 0;
  });
  return { edits, removed, kept, keptBytes };
}

/** The largest payload size at which the tensors kept fit the budget, the smallest first (tensors of one size are
 * kept or cut together, whatever their order in the file). */
function keptLimit(kept: Map<number, number>, budget: number): number {
  let total = 0;
  let at = 0;
  for (const size of [...kept.keys()].sort((a, b) => a - b)) {
    total += size * kept.get(size)!;
    if (total > budget) break;
    at = size;
  }
  return at;
}

/** `model.graph.node[12].attribute[0]`: the messages being read, for errors (the middle of a deep one left out).
 * Indices are counted here, on the error's path only: the fields before a message were read already. */
function pathOf(buf: Uint8Array, stack: Frame[]): string {
  const names = stack.map((f, i) => {
    if (!f.name.endsWith('[]')) return f.name;
    const parent = stack[i - 1];
    const r = new WireReader(buf);
    let index = 0;
    for (r.pos = parent.dataStart; r.pos < f.fieldStart;) if (readField(r, parent.end)[0] === f.fieldNumber) index++;
    return `${f.name.slice(0, -2)}[${index}]`;
  });
  return (names.length > 8 ? [...names.slice(0, 4), '…', ...names.slice(-3)] : names).join('.');
}

/** Walks every tensor message of the model; `tensor` returns the bytes it cut from one (its edits into `edits`). */
function walk(r: WireReader, tensor: (start: number, end: number, edits: Edit[]) => number): Edit[] {
  const edits: Edit[] = [];
  const stack: Frame[] = [
    {
      kind: 'model',
      end: r.buf.length,
      pos: 0,
      fieldStart: -1,
      dataStart: 0,
      fieldNumber: 0,
      removed: 0,
      name: 'model',
    },
  ];
  r.where = () => {
    const field = reading;
    const path = pathOf(r.buf, stack);
    return field ? `${path} (field ${field})` : path;
  };
  while (stack.length) {
    const top = stack[stack.length - 1];
    if (top.kind === 'tensor') {
      top.removed = tensor(top.dataStart, top.end, edits);
      top.pos = top.end;
    }
    if (top.pos >= top.end) {
      stack.pop();
      const parent = stack[stack.length - 1];
      if (top.removed > 0 && parent) {
        const header: number[] = [];
        writeVarint(header, top.fieldNumber * 8 + 2);
        writeVarint(header, top.end - top.dataStart - top.removed);
        edits.push({ start: top.fieldStart, end: top.dataStart, bytes: Uint8Array.from(header) });
        parent.removed += top.removed + (top.dataStart - top.fieldStart) - header.length;
      }
      continue;
    }
    const fieldStart = top.pos;
    r.pos = top.pos;
    const [number, wire, dataStart] = readField(r, top.end);
    const next = r.pos;
    top.pos = next;
    const child = wire === 2 ? CHILDREN[top.kind as Exclude<Kind, 'tensor'>][number] : undefined;
    if (!child) continue;
    if (stack.length >= MAX_NESTING) {
      r.pos = fieldStart;
      r.fail(`messages nested more than ${MAX_NESTING} deep`);
    }
    const [kind, name] = child;
    stack.push({ kind, end: next, pos: dataStart, fieldStart, dataStart, fieldNumber: number, removed: 0, name });
  }
  r.where = undefined;
  return edits;
}

/** A TensorProto's payload fields: their extents (adjacent ones merged), their bytes, and what names the tensor. */
interface Payload {
  cuts: Array<[number, number]>;
  bytes: number;
  name: [number, number];
  dataType: number;
  raw?: [number, number];
}

function payloadOf(r: WireReader, start: number, end: number): Payload {
  // Payload fields are usually one (raw_data) or a few; adjacent ones merge into one cut.
  const p: Payload = { cuts: [], bytes: 0, name: [start, start], dataType: 0 };
  for (let pos = start; pos < end;) {
    const fieldStart = pos;
    r.pos = pos;
    const [number, wire, dataStart] = readField(r, end);
    const next = r.pos;
    pos = next;
    if (PAYLOAD.has(number)) {
      p.bytes += next - dataStart;
      const last = p.cuts[p.cuts.length - 1];
      if (last && last[1] === fieldStart) last[1] = next;
      else p.cuts.push([fieldStart, next]);
      if (number === 9 && wire === 2) p.raw = [dataStart, next];
    } else if (number === 8 && wire === 2) p.name = [dataStart, next];
    else if (number === 2 && wire === 0) {
      r.pos = dataStart;
      p.dataType = r.int32(next);
    }
  }
  return p;
}

/** Cuts a tensor's payload fields and summarizes them in `removed`; returns the bytes cut. */
function cut(buf: Uint8Array, p: Payload, removed: Map<string, WeightStats>, edits: Edit[]): number {
  const name = new TextDecoder().decode(buf.subarray(p.name[0], p.name[1]));
  removed.set(name, { bytes: p.bytes, ...(p.raw ? summarize(buf.subarray(p.raw[0], p.raw[1]), p.dataType) : {}) });
  let bytes = 0;
  for (const [a, b] of p.cuts) {
    edits.push({ start: a, end: b });
    bytes += b - a;
  }
  return bytes;
}

function applyEdits(buf: Uint8Array, edits: Edit[]): Uint8Array {
  edits.sort((a, b) => a.start - b.start);
  let size = buf.length;
  for (const e of edits) size += (e.bytes?.length ?? 0) - (e.end - e.start);
  const out = new Uint8Array(size);
  let from = 0;
  let at = 0;
  for (const e of edits) {
    out.set(buf.subarray(from, e.start), at);
    at += e.start - from;
    if (e.bytes) {
      out.set(e.bytes, at);
      at += e.bytes.length;
    }
    from = e.end;
  }
  out.set(buf.subarray(from), at);
  return out;
}

/** Statistics of raw little-endian data of the ONNX types a viewer commonly meets as weights. */
function summarize(raw: Uint8Array, dataType: number): Omit<WeightStats, 'bytes'> {
  // Typed arrays over an aligned copy: a tight loop over them is ~10x a DataView read per element.
  const aligned = (size: number) => {
    const n = Math.floor(raw.byteLength / size);
    return raw.byteOffset % size === 0
      ? raw.buffer.slice(raw.byteOffset, raw.byteOffset + n * size)
      : raw.slice(0, n * size).buffer;
  };
  let values: ArrayLike<number>;
  switch (dataType) {
    case 1:
      values = new Float32Array(aligned(4));
      break;
    case 2:
      values = raw;
      break;
    case 3:
      values = new Int8Array(raw.buffer, raw.byteOffset, raw.byteLength);
      break;
    case 6:
      values = new Int32Array(aligned(4));
      break;
    case 7:
      values = Float64Array.from(new BigInt64Array(aligned(8)), Number);
      break;
    case 10:
      values = Float32Array.from(new Uint16Array(aligned(2)), halfToFloat);
      break;
    default:
      return {};
  }
  const count = values.length;
  if (count === 0) return { count };
  let min = Infinity;
  let max = -Infinity;
  let sum = 0;
  let sumSq = 0;
  for (let i = 0; i < count; i++) {
    const v = values[i];
    if (v < min) min = v;
    if (v > max) max = v;
    sum += v;
    sumSq += v * v;
  }
  const mean = sum / count;
  const histogram = new Array<number>(HISTOGRAM_BINS).fill(0);
  const scale = max > min ? HISTOGRAM_BINS / (max - min) : 0;
  for (let i = 0; i < count; i++) histogram[Math.min(HISTOGRAM_BINS - 1, Math.floor((values[i] - min) * scale))]++;
  return { count, min, max, mean, std: Math.sqrt(Math.max(0, sumSq / count - mean * mean)), histogram };
}

function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * 2 ** -14 * (frac / 1024);
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * 2 ** (exp - 15) * (1 + frac / 1024);
}
