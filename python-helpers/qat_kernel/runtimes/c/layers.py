"""The INT8 network of a PT2E-converted graph as a list of layers a plain C program can run.

convert_pt2e leaves the reference representation: quantize_per_tensor on the input, then per layer
dequantize -> aten op(s) in fp32 -> quantize_per_tensor. Each quantize node closes one Layer, found by
walking back from it:

  conv2d/linear (per-channel int8 weights, float bias) [+ add of a dequantized tensor] [relu|hardtanh]
  add of two dequantized tensors [relu|hardtanh]
  max_pool2d, avg_pool2d, adaptive_avg_pool2d to 1x1, mean over H and W, flatten, cat

X86InductorQuantizer fuses a residual add into the conv before it (conv -> add -> relu -> quantize: the
conv's output is never quantized), so the conv kind carries an optional second input. The last
conv/linear usually has no quantize after it (float logits). Layers are in graph order, a topological
order; each reads named tensors (the input or an earlier layer's output), so branches and residuals are
a DAG, not a chain. Anything else (a layer kept float, other ops) is refused with the op and module
named, because the C runner implements only these kinds."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from qat_kernel.pipeline.fused_groups import attr, module_path, op_name
from qat_kernel.rpc.errors import TvmBuildError

INPUT = "input"  # the name of the network input tensor
ACTIVATIONS = ("relu", "relu_", "hardtanh", "hardtanh_", "relu6")
POOLS = ("max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "mean", "flatten", "cat", "concat")


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
    kind: str  # conv2d | linear | add | maxpool2d | avgpool2d | globalavgpool | flatten | concat
    input: QParams  # the first input's quantization
    output: QParams | None  # None: float output (the network's logits)
    in_shape: tuple = ()  # (C, H, W) or (F,) of the first input
    out_shape: tuple = ()
    relu: bool = False  # activation clamp [act_min, act_max] after the op (relu: [0, inf])
    act: tuple | None = None  # (min, max) of a relu/hardtanh/relu6, floats; None: no activation
    weight: np.ndarray | None = None  # int8, [O, I/groups, kh, kw] or [O, I]
    weight_scale: np.ndarray | None = None  # float32 [O]
    weight_zero_point: np.ndarray | None = None  # int32 [O]
    bias: np.ndarray | None = None  # float32 [O] (zeros when the layer has none)
    attrs: dict = field(default_factory=dict)  # stride, padding, dilation, groups, kernel, ...
    node: str = ""  # FX node whose value is this layer's output (its quantize node, or the anchor)
    inputs: list = field(default_factory=list)  # [(tensor name, QParams, shape)]: conv's second is the residual
    output_name: str = ""  # the tensor this layer writes ("" for the float output)

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


def _where(n) -> str:
    return f"{op_name(n) or n.op} {n.name}" + (f" (module {module_path(n)})" if module_path(n) else "")


class _Walker:
    def __init__(self, gm):
        self.gm = gm
        self.covered: set = set()

    def tensor(self, dq) -> tuple:
        """(name, QParams, shape) of the quantized tensor a dequantize_per_tensor node reads."""
        if not op_name(dq).startswith("dequantize_per_tensor"):
            return None
        q = dq.args[0]
        if not op_name(q).startswith("quantize_per_tensor"):
            raise UnsupportedForC(f"{_where(dq)} reads {_where(q)}: not a quantized activation")
        name = INPUT if q.args[0].op == "placeholder" else q.name
        return name, _qparams(q), _shape(q)

    def need(self, n, consumer) -> tuple:
        t = self.tensor(n) if hasattr(n, "op") else None
        if t is None:
            what = _where(n) if hasattr(n, "op") else n
            raise UnsupportedForC(f"{_where(consumer)} reads {what}: float activations (a layer kept float?)")
        return t

    def weight(self, n, consumer):
        if not op_name(n).startswith("dequantize_per_channel"):
            raise UnsupportedForC(f"{_where(consumer)} has a float weight (a layer kept float?)")
        q, s, zp, axis = n.args[:4]
        if int(axis) != 0:
            raise UnsupportedForC(f"{_where(n)}: per-channel weights on axis {axis} (the runner takes axis 0)")
        return (
            attr(self.gm, q.target).detach().cpu().numpy().astype(np.int8),
            attr(self.gm, s.target).detach().cpu().numpy().astype(np.float32),
            attr(self.gm, zp.target).detach().cpu().numpy().astype(np.int32),
        )

    def layer(self, src, out_q: QParams | None, out_node) -> Layer:
        """The layer whose (float) result is `src`, quantized with out_q (None: a float output)."""
        pooled = None
        if op_name(src) in ("mean", "adaptive_avg_pool2d") and not self.tensor(src.args[0]):
            # X86InductorQuantizer leaves a conv's output float when a global average pool follows it
            # (conv -> [relu] -> mean -> quantize): the runner pools the conv's float values itself.
            self._global_pool_args(src)
            pooled = src
            self.covered.add(src)
            src = src.args[0]
        act = None
        if op_name(src) in ACTIVATIONS:
            name = op_name(src)
            if name.startswith("hardtanh"):
                lo = float(src.args[1] if len(src.args) > 1 else src.kwargs.get("min_val", -1.0))
                hi = float(src.args[2] if len(src.args) > 2 else src.kwargs.get("max_val", 1.0))
                act = (lo, hi)
            else:
                act = (0.0, 6.0) if name == "relu6" else (0.0, float("inf"))
            self.covered.add(src)
            src = src.args[0]
        residual = None
        if op_name(src) in ("add", "add_") and not src.kwargs.get("alpha", 1) != 1:
            a, b = src.args[:2]
            ta = self.tensor(a) if hasattr(a, "op") else None
            tb = self.tensor(b) if hasattr(b, "op") else None
            if ta is not None and tb is not None:
                self.covered.add(src)
                layer = Layer(
                    name=module_path(src) or src.name,
                    kind="add",
                    input=ta[1],
                    output=out_q,
                    in_shape=ta[2],
                    inputs=[ta, tb],
                    node=out_node.name,
                )
                return self._finish(layer, src, act)
            anchor, residual = (b, ta) if ta is not None else (a, tb)
            if residual is None or not hasattr(anchor, "op") or op_name(anchor) not in ("conv2d", "linear"):
                raise UnsupportedForC(
                    f"{_where(src)} adds two tensors that are not a quantized tensor and a conv/linear output"
                )
            if len(anchor.users) != 1:
                raise UnsupportedForC(f"{_where(anchor)} feeds a residual add and something else")
            self.covered.add(src)
            src = anchor
        name = op_name(src)
        if name in ("conv2d", "linear"):
            x = self.need(src.args[0], src)
            wq, ws, wz = self.weight(src.args[1], src)
            bias = src.args[2] if len(src.args) > 2 else src.kwargs.get("bias")
            b = (
                attr(self.gm, bias.target).detach().cpu().numpy().astype(np.float32)
                if bias is not None
                else np.zeros(wq.shape[0], np.float32)
            )
            layer = Layer(
                name=module_path(src) or src.name,
                kind=name,
                input=x[1],
                output=out_q,
                in_shape=x[2],
                weight=wq,
                weight_scale=ws,
                weight_zero_point=wz,
                bias=b,
                inputs=[x],
                node=out_node.name,
            )
            if residual is not None:
                layer.inputs.append(residual)
            if name == "conv2d":
                args = list(src.args) + [None] * 7
                layer.attrs = {
                    "stride": _pair(args[3] or 1),
                    "padding": _pair(args[4] or 0),
                    "dilation": _pair(args[5] or 1),
                    "groups": int(args[6] or 1),
                    "kernel": tuple(int(d) for d in wq.shape[2:]),
                }
            self.covered.add(src)
            if pooled is not None:
                if name != "conv2d" or residual is not None:
                    raise UnsupportedForC(
                        f"{_where(pooled)} pools {_where(src)}: the runner pools a conv's float output"
                    )
                layer.attrs["global_pool"] = True
                layer.attrs["conv_out"] = _shape(src)
                src = pooled
            return self._finish(layer, src, act)
        if pooled is not None:
            raise UnsupportedForC(f"{_where(pooled)} reads float activations from {_where(src)}")
        if name in POOLS and act is None and residual is None:
            return self._pool(src, name, out_q, out_node)
        raise UnsupportedForC(
            f"{_where(src)} is not implemented by the portable C runner (it runs conv2d, linear, add, relu, "
            "hardtanh/relu6, max_pool2d, avg_pool2d, global average pooling, flatten and cat)"
        )

    def _global_pool_args(self, src) -> None:
        args = list(src.args) + [None]
        if op_name(src) == "adaptive_avg_pool2d":
            if _pair(args[1]) != (1, 1):
                raise UnsupportedForC(
                    f"{_where(src)}: adaptive_avg_pool2d to {list(_pair(args[1]))}; the runner pools to 1x1"
                )
            return
        dims = sorted(int(d) % 4 for d in (args[1] if isinstance(args[1], (list, tuple)) else [args[1]]))
        if len(_shape(src.args[0])) != 3 or dims != [2, 3]:
            raise UnsupportedForC(f"{_where(src)}: only a mean over H and W of an NCHW tensor is implemented")

    def _finish(self, layer: Layer, src, act) -> Layer:
        layer.out_shape = _shape(src)
        layer.act = act
        layer.relu = act is not None and act[0] == 0.0 and act[1] == float("inf")
        return layer

    def _pool(self, src, name, out_q, out_node) -> Layer:
        self.covered.add(src)
        if name in ("cat", "concat"):
            dim = int(src.args[1] if len(src.args) > 1 else src.kwargs.get("dim", 0))
            rank = len(_shape(src)) + 1
            if dim % rank != 1:
                raise UnsupportedForC(f"{_where(src)}: only concatenation along channels (dim 1) is implemented")
            ins = [self.need(t, src) for t in src.args[0]]
            layer = Layer(
                name=module_path(src) or src.name,
                kind="concat",
                input=ins[0][1],
                output=out_q,
                in_shape=ins[0][2],
                inputs=ins,
                node=out_node.name,
            )
            return self._finish(layer, src, None)
        x = self.need(src.args[0], src)
        layer = Layer(
            name=module_path(src) or src.name,
            kind=name,
            input=x[1],
            output=out_q,
            in_shape=x[2],
            inputs=[x],
            node=out_node.name,
        )
        args = list(src.args) + [None] * 7
        if name == "max_pool2d":
            kernel = _pair(args[1])
            if args[5]:
                raise UnsupportedForC(f"{_where(src)}: ceil_mode is not implemented in the runner")
            layer.kind = "maxpool2d"
            layer.attrs = {
                "kernel": kernel,
                "stride": _pair(args[2] or kernel),
                "padding": _pair(args[3] or 0),
                "dilation": _pair(args[4] or 1),
            }
        elif name == "avg_pool2d":
            kernel = _pair(args[1])
            if args[4] or args[6] is not None:
                raise UnsupportedForC(
                    f"{_where(src)}: ceil_mode and divisor_override are not implemented in the runner"
                )
            layer.kind = "avgpool2d"
            layer.attrs = {
                "kernel": kernel,
                "stride": _pair(args[2] or kernel),
                "padding": _pair(args[3] or 0),
                "count_include_pad": bool(True if args[5] is None else args[5]),
            }
        elif name in ("adaptive_avg_pool2d", "mean"):
            self._global_pool_args(src)
            layer.kind = "globalavgpool"
        elif int(args[1] if args[1] is not None else 0) != 1:
            raise UnsupportedForC(f"{_where(src)}: only flatten(x, 1) is implemented")
        return self._finish(layer, src, None)


def extract(gm, example) -> tuple[QParams, list[Layer]]:
    """(input quantization, layers in execution order). `example`: one input batch, for shapes."""
    import torch
    from torch.fx.passes.shape_prop import ShapeProp

    with torch.no_grad():
        ShapeProp(gm).propagate(example)
    walker = _Walker(gm)
    layers: list[Layer] = []
    input_q: QParams | None = None
    skipped = ("quantize_per_tensor", "dequantize_per_tensor", "dequantize_per_channel")
    for n in gm.graph.nodes:
        if n.op == "output":
            out = n.args[0]
            out = out[0] if isinstance(out, (tuple, list)) else out
            t = walker.tensor(out) if hasattr(out, "op") else None
            if t is not None:
                if not layers or t[0] != layers[-1].output_name:
                    raise UnsupportedForC(f"the graph output {_where(out)} is not the last layer's output")
                continue
            layers.append(walker.layer(out, None, out))
            continue
        if not op_name(n).startswith("quantize_per_tensor"):
            continue
        src = n.args[0]
        if src.op == "placeholder":
            input_q = _qparams(n)
            continue
        layer = walker.layer(src, _qparams(n), n)
        layer.output_name = n.name
        layers.append(layer)
    for n in gm.graph.nodes:
        if n.op == "call_function" and n not in walker.covered and not op_name(n).startswith(skipped):
            raise UnsupportedForC(f"{_where(n)} is not part of a quantized layer the C runner can compute")
    if input_q is None:
        raise UnsupportedForC("the graph input is not quantized")
    if not layers:
        raise UnsupportedForC("no quantized layer found")
    for layer in layers[:-1]:
        if layer.output is None:
            raise UnsupportedForC(f"layer {layer.name} has a float output but is not the last layer")
    return input_q, layers
