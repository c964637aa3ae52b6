"""The INT8 network of a PT2E-converted graph as a list of layers a plain C program can run.

convert_pt2e leaves the reference representation: quantize_per_tensor on the input, then per layer
dequantize -> aten op in fp32 (conv2d/linear with dequantized per-channel int8 weights and a float
bias, [relu]) -> quantize_per_tensor; max_pool2d and flatten sit between a dequantize and a quantize of
their own. Each such stretch becomes one Layer; the last conv/linear usually has no quantize after it
(float logits). Anything else (residual adds, a layer kept float, other ops) is refused with the op
and module named, because the C runner implements only these kinds."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from qat_kernel.analysis.fused_groups import attr, module_path, op_name
from qat_kernel.runtimes.tvm.errors import TvmBuildError


class UnsupportedForC(TvmBuildError):
    """The converted graph has something the portable C runner does not implement."""


@dataclass
class QParams:
    scale: float
    zero_point: int
    qmin: int
    qmax: int
    dtype: str  # torch dtype name of the stored values: uint8 | int8


@dataclass
class Layer:
    name: str  # module path (conv1, fc2, ...) or the op's node name
    kind: str  # conv2d | linear | maxpool2d | flatten
    input: QParams
    output: QParams | None  # None: float output (the network's logits)
    in_shape: tuple = ()  # (C, H, W) or (F,)
    out_shape: tuple = ()
    relu: bool = False
    weight: np.ndarray | None = None  # int8, [O, I/groups, kh, kw] or [O, I]
    weight_scale: np.ndarray | None = None  # float32 [O]
    weight_zero_point: np.ndarray | None = None  # int32 [O]
    bias: np.ndarray | None = None  # float32 [O] (zeros when the layer has none)
    attrs: dict = field(default_factory=dict)  # stride, padding, dilation, groups, kernel
    node: str = ""  # FX node whose value is this layer's output (quantize or anchor)

    def bias_int32(self) -> np.ndarray:
        """bias / (input scale x weight scale), rounded: what integer-only kernels (ORT, TVM, CMSIS-NN)
        add to the accumulator. The runner's default path adds the float bias instead, as PyTorch does."""
        acc_scale = np.float64(self.input.scale) * self.weight_scale.astype(np.float64)
        return np.clip(np.rint(self.bias.astype(np.float64) / acc_scale), -(2**31), 2**31 - 1).astype(np.int32)


def _pair(v, n=2) -> tuple:
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    return tuple(int(x) for x in (v * n if len(v) == 1 else v))


def _qparams(node) -> QParams:
    _, scale, zp, qmin, qmax, dtype = node.args[:6]
    return QParams(float(scale), int(zp), int(qmin), int(qmax), str(dtype).replace("torch.", ""))


def _shape(node) -> tuple:
    meta = node.meta.get("tensor_meta")
    if meta is None:
        raise UnsupportedForC(f"no shape recorded for {node.name}")
    return tuple(int(d) for d in meta.shape[1:])


