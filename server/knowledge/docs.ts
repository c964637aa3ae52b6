// One-line explanations of the enum values that completion and hover show.
export const VALUE_DOCS: Record<string, string> = {
  MinMaxObserver: 'Running min/max of every batch seen. Per-tensor only.',
  MovingAverageMinMaxObserver:
    'Exponential moving average of min/max (averaging_constant, default 0.01). Per-tensor only; the usual QAT activation observer.',
  PerChannelMinMaxObserver: 'Running min/max per channel along ch_axis. Per-channel only; the usual weight observer.',
  MovingAveragePerChannelMinMaxObserver: 'Moving average of min/max per channel. Per-channel only.',
  HistogramObserver:
    'Histogram of values; min/max chosen to minimise the L2 quantization error. Per-tensor only, slow.',
  PlaceholderObserver:
    "Observes nothing; marks the dtype (e.g. float16) for a cast. torch's float16_static_qconfig uses it.",
  NoopObserver: 'Does nothing; default dtype float16.',
  FixedQParamsObserver: 'Fixed scale/zero_point (e.g. for sigmoid/tanh outputs).',
  FakeQuantize: 'Observer + fake quantization in the forward pass (straight-through gradient).',
  FusedMovingAvgObsFakeQuantize:
    'Moving-average observer and fake-quant fused in one kernel: the fastest QAT fake-quant.',
  quint8: 'Unsigned 8-bit: 0..255 (0..127 with reduce_range).',
  qint8: 'Signed 8-bit: -128..127 (-64..63 with reduce_range).',
  qint32: 'Signed 32-bit: -2147483648..2147483647 (biases).',
  quint4x2: 'Two unsigned 4-bit values per byte: 0..15 (embedding weights).',
  float16: 'Not an integer quantization: only valid with PlaceholderObserver/NoopObserver (a cast to fp16).',
  per_tensor_affine: 'One scale/zero_point per tensor; zero_point chosen so min..max maps onto quant_min..quant_max.',
  per_tensor_symmetric:
    'One scale per tensor, range centred on 0 (zero_point 0 for signed dtypes, the midpoint for unsigned).',
  per_channel_affine: 'One scale/zero_point per channel along ch_axis.',
  per_channel_symmetric: 'One scale per channel along ch_axis, centred on 0: the usual weight scheme.',
  x86: 'Intel/AMD CPUs (fbgemm + oneDNN); the PT2E default with X86InductorQuantizer.',
  fbgemm: 'Legacy x86 server backend; its eager defaults use reduce_range for activations.',
  qnnpack: 'ARM/mobile int8 kernels (legacy); int8 only.',
  xnnpack: 'ARM/mobile kernels (ExecuTorch, XNNPACKQuantizer); int8 and fp16.',
  onednn: 'oneDNN int8 kernels for x86 CPUs with VNNI/AMX.',
  int8: 'Quantize matching modules to int8 (the default).',
  fp16: 'Leave matching modules unquantized and run them in float16.',
  bf16: 'Leave matching modules unquantized and run them in bfloat16.',
  fp32: 'Leave matching modules unquantized in float32.',
  pt2e: 'torchao PT2E: torch.export → prepare_qat_pt2e → train → convert_pt2e. The default.',
  eager:
    'Legacy torch.ao eager mode: QuantStub/DeQuantStub, fuse_modules_qat, prepare_qat, convert (deprecated in torch).',
  torchao:
    "torchao's quantize_ QAT API: QATConfig(base_config, step='prepare') swaps nn.Linear/nn.Embedding for fake-quantized ones → train → step='convert'. Low-bit grouped weights for language models; options under `torchao`.",
  '8da4w':
    'Int8DynamicActivationIntxWeightConfig(weight_dtype=torch.int4): int8 activations quantized per token at run time, int4 weights with one scale per group (torchao.group_size, default 32).',
  '8da8w':
    'Int8DynamicActivationIntxWeightConfig(weight_dtype=torch.int8): int8 per-token activations, int8 weights (per channel by default).',
  'int4-weight-only':
    'IntxWeightOnlyConfig(weight_dtype=torch.int4): int4 grouped weights, activations stay float. (torchao 0.18 converts Int4WeightOnlyConfig only with CUDA kernels.)',
  'int8-weight-only':
    'IntxWeightOnlyConfig(weight_dtype=torch.int8): int8 weights (per channel by default), activations stay float.',
  per_channel: 'One scale per output row of the weight (the whole row is one group).',
  none: 'Not quantized: the modules stay float.',
};
