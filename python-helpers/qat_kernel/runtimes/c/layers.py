"""The INT8 network of a PT2E-converted graph as a list of layers a plain C program can run.

convert_pt2e leaves the reference representation: quantize_per_tensor on the input, dequantize ->
aten op(s) in float32 -> quantize_per_tensor around what the quantizer annotated. X86InductorQuantizer
annotates the inputs of conv/linear (and of a mul of two same-shape tensors, of pools, cat and flatten
fed by quantized tensors); every other op runs in float32 between them: a hardswish or SiLU after a
conv, a squeeze-excitation gate, a LayerNorm, GELU, softmax, the matmuls of attention, a transformer's
residual stream. So the graph is a DAG of tensors of three kinds:

  q  quantized values (int8/uint8, held as int32 in the runner's arena) with a scale and zero point
  f  float32 values in the arena (what PyTorch keeps float)
  c  float32 constants (a position embedding, a layer scale, a BatchNorm's folded affine)

and each layer reads tensors of any kind (a q input is dequantized on read, as PyTorch does) and writes
one tensor, q or f. The lowering maps every aten node to a layer, then fuses:

  - a conv/linear with the residual add after it (X86InductorQuantizer fuses conv -> add -> relu);
  - single-input elementwise ops (relu, hardswish, SiLU, GELU, sigmoid, x * 0.125, ...) into the
    layer before them, as an epilogue applied to each float value before it is stored;
  - a quantize_per_tensor into the layer whose value it quantizes (the layer writes int8 directly);
  - a dequantize -> elementwise op(s) -> quantize island (a quantized input and output) into a
    256-entry lookup table, computed here by PyTorch itself, so it is bit-exact;
  - reshape/view/flatten/squeeze/unsqueeze/dropout/clone into aliases of their input (no copy), and a
    quantize that repeats its input's scale and zero point (a max_pool or flatten the quantizer kept
    int8) into an alias as well.

Shapes are N-d (a conv's [1, C, H, W], a transformer's [1, T, D] and [1, heads, T, T]); the runner
runs one sample at a time, so shapes are taken with batch 1 (the batch axis is found by propagating
batch 1 and batch 2). Layers are in graph order, a topological order.

Whatever the runner cannot compute is collected over the whole graph (op, module, source line) and
raised as one UnsupportedForC, with the part of the graph that would stay on the host."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from qat_kernel.pipeline.fused_groups import attr, module_path, op_name
from qat_kernel.rpc.errors import Unsupported

if TYPE_CHECKING:
    from collections.abc import Callable

    import torch
    from torch.fx import Node

    from qat_kernel.userpaths import SourceLocation

INPUT = "input"  # the name of the network input tensor
MAX_RANK = 6

Shape = tuple[int, ...]
# A runner function applied to each float value: (name, *its float parameters), e.g. ("clamp", 0.0, 6.0).
Fn = tuple[str, *tuple[float, ...]]

# Ops that only reinterpret a contiguous tensor's shape: their output is an alias of their input.
ALIASES = {
    "view",
    "_unsafe_view",
    "reshape",
    "flatten",
    "unflatten",
    "squeeze",
    "unsqueeze",
    "contiguous",
    "clone",
    "alias",
    "detach",
    "dropout",
    "feature_dropout",
    "lift_fresh_copy",
    "view_as",
    "reshape_as",
    "type_as",
    "_to_copy",
    "to",
}
# Single-input elementwise ops: (runner function, parameters from the node's args/kwargs).
INF = float("inf")
UNARY = {
    "relu": lambda n: ("clamp", 0.0, INF),
    "relu6": lambda n: ("clamp", 0.0, 6.0),
    "hardtanh": lambda n: ("clamp", float(_arg(n, 1, "min_val", -1.0)), float(_arg(n, 2, "max_val", 1.0))),
    "clamp": lambda n: (
        "clamp",
        -INF if _arg(n, 1, "min", None) is None else float(_arg(n, 1, "min", None)),
        INF if _arg(n, 2, "max", None) is None else float(_arg(n, 2, "max", None)),
    ),
    "clamp_min": lambda n: ("clamp", float(_arg(n, 1, "min", 0.0)), INF),
    "clamp_max": lambda n: ("clamp", -INF, float(_arg(n, 1, "max", 0.0))),
    "hardswish": lambda n: ("hardswish",),
    "hardsigmoid": lambda n: ("hardsigmoid",),
    "sigmoid": lambda n: ("sigmoid",),
    "silu": lambda n: ("silu",),
    "gelu": lambda n: ("gelu_tanh",) if _arg(n, 1, "approximate", "none") == "tanh" else ("gelu",),
    "tanh": lambda n: ("tanh",),
    "leaky_relu": lambda n: ("leaky_relu", float(_arg(n, 1, "negative_slope", 0.01))),
    "elu": lambda n: ("elu", float(_arg(n, 1, "alpha", 1.0))),
    "mish": lambda n: ("mish",),
    "exp": lambda n: ("exp",),
    "neg": lambda n: ("neg",),
    "abs": lambda n: ("abs",),
    "sqrt": lambda n: ("sqrt",),
    "rsqrt": lambda n: ("rsqrt",),
    "reciprocal": lambda n: ("reciprocal",),
    "erf": lambda n: ("erf",),
}
# The runner's elementwise functions (runner.c QAT_FN_*): name -> number.
FUNCTIONS = {
    name: i + 1
    for i, name in enumerate(
        (
            "clamp",
            "hardswish",
            "hardsigmoid",
            "sigmoid",
            "silu",
            "gelu",
            "gelu_tanh",
            "tanh",
            "leaky_relu",
            "elu",
            "mish",
            "exp",
            "neg",
            "abs",
            "sqrt",
            "rsqrt",
            "reciprocal",
            "erf",
            "add_scalar",
            "sub_scalar",
            "rsub_scalar",
            "mul_scalar",
            "div_scalar",
        )
    )
}
BINARY = ("add", "sub", "mul", "div")
# In-place variants (relu_, hardswish_, add_, ...: nn.ReLU(inplace=True)) lowered as the op itself.
INPLACE = set(UNARY) | set(BINARY) | {"rsub", "clamp", "dropout"}
SCALAR = {"add": "add_scalar", "sub": "sub_scalar", "rsub": "rsub_scalar", "mul": "mul_scalar", "div": "div_scalar"}
SPLITS = ("split", "split_with_sizes", "chunk", "unbind", "tensor_split")
TUPLES = ("_native_batch_norm_legit_no_training", "native_layer_norm", "native_dropout")
SKIP = ("quantize_per_channel", "dequantize_per_channel", "sym_size", "sym_numel", "sym_stride")
SUPPORTED_TEXT = (
    "conv1d/conv2d and linear with int8 weights, matmul/bmm and scaled_dot_product_attention, add/sub/mul/div "
    "(broadcasting), relu/relu6/hardtanh/clamp, hardswish, hardsigmoid, sigmoid, SiLU, GELU, tanh, leaky_relu, "
    "elu, mish, exp, sqrt/rsqrt, max/avg/adaptive average pooling, mean/sum/amax, layer_norm, batch_norm, "
    "softmax, nearest/bilinear upsampling, cat/stack, split/chunk/unbind/slice/select, permute/transpose/expand, "
    "reshape/view/flatten, dropout"
)


class UnsupportedForC(Unsupported):
    """The converted graph has ops the portable C runner does not implement (all of them listed)."""

    def __init__(
        self,
        message: str,
        ops: list[dict[str, Any]] | None = None,
        host: dict[str, Any] | None = None,
        location: SourceLocation | None = None,
    ):
        super().__init__(message, unsupported=ops, hostPart=host, location=location)
        self.ops = ops or []
        self.host = host


@dataclass
class QParams:
    scale: float
    zero_point: int
    qmin: int
    qmax: int
    dtype: str  # torch dtype name of the stored values: uint8 | int8

    def same(self, other: QParams | None) -> bool:
        return other is not None and (self.scale, self.zero_point, self.qmin, self.qmax) == (
            other.scale,
            other.zero_point,
            other.qmin,
            other.qmax,
        )


# The input "quantization" of a network whose input the graph reads in float.
FLOAT_INPUT = QParams(1.0, 0, 0, 0, "float32")


@dataclass
class Tensor:
    name: str
    kind: str  # q: quantized values, f: float values (both in the arena), c: float constants (in the header)
    shape: Shape  # full shape, batch 1
    q: QParams | None = None
    data: np.ndarray | None = None  # c: the float32 values
    buffer: str = ""  # the arena buffer holding it (an alias shares its source's)
    report_shape: Shape = ()  # the shape without the batch axis

    def values(self) -> np.ndarray:
        """A constant's float32 values."""
        assert self.data is not None, f"{self.name}: a tensor of kind {self.kind} holds no values"
        return self.data

    def qparams(self) -> QParams:
        """A quantized tensor's quantization."""
        assert self.q is not None, f"{self.name}: a tensor of kind {self.kind} is not quantized"
        return self.q