def extract(gm, example) -> tuple[QParams, list[Layer]]:
    """(input quantization, layers in execution order). `example`: one input batch, for shapes."""
    import torch
    from torch.fx.passes.shape_prop import ShapeProp

    with torch.no_grad():
        ShapeProp(gm).propagate(example)
    nodes = [n for n in gm.graph.nodes]
    quantized: dict = {}  # dequantize node -> QParams of the tensor it reads
    weights: dict = {}  # dequantize_per_channel node -> (int8, scale, zp)
    pending: Layer | None = None
    pending_node = None
    layers: list[Layer] = []
    input_q: QParams | None = None

    def where(n) -> str:
        return f"{op_name(n) or n.op} {n.name}" + (f" (module {module_path(n)})" if module_path(n) else "")

    for n in nodes:
        name = op_name(n)
        if n.op in ("placeholder", "get_attr") or (n.op == "call_module" and "guards" in str(n.target)):
            continue
        if n.op == "output":
            out = n.args[0]
            out = out[0] if isinstance(out, (tuple, list)) else out
            if pending is not None and out is pending_node:
                pending.out_shape = _shape(out)
                layers.append(pending)
                pending = None
            elif not (
                layers and op_name(out).startswith("dequantize_per_tensor") and out.args[0].name == layers[-1].node
            ):
                raise UnsupportedForC(
                    f"the graph output comes from {where(out)}: the C runner ends with a "
                    "conv/linear layer or a quantized tensor"
                )
            continue
        if name.startswith("quantize_per_tensor"):
            q = _qparams(n)
            src = n.args[0]
            if src.op == "placeholder":
                input_q = q
            elif pending is not None and src is pending_node:
                pending.output = q
                pending.out_shape = _shape(src)
                pending.node = n.name
                layers.append(pending)
                pending = None
            else:
                raise UnsupportedForC(f"{where(n)} quantizes {where(src)}, which the C runner cannot compute")
            continue
        if name.startswith("dequantize_per_tensor"):
            src = n.args[0]
            if not op_name(src).startswith("quantize_per_tensor"):
                raise UnsupportedForC(f"{where(n)} reads {where(src)}: not a quantized activation")
            quantized[n] = _qparams(src)
            continue
        if name.startswith("dequantize_per_channel"):
            q, s, zp, axis = n.args[:4]
            if int(axis) != 0:
                raise UnsupportedForC(f"{where(n)}: per-channel weights on axis {axis} (the runner takes axis 0)")
            weights[n] = (
                attr(gm, q.target).detach().cpu().numpy().astype(np.int8),
                attr(gm, s.target).detach().cpu().numpy().astype(np.float32),
                attr(gm, zp.target).detach().cpu().numpy().astype(np.int32),
            )
            continue
        if (
            pending is not None
            and name in ("relu", "relu_")
            and n.args[0] is pending_node
            and pending.kind in ("conv2d", "linear")
        ):
            pending.relu = True
            pending_node = n
            continue
        if pending is not None:
            raise UnsupportedForC(f"{where(n)} follows {where(pending_node)} before its output is quantized")
        if name in ("conv2d", "linear"):
            x, w = n.args[0], n.args[1]
            bias = n.args[2] if len(n.args) > 2 else n.kwargs.get("bias")
            if x not in quantized:
                raise UnsupportedForC(f"{where(n)} reads float activations (a layer kept float?)")
            if w not in weights:
                raise UnsupportedForC(f"{where(n)} has a float weight (a layer kept float?)")
            wq, ws, wz = weights[w]
            b = (
                attr(gm, bias.target).detach().cpu().numpy().astype(np.float32)
                if bias is not None
                else np.zeros(wq.shape[0], np.float32)
            )
            layer = Layer(
                name=module_path(n) or n.name,
                kind=name,
                input=quantized[x],
                output=None,
                in_shape=_shape(x),
                weight=wq,
                weight_scale=ws,
                weight_zero_point=wz,
                bias=b,
                node=n.name,
            )
            if name == "conv2d":
                args = list(n.args) + [None] * 7
                layer.attrs = {
                    "stride": _pair(args[3] or 1),
                    "padding": _pair(args[4] or 0),
                    "dilation": _pair(args[5] or 1),
                    "groups": int(args[6] or 1),
                    "kernel": tuple(int(d) for d in wq.shape[2:]),
                }
            pending, pending_node = layer, n
            continue
        if name in ("max_pool2d", "flatten"):
            x = n.args[0]
            if x not in quantized:
                raise UnsupportedForC(f"{where(n)} reads float activations")
            layer = Layer(
                name=module_path(n) or n.name,
                kind="maxpool2d" if name == "max_pool2d" else "flatten",
                input=quantized[x],
                output=None,
                in_shape=_shape(x),
                node=n.name,
            )
            if name == "max_pool2d":
                args = list(n.args) + [None] * 6
                kernel = _pair(args[1])
                if args[5]:
                    raise UnsupportedForC(f"{where(n)}: ceil_mode is not implemented in the runner")
                layer.attrs = {
                    "kernel": kernel,
                    "stride": _pair(args[2] or kernel),
                    "padding": _pair(args[3] or 0),
                    "dilation": _pair(args[4] or 1),
                }
            elif int(n.args[1] if len(n.args) > 1 else 0) != 1:
                raise UnsupportedForC(f"{where(n)}: only flatten(x, 1) is implemented")
            pending, pending_node = layer, n
            continue
        raise UnsupportedForC(
            f"{where(n)} is not implemented by the portable C runner (it runs conv2d, "
            "linear, relu, max_pool2d and flatten)"
        )
    if input_q is None:
        raise UnsupportedForC("the graph input is not quantized")
    if not layers:
        raise UnsupportedForC("no quantized layer found")
    return input_q, layers
