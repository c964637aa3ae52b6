"""int8 depthwise conv2d on x86, vectorized over channels (any x86 target, VNNI or not).

A depthwise conv (groups == channels, one weight plane per channel) has no reduction over channels, so
vpdpbusd (which sums four input channels) does not fit it, and in NCHW its per-channel planes leave the packed
rule a 16-channel weight vector against one broadcast input at a time. This Relax pass, run after the fold,
replaces each int8 depthwise conv2d with a constant int8 weight [C, 1, kh, kw] (groups == C, NCHW, int32 out)
by one kernel that works on 16 channels at once:

    xp[n, c/16, h, w, c%16]  = pad(x), channels padded to a multiple of 16 with 0    (a pass over the input)
    acc[n, c/16, y, x, 0:16] = sum over ky, kx of xp[n, c/16, y*s + ky*d, x*s + kx*d, 0:16] * Wp[c/16, 0, ky, kx]
    out[n, c, y, x]          = acc[n, c/16, y, x, c%16]          (NCHW again, for the fused epilogue)

Wp is the weight repacked with numpy at build time to [C/16, 1, kh, kw, 16] (zero weights for padded
channels). The activation is read as it comes -- u8, s8 or the fold's int16 (x - zero point) -- and widened
to int32 lanes, padding 0 as the conv pads, so no correction term is needed. Integer sums are exact in any
order: the outputs equal the previous build's bit for bit.

schedule_rule() then computes per (batch, channel block, output row), in parallel, tiles of X output columns x
16 int32 lanes kept in registers, the (ky, kx) loop outside the tile, and the fused epilogue (bias, requantize,
relu, residual) from the tile while it is hot; the layout pass runs parallel over (batch, channel block).

Which convs (widest()): on AVX512 targets all strided ones, and stride-1 ones with output rows at most WIDE
(16) wide. Per-kernel table of MobileNetV2 INT8 at 224, batch 1 (benchmarks/tvm_kernels, shared 2-core EPYC
Zen 4, noisy), GMAC/s before -> with this kernel: stride 2 1.8 -> 6.9 (56x56), 1.8 -> 6.2 (28x28), 2.5 -> 5.4
(14x14), 2.2 -> 5.3 (7x7); stride 1 7x7 4.9 -> 8.4, 14x14 ~9.8 -> ~9.1 (a tie), but 28x28 13.5 -> 9.4, 56x56
18.6 -> 12.0, 112x112 14.1 -> 11.8: there schedule.py's kernels, which vectorize along contiguous NCHW rows of
16 lanes with no layout pass, stay. Without AVX512 (8-lane rows) every depthwise conv takes this kernel:
3x3 stride 1, symbolic batch, on a 2-core AVX2-only EPYC, GMAC/s schedule.py's -> this: 144 channels 28x28
batch 16 6.1 -> 17.0; 32 channels 56x56 batch 1 2.1 -> 9.3, batch 16 3.8 -> 13.3; 144 x 56x56 2.9 -> 8.7;
32 x 112x112 batch 16 7.6 -> 10.6, batch 1 9.3 -> 8.3 (the one loss, within the machine's noise)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from qat_kernel.runtimes.tvm import anchors, kernel_rules

if TYPE_CHECKING:
    import tvm
    from tvm.s_tir import Schedule
    from tvm.s_tir.schedule import SBlockRV

BLOCK = "conv2d_depthwise"  # the reduction block (and PrimFunc name hint) of the rewritten kernels
PACK = "depthwise_pack"  # the block that lays the activation out
UNPACK = "depthwise_unpack"  # the block that copies the accumulator to NCHW
LANES = 16  # channels per block: 16 int32 lanes (one zmm, or two ymm without AVX512)
COLS = (8, 7, 6, 5, 4, 3, 2, 1)
# on AVX512 targets, stride-1 convs whose output rows are wider than this keep schedule.py's kernels, which
# vectorize along the (contiguous) rows and need no layout pass: faster there, measured on MobileNetV2 (module doc)
WIDE = 16  # output columns per register tile, the largest that divides the width


def widest(target: object) -> int | None:
    """The widest stride-1 output row this kernel takes on an x86 target: WIDE where it has AVX512 (schedule.py's
    row kernels are faster on wider rows there), None (any) without: on AVX2's 8 lanes this kernel was faster at
    every width measured (module doc)."""
    import tvm
    from tvm.target import codegen

    if isinstance(target, dict):
        target = tvm.target.Target(target)
    return WIDE if codegen.target_has_features("avx512f", target) else None


def is_x86(target: object) -> bool:
    """Whether a TVM target (or target dict) is an LLVM x86 CPU target (anything else is not)."""
    import tvm

    if isinstance(target, dict):
        if target.get("kind") != "llvm":
            return False
        return str(target.get("mtriple", "x86_64") or "x86_64").startswith(("x86_64", "i686"))
    if not isinstance(target, tvm.target.Target):
        return False
    if target.kind.name != "llvm":  # pyright: ignore[reportAttributeAccessIssue] - a TargetKind, typed str
        return False
    triple = str(target.attrs.get("mtriple", "") or "")  # pyright: ignore[reportAttributeAccessIssue] - a Map, typed str
    if triple:
        return triple.startswith(("x86_64", "i686"))
    import platform

    return platform.machine().lower() in ("x86_64", "amd64", "i686")


def pack_weight(w_c1hw: np.ndarray) -> np.ndarray:
    """[C, 1, kh, kw] int8 -> [C/16, 1, kh, kw, 16] (channels zero-padded to a multiple of 16)."""
    c, _one, kh, kw = w_c1hw.shape
    cb = -(-c // LANES)
    w = np.zeros((cb * LANES, kh, kw), dtype=np.int8)
    w[:c] = w_c1hw[:, 0]
    return np.ascontiguousarray(w.reshape(cb, LANES, kh, kw).transpose(0, 2, 3, 1)[:, None])


def conv_kernel(
    x_shape: Sequence[Any],
    x_dtype: str,
    w_shape: Sequence[int],
    padding: Sequence[int],
    strides: Sequence[int],
    dilation: Sequence[int],
):
    """PrimFunc (x, packed w) -> NCHW int32 (see the module doc): block PACK, the reduction block BLOCK over
    an [N, C/16, OH, OW, 16] accumulator, block UNPACK. x_shape: [N, C, H, W], N an int or symbolic (a TVM
    expression, which TVM does not type)."""
    from tvm.script import tirx as T

    c, h, wd = (int(d) for d in x_shape[1:])
    cb, _one, kh, kw, lanes = (int(d) for d in w_shape)
    pt, pl, pb, pr = padding
    (sh, sw), (dh, dw) = strides, dilation
    hp, wp = h + pt + pb, wd + pl + pr
    oh = (hp - (kh - 1) * dh - 1) // sh + 1
    ow = (wp - (kw - 1) * dw - 1) // sw + 1
    xp_dtype = "uint8" if x_dtype == "uint8" else "int16"

    @T.prim_func(s_tir=True)
    def kernel(var_x: T.handle, var_w: T.handle, var_out: T.handle):
        T.func_attr({"op_pattern": 4, "tirx.noalias": True})  # kOutEWiseFusable: the epilogue fuses in
        n = T.int64()
        x = T.match_buffer(var_x, (n, T.int64(c), T.int64(h), T.int64(wd)), x_dtype)
        w = T.match_buffer(var_w, [T.int64(d) for d in (cb, 1, kh, kw, lanes)], "int8")
        out = T.match_buffer(var_out, (n, T.int64(c), T.int64(oh), T.int64(ow)), "int32")
        xp = T.sblock_alloc_buffer((n, cb, hp, wp, lanes), xp_dtype)
        acc = T.sblock_alloc_buffer((n, cb, oh, ow, lanes), "int32")
        for b, cc, yy, xx, ci in T.grid(n, cb, hp, wp, lanes):
            with T.sblock(PACK):
                vb, vc, vy, vx, vi = T.axis.remap("SSSSS", [b, cc, yy, xx, ci])
                xp[vb, vc, vy, vx, vi] = T.if_then_else(
                    vc * lanes + vi < c and pt <= vy and vy < h + pt and pl <= vx and vx < wd + pl,
                    T.Cast(xp_dtype, x[vb, vc * lanes + vi, vy - pt, vx - pl]),
                    T.Cast(xp_dtype, 0),
                )
        for b, cc, yy, xx, li, ry, rx in T.grid(n, cb, oh, ow, lanes, kh, kw):
            with T.sblock(BLOCK):
                vb, vc, vy, vx, vl, vky, vkx = T.axis.remap("SSSSSRR", [b, cc, yy, xx, li, ry, rx])
                with T.init():
                    acc[vb, vc, vy, vx, vl] = 0
                acc[vb, vc, vy, vx, vl] = acc[vb, vc, vy, vx, vl] + T.Cast(
                    "int32", xp[vb, vc, vy * sh + vky * dh, vx * sw + vkx * dw, vl]
                ) * T.Cast("int32", w[vc, 0, vky, vkx, vl])
        for b, f, yy, xx in T.grid(n, c, oh, ow):
            with T.sblock(UNPACK):
                vb, vf, vy, vx = T.axis.remap("SSSS", [b, f, yy, xx])
                out[vb, vf, vy, vx] = acc[vb, vf // lanes, vy, vx, vf % lanes]

    return anchors.as_replacement(kernel, x_shape, x_dtype)


_info = anchors.info


def _anchor(
    call: tvm.ir.Call, wide: int | None
) -> tuple[tvm.ir.Expr, list[Any], np.ndarray, list[int], list[int], list[int]] | None:
    """(x, [C, 1, kh, kw] weight as numpy, padding, strides, dilation) of a depthwise int8 conv2d, else None."""
    import tvm

    from qat_kernel.runtimes.tvm import anchors

    x, w = call.args
    a: Any = call.attrs  # conv2d attrs: fields TVM declares on no class
    if not (
        anchors.int8_nchw_conv(call)
        and isinstance(w, tvm.ir.expr.Constant)
        and anchors.dtype(x) in ("uint8", "int8", "int16")
    ):
        return None
    weight = anchors.const_tensor(w).numpy()
    shape = getattr(getattr(_info(x), "shape", None), "values", None)
    if shape is None or len(shape) != 4 or weight.ndim != 4:
        return None
    dims = list(shape)[1:]
    if not all(isinstance(d, (int, tvm.tirx.IntImm)) for d in dims):
        return None
    c = int(dims[0])
    if int(a.groups) != c or c < 2 or weight.shape[0] != c or weight.shape[1] != 1:
        return None
    first = list(shape)[0]
    x_shape = [int(first) if isinstance(first, tvm.tirx.IntImm) else first, *(int(d) for d in dims)]
    pads = [int(p) for p in a.padding]
    strides, dilation = [int(s) for s in a.strides], [int(d) for d in a.dilation]
    kw = weight.shape[3]
    ow = (x_shape[3] + pads[1] + pads[3] - (kw - 1) * dilation[1] - 1) // strides[1] + 1
    if strides == [1, 1] and wide is not None and ow > wide:
        return None
    return x, x_shape, weight, pads, strides, dilation


def rewrite(mod: tvm.IRModule, wide: int | None = WIDE) -> tuple[tvm.IRModule, int]:
    """(module, rewritten convs): the fold's int8 depthwise conv2d as channel-blocked kernels (module doc); wide:
    the widest stride-1 output row taken (widest() of the target; None: any)."""
    import tvm
    from tvm import relax

    from qat_kernel.runtimes.tvm import anchors

    conv_op = tvm.ir.Op.get("relax.nn.conv2d")
    count = [0]

    @relax.expr_functor.mutator
    class Rewriter(relax.PyExprMutator):
        def visit_call_(self, op: tvm.ir.Call):
            call = self.visit_expr_post_order(op)
            if not (isinstance(call, tvm.ir.Call) and call.op.same_as(conv_op)):
                return call
            anchor = _anchor(call, wide)
            if anchor is None:
                return call
            x, x_shape, weight, pads, strides, dilation = anchor
            packed = pack_weight(weight)
            x_dtype, out = anchors.dtype(x), _info(call)
            assert x_dtype is not None and out is not None  # _anchor took a typed int8 conv
            kernel = conv_kernel(x_shape, x_dtype, packed.shape, pads, strides, dilation)
            gv = self.builder_.add_func(kernel, BLOCK)
            count[0] += 1
            # not emitted: it replaces the conv in its own binding (so FuseOps fuses the epilogue in)
            args, out_ty = [x, relax.const(packed)], relax.TensorType(out.shape, "int32")
            return relax.call_tir(gv, args, out_ty)  # pyright: ignore[reportArgumentType] - TVM takes a list

    rewriter = Rewriter(mod)
    for gv, func in mod.functions_items():
        if isinstance(func, relax.Function):
            # visiting a Function gives a Function; TVM types the result as any Expr
            rewriter.builder_.update_func(gv, cast(relax.Function, rewriter.visit_expr(func)))
    return relax.transform.Normalize()(rewriter.builder_.get()), count[0]


def schedule_rule():
    """A dlight CPU rule for the conv2d_depthwise kernels, ahead of schedule.py's rules (see the module doc)."""
    from tvm.s_tir.dlight.base.utils import get_extent

    def schedule(sch: Schedule, conv: SBlockRV) -> None:
        last = kernel_rules.inline_around(sch, BLOCK, PACK)
        n, cb, y, x, lane, ry, rx = sch.get_loops(conv)
        width = get_extent(sch, x)
        assert isinstance(width, int)  # a symbolic width leaves the kernel unscheduled
        cols = next(t for t in COLS if width % t == 0)
        xo, xi = sch.split(x, factors=[None, cols])
        sch.reorder(n, cb, y, xo, ry, rx, xi, lane)  # pyright: ignore[reportArgumentType] - takes loops, typed lists
        sch.parallel(sch.fuse(n, cb, y))  # pyright: ignore[reportArgumentType] - takes loops, typed lists
        sch.reverse_compute_at(last, xo, preserve_unit_loops=True)
        sch.vectorize(lane)
        sch.unroll(xi)
        init = sch.decompose_reduction(conv, ry)
        iloops = sch.get_loops(init)
        sch.vectorize(iloops[-1])
        sch.unroll(iloops[-2])
        tail = sch.get_loops(last)[-1]  # the epilogue's columns: contiguous NCHW stores
        sch.vectorize(tail)
        pack = sch.get_sblock(PACK)
        ploops = sch.get_loops(pack)
        sch.parallel(sch.fuse(ploops[0], ploops[1]))  # pyright: ignore[reportArgumentType] - takes loops, typed lists
        sch.vectorize(ploops[-1])

    return kernel_rules.block_rule(BLOCK, schedule)
