// Facts about torch / torchao quantization that the YAML and Python rules, hover and completion share.
// Sources: torch/ao/quantization/{observer,qconfig}.py, torchao/quantization/pt2e/__init__.py (v0.18).

/** Integer range of each quantized dtype (float16 has none). */
export const DTYPE_RANGES: Record<string, [number, number]> = {
  quint8: [0, 255],
  qint8: [-128, 127],
  qint32: [-2147483648, 2147483647],
  quint4x2: [0, 15],
};

export const UNSIGNED_DTYPES = new Set(['quint8', 'quint4x2']);

/** The dtype the kernel assumes when an observer spec names none (python-helpers/qat_kernel/config.py). */
export const DEFAULT_DTYPE: Record<string, string> = { activation: 'quint8', weight: 'qint8' };

export const FP16_MAX = 65504;

/** Observers whose constructor raises NotImplementedError for a per-channel qscheme, and the reverse. */
export const PER_TENSOR_OBSERVERS = new Set(['MinMaxObserver', 'MovingAverageMinMaxObserver', 'HistogramObserver']);
export const PER_CHANNEL_OBSERVERS = new Set(['PerChannelMinMaxObserver', 'MovingAveragePerChannelMinMaxObserver']);

/** The per-channel twin of a per-tensor observer and back, for quick fixes. */
export const OBSERVER_TWIN: Record<string, string> = {
  MinMaxObserver: 'PerChannelMinMaxObserver',
  MovingAverageMinMaxObserver: 'MovingAveragePerChannelMinMaxObserver',
  HistogramObserver: 'PerChannelMinMaxObserver',
  PerChannelMinMaxObserver: 'MinMaxObserver',
  MovingAveragePerChannelMinMaxObserver: 'MovingAverageMinMaxObserver',
};

export const QSCHEME_TWIN: Record<string, string> = {
  per_tensor_affine: 'per_channel_affine',
  per_tensor_symmetric: 'per_channel_symmetric',
  per_channel_affine: 'per_tensor_affine',
  per_channel_symmetric: 'per_tensor_symmetric',
};

export const isPerChannel = (qscheme: string) => qscheme.startsWith('per_channel');
export const isSymmetric = (qscheme: string) => qscheme.endsWith('_symmetric');

/** Observers that take no integer range: the float16 path (torch's float16_static_qconfig uses PlaceholderObserver). */
export const FLOAT_OBSERVERS = new Set(['PlaceholderObserver', 'NoopObserver']);

/** Observers that give no scale/zero-point for QAT fake quantization (the kernel rejects them in both flows). */
export const NOT_FOR_QAT = new Set(['PlaceholderObserver', 'NoopObserver', 'FixedQParamsObserver']);

/** Observer / fake-quant classes each flow exports (torch.ao.quantization vs torchao.quantization.pt2e). */
const COMMON = [
  'MinMaxObserver',
  'MovingAverageMinMaxObserver',
  'PerChannelMinMaxObserver',
  'MovingAveragePerChannelMinMaxObserver',
  'HistogramObserver',
  'PlaceholderObserver',
  'NoopObserver',
  'FixedQParamsObserver',
  'RecordingObserver',
  'ReuseInputObserver',
  'FakeQuantize',
  'FusedMovingAvgObsFakeQuantize',
  'FixedQParamsFakeQuantize',
];
export const FLOW_OBSERVERS: Record<string, Set<string>> = {
  eager: new Set(COMMON),
  // torchao's affine observers exist only there (torchao/quantization/pt2e/_affine_quantization.py).
  pt2e: new Set([
    ...COMMON,
    'AffineQuantizedMinMaxObserver',
    'AffineQuantizedMovingAverageMinMaxObserver',
    'AffineQuantizedPlaceholderObserver',
  ]),
};
export const FLOW_MODULE: Record<string, string> = {
  eager: 'torch.ao.quantization',
  pt2e: 'torchao.quantization.pt2e',
};

/** float32 eps, torch's default observer eps. */
export const FLOAT32_EPS = 1.1920928955078125e-7;

/**
 * The integer range an observer ends up with, as torch's calculate_qmin_qmax computes it:
 * a custom range (both bounds given) is halved by reduce_range, else the dtype's 8-bit default is.
 */
export function effectiveRange(
  dtype: string,
  qmin?: number,
  qmax?: number,
  reduceRange = false,
): [number, number] | undefined {
  const full = DTYPE_RANGES[dtype];
  if (!full) return undefined;
  if (qmin !== undefined && qmax !== undefined)
    return reduceRange ? [Math.floor(qmin / 2), Math.floor(qmax / 2)] : [qmin, qmax];
  if (!reduceRange) return full;
  if (dtype === 'qint8') return [-64, 63];
  if (dtype === 'quint8') return [0, 127];
  return full;
}
