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

interface Field {
  number: number;
  wire: number;
  start: number;
  end: number;
  dataStart: number;
}

function fields(buf: Uint8Array, start: number, end: number): Field[] {
  const out: Field[] = [];
  let pos = start;
  while (pos < end) {
    const fieldStart = pos;
    const [key, afterKey] = readVarint(buf, pos);
    const number = Math.floor(key / 8);
    const wire = key % 8;
    pos = afterKey;
    let dataStart = pos;
    if (wire === 0) pos = readVarint(buf, pos)[1];
    else if (wire === 1) pos += 8;
    else if (wire === 5) pos += 4;
    else if (wire === 2) {
      const [len, after] = readVarint(buf, pos);
      dataStart = after;
      pos = after + len;
    } else throw new WireError(`unsupported wire type ${wire}`);
    if (pos > end) throw new WireError('field runs past its message');
    out.push({ number, wire, start: fieldStart, end: pos, dataStart });
  }
  return out;
}

/** Rewrites the model; on anything unexpected returns the input unchanged (the importer reports errors). */
export function slimOnnx(input: Uint8Array, limitBytes = 64 * 1024): SlimResult {
  const removed = new Map<string, TensorStats>();
  try {
    const parts = rewrite(input, 0, input.length, 'model', limitBytes, removed);
    if (removed.size === 0) return { bytes: input, removed };
    return { bytes: concat(parts), removed };
  } catch (err) {
    if (err instanceof WireError) return { bytes: input, removed: new Map() };
    throw err;
  }
}

type Part = Uint8Array | number[];

function rewrite(
  buf: Uint8Array,
  start: number,
  end: number,
  kind: Kind,
  limit: number,
  removed: Map<string, TensorStats>,
): Part[] {
  const list = fields(buf, start, end);
  if (kind === 'tensor') return rewriteTensor(buf, start, end, list, limit, removed);
  const children = CHILDREN[kind];
  const out: Part[] = [];
  let copyFrom = start;
  for (const f of list) {
    const child = f.wire === 2 ? children[f.number] : undefined;
    if (!child) continue;
    const inner = rewrite(buf, f.dataStart, f.end, child, limit, removed);
    if (
      inner.length === 1 &&
      inner[0] instanceof Uint8Array &&
      inner[0].byteOffset === buf.byteOffset + f.dataStart &&
      inner[0].length === f.end - f.dataStart
    )
      continue;
    out.push(buf.subarray(copyFrom, f.start));
    const header: number[] = [];
    writeVarint(header, f.number * 8 + 2);
    writeVarint(header, partsLength(inner));
    out.push(header, ...inner);
    copyFrom = f.end;
  }
  out.push(buf.subarray(copyFrom, end));
  return out;
}

function rewriteTensor(
  buf: Uint8Array,
  start: number,
  end: number,
  list: Field[],
  limit: number,
  removed: Map<string, TensorStats>,
): Part[] {
  const payload = list.filter((f) => PAYLOAD.has(f.number));
  const bytes = payload.reduce((n, f) => n + (f.end - f.dataStart), 0);
  if (bytes <= limit) return [buf.subarray(start, end)];
  const decoder = new TextDecoder();
  const name =
    list
      .filter((f) => f.number === 8 && f.wire === 2)
      .map((f) => decoder.decode(buf.subarray(f.dataStart, f.end)))
      .pop() ?? '';
  const dataType =
    list
      .filter((f) => f.number === 2 && f.wire === 0)
      .map((f) => readVarint(buf, f.dataStart)[0])
      .pop() ?? 0;
  const raw = payload.find((f) => f.number === 9 && f.wire === 2);
  removed.set(name, { bytes, ...(raw ? summarize(buf.subarray(raw.dataStart, raw.end), dataType) : {}) });
  const out: Part[] = [];
  let copyFrom = start;
  for (const f of payload) {
    out.push(buf.subarray(copyFrom, f.start));
    copyFrom = f.end;
  }
  out.push(buf.subarray(copyFrom, end));
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

function partsLength(parts: Part[]): number {
  return parts.reduce((n, p) => n + p.length, 0);
}

function concat(parts: Part[]): Uint8Array {
  const out = new Uint8Array(partsLength(parts));
  let pos = 0;
  for (const p of parts) {
    out.set(p, pos);
    pos += p.length;
  }
  return out;
}