@dataclass
class Layer:
    name: str  # module path (conv1, fc2, ...) or the op's node name
    kind: str  # conv2d | linear | add | ... (see runner.c); what the report calls it
    input: QParams | None  # the first input's quantization (None: a float input)
    output: QParams | None  # None: a float output
    in_shape: Shape = ()  # the first input's shape, without the batch axis
    out_shape: Shape = ()
    relu: bool = False  # the epilogue is one relu
    act: tuple[float, float] | None = None  # (min, max) when the epilogue is one clamp (relu, relu6, hardtanh)
    weight: np.ndarray | None = None  # int8, [O, I/groups, kh, kw] or [O, I]
    weight_scale: np.ndarray | None = None  # float32 [O]
    weight_zero_point: np.ndarray | None = None  # int32 [O]
    bias: np.ndarray | None = None  # float32 [O] (zeros when the layer has none)
    attrs: dict[str, Any] = field(default_factory=dict)  # stride, padding, dilation, groups, kernel, dims, ...
    node: str = ""  # FX node whose value is this layer's output (its quantize node when quantized)
    inputs: list[tuple[str, QParams | None, Shape]] = field(default_factory=list)  # (tensor name, its q, shape)
    output_name: str = ""  # the tensor this layer writes
    epilogue: list[Fn] = field(default_factory=list)  # [(function, *params)] applied to each value before storing
    epilogue_nodes: list[Node] = field(default_factory=list)  # the FX nodes of the epilogue (for lookup tables)
    table: np.ndarray | None = None  # lut: the stored output for each stored input value qmin..qmax
    float_weight: np.ndarray | None = None  # a conv/linear computed in float (a layer kept float): float32
    nodes: list[Node] = field(default_factory=list)  # FX nodes this layer computes (anchor first)
    shape: Shape = ()  # the full shape (batch 1) the layer computes, kept when later ops fuse into it

    def weights(self) -> np.ndarray:
        """A conv/linear layer's weight: the int8 one, else the float32 one of a layer computed in float."""
        w = self.weight if self.weight is not None else self.float_weight
        assert w is not None, f"{self.name} has no weight"
        return w

    def acc_scale(self) -> np.ndarray:
        """input scale x weight scale [O] (float64): the scale of an int8 layer's int32 accumulator."""
        assert self.input is not None and self.weight_scale is not None, f"{self.name} has no int8 weight"
        return np.float64(self.input.scale) * self.weight_scale.astype(np.float64)

    def bias_int32(self) -> np.ndarray:
        """bias / (input scale x weight scale), rounded: what integer-only kernels (ORT, TVM, CMSIS-NN)
        add to the accumulator. The runner's default path adds the float bias instead, as PyTorch does."""
        assert self.bias is not None, f"{self.name} has no bias"
        return np.clip(np.rint(self.bias.astype(np.float64) / self.acc_scale()), -(2**31), 2**31 - 1).astype(np.int32)

    def to_json(self) -> dict[str, Any]:
        """The layer as deploy/c-artifact reports it (DeployLayer)."""
        row = {
            "name": self.name,
            "kind": self.kind,
            "inShape": list(self.in_shape),
            "outShape": list(self.out_shape),
            "relu": self.relu,
        }
        if self.input is not None:
            row.update(inScale=self.input.scale, inZeroPoint=self.input.zero_point)
        if self.output is not None:
            row.update(outScale=self.output.scale, outZeroPoint=self.output.zero_point, outDtype=self.output.dtype)
        row["output"] = self.output_name
        row["inputs"] = [name for name, _q, _s in self.inputs]
        row["inputKinds"] = ["q" if q is not None else "f" for _n, q, _s in self.inputs]
        if self.act is not None and not self.relu:
            row["act"] = [float(v) for v in self.act]
        if self.epilogue and self.act is None:
            row["epilogue"] = [fn[0] for fn in self.epilogue]
        if self.kind == "conv2d":
            row["groups"] = int(self.attrs["groups"])
        if self.weight is not None:
            scale = self.weight_scale
            assert scale is not None  # an int8 weight comes with its scales
            row.update(
                weightShape=list(self.weight.shape),
                weightScaleMin=float(scale.min()),
                weightScaleMax=float(scale.max()),
            )
        elif self.float_weight is not None:
            row.update(weightShape=list(self.float_weight.shape), floatWeight=True)
        return row


class Network(list[Layer]):
    """The layers in execution order, with the tensors they read and write."""

    def __init__(self, layers: Iterable[Layer], tensors: dict[str, Tensor], output: str, input_shape: Shape):
        super().__init__(layers)
        self.tensors = tensors
        self.output = output  # the tensor holding the network's output
        self.input_shape = input_shape  # full, batch 1


def _arg(n: Node, i: int, name: str, default: Any) -> Any:
    if len(n.args) > i:
        return n.args[i]
    return n.kwargs.get(name, default)


def _args(n: Node) -> tuple[Any, ...]:
    """`n`'s positional arguments, each read as what its op takes (an int, a list of ints, another node): FX
    types every argument as the union of all that an argument can be."""
    return n.args


def _qparams(node: Node) -> QParams:
    _, scale, zp, qmin, qmax, dtype = _args(node)[:6]
    return QParams(float(scale), int(zp), int(qmin), int(qmax), str(dtype).replace("torch.", ""))


def _weight_dequantize(n: Node) -> bool:
    """A dequantize_per_tensor of a constant (a weight quantized per tensor, which convert_pt2e stores as an
    int8 attribute): read by its conv/linear as its weight, not a tensor the runner computes."""
    if not op_name(n).startswith("dequantize_per_tensor") or not n.args:
        return False
    src = _args(n)[0]
    return hasattr(src, "op") and src.op == "get_attr"


