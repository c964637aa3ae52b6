"""A QDQ ONNX model's layers as ONNX Runtime runs them (the layers themselves: runtimes/onnx/layers.py): each
quantized layer's output captured on the way through the whole model, and the layer run alone on another input.

Taps are the output QuantizeLinear's integer tensor, dequantized here with that node's own scale and zero
point: made a graph output, it keeps ORT's fusions (QLinearConv, QGemm) and the model's output bit for bit,
where tapping the float tensors after DequantizeLinear would split them (measured on the digits CNN, ORT 1.32).
A layer without output quantization (a last Gemm giving logits) is tapped at its float output.

`LocalRun` runs one layer alone: the sub-model from the tensor its input quantization reads (`entry`) to its
output, fed another stage's value there; ORT fuses it as it does in the whole model."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from qat_kernel.runtimes.onnx.layers import OnnxLayer, dequantize, extract, with_outputs
from qat_kernel.runtimes.ort import sessions

if TYPE_CHECKING:
    import numpy as np
    import onnx
    import torch

    from qat_kernel.pipeline.model_io import Inputs


class Taps:
    """The whole model in one ORT session with `wanted` layers' outputs added to its graph outputs."""

    def __init__(self, model: onnx.ModelProto, wanted: list[OnnxLayer]):
        self.wanted = wanted
        self.session = sessions.session(with_outputs(model, [layer.output for layer in wanted]))
        self.order = [o.name for o in self.session.get_outputs()]

    def run(self, x: Inputs | np.ndarray) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """(the model's first output, {layer output tensor: value}) on one batch, as float torch tensors."""
        import torch

        # tensors: the models run here output no sequences or maps (sessions.run_fn)
        outputs = cast("list[np.ndarray]", self.session.run(None, sessions.feed(self.session, x)))
        values = dict(zip(self.order, outputs))
        taps = {layer.output: dequantize(layer, values[layer.output]) for layer in self.wanted}
        return torch.from_numpy(values[self.order[0]]).float(), taps


class LocalRun:
    """One layer run alone in ORT (its sub-model from `entry` to `output`), sessions made once per layer."""

    def __init__(self, model: onnx.ModelProto):
        self.model = model
        self._sessions: dict[str, Any] = {}

    def __call__(self, layer: OnnxLayer, value: torch.Tensor) -> torch.Tensor:
        """The layer's output (float torch) when its entry tensor takes `value` (a float torch tensor)."""
        import numpy as np
        import torch

        sess = self._sessions.get(layer.output)
        if sess is None:
            sess = sessions.session(extract(self.model, layer.entry, layer.output))
            self._sessions[layer.output] = sess
        name = sess.get_inputs()[0].name
        out = np.asarray(sess.run(None, {name: np.ascontiguousarray(value.detach().float().numpy())})[0])
        return dequantize(layer, out) if out.dtype != np.float32 else torch.from_numpy(out)
