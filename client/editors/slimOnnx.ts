// Large weights stay in the extension host: the .onnx bytes are rewritten at the protobuf wire level with
// the payload of every tensor above a size limit removed (its name, dims and data type kept), and each
// removed tensor summarized (min, max, mean, std, a histogram) for the properties panel. The graph view
// never needs the values of a big tensor, so a 500 MB model reaches the webview as a few hundred KB.
// A wire walk, not a decode: the host never materializes the model's messages. It reads the wire with the
// webview's reader (common/wireReader.ts).
import type { WeightStats } from '../../protocol/webview';
import { OnnxWireError, WireReader } from '../../common/wireReader';

export interface SlimResult {
  bytes: Uint8Array;
  /** Removed tensors by name, with the payload bytes removed (`bytes`). */
  removed: Map<string, WeightStats>;
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

/** Appends a varint (a key or a length). */
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

/** Reads one field's key and extent at r.pos and moves past it; returns [number, wire, dataStart] (dataStart:
 * after the length of a length-delimited field). */
function readField(r: WireReader, end: number): [number, number, number] {
  const key = r.key(end);
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
 * Rewrites the model; on anything unexpected returns the input unchanged (the importer reports errors).
 * One pass with an explicit stack (no recursion on the file's nesting depth) that records only the cuts: memory
 * is bounded by the number of removed tensors, not by the number of fields.
 */
export function slimOnnx(input: Uint8Array, limitBytes = 64 * 1024): SlimResult {
  const removed = new Map<string, WeightStats>();
  try {
    const edits = walk(new WireReader(input), limitBytes, removed);
    if (removed.size === 0) return { bytes: input, removed };
    return { bytes: applyEdits(input, edits), removed };
  } catch (err) {
    if (err instanceof OnnxWireError) return { bytes: input, removed: new Map() };
    throw err;
  }
}

function walk(r: WireReader, limit: number, removed: Map<string, WeightStats>): Edit[] {
  const edits: Edit[] = [];
  const stack: Frame[] = [
    { kind: 'model', end: r.buf.length, pos: 0, fieldStart: -1, dataStart: 0, fieldNumber: 0, removed: 0 },
  ];
  while (stack.length) {
    const top = stack[stack.length - 1];
    if (top.kind === 'tensor') {
      top.removed = slimTensor(r, top.dataStart, top.end, limit, removed, edits);
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
    if (stack.length >= MAX_NESTING) r.fail('a message nested too deeply');
    stack.push({ kind: child, end: next, pos: dataStart, fieldStart, dataStart, fieldNumber: number, removed: 0 });
  }
  return edits;
}

/** Cuts a tensor's payload fields when together they exceed the limit; returns the bytes cut. */
function slimTensor(
  r: WireReader,
  start: number,
  end: number,
  limit: number,
  removed: Map<string, WeightStats>,
  edits: Edit[],
): number {
  // Payload fields are usually one (raw_data) or a few; adjacent ones merge into one cut.
  const cuts: Array<[number, number]> = [];
  let bytes = 0;
  let name = '';
  let dataType = 0;
  let raw: [number, number] | undefined;
  const buf = r.buf;
  for (let pos = start; pos < end;) {
    const fieldStart = pos;
    r.pos = pos;
    const [number, wire, dataStart] = readField(r, end);
    const next = r.pos;
    pos = next;
    if (PAYLOAD.has(number)) {
      bytes += next - dataStart;
      const last = cuts[cuts.length - 1];
      if (last && last[1] === fieldStart) last[1] = next;
      else cuts.push([fieldStart, next]);
      if (number === 9 && wire === 2) raw = [dataStart, next];
    } else if (number === 8 && wire === 2) name = new TextDecoder().decode(buf.subarray(dataStart, next));
    else if (number === 2 && wire === 0) {
      r.pos = dataStart;
      dataType = r.int32(next);
    }
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
