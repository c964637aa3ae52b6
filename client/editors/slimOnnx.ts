// Large weights stay in the extension host: the .onnx bytes are rewritten at the protobuf wire level with
// the payload of every tensor above a size limit removed (its name, dims and data type kept), and each
// removed tensor summarized (min, max, mean, std, a histogram) for the properties panel. The graph view
// never needs the values of a big tensor, so a 500 MB model reaches the webview as a few hundred KB.
// A wire walk, not a decode: the host never materializes the model's messages.

export interface TensorStats {
  /** Payload bytes that were removed. */
  bytes: number;
  /** Element count and summary, when the data type is one we read (float32/16, int8/uint8, int32/64). */
  count?: number;
  min?: number;
  max?: number;
  mean?: number;
  std?: number;
  /** Equal-width bins over [min, max]. */
  histogram?: number[];
}

export interface SlimResult {
  bytes: Uint8Array;
  /** Removed tensors by name. */
  removed: Map<string, TensorStats>;
}

const HISTOGRAM_BINS = 32;

/** What the graph panel strips: the webview reads values of tensors up to 1,024 elements (4 KB of float32). */
export const SLIM_LIMIT_BYTES = 4096;

// Which fields hold which message types (onnx.proto field numbers).
type Kind = 'model' | 'graph' | 'node' | 'attribute' | 'function' | 'sparse' | 'tensor';
const CHILDREN: Record<Exclude<Kind, 'tensor'>, Record<number, Kind>> = {
  model: { 7: 'graph', 25: 'function' },
  graph: { 1: 'node', 5: 'tensor', 15: 'sparse' },
  node: { 5: 'attribute' },
  attribute: { 5: 'tensor', 6: 'graph', 10: 'tensor', 11: 'graph', 22: 'sparse', 23: 'sparse' },
  function: { 7: 'node' },
  sparse: { 1: 'tensor', 2: 'tensor' },
};
// TensorProto payload fields: float_data, int32_data, string_data, int64_data, raw_data, double_data, uint64_data.
const PAYLOAD = new Set([4, 5, 6, 7, 9, 10, 11]);

class WireError extends Error {}

function readVarint(buf: Uint8Array, pos: number): [number, number] {
  let value = 0;
  let mul = 1;
  for (let i = 0; i < 10; i++) {
    if (pos >= buf.length) throw new WireError('truncated varint');
    const b = buf[pos++];
    value += (b & 0x7f) * mul;
    if (b < 0x80) return [value, pos];
    mul *= 128;
  }
  throw new WireError('varint too long');
}

function writeVarint(out: number[], value: number): void {
  while (value >= 0x80) {
    out.push((value % 128) | 0x80);
    value = Math.floor(value / 128);
  }
  out.push(value);
}

/** Deeper than any real model (graphs nest through If/Loop/Scan attributes); a deeper file is returned as it came. */
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
}

/** Replace buf[start, end) by `bytes` (nothing when undefined). */
interface Edit {
  start: number;
  end: number;
  bytes?: Uint8Array;
}

/** Reads one field's key and extent at `pos`; returns [number, wire, dataStart, end]. */
function readField(buf: Uint8Array, pos: number, end: number): [number, number, number, number] {
  const [key, afterKey] = readVarint(buf, pos);
  const number = Math.floor(key / 8);
  const wire = key % 8;
  if (number === 0) throw new WireError('field number 0');
  let dataStart = afterKey;
  let next: number;
  if (wire === 0) next = readVarint(buf, afterKey)[1];
  else if (wire === 1) next = afterKey + 8;
  else if (wire === 5) next = afterKey + 4;
  else if (wire === 2) {
    const [len, after] = readVarint(buf, afterKey);
    dataStart = after;
    next = after + len;
  } else throw new WireError(`unsupported wire type ${wire}`);
  if (next > end) throw new WireError('field runs past its message');
  return [number, wire, dataStart, next];
}

/**
 * Rewrites the model; on anything unexpected returns the input unchanged (the importer reports errors).
 * One pass with an explicit stack (no recursion on the file's nesting depth) that records only the cuts: memory
 * is bounded by the number of removed tensors, not by the number of fields.
 */
export function slimOnnx(input: Uint8Array, limitBytes = 64 * 1024): SlimResult {
  const removed = new Map<string, TensorStats>();
  try {
    const edits = walk(input, limitBytes, removed);
    if (removed.size === 0) return { bytes: input, removed };
    return { bytes: applyEdits(input, edits), removed };
  } catch (err) {
    if (err instanceof WireError) return { bytes: input, removed: new Map() };
    throw err;
  }
}

function walk(buf: Uint8Array, limit: number, removed: Map<string, TensorStats>): Edit[] {
  const edits: Edit[] = [];
  const stack: Frame[] = [
    { kind: 'model', end: buf.length, pos: 0, fieldStart: -1, dataStart: 0, fieldNumber: 0, removed: 0 },
  ];
  while (stack.length) {
    const top = stack[stack.length - 1];
    if (top.kind === 'tensor') {
      top.removed = slimTensor(buf, top.dataStart, top.end, limit, removed, edits);
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
    const [number, wire, dataStart, next] = readField(buf, top.pos, top.end);
    top.pos = next;
    const child = wire === 2 ? CHILDREN[top.kind as Exclude<Kind, 'tensor'>][number] : undefined;
    if (!child) continue;
    if (stack.length >= MAX_NESTING) throw new WireError('nested too deeply');
    stack.push({ kind: child, end: next, pos: dataStart, fieldStart, dataStart, fieldNumber: number, removed: 0 });
  }
  return edits;
}

/** Cuts a tensor's payload fields when together they exceed the limit; returns the bytes cut. */
function slimTensor(
  buf: Uint8Array,
  start: number,
  end: number,
  limit: number,
  removed: Map<string, TensorStats>,
  edits: Edit[],
): number {
  // Payload fields are usually one (raw_data) or a few; adjacent ones merge into one cut.
  const cuts: Array<[number, number]> = [];
  let bytes = 0;
  let name = '';
  let dataType = 0;
  let raw: [number, number] | undefined;
  for (let pos = start; pos < end;) {
    const fieldStart = pos;
    const [number, wire, dataStart, next] = readField(buf, pos, end);
    pos = next;
    if (PAYLOAD.has(number)) {
      bytes += next - dataStart;
      const last = cuts[cuts.length - 1];
      if (last && last[1] === fieldStart) last[1] = next;
      else cuts.push([fieldStart, next]);
      if (number === 9 && wire === 2) raw = [dataStart, next];
    } else if (number === 8 && wire === 2) name = new TextDecoder().decode(buf.subarray(dataStart, next));
    else if (number === 2 && wire === 0) dataType = readVarint(buf, dataStart)[0];
  }
  if (bytes <= limit) return 0;
  removed.set(name, { bytes, ...(raw ? summarize(buf.subarray(raw[0], raw[1]), dataType) : {}) });
  let cut = 0;
  for (const [a, b] of cuts) {
    edits.push({ start: a, end: b });
    cut += b - a;
  }
  return cut;
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
function summarize(raw: Uint8Array, dataType: number): Omit<TensorStats, 'bytes'> {
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
