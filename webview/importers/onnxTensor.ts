// Small ONNX tensors (scales, zero-points, shapes) read into numbers for the properties panel.
import type { onnx } from '../../build/generated/onnx-pb.js';
import type { TensorInfo } from './types';

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

/** Values of tensors up to `limit` elements; larger tensors (weights) keep only their shape and dtype. */
export function readTensor(t: onnx.ITensorProto, limit = 1024): TensorInfo {
  const dims = (t.dims ?? []).map(Number);
  const count = dims.reduce((a, b) => a * b, 1);
  const info: TensorInfo = { dtype: dtypeName(t.data_type ?? 0), dims };
  if (count > limit) return info;
  const raw = t.raw_data && t.raw_data.length ? t.raw_data : undefined;
  if (raw) {
    const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
    const read: Record<string, [number, (o: number) => number]> = {
      float32: [4, (o) => view.getFloat32(o, true)],
      float64: [8, (o) => view.getFloat64(o, true)],
      uint8: [1, (o) => view.getUint8(o)],
      int8: [1, (o) => view.getInt8(o)],
      int16: [2, (o) => view.getInt16(o, true)],
      uint16: [2, (o) => view.getUint16(o, true)],
      int32: [4, (o) => view.getInt32(o, true)],
      int64: [8, (o) => Number(view.getBigInt64(o, true))],
    };
    const reader = read[info.dtype];
    if (reader && reader[0] * count <= raw.byteLength)
      info.values = Array.from({ length: count }, (_, i) => reader[1](i * reader[0]));
    return info;
  }
  const typed = t.float_data?.length
    ? t.float_data
    : t.int32_data?.length
      ? t.int32_data
      : t.int64_data?.length
        ? t.int64_data
        : t.double_data;
  if (typed?.length) info.values = typed.map(Number);
  return info;
}

/**
 * A value's type as graph.input, graph.output or value_info declare it: element type and dims, each a dim_value,
 * or -1 with the dim_param's name (`batch`), or -1 unnamed when the file gives neither. Undefined for values that
 * are not tensors (sequences, maps, optionals) or that declare no type.
 */
export function readValueInfo(v: onnx.IValueInfoProto): TensorInfo | undefined {
  const tt = v.type?.tensor_type;
  if (!tt) return undefined;
  const dtype = tt.elem_type ? dtypeName(tt.elem_type) : '?';
  if (!tt.shape) return { dtype, dims: [], unranked: true };
  const dims: number[] = [];
  const names: string[] = [];
  for (const d of tt.shape.dim ?? []) {
    // protobufjs sets the oneof's name on decoded messages; plain objects (create()) may only carry the field.
    const which = d.value ?? (d.dim_param ? 'dim_param' : d.dim_value != null ? 'dim_value' : undefined);
    if (which === 'dim_value' && d.dim_value != null && Number(d.dim_value) >= 0) {
      dims.push(Number(d.dim_value));
      names.push('');
    } else {
      dims.push(-1);
      names.push(which === 'dim_param' ? (d.dim_param ?? '') : '');
    }
  }
  return { dtype, dims, ...(names.some(Boolean) ? { dimNames: names } : {}) };
}

/** Attribute value as display text. */
export function attributeText(a: onnx.IAttributeProto): string {
  if (a.ints?.length) return `[${a.ints.map(Number).join(', ')}]`;
  if (a.floats?.length) return `[${a.floats.join(', ')}]`;
  if (a.strings?.length) return `[${a.strings.map((s) => new TextDecoder().decode(s)).join(', ')}]`;
  if (a.s?.length) return new TextDecoder().decode(a.s);
  if (a.t) {
    const t = readTensor(a.t, 16);
    return `${t.dtype}[${t.dims.join('×')}]${t.values ? ` ${JSON.stringify(t.values)}` : ''}`;
  }
  if (a.g) return `graph ${a.g.name ?? ''} (${a.g.node?.length ?? 0} nodes)`;
  switch (a.type) {
    case 1:
      return String(a.f);
    case 2:
      return String(Number(a.i));
    default:
      return a.f ? String(a.f) : String(Number(a.i ?? 0));
  }
}
