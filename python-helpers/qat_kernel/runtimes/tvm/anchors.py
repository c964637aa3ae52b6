"""The fold's int8 anchors that a dot-product rewrite replaces (dotprod.py: aarch64 sdot, vnni.py: x86 vpdpbusd):
conv2d with a constant int8 OIHW weight, one group, NCHW in and out and int32 out; matmul with a constant 2-D int8
weight and int32 out. One Relax mutator finds them; each rewrite says what stands in for them."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    import numpy as np
    import tvm
    from tvm.relax import PyExprMutator

    # on_conv(rewriter, x, w_oihw, padding, strides, dilation), on_matmul(rewriter, x, w_kn): what stands in for
    # the anchor, or None to keep it (see rewrite)
    OnConv = Callable[[PyExprMutator, tvm.ir.Expr, np.ndarray, list[int], list[int], list[int]], tvm.ir.Expr | None]
    OnMatmul = Callable[[PyExprMutator, tvm.ir.Expr, np.ndarray], tvm.ir.Expr | None]


def info(expr: tvm.ir.Expr) -> Any:
    """The type (struct info) of a Relax expression."""
    return getattr(expr, "ty", None) or getattr(expr, "struct_info", None)


def dtype(expr: tvm.ir.Expr) -> str | None:
    """The element type of a Relax expression, None when it has none."""
    return getattr(info(expr), "dtype", None)


def as_replacement(kernel: Any, x_shape: Sequence[Any], x_dtype: str):
    """A PrimFunc written for an anchor's input [N, C, H, W] (N an int or symbolic) readied for call_tir in its
    place: unnamed (the block builder names it) and, for a static batch, specialised to it, since FuseTIR wants
    the fused epilogue's buffer shapes to equal the kernel's. Typed Any: `kernel` is a T.prim_func (TVMScript's
    stub types it Any, and PrimFunc declares no params), a symbolic N a TVM expression (whose arithmetic TVM
    does not type)."""
    import tvm
    from tvm.script import tirx as T

    kernel = kernel.without_attr("global_symbol")
    if isinstance(x_shape[0], int):
        x_buf = tvm.tirx.decl_buffer([T.int64(int(d)) for d in x_shape], x_dtype, "x")
        kernel = kernel.specialize({kernel.params[0]: x_buf})
    return kernel


def const_tensor(const: tvm.ir.expr.Constant) -> Any:
    """A Relax constant's tensor (a tvm.runtime.Tensor: .dtype, .numpy())."""
    return const.value  # pyright: ignore[reportAttributeAccessIssue] - undeclared FFI field


def int8_nchw_conv(call: tvm.ir.Call) -> bool:
    """True for the fold's conv2d: constant int8 OIHW weight, NCHW in and out, int32 accumulator (any groups)."""
    import tvm

    w = call.args[1]
    a: Any = call.attrs  # conv2d attrs: fields TVM declares on no class
    return (
        isinstance(w, tvm.ir.expr.Constant)
        and str(a.out_dtype) == "int32"
        and str(a.data_layout) == "NCHW"
        and str(a.kernel_layout) == "OIHW"
        and str(a.out_layout) == "NCHW"
        and str(const_tensor(w).dtype) == "int8"
    )


def _conv(call: tvm.ir.Call) -> tuple[tvm.ir.Expr, np.ndarray, list[int], list[int], list[int]] | None:
    """(x, OIHW weight as numpy, padding [top, left, bottom, right], strides, dilation) of an anchor conv2d."""
    import tvm

    x, w = call.args
    a: Any = call.attrs  # conv2d attrs: fields TVM declares on no class
    if not (int8_nchw_conv(call) and isinstance(w, tvm.ir.expr.Constant) and int(a.groups) == 1):
        return None
    pads = [int(p) for p in a.padding]
    return x, const_tensor(w).numpy(), pads, [int(s) for s in a.strides], [int(d) for d in a.dilation]


def _matmul(call: tvm.ir.Call) -> tuple[tvm.ir.Expr, np.ndarray] | None:
    """(x, [K, N] weight as numpy) of an anchor matmul."""
    import tvm

    x, w = call.args
    a: Any = call.attrs  # matmul attrs: fields TVM declares on no class
    if not (
        isinstance(w, tvm.ir.expr.Constant)
        and str(a.out_dtype) == "int32"
        and str(const_tensor(w).dtype) == "int8"
        and const_tensor(w).numpy().ndim == 2
    ):
        return None
    return x, const_tensor(w).numpy()


def emit(bb: tvm.relax.BlockBuilder, expr: tvm.ir.Expr) -> tvm.relax.Var:
    """Binds `expr` in the rewriter's block (its builder_) under a name no binding of the module has (anchor_<n>):
    the kernels' graph (kernel_graph.py) reads each binding's ONNX nodes by its name, and a default name (lv, lv1,
    ...) may be another layer's."""
    return bb.emit(expr, name_hint=f"anchor_{next(_names)}")


_names = itertools.count(1)


def rewrite(mod: tvm.IRModule, on_conv: OnConv, on_matmul: OnMatmul) -> tuple[tvm.IRModule, int]:
    """(module, anchors replaced). on_conv(rewriter, x, w_oihw, padding, strides, dilation) and
    on_matmul(rewriter, x, w_kn) return what stands in for the call, or None to keep it; `rewriter` is the
    relax.PyExprMutator (its builder_ emits bindings, lookup_binding reads a variable's value)."""
    import tvm
    from tvm import relax

    conv_op = tvm.ir.Op.get("relax.nn.conv2d")
    matmul_op = tvm.ir.Op.get("relax.matmul")
    count = [0]

    @relax.expr_functor.mutator
    class Rewriter(relax.PyExprMutator):
        def visit_call_(self, op: tvm.ir.Call):
            call = self.visit_expr_post_order(op)
            if not isinstance(call, tvm.ir.Call) or not isinstance(call.op, tvm.ir.Op):
                return call
            new = None
            if call.op.same_as(conv_op):
                anchor = _conv(call)
                new = None if anchor is None else on_conv(self, *anchor)
            elif call.op.same_as(matmul_op):
                anchor = _matmul(call)
                new = None if anchor is None else on_matmul(self, *anchor)
            if new is None:
                return call
            count[0] += 1
            return new

    rewriter = Rewriter(mod)
    for gv, func in mod.functions_items():
        if isinstance(func, relax.Function):
            # visiting a Function gives a Function; TVM types the result as any Expr
            rewriter.builder_.update_func(gv, cast(relax.Function, rewriter.visit_expr(func)))
    return relax.transform.Normalize()(rewriter.builder_.get()), count[0]
