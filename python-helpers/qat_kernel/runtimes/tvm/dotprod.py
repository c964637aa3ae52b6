"""int8 dot-product kernels for aarch64 targets with `+dotprod` (sdot: four s8 x s8 products summed into each
s32 lane, 16 products an instruction).

LLVM (22 in TVM 0.27) turns a reduction loop over a contiguous int8 axis, both operands sign-extended to int32,
into sdot when the target has +dotprod; it cannot for u8 x s8 (that is usdot, +i8mm) nor for a reduction whose
loads are strided. The fold's int8 anchors read u8 activations in NCHW, where the reduced input channels are
H*W apart. This Relax pass, run after the fold for such targets, rewrites each int8 conv2d / matmul with a
constant int8 weight so that both hold:

    conv2d(x_u8, W[O, I, kh, kw], padding p)                       (NCHW, OIHW)
      -> permute back to NCHW: conv2d(permute(int8(pad(x_u8, p, 0) - 128)) [N, H, W, C], W as OHWI, padding 0)
         + 128 * sum(W[o, ...])                                     (int32 constant per output channel)
    matmul(x_u8 [M, K], W[K, N])  -> the same as a 1x1 conv on [M, 1, 1, K]

Exact: sum((x - 128) * w) + 128 * sum(w) == sum(x * w) for every output; the padding is done in the u8
domain first, so a padded tap is (0 - 128) and its compensation cancels it, as the 0 it stands for. An s8
activation keeps its values (no shift). The output stays NCHW int32, so the epilogue (bias, requantize) and
everything after it are unchanged. Kernels a rule cannot match (depthwise and grouped convs, dynamic weights,
int16 activations of a non-zero zero point) keep the fold's code; `rewritten` counts what changed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from qat_kernel.runtimes.tvm import anchors, kernel_rules

if TYPE_CHECKING:
    import tvm
    from tvm.relax import PyExprMutator
    from tvm.s_tir import Schedule
    from tvm.s_tir.schedule import SBlockRV

SHIFT = 128
BLOCK = "conv2d_sdot"  # the TE block (and PrimFunc name hint) of the rewritten kernels


def wants_dotprod(target: dict[str, Any]) -> bool:
    """True for an LLVM aarch64 target whose mattr has +dotprod (and not +i8mm, whose usdot takes u8 x s8
    directly)."""
    if target.get("kind") != "llvm":
        return False
    triple = str(target.get("mtriple", ""))
    mattr = target.get("mattr") or []
    if isinstance(mattr, str):
        mattr = mattr.split(",")
    return triple.startswith(("aarch64", "arm64")) and "+dotprod" in mattr and "+i8mm" not in mattr


_dtype = anchors.dtype


def conv_nhwc_s8(x: Any, w: Any, strides: Sequence[int], dilation: Sequence[int]):
    """TE: out[n, o, y, x] (NCHW, int32) = sum over ky, kx, c (c innermost: contiguous in both operands) of
    x[n, y*s + ky*d, x*s + kx*d, c] * w[o, ky, kx, c], with x NHWC int8 (already padded), w OHWI int8. x and w
    typed Any: te.Tensor declares no shape."""
    from tvm import te

    n, h, wd, c = x.shape
    o, kh, kw, _ = w.shape
    (sh, sw), (dh, dw) = strides, dilation
    oh = (h - (kh - 1) * dh - 1) // sh + 1
    ow = (wd - (kw - 1) * dw - 1) // sw + 1
    # reduce axes: TVM types them as IterVars, which declare no index arithmetic
    ry: Any = te.reduce_axis((0, kh), "ry")
    rx: Any = te.reduce_axis((0, kw), "rx")
    rc: Any = te.reduce_axis((0, c), "rc")
    return te.compute(
        (n, o, oh, ow),
        lambda b, f, yy, xx: te.sum(
            x[b, yy * sh + ry * dh, xx * sw + rx * dw, rc].astype("int32") * w[f, ry, rx, rc].astype("int32"),
            axis=[ry, rx, rc],
        ),
        name=BLOCK,
    )


def _shape(expr: tvm.ir.Expr) -> Any:
    for attr in ("struct_info", "ty"):
        shape = getattr(getattr(expr, attr, None), "shape", None)
        if shape is not None:
            return shape
    return None


def rewrite(mod: tvm.IRModule) -> tuple[tvm.IRModule, int]:
    """(module, rewritten anchors): the fold's int8 conv2d/matmul laid out for sdot (see the module doc)."""
    from tvm import relax

    def as_s8(bb: relax.BlockBuilder, x: tvm.ir.Expr) -> tuple[tvm.ir.Expr, int]:
        if _dtype(x) == "int8":
            return x, 0
        wide = anchors.emit(bb, relax.op.astype(x, "int16"))
        shifted = anchors.emit(bb, relax.op.subtract(wide, relax.const(SHIFT, "int16")))
        return anchors.emit(bb, relax.op.astype(shifted, "int8")), SHIFT

    def nhwc_conv(
        bb: relax.BlockBuilder,
        xs: tvm.ir.Expr,
        w_ohwi: np.ndarray,
        shift: int,
        strides: Sequence[int],
        dilation: Sequence[int],
    ) -> tvm.ir.Expr:
        weight = relax.const(np.ascontiguousarray(w_ohwi, dtype=np.int8))
        y = bb.emit_te(
            conv_nhwc_s8,
            anchors.emit(bb, relax.op.permute_dims(xs, [0, 2, 3, 1])),
            weight,
            strides,
            dilation,
            primfunc_name_hint=BLOCK,
            primfunc_attrs={"op_pattern": 4},  # kOutEWiseFusable: the epilogue fuses into it, as into conv2d
        )
        if shift:
            comp = shift * w_ohwi.astype(np.int64).sum(axis=(1, 2, 3))
            y = anchors.emit(bb, relax.op.add(y, relax.const(comp.reshape(1, -1, 1, 1).astype(np.int32))))
        return y

    def conv(
        rewriter: PyExprMutator,
        x: tvm.ir.Expr,
        w_oihw: np.ndarray,
        pad: list[int],
        strides: list[int],
        dilation: list[int],
    ) -> tvm.ir.Expr | None:
        if _dtype(x) not in ("uint8", "int8"):
            return None
        bb = rewriter.builder_
        if any(pad):  # top, left, bottom, right
            x = anchors.emit(bb, relax.op.nn.pad(x, [0, 0, 0, 0, pad[0], pad[2], pad[1], pad[3]], pad_value=0.0))
        xs, shift = as_s8(bb, x)
        return nhwc_conv(bb, xs, w_oihw.transpose(0, 2, 3, 1), shift, strides, dilation)

    def matmul(rewriter: PyExprMutator, x: tvm.ir.Expr, w_kn: np.ndarray) -> tvm.ir.Expr | None:
        shape = _shape(x)
        if _dtype(x) not in ("uint8", "int8") or shape is None or len(shape) != 2:
            return None
        bb = rewriter.builder_
        k, n = w_kn.shape
        batch = shape[0]
        xs, shift = as_s8(bb, x)
        shape4 = relax.ShapeExpr([batch, k, 1, 1])  # pyright: ignore[reportArgumentType] - TVM takes ints
        x4 = anchors.emit(bb, relax.op.reshape(xs, shape4))
        y = nhwc_conv(bb, x4, w_kn.T.reshape(n, 1, 1, k), shift, [1, 1], [1, 1])
        return relax.op.reshape(y, relax.ShapeExpr([batch, n]))

    return anchors.rewrite(mod, conv, matmul)