def _scalar(gm: torch.fx.GraphModule, value: Any) -> float:
    """A quantization parameter given as a number or as a one-element attribute."""
    if hasattr(value, "op") and value.op == "get_attr":
        return float(attr(gm, str(value.target)).reshape(-1)[0])
    return float(value)


def _pair(v: int | list[int] | tuple[int, ...], n: int = 2) -> Shape:
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    return tuple(int(x) for x in (v * n if len(v) == 1 else v))


def row_major_strides(shape: Sequence[int]) -> list[int]:
    out, step = [], 1
    for d in reversed(shape):
        out.append(step)
        step *= int(d)
    return out[::-1]


def num_elements(shape: Sequence[int]) -> int:
    return int(np.prod(shape, dtype=np.int64)) if len(shape) else 1


def source_line(node: Node, workspace: str | None) -> dict[str, Any] | None:
    """{file, line} of the user's source line of `node` (the last frame of its stack trace in the
    workspace), else of the innermost frame (a library's model code, e.g. timm's), else None."""
    from qat_kernel import userpaths

    trace = node.meta.get("stack_trace")
    if workspace:
        found = userpaths.stack_trace_location(trace, workspace)
        if found:
            return {**found, "user": True}
    found = userpaths.model_code_location(trace)
    return {**found, "user": False} if found else None


class _Skip(Exception):
    """A node reads a value the runner cannot compute (already reported where it was made)."""


