"""Our Relax pass: fold Q/DQ patterns into integer arithmetic.

TVM 0.27's ONNX importer turns QuantizeLinear/DequantizeLinear into relax.quantize/dequantize, and
LegalizeOps lowers both to element-wise fp32 code, so a QDQ model compiled as-is dequantizes every
weight and activation and runs conv2d/matmul in fp32. This pass rewrites, on the imported module:

Anchors (real integer kernels)::

    dequantize(q_x, s_x, zp_x)  ─┐
    dequantize(W_q, s_w, zp_w) ─(permute_dims)─ conv2d | matmul ─ [add const bias] ─ [relu] ─ [quantize(s_y, zp_y)]

becomes::

    conv2d | matmul(q_x (uint8/int8; int16 minus zp_x when zp_x != 0), W_q - zp_w (int8 const), out_dtype=int32)
    -> epilogue as PyTorch INT8 computes it: y = (float32(acc) + bias / (s_x*s_w)) * (s_x*s_w) -> relu
    -> requantize: clip(round(y * (1 / s_y)) + zp_y, qmin, qmax) -> uint8/int8
       or, when no QuantizeLinear follows (e.g. the float logits), y

Pass-throughs (exact on the quantized tensor when the Q after the op repeats the DQ's scale/zp)::

    quantize(op(dequantize(q, s, zp)), s, zp) -> op(q)   op in max_pool2d, reshape, flatten,
                                                       permute_dims, squeeze, expand_dims
    quantize(relu(dequantize(q, s, zp)), s, zp) -> maximum(q, zp)
    quantize(concat(dequantize(q_i, s, zp), ...), s, zp) -> concat(q_i, ...)
    quantize(dequantize(q, s, zp), s, zp)       -> q

Everything else keeps the importer's fp32 code, and the report says why (residual add of two
dequantized tensors, per-channel activation scales, a non-constant weight, NHWC layouts, ...).
Rounding is round-half-to-even (TVM's round lowers to nearbyint), as in ONNX QuantizeLinear.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np

if TYPE_CHECKING:
    import tvm
    from tvm import relax

QRANGE = {"int8": (-128, 127), "uint8": (0, 255)}
ANCHOR_OPS = {"relax.nn.conv2d", "relax.matmul"}
PASSTHROUGH_OPS = {
    "relax.nn.max_pool2d",
    "relax.reshape",
    "relax.flatten",
    "relax.permute_dims",
    "relax.squeeze",
    "relax.expand_dims",
}
# Ops that move data without arithmetic: counted apart from the per-precision compute ops.
LAYOUT_OPS = {
    "relax.reshape",
    "relax.flatten",
    "relax.permute_dims",
    "relax.squeeze",
    "relax.expand_dims",
    "relax.concat",
    "relax.split",
    "relax.strided_slice",
    "relax.take",
    "relax.broadcast_to",
    "relax.layout_transform",
    "relax.tile",
}
CONVERT_OPS = {"relax.quantize", "relax.dequantize", "relax.astype"}


def op_name(expr: tvm.ir.Expr | None) -> str | None:
    """'relax.nn.conv2d' for a call to a Relax operator, else None."""
    import tvm

    if isinstance(expr, tvm.ir.Call) and isinstance(expr.op, tvm.ir.Op):
        return expr.op.name  # pyright: ignore[reportAttributeAccessIssue] - undeclared FFI field
    return None


def short_op(name: str | None) -> str:
    return (name or "?").replace("relax.", "")


def dtype_of(expr: tvm.ir.Expr | None) -> str | None:
    ty = getattr(expr, "ty", None)
    dtype = getattr(ty, "dtype", None)
    return None if dtype is None else str(dtype)


def _shape(expr: tvm.ir.Expr) -> list[int | None] | None:
    """Static dims as ints, symbolic ones as None; None when the shape is unknown."""
    import tvm

    ty = getattr(expr, "ty", None)
    shape = getattr(ty, "shape", None)
    values = getattr(shape, "values", None)
    if values is None:
        return None
    return [int(v) if isinstance(v, tvm.tirx.IntImm) else (v if isinstance(v, int) else None) for v in values]


def precision_of_dtype(dtype: str | None) -> str:
    if dtype in ("int8", "uint8"):
        return "int8"
    if dtype in ("int16", "uint16"):
        return "int16"
    if dtype in ("int32", "uint32", "int64"):
        return "int32"
    return dtype or "unknown"


@dataclass
class _ActQ:
    var: tvm.ir.Expr  # the quantized (uint8/int8) tensor the dequantize reads
    scale: float
    zp: int
    dtype: str
    dq_var: tvm.ir.Expr  # the dequantize binding's var


@dataclass
class _WeightQ:
    w: np.ndarray  # integer weights as stored (int8/uint8)
    scale: np.ndarray  # per output channel (broadcast from per-tensor)
    zp: np.ndarray  # per output channel
    dq_var: tvm.ir.Expr
    per_channel: bool


@dataclass
class _Status:
    precision: str  # "int8" | "int32" | "fp32" | "folded"
    detail: str = ""
    reason: str = ""
    group: str | None = None  # var name of the folded anchor this binding belongs to


@dataclass
class FoldResult:
    mod: tvm.IRModule
    bindings: list[dict[str, Any]] = field(default_factory=list)  # per original binding
    folded: list[dict[str, Any]] = field(default_factory=list)  # per folded anchor / pass-through
    notes: list[str] = field(default_factory=list)
    renamed: dict[str, str] = field(default_factory=dict)  # binding of the new main -> the original one it stands for


class _Graph:
    """Definitions and uses of the bindings of one dataflow block."""

    def __init__(self, func: relax.Function, block: relax.BindingBlock):
        import tvm
        from tvm import relax

        # VarBindings and MatchCasts: TVM declares `value` on each kind, not on Binding, and the fields of the
        # values (args, attrs) on no class; Any, as value() is
        self.bindings: list[Any] = list(block.bindings)
        self.defs = {b.var: b.value for b in self.bindings}
        self.order = {b.var: i for i, b in enumerate(self.bindings)}
        self.users: dict[tvm.ir.Var, list[tvm.ir.Var]] = {b.var: [] for b in self.bindings}
        self.outputs: set[tvm.ir.Var] = set()

        def uses(expr: tvm.ir.Expr, user: tvm.ir.Var) -> None:
            if isinstance(expr, relax.Var):
                if expr in self.users:
                    self.users[expr].append(user)
            elif isinstance(expr, relax.Tuple):
                for f in expr.fields:
                    uses(f, user)
            elif isinstance(expr, relax.TupleGetItem):
                uses(expr.tuple_value, user)
            elif isinstance(expr, tvm.ir.Call):
                for a in expr.args:
                    uses(a, user)

        for b in self.bindings:
            uses(b.value, b.var)
        # match_cast bindings define symbolic dims (a shape computed from the batch): kept as they are, never
        # part of a folded chain
        self.casts = {b.var for b in self.bindings if isinstance(b, relax.MatchCast)}
        # Vars the function returns (non-dataflow outputs of the block, used after it).
        for b in self.bindings:
            if not isinstance(b.var, relax.DataflowVar):
                self.outputs.add(b.var)

    def value(self, expr: tvm.ir.Expr) -> Any:
        """The expression bound to `expr`, else None. Typed Any: the Relax calls, tuples and constants bound
        here carry fields (args, attrs.axis, value) that TVM declares on no class; callers check op_name."""
        return self.defs.get(expr)

    def single_user(self, var: tvm.ir.Var) -> tuple[tvm.ir.Var, Any] | None:
        """(user var, user call) when `var` has exactly one user and is not a block output."""
        if var in self.outputs:
            return None
        users = self.users.get(var, [])
        if len(users) != 1 or users[0] in self.casts:
            return None
        return users[0], self.defs[users[0]]


def _const_array(expr: tvm.ir.Expr, graph: _Graph) -> np.ndarray | None:
    """numpy value of a constant, also through a reshape/expand of a constant binding."""
    import tvm

    if isinstance(expr, tvm.ir.expr.Constant):
        return expr.value.numpy()  # pyright: ignore[reportAttributeAccessIssue] - undeclared FFI field
    value = graph.value(expr)
    if value is not None and op_name(value) in ("relax.reshape", "relax.expand_dims"):
        inner = _const_array(value.args[0], graph)
        shape = _shape(expr)
        if inner is not None and shape is not None and None not in shape:
            return inner.reshape(cast("list[int]", shape))  # no symbolic dim: checked above
    return None


def _match_act_dq(expr: tvm.ir.Expr, graph: _Graph) -> tuple[_ActQ | None, str]:
    value = graph.value(expr)
    if op_name(value) != "relax.dequantize":
        return None, "its input activation is not dequantized (float tensor, no QuantizeLinear before it)"
    q, s, zp = value.args[0], value.args[1], value.args[2]
    s_arr, zp_arr = _const_array(s, graph), _const_array(zp, graph)
    if s_arr is None or zp_arr is None:
        return None, "its activation scale/zero point are not constants"
    if s_arr.size != 1 or zp_arr.size != 1:
        return None, "its activation is quantized per channel (integer kernels need a per-tensor activation scale)"
    dtype = dtype_of(q)
    if dtype not in QRANGE:
        return None, f"its activation is quantized to {dtype} (only int8/uint8 are folded)"
    return _ActQ(q, float(s_arr.reshape(())), int(zp_arr.reshape(())), dtype, expr), ""


def _match_weight_dq(
    expr: tvm.ir.Expr, graph: _Graph, out_axis: int, channels: int | None
) -> tuple[_WeightQ | None, str]:
    value = graph.value(expr)
    if op_name(value) != "relax.dequantize":
        return None, "its weight is not a DequantizeLinear of an integer tensor (float weight)"
    w = _const_array(value.args[0], graph)
    if w is None:
        return None, "its weight is not a constant (weights must be graph initializers to fold)"
    if str(w.dtype) not in QRANGE:
        return None, f"its weight is stored as {w.dtype} (only int8/uint8 are folded)"
    s, zp = _const_array(value.args[1], graph), _const_array(value.args[2], graph)
    if s is None or zp is None:
        return None, "its weight scale/zero point are not constants"
    axis = int(value.attrs.axis)
    if axis < 0:
        axis += w.ndim
    c = w.shape[out_axis] if channels is None else channels
    per_channel = s.size != 1 or zp.size != 1
    if per_channel and (axis != out_axis or s.size not in (1, c) or zp.size not in (1, c)):
        return None, (
            f"its weight is quantized per channel along axis {axis}, not along the output channels (axis {out_axis})"
        )
    scale = np.broadcast_to(s.reshape(-1).astype(np.float64), (c,)).copy()
    zps = np.broadcast_to(zp.reshape(-1).astype(np.int64), (c,)).copy()
    return _WeightQ(w, scale, zps, expr, per_channel), ""


def _bias_vector(expr: tvm.ir.Expr, graph: _Graph, channels: int, channel_axis: int, ndim: int) -> np.ndarray | None:
    """The per-output-channel vector of a constant bias operand, or None."""
    arr = _const_array(expr, graph)
    if arr is None or arr.size != channels or arr.ndim > ndim:
        return None
    shape = (1,) * (ndim - arr.ndim) + tuple(arr.shape)
    if channels > 1 and shape[channel_axis] != channels:
        return None
    return arr.reshape(-1).astype(np.float64)


def _int_weight(wq: _WeightQ, out_axis: int) -> np.ndarray:
    """W_q - zp_w, as int8 when it fits (it does for symmetric weights), else int16."""
    shape = [1] * wq.w.ndim
    shape[out_axis] = -1
    shifted = wq.w.astype(np.int32) - wq.zp.reshape(shape)
    if shifted.min() >= -128 and shifted.max() <= 127:
        return shifted.astype(np.int8)
    return shifted.astype(np.int16)


def _qparams(call: Any, graph: _Graph) -> tuple[float, int, str] | None:
    s, zp = _const_array(call.args[1], graph), _const_array(call.args[2], graph)
    out = str(call.attrs.out_dtype)
    if s is None or zp is None or s.size != 1 or zp.size != 1 or out not in QRANGE:
        return None
    return float(s.reshape(())), int(zp.reshape(())), out


def _same_qparams(dq_call: Any, q_call: Any, graph: _Graph) -> bool:
    """A per-tensor dequantize and quantize with the same scale, zero point and integer dtype."""
    s, zp = _const_array(dq_call.args[1], graph), _const_array(dq_call.args[2], graph)
    if s is None or zp is None or s.size != 1 or zp.size != 1:
        return False
    return (float(s.reshape(())), int(zp.reshape(())), dtype_of(dq_call.args[0])) == _qparams(q_call, graph)


class _Plan:
    """What to emit: for an anchor, the chain of original vars it replaces and its parameters."""

    def __init__(self):
        self.anchors: dict[tvm.ir.Var, dict[str, Any]] = {}  # last var of the chain -> its parameters
        self.skip: set[tvm.ir.Var] = set()  # chain vars emitted by the anchor (not on their own)
        # quantize var -> (kind, q var (a list of them for a concat), op call)
        self.passthrough: dict[tvm.ir.Var, tuple[str, Any, Any]] = {}
        self.status: dict[tvm.ir.Var, _Status] = {}


def _plan_anchor(var: tvm.ir.Var, call: Any, graph: _Graph, plan: _Plan) -> str | None:
    """Plan one conv2d/matmul; returns None when planned, else the reason it stays fp32."""
    name = op_name(call)
    out_shape = _shape(var)
    if out_shape is None:
        return "its output shape is unknown"
    ndim = len(out_shape)
    if name == "relax.nn.conv2d":
        a = call.attrs
        if (str(a.data_layout), str(a.kernel_layout), str(a.out_layout)) != ("NCHW", "OIHW", "NCHW"):
            return f"layout {a.data_layout}/{a.kernel_layout} (only NCHW/OIHW is folded)"
        act, why = _match_act_dq(call.args[0], graph)
        if act is None:
            return why
        wq, why = _match_weight_dq(call.args[1], graph, out_axis=0, channels=None)
        if wq is None:
            return why
        w_int = _int_weight(wq, 0)
        channel_axis, channels = 1, w_int.shape[0]
        weight_vars = [wq.dq_var]
        kind = "conv2d"
    else:
        act, why = _match_act_dq(call.args[0], graph)
        if act is None:
            return why
        rhs = call.args[1]
        rhs_value = graph.value(rhs)
        weight_vars = []
        if op_name(rhs_value) == "relax.permute_dims":
            axes = rhs_value.attrs.axes
            axes = None if axes is None else [int(x) for x in axes]
            shape = _shape(rhs)
            if shape is None or len(shape) != 2 or axes not in (None, [1, 0]):
                return "its weight is permuted other than a 2-D transpose"
            wq, why = _match_weight_dq(rhs_value.args[0], graph, out_axis=0, channels=None)
            if wq is None:
                return why
            w_int = np.ascontiguousarray(_int_weight(wq, 0).T)  # [K, N]
            weight_vars = [rhs, wq.dq_var]
        else:
            shape = _shape(rhs)
            if shape is None or len(shape) != 2:
                return "its weight is not a 2-D matrix"
            wq, why = _match_weight_dq(rhs, graph, out_axis=1, channels=None)
            if wq is None:
                return why
            w_int = _int_weight(wq, 1)
            weight_vars = [wq.dq_var]
        channel_axis, channels = ndim - 1, w_int.shape[1]
        kind = "matmul"
    if out_shape[channel_axis] not in (None, channels):
        return "its output channels do not match the weight"

    chain = [var]
    cur = var
    bias = None
    relu = False
    quant = None
    stop = ""
    nxt = graph.single_user(cur)
    if nxt is not None and op_name(nxt[1]) == "relax.add":
        args = list(nxt[1].args)
        other = args[1] if args[0].same_as(cur) else args[0]
        vec = _bias_vector(other, graph, channels, channel_axis, ndim)
        if vec is not None and _shape(nxt[0]) == out_shape:
            bias = vec
            chain.append(nxt[0])
            cur = nxt[0]
            nxt = graph.single_user(cur)
        else:
            stop = "the add after it is not a per-channel constant bias: it runs in fp32"
    if not stop and nxt is not None and op_name(nxt[1]) == "relax.nn.relu":
        relu = True
        chain.append(nxt[0])
        cur = nxt[0]
        nxt = graph.single_user(cur)
    if not stop and nxt is not None and op_name(nxt[1]) == "relax.quantize":
        qp = _qparams(nxt[1], graph)
        if qp is not None:
            quant = qp
            chain.append(nxt[0])
            cur = nxt[0]
        else:
            stop = "the QuantizeLinear after it is per-channel or not int8/uint8: output dequantized to fp32"
    if quant is None and not stop:
        if cur in graph.outputs:
            stop = "it produces a float graph output: the int32 accumulator is dequantized to fp32"
        elif nxt is None:
            stop = "its result has several users: the int32 accumulator is dequantized to fp32 for them"
        else:
            stop = (
                f"no QuantizeLinear follows it ({short_op(op_name(nxt[1]))} next): the int32 "
                f"accumulator is dequantized to fp32"
            )

    for v in chain[:-1]:
        plan.skip.add(v)
    plan.anchors[chain[-1]] = {
        "kind": kind,
        "call": call,
        "act": act,
        "w_int": w_int,
        "wq": wq,
        "bias": bias,
        "relu": relu,
        "quant": quant,
        "chain": chain,
        "channel_axis": channel_axis,
        "ndim": ndim,
        "stop": stop,
        "weight_vars": weight_vars,
        "anchor": var,
    }
    return None


def _describe_anchor(info: dict[str, Any]) -> str:
    act, wq = info["act"], info["wq"]
    parts = [
        f"{info['kind']} {act.dtype if act.zp == 0 else 'int16(zp-shifted)'} x "
        f"{info['w_int'].dtype} -> int32 ({'per-channel' if wq.per_channel else 'per-tensor'} weights)"
    ]
    if info["bias"] is not None:
        parts.append("float bias added to the dequantized sums")
    if info["relu"]:
        parts.append("relu")
    if info["quant"] is not None:
        s_y, zp_y, dt = info["quant"]
        parts.append(f"requantize to {dt} (scale {s_y:.6g}, zero point {zp_y})")
    else:
        parts.append("dequantize to float32")
    return ", ".join(parts)


def plan_fold(func: relax.Function) -> tuple[_Plan, _Graph | None, list[str]]:
    from tvm import relax

    notes: list[str] = []
    body = cast("relax.SeqExpr", func.body)  # a normalized function's body; TVM types it as any Expr
    blocks = list(body.blocks)
    if len(blocks) != 1 or not isinstance(blocks[0], relax.DataflowBlock):
        notes.append("the function is not a single dataflow block (control flow?): nothing folded")
        return _Plan(), None, notes
    graph = _Graph(func, blocks[0])
    plan = _Plan()

    # 1. anchors
    for b in graph.bindings:
        name = op_name(b.value)
        if name in ANCHOR_OPS and b.var not in graph.casts:
            why = _plan_anchor(b.var, b.value, graph, plan)
            if why is not None:
                plan.status[b.var] = _Status("fp32", reason=f"{short_op(name)} not folded: {why}")
    # 2. pass-throughs: quantize(op(dequantize(q))) with identical q-params, and q(dq(x))
    for b in graph.bindings:
        if op_name(b.value) != "relax.quantize" or b.var in plan.skip or b.var in plan.anchors:
            continue
        inner_var = b.value.args[0]
        inner = graph.value(inner_var)
        if inner is None or inner_var in graph.casts or b.var in graph.casts:
            continue
        if op_name(inner) == "relax.dequantize":
            if _same_qparams(inner, b.value, graph):
                plan.passthrough[b.var] = ("identity", inner.args[0], None)
            continue
        name = op_name(inner)
        if name == "relax.concat":
            if graph.single_user(inner_var) is not None:
                qs = _concat_inputs(inner, b.value, graph)
                if qs is not None:
                    plan.passthrough[b.var] = ("concat", qs, inner)
                    plan.skip.add(inner_var)
            continue
        if name not in PASSTHROUGH_OPS and name != "relax.nn.relu":
            continue
        if graph.single_user(inner_var) is None:
            continue
        dq = graph.value(inner.args[0])
        if op_name(dq) != "relax.dequantize" or not _same_qparams(dq, b.value, graph):
            continue
        plan.passthrough[b.var] = ("relu" if name == "relax.nn.relu" else "op", dq.args[0], inner)
        plan.skip.add(inner_var)
    return plan, graph, notes


def _concat_inputs(concat: Any, q_call: Any, graph: _Graph) -> list[tvm.ir.Expr] | None:
    """The quantized tensors of a concat whose every input is a dequantize with the scale, zero point and dtype
    of the quantize after it (the x86 quantizer shares one observer over a cat's inputs and output), else None."""
    from tvm import relax

    fields = concat.args[0]
    if isinstance(fields, relax.Var):
        fields = graph.value(fields)
    if not isinstance(fields, relax.Tuple):
        return None
    qs = []
    for f in fields.fields:
        dq = graph.value(f)
        if op_name(dq) != "relax.dequantize" or not _same_qparams(dq, q_call, graph):
            return None
        qs.append(dq.args[0])
    return qs


def _emit_anchor(
    bb: relax.BlockBuilder, info: dict[str, Any], remap: Callable[[tvm.ir.Expr], tvm.ir.Expr]
) -> tvm.ir.Expr:
    """Emit the integer version of one planned anchor chain; returns the exprs to bind last var to."""
    from tvm import relax

    act, call = info["act"], info["call"]
    x = remap(act.var)
    if act.zp != 0:
        x = bb.emit(relax.op.subtract(relax.op.astype(x, "int16"), relax.const(act.zp, "int16")))
    w = relax.const(info["w_int"])
    if info["kind"] == "conv2d":
        a = call.attrs
        acc = bb.emit(
            relax.op.nn.conv2d(
                x,
                w,
                strides=[int(v) for v in a.strides],  # pyright: ignore[reportArgumentType] - TVM takes a list
                padding=[int(v) for v in a.padding],  # pyright: ignore[reportArgumentType] - TVM takes a list
                dilation=[int(v) for v in a.dilation],  # pyright: ignore[reportArgumentType] - TVM takes a list
                groups=int(a.groups),
                data_layout="NCHW",
                kernel_layout="OIHW",
                out_layout="NCHW",
                out_dtype="int32",
            )
        )
    else:
        acc = bb.emit(relax.op.matmul(x, w, out_dtype="int32"))
    ndim, axis = info["ndim"], info["channel_axis"]
    bshape = [1] * ndim
    bshape[axis] = -1
    if info["kind"] == "matmul":
        bshape = [-1]
    # The epilogue is PyTorch INT8's arithmetic on the exact int32 sums: dequantize with the float bias, relu,
    # quantize as x * (1 / scale). (An int32 bias, round(bias / (s_x*s_w)), shifts each sum by up to half an
    # accumulator unit: 10-20x more outputs a step away from PyTorch behind float layers.) The bias is added in
    # accumulator units before the scale, (acc + bias / (s_x*s_w)) * (s_x*s_w): an add feeding a multiply,
    # which LLVM cannot contract into an FMA, so every kernel layout (vnni, sdot, depthwise) rounds alike.
    acc_scale = act.scale * info["wq"].scale  # float64 per output channel
    f = relax.op.astype(acc, "float32")
    if info["bias"] is not None:
        f = relax.op.add(f, relax.const((info["bias"] / acc_scale).astype(np.float32).reshape(bshape)))
    f = relax.op.multiply(f, relax.const(acc_scale.astype(np.float32).reshape(bshape)))
    if info["relu"]:
        f = relax.op.nn.relu(f)
    if info["quant"] is not None:
        s_y, zp_y, dt = info["quant"]
        inv_scale = relax.const(np.float32(1.0 / s_y))  # pyright: ignore[reportArgumentType] - takes numpy scalars
        y = relax.op.round(relax.op.multiply(f, inv_scale))
        if zp_y:
            y = relax.op.add(y, relax.const(np.float32(zp_y)))  # pyright: ignore[reportArgumentType] - takes numpy scalars
        lo, hi = QRANGE[dt]
        return relax.op.astype(relax.op.clip(y, lo, hi), dt)  # pyright: ignore[reportArgumentType] - clip takes ints
    return f


def _rebuild_call(call: tvm.ir.Call, args: list[tvm.ir.Expr]) -> tvm.ir.Call:
    import tvm

    return tvm.ir.Call(call.op, args, call.attrs, list(call.ty_args))


def fold_qdq(mod: tvm.IRModule, provenance: dict[tvm.ir.Var, str] | None = None) -> FoldResult:
    """Apply the fold to mod["main"]; returns the new module and a per-binding report.

    provenance: optional {relax var: onnx node name} used to label the report."""
    import tvm
    from tvm import relax

    func = mod["main"]
    plan, graph, notes = plan_fold(func)
    result = FoldResult(mod=mod, notes=notes)
    if graph is None:
        return result

    mapping: dict[tvm.ir.Var, tvm.ir.Expr] = {}

    def remap(expr: tvm.ir.Expr) -> tvm.ir.Expr:
        if isinstance(expr, relax.Var):
            return mapping.get(expr, expr)
        if isinstance(expr, relax.Tuple):
            return relax.Tuple([remap(f) for f in expr.fields])
        if isinstance(expr, relax.TupleGetItem):
            return relax.TupleGetItem(remap(expr.tuple_value), expr.index)
        return expr

    def bind(old_var: tvm.ir.Var, expr: tvm.ir.Expr) -> None:
        if isinstance(old_var, relax.DataflowVar):
            mapping[old_var] = bb.emit(expr, old_var.name)
        else:
            mapping[old_var] = bb.emit_output(expr, old_var.name)
        result.renamed[cast(relax.Var, mapping[old_var]).name] = old_var.name

    bb = relax.BlockBuilder()
    attrs = dict(func.attrs) if func.attrs is not None else {}
    attrs.pop("global_symbol", None)
    with bb.function("main", list(func.params), attrs=attrs or None):
        with bb.dataflow():
            for b in graph.bindings:
                var, value = b.var, b.value
                if var in plan.skip:
                    continue
                if var in plan.anchors:
                    bind(var, _emit_anchor(bb, plan.anchors[var], remap))
                elif var in plan.passthrough:
                    kind, q, inner = plan.passthrough[var]
                    if kind == "identity":
                        if isinstance(var, relax.DataflowVar):
                            mapping[var] = remap(q)
                        else:
                            bind(var, remap(q))
                    elif kind == "concat":
                        bind(var, _rebuild_call(inner, [relax.Tuple([remap(x) for x in q])]))
                    elif kind == "relu":
                        qparams = _qparams(value, graph)
                        assert qparams is not None  # a relu passes through only between equal per-tensor Q/DQ
                        zp = qparams[1]
                        bind(var, relax.op.maximum(remap(q), relax.const(zp, dtype_of(q))))
                    else:
                        bind(var, _rebuild_call(inner, [remap(q)] + [remap(a) for a in list(inner.args)[1:]]))
                elif isinstance(b, relax.MatchCast):
                    expr = _rebuild_call(value, [remap(a) for a in value.args]) if op_name(value) else remap(value)
                    matched = bb.match_cast(expr, b.ty, var.name)
                    mapping[var] = matched if isinstance(var, relax.DataflowVar) else bb.emit_output(matched)
                elif isinstance(value, tvm.ir.Call):
                    bind(var, _rebuild_call(value, [remap(a) for a in value.args]))
                else:
                    bind(var, remap(value))
        out = remap(func.body.body)
        bb.emit_func_output(out)
    new_mod = bb.get()
    new_func = relax.analysis.remove_all_unused(new_mod["main"])
    new_func = new_func.with_attr("global_symbol", "main")
    out_mod = mod.clone()
    out_mod["main"] = new_func
    result.mod = out_mod
    result.bindings, result.folded = _report(plan, graph, provenance or {})
    return result


def _report(
    plan: _Plan, graph: _Graph, provenance: dict[tvm.ir.Var, str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Per original binding: what happened to it, with the reason when it stays fp32."""
    status: dict[tvm.ir.Var, _Status] = dict(plan.status)
    folded = []
    for info in plan.anchors.values():
        anchor_name = info["anchor"].name
        detail = _describe_anchor(info)
        for v in info["chain"]:
            status[v] = _Status("int8", detail=detail, group=anchor_name)
        status[info["act"].dq_var] = _Status(
            "folded", detail=f"activation dequantize absorbed into {anchor_name}", group=anchor_name
        )
        for v in info["weight_vars"]:
            status[v] = _Status(
                "folded",
                detail=f"weight dequantize/transpose folded into int8 constant of {anchor_name}",
                group=anchor_name,
            )
        # the bias reshape of a folded add
        for v in info["chain"][1:2]:
            call = graph.value(v)
            if op_name(call) == "relax.add":
                for a in call.args:
                    if op_name(graph.value(a)) in ("relax.reshape", "relax.expand_dims"):
                        status[a] = _Status(
                            "folded", detail=f"bias folded into the epilogue of {anchor_name}", group=anchor_name
                        )
        folded.append(
            {
                "anchor": anchor_name,
                "op": info["kind"],
                "onnx_node": provenance.get(info["anchor"]),
                "vars": [v.name for v in info["chain"]],
                "detail": detail,
                "output": "quantized" if info["quant"] is not None else "float32",
                "note": info["stop"] or None,
            }
        )
    for qvar, (kind, q, inner) in plan.passthrough.items():
        if kind == "identity":
            status[qvar] = _Status("folded", detail="quantize(dequantize(q)) with equal parameters removed")
            dq = graph.value(qvar).args[0]
            if len(graph.users.get(dq, [])) == 1:
                status[dq] = _Status("folded", detail="quantize(dequantize(q)) with equal parameters removed")
            continue
        inner_var = graph.value(qvar).args[0]
        if kind == "concat":
            dq_vars = _concat_dq_vars(inner, graph)
            what = f"concat of {len(q)} {dtype_of(q[0])} tensors"
        else:
            dq_vars = [inner.args[0]]
            what = "maximum(q, zero point)" if kind == "relu" else f"{short_op(op_name(inner))} on {dtype_of(q)}"
        detail = f"runs on the quantized tensor: {what} (same scale/zero point before and after)"
        status[inner_var] = _Status("int8", detail=detail, group=inner_var.name)
        status[qvar] = _Status(
            "folded", detail=f"requantize with equal parameters removed ({inner_var.name})", group=inner_var.name
        )
        for dq_var in dq_vars:
            if all(u in (inner_var,) for u in graph.users.get(dq_var, [])):
                status[dq_var] = _Status(
                    "folded", detail=f"dequantize absorbed into {inner_var.name}", group=inner_var.name
                )
        folded.append(
            {
                "anchor": inner_var.name,
                "op": short_op(op_name(inner)),
                "onnx_node": provenance.get(inner_var),
                "vars": [inner_var.name],
                "detail": detail,
                "output": "quantized",
                "note": None,
            }
        )

    rows = []
    for b in graph.bindings:
        name = op_name(b.value)
        st = status.get(b.var)
        if st is None:
            st = _Status("fp32", reason=_fp32_reason(b, graph, plan, status))
        rows.append(
            {
                "var": b.var.name,
                "op": short_op(name) if name else type(b.value).__name__,
                "onnx_node": provenance.get(b.var),
                "precision": st.precision,
                "detail": st.detail or None,
                "reason": st.reason or None,
                "group": st.group,
            }
        )
    return rows, folded


def _concat_dq_vars(concat: Any, graph: _Graph) -> list[tvm.ir.Var]:
    """The dequantize vars a passed-through concat reads."""
    from tvm import relax

    fields = concat.args[0]
    if isinstance(fields, relax.Var):
        fields = graph.value(fields)
    return list(fields.fields)


def _fp32_reason(b: Any, graph: _Graph, plan: _Plan, status: dict[tvm.ir.Var, _Status]) -> str:
    """Why a binding (one of graph.bindings, typed Any there) kept the importer's fp32 code."""
    from tvm import relax

    name = op_name(b.value)
    op = short_op(name)
    if isinstance(b.value, relax.TupleGetItem):
        source = graph.value(b.value.tuple_value)
        return f"one output of {short_op(op_name(source))}, which runs in fp32"
    if name == "relax.quantize":
        src = b.value.args[0]
        if src not in graph.defs:
            return "quantize: quantizes the float graph input (entry boundary, runs in fp32)"
        return f"quantize: its input {src.name} ({short_op(op_name(graph.value(src)))}) is computed in fp32"
    if name == "relax.dequantize":
        if b.var in graph.outputs:
            return "dequantize: float graph output (exit boundary)"
        users = [u for u in graph.users.get(b.var, []) if status.get(u, _Status("fp32")).precision == "fp32"]
        if users:
            return f"dequantize: feeds fp32 op {short_op(op_name(graph.value(users[0])))} ({users[0].name})"
        return "dequantize: kept"
    if name == "relax.add":
        dq_inputs = [a for a in b.value.args if op_name(graph.value(a)) == "relax.dequantize"]
        if len(dq_inputs) == 2:
            return "add: residual add of two dequantized tensors not folded (no integer add with requantize yet)"
        if any(op_name(graph.value(a)) in ANCHOR_OPS for a in b.value.args):
            return "add: not a constant bias directly after a folded conv2d/matmul"
        return "add: no integer pattern for this op"
    if name in ("relax.reshape", "relax.expand_dims") and _const_array(b.var, graph) is not None:
        return f"{op}: reshapes a constant (folded by FoldConstant at build)"
    if name in PASSTHROUGH_OPS or name == "relax.nn.relu":
        return (
            f"{op}: not between a DequantizeLinear and a QuantizeLinear with the same scale and "
            f"zero point, so it cannot run on the quantized tensor"
        )
    if name == "relax.concat":
        return (
            "concat: its inputs are not all dequantized with the scale and zero point of a QuantizeLinear after it, "
            "so it cannot run on the quantized tensors"
        )
    if name in ("relax.nn.avg_pool2d", "relax.nn.adaptive_avg_pool2d", "relax.mean"):
        return f"{op}: averaging needs a requantize (rounding), not folded"
    return f"{op}: no integer pattern for this op"


def count_ops(func: relax.Function) -> dict[str, Any]:
    """Walk a Relax function and count its compute ops per precision: the dtype of the op's data
    input (int8 = int8/uint8 data, int32 = integer ops on an accumulator, float16 = the layers kept
    fp16, float32 = fp32 math).

    Kept apart: conversions (quantize, dequantize, astype), layout ops (reshape, permute, ...), and
    the fp32 requantize epilogue of a folded op (the float ops between its int32->float32 cast and
    the cast back to int8, or the dequantize of a float output), so `per_precision["float32"]`
    counts only the fp32 computation that did not fold."""
    from tvm import relax

    per_precision: dict[str, int] = {"int8": 0, "int32": 0, "float16": 0, "float32": 0}
    anchors: dict[str, int] = {"int8": 0, "int32": 0, "float16": 0, "float32": 0}
    conversions: dict[str, int] = {}
    layout: dict[str, int] = {}
    by_op: dict[str, dict[str, int]] = {}
    epilogue_vars: set[tvm.ir.Var] = set()
    epilogue_ops = 0

    def bindings(expr: tvm.ir.Expr) -> Iterator[relax.Binding]:
        if isinstance(expr, relax.Function):
            yield from bindings(expr.body)
        elif isinstance(expr, relax.SeqExpr):
            for block in expr.blocks:
                yield from block.bindings

    for b in bindings(func):
        value = b.value  # pyright: ignore[reportAttributeAccessIssue] - declared on each kind of Binding, not the base
        name = op_name(value)
        if name is None:
            continue
        data = value.args[0] if len(value.args) else None
        in_dtype = dtype_of(data)
        prec = precision_of_dtype(in_dtype)
        short = short_op(name)
        if name in CONVERT_OPS:
            key = f"{short}:{in_dtype}->{dtype_of(b.var)}"
            conversions[key] = conversions.get(key, 0) + 1
            if name == "relax.astype" and prec in ("int8", "int16", "int32") and dtype_of(b.var) == "float32":
                epilogue_vars.add(b.var)
            continue
        if name in LAYOUT_OPS:
            layout[prec] = layout.get(prec, 0) + 1
            continue
        if (
            data is not None
            and data in epilogue_vars
            and name in ("relax.multiply", "relax.round", "relax.clip", "relax.add", "relax.subtract", "relax.nn.relu")
        ):
            epilogue_vars.add(b.var)
            epilogue_ops += 1
            continue
        per_precision[prec] = per_precision.get(prec, 0) + 1
        by_op.setdefault(short, {})
        by_op[short][prec] = by_op[short].get(prec, 0) + 1
        if name in ANCHOR_OPS or name in ("relax.nn.conv1d", "relax.nn.conv3d", "relax.nn.conv2d_transpose"):
            anchors[prec] = anchors.get(prec, 0) + 1
    return {
        "per_precision": per_precision,
        "anchors_per_precision": anchors,
        "by_op": by_op,
        "requantize_epilogue_ops": epilogue_ops,
        "conversions": conversions,
        "layout_ops": layout,
    }