def schedule_rule():
    """A dlight CPU rule for the conv2d_sdot kernels, ahead of schedule.py's rules (whose vectorized output
    tiles would put a spatial loop innermost and lose sdot): (batch, output channel) fused and parallel, the
    reduction kept in order with the input channels innermost, the epilogue computed per output element right
    after its sum; the producers (pad, shift to s8, NHWC transpose) stay separate passes, parallel over their
    outer loop. A kernel this cannot schedule keeps TVM's unscheduled code (still sdot), never another rule."""

    def schedule(sch: Schedule, conv: SBlockRV) -> None:
        root = sch.get_sblock("root")
        blocks = list(sch.get_child_blocks(root))
        index = [kernel_rules.sblock(sch, b).name_hint for b in blocks].index(BLOCK)
        consumers = blocks[index + 1 :]
        for c in consumers[:-1]:
            sch.compute_inline(c)
        n, f, _y, x, _ry, _rx, _rc = sch.get_loops(conv)
        sch.parallel(sch.fuse(n, f))  # pyright: ignore[reportArgumentType] - takes loops, typed lists
        if consumers:
            sch.reverse_compute_at(consumers[-1], x, preserve_unit_loops=True)
        for b in blocks[:index]:
            loops = sch.get_loops(b)
            if len(loops) >= 2:
                sch.parallel(sch.fuse(loops[0], loops[1]))  # pyright: ignore[reportArgumentType] - takes loops, typed lists

    return kernel_rules.block_rule(BLOCK, schedule)