class _Refuse(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class _Lower:
    def __init__(
        self,
        gm: torch.fx.GraphModule,
        shapes: dict[Node, Shape | list[Shape]],
        batch: dict[Node, int | None],
        workspace: str | None,
        needed: set[Node],
    ):
        self.gm = gm
        self.needed = needed  # the nodes the output depends on
        self.shapes = shapes  # node -> full shape with batch 1 (tuple), or a list of them
        self.batch = batch  # node -> the batch axis (None: none found)
        self.workspace = workspace
        self.tensors: dict[str, Tensor] = {}
        self.val: dict[Node, str | None] = {}  # node -> tensor name; None: not computable
        self.layers: list[Layer] = []
        self.unsupported: list[tuple[Node, str]] = []  # (node, reason)
        self.input_q: QParams | None = None
        self.output: str | None = None

    # --- tensors --------------------------------------------------------------------------------

    def shape(self, n: Node) -> Shape:
        s = self.shapes.get(n)
        if isinstance(s, list) and op_name(n) in TUPLES:
            s = s[0]
        if s is None or isinstance(s, list):
            raise _Refuse(f"no tensor shape recorded for {n.name}")
        return s

    def report_shape(self, n: Node, shape: Sequence[int]) -> Shape:
        axis = self.batch.get(n)
        return tuple(d for i, d in enumerate(shape) if i != axis) if axis is not None else tuple(shape)

    def add_tensor(
        self,
        name: str,
        kind: str,
        shape: Sequence[int],
        q: QParams | None = None,
        data: np.ndarray | None = None,
        buffer: str | None = None,
        node: Node | None = None,
    ) -> str:
        t = Tensor(name, kind, tuple(int(d) for d in shape), q, data, buffer or name)
        t.report_shape = self.report_shape(node, t.shape) if node is not None else t.shape
        self.tensors[name] = t
        return name

    def value(self, a: Any, consumer: Node) -> str:
        """The tensor an argument of `consumer` reads."""
        if not hasattr(a, "op"):
            raise _Refuse(f"reads {a!r}, not a tensor")
        if a.op == "get_attr":
            return self.constant(a)
        if a not in self.val:
            raise _Refuse(f"reads {a.name}, which the runner does not compute")
        name = self.val[a]
        if name is None:
            raise _Skip()
        return name

    def constant(self, a: Node) -> str:
        target = str(a.target)  # a get_attr node's: the attribute's dotted path
        name = "c_" + re.sub(r"[^A-Za-z0-9_]", "_", target)
        if name not in self.tensors:
            value = attr(self.gm, target)
            if not hasattr(value, "detach") or not value.is_floating_point():
                raise _Refuse(f"reads {target}, not a float tensor")
            data = value.detach().float().cpu().numpy().astype(np.float32)
            self.add_tensor(name, "c", data.shape, data=data)
        return name

    def ref(self, name: str) -> tuple[str, QParams | None, Shape]:
        t = self.tensors[name]
        return (name, t.q if t.kind == "q" else None, t.report_shape)

    def out(self, n: Node, kind: str = "f", q: QParams | None = None) -> str:
        return self.add_tensor(n.name, kind, self.shape(n), q, node=n)

    def layer(self, n: Node, kind: str, ins: list[str], **kw: Any) -> Layer:
        name = self.out(n, kw.pop("out_kind", "f"), kw.pop("out_q", None))
        first = self.tensors[ins[0]] if ins else None
        la = Layer(
            name=module_path(n) or n.name,
            kind=kind,
            input=first.q if first is not None and first.kind == "q" else None,
            output=None,
            in_shape=first.report_shape if first is not None else (),
            out_shape=self.tensors[name].report_shape,
            node=n.name,
            inputs=[self.ref(t) for t in ins],
            output_name=name,
            nodes=[n],
            shape=self.tensors[name].shape,
            **kw,
        )
        self.layers.append(la)
        self.val[n] = name
        return la

    # --- the walk -------------------------------------------------------------------------------

    def visit(self, n: Node) -> None:
        if n.op == "placeholder":
            users = [u for u in n.users if u in self.needed and u in self.shapes]  # not sym_size, asserts
            if len(users) != 1 or not op_name(users[0]).startswith("quantize_per_tensor"):
                # read in float (an elementwise op before the first conv): the runner takes the float
                # input as it is and quantizes it where the graph does
                self.input_q = FLOAT_INPUT
                self.val[n] = self.add_tensor(INPUT, "f", self.shape(n), node=n)
            return
        if n.op in ("get_attr", "call_module"):
            return
        if n.op == "output":
            out = n.args[0]
            out = out[0] if isinstance(out, (tuple, list)) else out
            try:
                self.output = self.value(out, n)
            except _Skip:
                pass
            except _Refuse as e:
                self.refuse(n, e.reason)
            return
        name = op_name(n)
        if name.startswith(SKIP) or _weight_dequantize(n) or (n not in self.shapes and name not in SPLITS + TUPLES):
            return  # weights (read by their conv/linear), sizes and asserts: no tensor to compute
        inplace = name.endswith("_") and not name.startswith("_") and name[:-1] in INPLACE
        try:
            self.lower(n, name[:-1] if inplace else name)
            if inplace and hasattr(_args(n)[0], "op"):
                # relu_(x) returns x, changed: nodes after it that read x read the new value
                self.val[_args(n)[0]] = self.val[n]
        except _Skip:  # reads what an unsupported op makes: reported only when it is unsupported itself
            self.val[n] = None
            if not self.implemented(name[:-1] if inplace else name):
                self.refuse(n, "not implemented by the portable C runner")
        except _Refuse as e:
            self.refuse(n, e.reason)

    def implemented(self, name: str) -> bool:
        return (
            name.startswith(("quantize_per_tensor", "dequantize_per_tensor"))
            or name in ALIASES
            or name in UNARY
            or name in SCALAR
            or name in BINARY
            or hasattr(self, "op_" + name)
        )

    def refuse(self, n: Node, reason: str) -> None:
        self.unsupported.append((n, reason))
        self.val[n] = None

    def lower(self, n: Node, name: str) -> None:
        if name.startswith("quantize_per_tensor"):
            src = _args(n)[0]
            q = _qparams(n)
            if src.op == "placeholder" and src not in self.val:
                self.input_q = q
                self.val[n] = self.add_tensor(INPUT, "q", self.shape(n), q, node=n)
                return
            la = self.layer(n, "quantize", [self.value(src, n)], out_kind="q", out_q=q)
            la.output = q
            la.attrs["quantize_node"] = True
            return
        if name.startswith("dequantize_per_tensor"):
            src = self.value(n.args[0], n)
            if self.tensors[src].kind != "q":
                raise _Refuse("dequantizes a tensor that is not quantized per tensor")
            self.val[n] = src
            return
        if name in ALIASES:
            return self.alias(n, name)
        if name in UNARY:
            try:
                fn = UNARY[name](n)
            except (TypeError, ValueError):
                raise _Refuse(f"{name} with tensor parameters is not implemented") from None
            return self.unary(n, [fn])
        if name in SCALAR and len(n.args) >= 2 and not hasattr(n.args[1], "op"):
            if name in ("add", "sub") and n.kwargs.get("alpha", 1) != 1:
                raise _Refuse("add/sub with alpha is not implemented")
            return self.unary(n, [(SCALAR[name], float(_args(n)[1]))])
        if name in BINARY:
            return self.binary(n, name)
        handler = getattr(self, "op_" + name, None)
        if handler is None:
            raise _Refuse("not implemented by the portable C runner")
        handler(n)

    def alias(self, n: Node, name: str) -> None:
        src = n.args[0]
        if name in ("dropout", "feature_dropout") and _arg(n, 2, "train", False):
            raise _Refuse("dropout in training mode")
        if name in ("_to_copy", "to", "type_as"):
            import torch

            dtypes = [v for v in list(n.args[1:]) + list(n.kwargs.values()) if isinstance(v, torch.dtype)]
            meta: Any = n.meta.get("tensor_meta")
            if any(d != torch.float32 for d in dtypes) or (meta is not None and meta.dtype != torch.float32):
                raise _Refuse(f"casts to {dtypes[0] if dtypes else meta.dtype}")
        t = self.tensors[self.value(src, n)]
        shape = self.shape(n)
        if num_elements(shape) != num_elements(t.shape):
            raise _Refuse(f"changes the number of values ({t.shape} -> {shape})")
        if t.kind == "c":
            self.val[n] = self.add_tensor(n.name, "c", shape, data=t.values().reshape(shape), node=n)
            return
        self.val[n] = self.add_tensor(n.name, t.kind, shape, t.q, buffer=t.buffer, node=n)

    def unary(self, n: Node, fns: list[Fn]) -> None:
        src = self.value(n.args[0], n)
        if self.tensors[src].kind == "c":
            raise _Refuse("computes on a constant (fold it into the weights)")
        la = self.layer(n, "elementwise", [src])
        la.epilogue = list(fns)
        la.epilogue_nodes = [n]

    def binary(self, n: Node, name: str) -> None:
        if name in ("add", "sub") and n.kwargs.get("alpha", 1) != 1:
            raise _Refuse(f"{name} with alpha is not implemented")
        a, b = n.args[:2]
        if not hasattr(a, "op"):
            raise _Refuse(f"{name} of a scalar and a tensor")
        ins = [self.value(a, n), self.value(b, n)]
        out = self.shape(n)
        for t in ins:
            self.broadcast(self.tensors[t].shape, out)
        self.layer(n, name, ins)

    def broadcast(self, shape: Sequence[int], out: Sequence[int]) -> list[int]:
        """Element strides of a tensor of `shape` over the output's dimensions (numpy broadcasting)."""
        if len(shape) > len(out):
            raise _Refuse(f"broadcasts {list(shape)} to {list(out)}")
        strides = row_major_strides(shape)
        lead = len(out) - len(shape)
        result = [0] * lead
        for d, size in enumerate(shape):
            if size == out[lead + d]:
                result.append(strides[d] if size > 1 else 0)
            elif size == 1:
                result.append(0)
            else:
                raise _Refuse(f"broadcasts {list(shape)} to {list(out)}")
        return result

    # --- conv, linear, matmul ---------------------------------------------------------------------

    def weight(self, n: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(int8 weights, scales, zero points) of a quantized weight, one scale per output channel (a weight
        quantized per tensor gets its one scale for every channel), or None for a float one."""
        if hasattr(n, "op") and n.op == "get_attr":
            return None
        if _weight_dequantize(n):
            q = attr(self.gm, _args(n)[0].target).detach().cpu().numpy().astype(np.int8)
            channels = q.shape[0]
            scale, zero_point = (_scalar(self.gm, v) for v in _args(n)[1:3])
            return (
                q,
                np.full(channels, scale, np.float32),
                np.full(channels, round(zero_point), np.int32),
            )
        if not hasattr(n, "op") or not op_name(n).startswith("dequantize_per_channel"):
            raise _Refuse("has a computed weight")
        q, s, zp, axis = n.args[:4]
        if int(axis) != 0:
            raise _Refuse(f"per-channel weights on axis {axis} (the runner takes axis 0)")
        return (
            attr(self.gm, q.target).detach().cpu().numpy().astype(np.int8),
            attr(self.gm, s.target).detach().cpu().numpy().astype(np.float32),
            attr(self.gm, zp.target).detach().cpu().numpy().astype(np.int32),
        )

    def float_weight(self, n: Any) -> np.ndarray:
        """A float weight (get_attr), or a quantized one dequantized as PyTorch does."""
        import torch

        if n.op == "get_attr":
            return attr(self.gm, n.target).detach().float().cpu().numpy().astype(np.float32)
        if _weight_dequantize(n):
            quantized = self.weight(n)
            assert quantized is not None
            q, scale, zero_point = quantized
            return ((q.astype(np.float32) - zero_point[0]) * scale[0]).astype(np.float32)
        q, s, zp, axis, qmin, qmax, dtype = n.args[:7]
        w = torch.ops.quantized_decomposed.dequantize_per_channel(
            attr(self.gm, q.target), attr(self.gm, s.target), attr(self.gm, zp.target), axis, qmin, qmax, dtype
        )
        return w.float().numpy().astype(np.float32)

    def bias(self, n: Node, count: int) -> np.ndarray:
        b = _arg(n, 2, "bias", None)
        if b is None:
            return np.zeros(count, np.float32)
        if not hasattr(b, "op") or b.op != "get_attr":
            raise _Refuse("has a computed bias")
        return attr(self.gm, b.target).detach().float().cpu().numpy().astype(np.float32)

    def anchor(self, n: Node, kind: str) -> Layer:
        """A conv/linear: int8 x int8 in int32 when its input and weight are quantized, else in float (a
        layer the quantizer kept float, e.g. a classifier behind a dropout)."""
        x = self.value(n.args[0], n)
        w = self.weight(n.args[1])
        if self.tensors[x].kind == "c":
            raise _Refuse("computes on a constant input")
        if w is not None and self.tensors[x].kind == "q":
            wq, ws, wz = w
            return self.layer(
                n, kind, [x], weight=wq, weight_scale=ws, weight_zero_point=wz, bias=self.bias(n, wq.shape[0])
            )
        fw = self.float_weight(n.args[1])
        return self.layer(n, kind, [x], float_weight=fw, bias=self.bias(n, fw.shape[0]))

    def op_conv2d(self, n: Node) -> None:
        self.conv(n, 2)

    def op_conv1d(self, n: Node) -> None:
        self.conv(n, 1)

    def conv(self, n: Node, dims: int) -> None:
        la = self.anchor(n, "conv2d")
        w = la.weights()
        args = list(_args(n)) + [None] * 7
        padding = args[4] if args[4] is not None else 0
        if isinstance(padding, str):
            if padding == "valid":
                padding = 0
            else:
                dil = _pair(args[5] or 1, dims)
                total = [d * (int(k) - 1) for d, k in zip(dil, w.shape[2:])]
                if any(t % 2 for t in total):
                    raise _Refuse("padding='same' with an even kernel pads unevenly")
                padding = [t // 2 for t in total]
        if dims == 1:  # conv1d as a conv2d of height 1
            if la.weight is not None:
                la.weight = la.weight[:, :, None, :]
            else:
                la.float_weight = la.weights()[:, :, None, :]
            stride, pad, dil = (1, *_pair(args[3] or 1, 1)), (0, *_pair(padding, 1)), (1, *_pair(args[5] or 1, 1))
        else:
            stride, pad, dil = _pair(args[3] or 1), _pair(padding), _pair(args[5] or 1)
        w = la.weights()
        la.attrs = {
            "stride": stride,
            "padding": pad,
            "dilation": dil,
            "groups": int(args[6] or 1),
            "kernel": tuple(int(d) for d in w.shape[2:]),
            "conv1d": dims == 1,
        }

    def op_linear(self, n: Node) -> None:
        self.anchor(n, "linear")

    def op_matmul(self, n: Node) -> None:
        a, b = (self.value(v, n) for v in n.args[:2])
        sa, sb, out = self.tensors[a].shape, self.tensors[b].shape, self.shape(n)
        if len(sa) < 2 or len(sb) < 2:
            raise _Refuse("matmul of a vector is not implemented")
        for s in (sa, sb):
            self.broadcast(tuple(s[:-2]), tuple(out[:-2]))
        self.layer(n, "matmul", [a, b]).attrs = {"k": int(sa[-1])}

    op_bmm = op_matmul
    op_mm = op_matmul

    def op_scaled_dot_product_attention(self, n: Node) -> None:
        q, k, v = (self.value(a, n) for a in n.args[:3])
        mask = _arg(n, 3, "attn_mask", None)
        if mask is not None:
            raise _Refuse("an attention mask is not implemented")
        if float(_arg(n, 4, "dropout_p", 0.0)) != 0.0:
            raise _Refuse("attention dropout")
        if _arg(n, 5, "is_causal", False):
            raise _Refuse("causal attention is not implemented")
        if n.kwargs.get("enable_gqa"):
            raise _Refuse("grouped-query attention is not implemented")
        sq, sk, sv = (self.tensors[t].shape for t in (q, k, v))
        if not (sq[:-2] == sk[:-2] == sv[:-2]) or sk[-2] != sv[-2] or sq[-1] != sk[-1]:
            raise _Refuse(f"attention of shapes {list(sq)}, {list(sk)}, {list(sv)}")
        scale: Any = n.kwargs.get("scale")
        scale = 1.0 / math.sqrt(sq[-1]) if scale is None else float(scale)
        self.layer(n, "attention", [q, k, v]).attrs = {"scale": scale}

    # --- pooling, reductions, normalisation -----------------------------------------------------------

    def spatial_input(self, n: Node) -> str:
        x = self.value(n.args[0], n)
        if len(self.tensors[x].shape) != 4:
            raise _Refuse("pools a tensor that is not N x C x H x W")
        return x

    def op_max_pool2d(self, n: Node) -> None:
        x = self.spatial_input(n)
        args = list(_args(n)) + [None] * 7
        kernel = _pair(args[1])
        self.layer(n, "maxpool2d", [x]).attrs = {
            "kernel": kernel,
            "stride": _pair(args[2] or kernel),
            "padding": _pair(args[3] or 0),
            "dilation": _pair(args[4] or 1),
        }

    def op_avg_pool2d(self, n: Node) -> None:
        x = self.spatial_input(n)
        args = list(_args(n)) + [None] * 7
        kernel = _pair(args[1])
        self.layer(n, "avgpool2d", [x]).attrs = {
            "kernel": kernel,
            "stride": _pair(args[2] or kernel),
            "padding": _pair(args[3] or 0),
            "count_include_pad": bool(True if args[5] is None else args[5]),
            "divisor": int(args[6] or 0),
        }

    def op_adaptive_avg_pool2d(self, n: Node) -> None:
        x = self.spatial_input(n)
        out = self.shape(n)
        if tuple(out[2:]) == (1, 1):
            self.layer(n, "globalavgpool", [x]).attrs = {"op": "mean", "dims": (2, 3)}
        else:
            self.layer(n, "adaptiveavgpool2d", [x])

    def op_upsample_nearest2d(self, n: Node) -> None:
        self.upsample(n, "nearest")

    def op_upsample_bilinear2d(self, n: Node) -> None:
        self.upsample(n, "bilinear")

    def upsample(self, n: Node, mode: str) -> None:
        """F.interpolate to N x C x H' x W': the source coordinate scale as PyTorch's CPU kernel takes it
        (1 / scale_factor when one is given, else in / out, in float32)."""
        x = self.spatial_input(n)
        shape, out = self.tensors[x].shape, self.shape(n)
        align = bool(_arg(n, 2, "align_corners", False)) if mode == "bilinear" else False
        first = 3 if mode == "bilinear" else 2
        if getattr(n.target, "_overloadname", "") == "vec":  # (input, output_size, [align_corners,] scale_factors)
            factors = _arg(n, first, "scale_factors", None) or [None, None]
        else:  # (input, output_size, [align_corners,] scales_h, scales_w)
            factors = [_arg(n, first, "scales_h", None), _arg(n, first + 1, "scales_w", None)]
        scales = []
        for size_in, size_out, factor in zip(shape[2:], out[2:], factors):
            if align:
                scales.append(np.float32(size_in - 1) / np.float32(size_out - 1) if size_out > 1 else np.float32(0))
            elif factor is not None and float(factor) > 0:
                scales.append(np.float32(1.0 / float(factor)))
            else:
                scales.append(np.float32(size_in) / np.float32(size_out))
        la = self.layer(n, "upsample", [x])
        la.attrs = {"mode": mode, "align_corners": align, "scales": [float(v) for v in scales]}

    def op_mean(self, n: Node) -> None:
        self.reduce(n, "mean")

    def op_sum(self, n: Node) -> None:
        self.reduce(n, "sum")

    def op_amax(self, n: Node) -> None:
        self.reduce(n, "amax")

    def reduce(self, n: Node, op: str) -> None:
        x = self.value(n.args[0], n)
        shape = self.tensors[x].shape
        dims = _arg(n, 1, "dim", None)
        if n.kwargs.get("dtype") is not None:
            raise _Refuse(f"{op} with a dtype")
        dims = list(range(len(shape))) if dims is None or dims == [] else dims
        dims = tuple(sorted({int(d) % len(shape) for d in (dims if isinstance(dims, (list, tuple)) else [dims])}))
        self.not_batch(n, n.args[0], dims)
        kind = "globalavgpool" if op == "mean" and len(shape) == 4 and dims == (2, 3) else op
        self.layer(n, kind, [x]).attrs = {"op": op, "dims": dims}

    def not_batch(self, n: Node, src: Any, dims: Sequence[int]) -> None:
        axis = self.batch.get(src)
        if axis is not None and axis in dims:
            raise _Refuse("reduces over the batch axis (the runner runs one sample at a time)")

    def op_layer_norm(self, n: Node) -> None:
        x = self.value(n.args[0], n)
        shape = self.tensors[x].shape
        normalized = [int(d) for d in _args(n)[1]]
        if tuple(shape[len(shape) - len(normalized) :]) != tuple(normalized):
            raise _Refuse(f"layer_norm over {normalized} of {list(shape)}")
        w, b = (self.affine(v, normalized) for v in (_arg(n, 2, "weight", None), _arg(n, 3, "bias", None)))
        la = self.layer(n, "layernorm", [x])
        la.attrs = {"eps": float(_arg(n, 4, "eps", 1e-5)), "size": num_elements(normalized), "gamma": w, "beta": b}

    op_native_layer_norm = op_layer_norm

    def affine(self, v: Any, shape: Sequence[int]) -> np.ndarray | None:
        if v is None:
            return None
        if not hasattr(v, "op") or v.op != "get_attr":
            raise _Refuse("a normalisation with computed weights")
        data = attr(self.gm, v.target).detach().float().cpu().numpy().astype(np.float32).reshape(-1)
        if data.size != num_elements(shape):
            raise _Refuse("a normalisation whose weights do not match its shape")
        return data

    def op_batch_norm(self, n: Node) -> None:
        if _arg(n, 5, "training", False):
            raise _Refuse("batch_norm in training mode")
        self.batch_norm(n, n.args[1], n.args[2], n.args[3], n.args[4], float(_arg(n, 7, "eps", 1e-5)))

    def op__native_batch_norm_legit_no_training(self, n: Node) -> None:
        self.batch_norm(n, n.args[1], n.args[2], n.args[3], n.args[4], float(_arg(n, 6, "eps", 1e-5)))

    def batch_norm(self, n: Node, w: Any, b: Any, mean: Any, var: Any, eps: float) -> None:
        """Eval-mode batch_norm (one not folded into a conv: DenseNet's pre-activation) as a per-channel
        y = x * alpha + beta, alpha and beta computed as PyTorch's CPU kernel does."""
        import torch

        x = self.value(n.args[0], n)
        shape = self.tensors[x].shape
        if len(shape) < 2:
            raise _Refuse("batch_norm of a tensor without channels")

        def param(v: Any, fill: float) -> torch.Tensor:
            if v is None:
                return torch.full((shape[1],), fill, dtype=torch.float32)
            if not hasattr(v, "op") or v.op != "get_attr":
                raise _Refuse("batch_norm with computed statistics")
            return attr(self.gm, v.target).detach().float()

        weight, bias, mu, var_ = param(w, 1.0), param(b, 0.0), param(mean, 0.0), param(var, 1.0)
        invstd = 1.0 / torch.sqrt(var_ + eps)
        alpha = weight * invstd
        beta = (bias - mu * alpha).numpy().astype(np.float32)
        alpha = alpha.numpy().astype(np.float32)
        la = self.layer(n, "batchnorm", [x])
        la.attrs = {"channels": int(shape[1]), "inner": num_elements(shape[2:]), "gamma": alpha, "beta": beta}

    def op_softmax(self, n: Node) -> None:
        x = self.value(n.args[0], n)
        shape = self.tensors[x].shape
        dim = int(_args(n)[1]) % len(shape)
        self.not_batch(n, n.args[0], (dim,))
        self.layer(n, "softmax", [x]).attrs = {"dim": dim}

    op__softmax = op_softmax

    # --- data movement ----------------------------------------------------------------------------

    def view(self, n: Node, src: str, strides: Sequence[int], base: int, kind: str) -> None:
        """Output element (i0, i1, ...) is input element base + sum(i_d x strides[d])."""
        t = self.tensors[src]
        out = self.shape(n)
        if tuple(out) == tuple(t.shape) and base == 0 and list(strides) == row_major_strides(out):
            self.val[n] = self.add_tensor(n.name, t.kind, out, t.q, t.data, buffer=t.buffer, node=n)
            return  # the identity (a permute of size-1 dimensions, a full slice)
        if t.kind == "c":  # a constant moved (pos_embed[:, :T]): moved here
            flat = t.values().reshape(-1)
            data = np.lib.stride_tricks.as_strided(
                flat[base:], shape=out, strides=[int(s) * flat.itemsize for s in strides], writeable=False
            )
            self.val[n] = self.add_tensor(n.name, "c", out, data=np.ascontiguousarray(data), node=n)
            return
        la = self.layer(n, kind, [src])
        la.attrs = {"strides": [int(s) for s in strides], "base": int(base)}
        if t.kind == "q":  # data movement keeps the quantization
            self.tensors[la.output_name].kind, self.tensors[la.output_name].q = "q", t.q
            la.output = t.q

    def op_permute(self, n: Node) -> None:
        src = self.value(n.args[0], n)
        shape = self.tensors[src].shape
        perm = [int(d) % len(shape) for d in _args(n)[1]]
        st = row_major_strides(shape)
        self.view(n, src, [st[d] for d in perm], 0, "permute")

    def op_transpose(self, n: Node) -> None:
        src = self.value(n.args[0], n)
        shape = self.tensors[src].shape
        perm = list(range(len(shape)))
        if op_name(n) != "t":
            a, b = int(_args(n)[1]) % len(shape), int(_args(n)[2]) % len(shape)
        else:
            a, b = 0, len(shape) - 1
        perm[a], perm[b] = perm[b], perm[a]
        st = row_major_strides(shape)
        self.view(n, src, [st[d] for d in perm], 0, "permute")

    op_t = op_transpose
    op_swapaxes = op_transpose

    def op_slice(self, n: Node) -> None:
        src = self.value(n.args[0], n)
        shape = self.tensors[src].shape
        dim = int(_arg(n, 1, "dim", 0)) % len(shape)
        start, step = _arg(n, 2, "start", None), int(_arg(n, 4, "step", 1) or 1)
        start = 0 if start is None else int(start)
        start = max(0, min(shape[dim], start + shape[dim] if start < 0 else start))
        st = row_major_strides(shape)
        strides = list(st)
        strides[dim] *= step
        self.view(n, src, strides, start * st[dim], "slice")

    def op_select(self, n: Node) -> None:
        src = self.value(n.args[0], n)
        shape = self.tensors[src].shape
        dim, index = int(_args(n)[1]) % len(shape), int(_args(n)[2])
        index = index + shape[dim] if index < 0 else index
        self.not_batch(n, n.args[0], (dim,))
        st = row_major_strides(shape)
        self.view(n, src, [s for d, s in enumerate(st) if d != dim], index * st[dim], "slice")

    def op_expand(self, n: Node) -> None:
        src = self.value(n.args[0], n)
        t = self.tensors[src]
        out = self.shape(n)
        if tuple(t.shape) == tuple(out):
            self.val[n] = self.add_tensor(n.name, t.kind, out, t.q, t.data, buffer=t.buffer, node=n)
            return
        if t.kind == "c":
            data = np.ascontiguousarray(np.broadcast_to(t.values().reshape(t.shape), out))
            self.val[n] = self.add_tensor(n.name, "c", out, data=data, node=n)
            return
        self.view(n, src, self.broadcast(t.shape, out), 0, "expand")

    def op_getitem(self, n: Node) -> None:
        src, index = _args(n)[0], int(_args(n)[1])
        name = op_name(src)
        if name in TUPLES:
            if index != 0:
                raise _Refuse(f"reads output {index} of {name} (only its first output is computed)")
            self.val[n] = self.value(src, n)
            return
        if name not in SPLITS:
            raise _Refuse(f"takes item {index} of {name or src.op}")
        whole = self.value(src.args[0], n)
        shape = self.tensors[whole].shape
        dim = int(_arg(src, 1 if name == "unbind" else 2, "dim", 0)) % len(shape)
        self.not_batch(n, src.args[0], (dim,))
        parts = self.shapes.get(src)
        if not isinstance(parts, list) or not parts:  # a split's: a shape per part
            raise _Refuse(f"no shapes recorded for the parts of {src.name}")
        st = row_major_strides(shape)
        if name == "unbind":
            self.view(n, whole, [s for d, s in enumerate(st) if d != dim], index * st[dim], "slice")
            return
        start = sum(p[dim] for p in parts[:index])
        self.view(n, whole, st, start * st[dim], "slice")

    def op_split(self, n: Node) -> None:
        self.value(n.args[0], n)
        self.val[n] = "(parts)"  # read by its getitem nodes

    op_split_with_sizes = op_split
    op_chunk = op_split
    op_unbind = op_split
    op_tensor_split = op_split

    def op_native_dropout(self, n: Node) -> None:
        """(output, mask): in eval mode the output is the input (getitem 0 reads it)."""
        if _arg(n, 2, "train", False):
            raise _Refuse("dropout in training mode")
        self.val[n] = self.value(n.args[0], n)

    def op_cat(self, n: Node) -> None:
        items = list(_args(n)[0])
        out = self.shape(n)
        dim = int(_arg(n, 1, "dim", 0)) % len(out)
        self.not_batch(n, n, (dim,))
        ins = [self.value(t, n) for t in items]
        ins = [t for t in ins if num_elements(self.tensors[t].shape) > 0]
        la = self.layer(n, "concat", ins)
        la.attrs = {"dim": dim}

    op_concat = op_cat

    def op_stack(self, n: Node) -> None:
        items = list(_args(n)[0])
        out = self.shape(n)
        dim = int(_arg(n, 1, "dim", 0)) % len(out)
        self.not_batch(n, n, (dim,))
        la = self.layer(n, "concat", [self.value(t, n) for t in items])
        la.attrs = {"dim": dim, "stack": True}


# --- fusion passes ------------------------------------------------------------------------------------


class _Fuser:
    """Merges layers into the one before them (see the module docstring). Each merge rebuilds the maps
    of who reads and who writes each buffer: O(layers^2), a few seconds for a thousand layers."""

    def __init__(self, low: _Lower):
        self.low = low
        self.t = low.tensors
        self.maps()

    def maps(self) -> None:
        # buffer -> [(layer, input index)]; the network output counts (None)
        self.readers: dict[str, list[tuple[Layer | None, int]]] = {}
        for la in self.low.layers:
            for i, (name, _q, _s) in enumerate(la.inputs):
                self.readers.setdefault(self.t[name].buffer, []).append((la, i))
        if self.low.output:
            self.readers.setdefault(self.t[self.low.output].buffer, []).append((None, 0))
        self.writer = {self.t[la.output_name].buffer: la for la in self.low.layers}

    def run(self) -> None:
        i = 0
        while i < len(self.low.layers):
            la = self.low.layers[i]
            if self.residual(la) or self.epilogue(la) or self.quantize(la):
                self.maps()
                continue  # la moved to the merged layer's place: look at position i again
            i += 1
        for la in list(self.low.layers):
            if la.kind == "quantize" and self.t[la.inputs[0][0]].kind == "q":
                self.requantize(la)
        self.dead()
        self.tables()

    def _only_reader(self, la: Layer) -> tuple[Layer, int] | None:
        """(layer, input index) of the only reader of la's output, or None."""
        r = self.readers.get(self.t[la.output_name].buffer, [])
        if len(r) != 1:
            return None
        reader, i = r[0]
        return (reader, i) if reader is not None else None

    def _merge(self, first: Layer, second: Layer) -> None:
        """first now computes what second wrote (its own iteration shape is unchanged), in second's place
        (second's other inputs may be made after first); second is dropped."""
        first.output_name = second.output_name
        first.output = second.output
        first.out_shape = second.out_shape
        first.node = second.node
        first.nodes += second.nodes
        first.attrs["quantize_node"] = second.kind == "quantize" or second.attrs.get("quantize_node", False)
        layers = self.low.layers
        layers.remove(first)
        layers[layers.index(second)] = first

    def residual(self, la: Layer) -> bool:
        """conv/linear -> add of a same-shape tensor: the add becomes the layer's second input."""
        if la.kind not in ("conv2d", "linear") or len(la.inputs) > 1 or la.epilogue or la.output:
            return False
        r = self._only_reader(la)
        if r is None or r[0].kind != "add" or r[0].epilogue or r[0].inputs[r[1]][0] != la.output_name:
            return False
        add, i = r
        other = add.inputs[1 - i]
        if self.t[other[0]].shape != self.t[la.output_name].shape or self.t[other[0]].kind == "c":
            return False
        la.inputs.append(other)
        self._merge(la, add)
        return True

    def epilogue(self, la: Layer) -> bool:
        """An elementwise layer reading a float value only it reads: applied by the layer that makes it."""
        if la.output is not None or self.t[la.output_name].kind != "f":
            return False
        r = self._only_reader(la)
        if r is None or r[0].kind != "elementwise" or r[0].output is not None:
            return False
        nxt = r[0]
        la.epilogue = la.epilogue + nxt.epilogue
        la.epilogue_nodes = la.epilogue_nodes + nxt.epilogue_nodes
        self._merge(la, nxt)
        return True

    def quantize(self, la: Layer) -> bool:
        """A quantize reading a value only it reads: the layer making the value writes int8 directly."""
        r = self._only_reader(la)
        if r is None or r[0].kind != "quantize":
            return False
        self._merge(la, r[0])
        return True

    def requantize(self, la: Layer) -> None:
        """A quantize of a quantized tensor (several readers, or the network input): an alias when the
        scale and zero point are the same (a max_pool or flatten kept int8), else a lookup table."""
        src = self.t[la.inputs[0][0]]
        if not src.qparams().same(la.output):
            la.kind = "elementwise"  # the identity: a table below
            return
        out = self.t[la.output_name]
        for t in self.t.values():
            if t.buffer == out.buffer:
                t.buffer, t.kind, t.q = src.buffer, "q", src.q
        self.low.layers.remove(la)

    def dead(self) -> None:
        """Layers whose output nothing reads (an unused split part)."""
        while True:
            self.maps()
            unread = [la for la in self.low.layers if not self.readers.get(self.t[la.output_name].buffer)]
            if not unread:
                return
            for la in unread:
                self.low.layers.remove(la)

    def tables(self) -> None:
        """An elementwise layer from a quantized input to a quantized output: a lookup table."""
        for la in self.low.layers:
            out = self.t[la.output_name]
            src = self.t[la.inputs[0][0]] if la.inputs else None
            if la.kind not in ("elementwise", "quantize") or out.kind != "q" or src is None or src.kind != "q":
                continue
            la.table = lookup_table(src.qparams(), out.qparams(), la.epilogue_nodes)
            la.kind = "lut"


def lookup_table(qin: QParams, qout: QParams, nodes: list[Node]) -> np.ndarray:
    """The stored output for each stored input value qmin..qmax: PyTorch's dequantize -> op(s) ->
    quantize on all of them (its own arithmetic, so the table is exact)."""
    import torch

    q = torch.arange(qin.qmin, qin.qmax + 1, dtype=torch.int32)
    x = torch.ops.quantized_decomposed.dequantize_per_tensor(
        q.to(getattr(torch, qin.dtype)), qin.scale, qin.zero_point, qin.qmin, qin.qmax, getattr(torch, qin.dtype)
    )
    with torch.no_grad():
        for n in nodes:
            args = [x] + [a for a in n.args[1:]]
            x = cast("Callable[..., Any]", n.target)(*args, **n.kwargs)  # call_function nodes: the op
    y = torch.ops.quantized_decomposed.quantize_per_tensor(
        x.float(), qout.scale, qout.zero_point, qout.qmin, qout.qmax, getattr(torch, qout.dtype)
    )
    return y.to(torch.int32).numpy()


# --- the whole graph ----------------------------------------------------------------------------------


def _propagate(
    gm: torch.fx.GraphModule, example: torch.Tensor
) -> tuple[dict[Node, Shape | list[Shape]], dict[Node, int | None]]:
    """(node -> shape with batch 1, node -> batch axis or None), by running batch 1 and batch 2."""
    import torch
    from torch.fx.passes.shape_prop import ShapeProp

    def shapes(x: torch.Tensor) -> dict[Node, Shape | list[Shape]]:
        with torch.no_grad():
            ShapeProp(gm).propagate(x)
        found = {}
        for n in gm.graph.nodes:
            meta = n.meta.get("tensor_meta")
            if meta is None:
                continue
            if hasattr(meta, "shape"):
                found[n] = tuple(int(d) for d in meta.shape)
            elif isinstance(meta, (tuple, list)) and all(hasattr(m, "shape") for m in meta):
                found[n] = [tuple(int(d) for d in m.shape) for m in meta]
        return found

    one = example[:1]
    two = shapes(torch.cat([one, one]))
    ones = shapes(one)
    batch = {}
    for n, s in ones.items():
        t = two.get(n)
        if isinstance(s, tuple) and isinstance(t, tuple) and len(s) == len(t):
            diff = [i for i, (a, b) in enumerate(zip(s, t)) if a != b]
            batch[n] = diff[0] if len(diff) == 1 and s[diff[0]] == 1 else None
    return ones, batch


def _describe(n: Node, reason: str, workspace: str | None) -> dict[str, Any]:
    where = source_line(n, workspace)
    row: dict[str, Any] = {"op": op_name(n) or n.op, "node": n.name, "reason": reason}
    if module_path(n):
        row["module"] = module_path(n)
    if where:
        row["file"], row["line"] = where["file"], where["line"]
    return row


def _refuse_all(low: _Lower, gm: torch.fx.GraphModule, workspace: str | None) -> None:
    rows = [_describe(n, reason, workspace) for n, reason in low.unsupported]
    computing = [
        n for n in gm.graph.nodes if n.op == "call_function" and n in low.val and not op_name(n).startswith("dequant")
    ]
    host = [n for n in computing if low.val.get(n) is None]
    modules = list(dict.fromkeys(module_path(n) or n.name for n in host))
    host_part = {"ops": len(host), "totalOps": len(computing), "modules": modules[:50]}
    lines = []
    for r in rows:
        where = f"{os.path.basename(r['file'])}:{r['line']}" if "file" in r else "no source line"
        lines.append(
            f"  - {r['op']} ({r['node']}" + (f", module {r['module']}" if "module" in r else "") + f", {where}): "
            f"{r['reason']}"
        )
    ops = sorted({r["op"] for r in rows})
    message = (
        f"The portable C runner cannot compute {len(rows)} op(s) of this model ({', '.join(ops)}):\n"
        + "\n".join(lines)
        + f"\nThese and what depends on them ({len(host)} of {len(computing)} ops"
        + (f": {', '.join(modules[:8])}{', ...' if len(modules) > 8 else ''}" if modules else "")
        + ") would stay on the host; the runner computes "
        + SUPPORTED_TEXT
        + "."
    )
    location: SourceLocation | None = None
    for n, _reason in low.unsupported:
        where = source_line(n, workspace)
        if where and where.get("user"):
            location = {"file": where["file"], "line": where["line"]}
            break
    raise UnsupportedForC(message, rows, host_part, location)


def _needed(gm: torch.fx.GraphModule) -> set[Node]:
    """The nodes the graph's output depends on: a QAT graph can keep ops that change nothing the model
    returns (timm's BatchNormAct2d counts num_batches_tracked with an in-place add)."""
    out = next(n for n in gm.graph.nodes if n.op == "output")
    needed, todo = set(), [out]
    while todo:
        while todo:
            n = todo.pop()
            if n not in needed:
                needed.add(n)
                todo.extend(n.all_input_nodes)
        # an in-place op changing a needed tensor is needed even when nothing reads its result
        for n in gm.graph.nodes:
            name = op_name(n)
            if n not in needed and name.endswith("_") and n.args and n.args[0] in needed:
                todo.append(n)
    return needed


def extract(gm: torch.fx.GraphModule, example: torch.Tensor, workspace: str | None = None) -> tuple[QParams, Network]:
    """(input quantization, the network). `example`: an input batch, for shapes. `workspace`: the
    config's folder, to name the user's source line of an op the runner cannot compute."""
    shapes, batch = _propagate(gm, example)
    needed = _needed(gm)
    low = _Lower(gm, shapes, batch, workspace, needed)
    for n in gm.graph.nodes:
        if n in needed:
            low.visit(n)
    if low.unsupported:
        _refuse_all(low, gm, workspace)
    if low.input_q is None:
        raise UnsupportedForC("The graph has no input the portable C runner reads")
    if low.output is None:
        raise UnsupportedForC("The graph has no output the portable C runner computes")
    _Fuser(low).run()
    if not low.layers:
        raise UnsupportedForC("The portable C runner found no layer to compute in this graph")
    for la in low.layers:
        _finish(la, low.tensors)
    return low.input_q, Network(low.layers, low.tensors, low.output, tuple(low.tensors[INPUT].shape))


def traced(layers: Iterable[Layer]) -> list[Layer]:
    """The layers whose quantized output the runner traces: those ending at a quantize node, whose value
    in the converted graph (Layer.node) is the same integers."""
    return [la for la in layers if la.output is not None and la.attrs.get("quantize_node")]


def _finish(la: Layer, tensors: dict[str, Tensor]) -> None:
    """Report fields: the clamp a relu/relu6/hardtanh epilogue is, the output quantization."""
    out = tensors[la.output_name]
    la.output = out.q if out.kind == "q" else None
    la.inputs = [(name, tensors[name].q if tensors[name].kind == "q" else None, s) for name, _q, s in la.inputs]
    la.input = la.inputs[0][1] if la.inputs else None
    la.act = None
    la.relu = False
    if len(la.epilogue) == 1 and la.epilogue[0][0] == "clamp":
        _clamp, lo, hi = la.epilogue[0]
        la.act = (lo, hi)
        la.relu = la.act == (0.0, INF)
