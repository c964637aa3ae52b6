// Small ONNX tensors (scales, zero-points, shapes) read into numbers for the properties panel.
import type { onnx } from '../../build/generated/onnx-pb.js';
import type { WeightStats } from '../../protocol/webview';
import type { TensorInfo, TensorValues } from './types';

const DTYPES: Record<number, string> = {
  1: 'float32',
  2: 'uint8',
  3: 'int8',
  4: 'uint16',
  5: 'int16',
  6: 'int32',
  7: 'int64',
  8: 'string',
  9: 'bool',
  10: 'float16',
  11: 'float64',
  12: 'uint32',
  13: 'uint64',
  16: 'bfloat16',
  17: 'float8e4m3fn',
  18: 'float8e4m3fnuz',
  19: 'float8e5m2',
  20: 'float8e5m2fnuz',
  21: 'uint4',
  22: 'int4',
  23: 'float4e2m1',
  24: 'float8e8m0',
  25: 'uint2',
  26: 'int2',
};

export const dtypeName = (t: number) => DTYPES[t] ?? `type ${t}`;

/** Typed arrays over little-endian raw_data, by dtype (the platforms a webview runs on are little-endian). */
const RAW: Record<
  string,
  { BYTES_PER_ELEMENT: number; new (b: ArrayBuffer, offset?: number, length?: number): TensorValues }
> = {
  float32: Float32Array,
  float64: Float64Array,
  uint8: Uint8Array,
  int8: Int8Array,
  int16: Int16Array,
  uint16: Uint16Array,
  int32: Int32Array,
};

/**
 * Where the copies of small tensors' raw data go: packed into shared 1 MB buffers, so a model with 50k small
 * weights makes 50 buffers rather than 50k (each its own allocation, tracked by the garbage collector).
 */
export class ValueArena {
  private static readonly CHUNK = 2 ** 20;
  private buffer = new ArrayBuffer(0);
  private used = 0;

  /** A copy of raw[0, bytes) aligned to `align`: its buffer and offset. */
  copy(raw: Uint8Array, bytes: number, align: number): [ArrayBuffer, number] {
    if (bytes * 4 > ValueArena.CHUNK) return [Uint8Array.prototype.slice.call(raw, 0, bytes).buffer as ArrayBuffer, 0];
    let at = Math.ceil(this.used / align) * align;
    if (at + bytes > this.buffer.byteLength) {
      this.buffer = new ArrayBuffer(ValueArena.CHUNK);
      at = 0;
    }
    new Uint8Array(this.buffer, at, bytes).set(raw.subarray(0, bytes));
    this.used = at + bytes;
    return [this.buffer, at];
  }
}

/** The number of elements `dims` make, or what is wrong with them (a negative size, a count past 2^53). */
export function elementCount(dims: readonly number[]): number | string {
  const overflow = () => `its dims [${dims.join(', ')}] make more elements than can be counted`;
  let count = 1;
  for (const d of dims) {
    if (d < 0) return `its dims [${dims.join(', ')}] hold ${d}, not a size`;
    if (!Number.isSafeInteger(d)) return overflow();
    count *= d;
  }
  return Number.isSafeInteger(count) ? count : overflow();
}

/**
 * Values of tensors up to `limit` elements; larger tensors (weights) keep only their shape and dtype. Raw data
 * becomes one typed array over a copy of just its bytes (cheap to make and to post to the page), in `arena`
 * when one is given. A tensor whose dims or data cannot be right gets a `problem` and no values, and the rest of
 * the model opens as usual.
 */
export function readTensor(t: onnx.ITensorProto, limit = 1024, arena?: ValueArena): TensorInfo {
  const dims = (t.dims ?? []).map(Number);
  const info: TensorInfo = { dtype: dtypeName(t.data_type ?? 0), dims };
  const count = elementCount(dims);
  if (typeof count === 'string') return { ...info, problem: count };
  // Bytes per element of the types whose values are read; one entry of a typed field per element for them too.
  const size = info.dtype === 'int64' ? 8 : RAW[info.dtype]?.BYTES_PER_ELEMENT;
  const raw = t.raw_data && t.raw_data.length ? t.raw_data : undefined;
  if (raw && size && raw.byteLength !== size * count) {
    const need = `dims [${dims.join(', ')}] of ${info.dtype} take ${size * count}`;
    return { ...info, problem: `its raw_data holds ${raw.byteLength} bytes; ${need}` };
  }
  if (count > limit) return info;
  if (raw) {
    if (size) {
      // Uint8Array's slice, not Buffer's (a view): the copy starts at offset 0, aligned for any element size.
      const [buffer, offset] = arena
        ? arena.copy(raw, size * count, size)
        : [Uint8Array.prototype.slice.call(raw, 0, size * count).buffer as ArrayBuffer, 0];
      info.values =
        info.dtype === 'int64'
          ? Float64Array.from(new BigInt64Array(buffer, offset, count), Number)
          : new RAW[info.dtype](buffer, offset, count);
    }
    return info;
  }
  const typed = t.float_data?.length
    ? t.float_data
    : t.int32_data?.length
      ? t.int32_data
      : t.int64_data?.length
        ? t.int64_data
        : t.double_data;
  if (!typed?.length) return info;
  if (size && typed.length !== count) return { ...info, problem: countProblem(typed.length, dims, count) };
  info.values = typed.map(Number);
  return info;
}

const countProblem = (values: number, dims: readonly number[], count: number) =>
  `it holds ${values} values; its dims [${dims.join(', ')}] make ${count}`;

/** Gives a tensor the host's summary of the values it kept; a count its dims do not make marks the tensor. */
export function attachStats(t: TensorInfo, stats: WeightStats): void {
  t.stats = stats;
  if (t.problem || stats.count === undefined) return;
  const count = elementCount(t.dims);
  if (typeof count === 'number' && count !== stats.count) t.problem = countProblem(stats.count, t.dims, count);
}
