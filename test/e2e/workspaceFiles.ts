// Files the e2e tests add to their copy of the example workspace.
export const BAD_RANGE_YAML = `# A config with a quint8 activation range that cannot be represented.
version: 1
model: {entry: "model.py:make_model", example_input: [2, 1, 8, 8]}
data: {entry: "data.py:loaders"}
qconfig:
  activation: {observer: MovingAverageMinMaxObserver, dtype: quint8, qscheme: per_tensor_affine, quant_min: 0, quant_max: 300}
  weight: {observer: PerChannelMinMaxObserver, dtype: qint8, qscheme: per_channel_symmetric, ch_axis: 0}
`;

/** A config whose model entry raises, for the task's problem matcher. */
export const BROKEN_MODEL_PY = `def make_model():
    raise ValueError("planted failure in make_model")
`;

export const BROKEN_YAML = `version: 1
model: {entry: "broken_model.py:make_model", example_input: [2, 1, 8, 8]}
data: {entry: "data.py:loaders"}
qconfig:
  activation: {observer: MovingAverageMinMaxObserver, dtype: quint8}
`;

/** A valid config the quick-fix test edits by typing (quant_max on line 6). */
export const TYPING_YAML = `# Edited by typing in the e2e test.
version: 1
model: {entry: "model.py:make_model", example_input: [2, 1, 8, 8]}
data: {entry: "data.py:loaders"}
qconfig:
  activation: {observer: MovingAverageMinMaxObserver, dtype: quint8, quant_min: 0, quant_max: 255}
  weight: {observer: PerChannelMinMaxObserver, dtype: qint8, qscheme: per_channel_symmetric, ch_axis: 0}
`;

/** The example trained by two processes under torchrun (DistributedDataParallel on gloo). */
export const DDP_YAML = `version: 1
model: {entry: "model.py:make_model", example_input: [2, 1, 8, 8]}
data: {entry: "data.py:loaders"}
qconfig:
  activation: {observer: MovingAverageMinMaxObserver, dtype: quint8, qscheme: per_tensor_affine, quant_min: 0, quant_max: 255}
  weight: {observer: PerChannelMinMaxObserver, dtype: qint8, qscheme: per_channel_symmetric, ch_axis: 0}
train: {fp32_epochs: 2, epochs: 1, distributed: {nproc_per_node: 2, backend: gloo}}
`;
