"""int8 conv2d / dense on x86 VNNI (vpdpbusd: four u8 x s8 products summed into each s32 lane, 64 products an
instruction with AVX512-VNNI, 32 with AVX-VNNI), for targets whose CPU has it.

vpdpbusd multiplies u8 by s8, exactly the fold's operands (u8 activations of zero point 0, s8 weights), but it
reads four consecutive input channels of one pixel as one 32-bit word, which NCHW spreads H*W apart. This Relax
pass, run after the fold, replaces each int8 conv2d / matmul with a constant int8 weight by one kernel:

    conv2d(x [N, C, H, W], W[O, C, kh, kw], padding p)            (NCHW, OIHW, int32 out)
      -> xp[n, c/4, h, w, c%4]  = pad(x) as u8, channels padded to a multiple of 4   (a pass over the input)
         acc[n, o/L, y, x, 0:L] = sum over c/4, ky, kx of vpdpbusd(xp[.., 0:4] broadcast, Wp[o/L, c/4, ky, kx])
         out[n, o, y, x]        = acc[n, o/L, y, x, o%L]            (NCHW again, for the fused epilogue)
    matmul(x [M, K], W[K, N]) -> the same as a 1x1 conv on [M, K, 1, 1]

Wp is the weight repacked with numpy at build time to [O/L, C/4, kh, kw, L, 4] (L = 16 int32 lanes with AVX512,
8 with AVX-VNNI only): one (c/4, ky, kx) step is one 64-byte (32-byte) register. An s8 activation is shifted to
u8 (x + 128, padding 0 -> 128) and 128 * sum(W) subtracted; an int16 activation the fold made as int16(x_u8) - zp
is read as x_u8 padded with zp and zp * sum(W) subtracted. Integer sums are exact in any order, so the outputs
equal the packed build's bit for bit. Output channels not a multiple of L are padded with zero weights (the
accumulator tile computes them, the copy to NCHW drops them). Kernels that do not match (depthwise and grouped
convs, dynamic weights) keep schedule.py's kernels; `rewritten` counts what changed.

schedule_rule() then computes a register tile of F x L output channels x X columns, as schedule.py's packed rule
does, with the fused epilogue (bias, requantize, residual) computed from the tile while it is hot.

Why the step is the LLVM call written into the kernel and not a tensorized TVM intrinsic: s_tir's tensorize
copies the intrinsic through tvm.ir.save_json, which segfaults in apache-tvm-ffi 0.1.15 (ToJSONGraph) for any
object, even an IntImm, so every tensorize crashes -- the earlier segfault. TVM's own dot_16x4_vnni would fail
next anyway: it passes <16 x i32> operands, and LLVM 22 declares llvm.x86.avx512.vpdpbusd.512 as
(<16 x i32>, <64 x i8>, <64 x i8>) (LLVM's verifier rejects the call)."""

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

BLOCK = "conv2d_vnni"  # the reduction block (and PrimFunc name hint) of the rewritten kernels
PACK = "vnni_pack"  # the block that lays the activation out
SHIFT = 128
GROUP = 4  # input channels per 32-bit word
UNPACK = "vnni_unpack"  # the block that copies the accumulator to NCHW
TILE = [2, 8]  # at most F channel blocks x X columns of accumulators (16 of the 32 zmm registers)
_LLVM = {16: "llvm.x86.avx512.vpdpbusd.512", 8: "llvm.x86.avx512.vpdpbusd.256"}  # (acc, u8 x 4L, s8 x 4L)


def vnni_lanes(target: dict[str, Any] | tvm.target.Target) -> int:
    """int32 lanes of vpdpbusd on an LLVM x86 target: 16 with avx512vnni, 8 with avxvnni only, 0 without."""
    import tvm
    from tvm.target import codegen

    if isinstance(target, dict):
        if target.get("kind") != "llvm" or not str(target.get("mtriple", "x86_64")).startswith(("x86_64", "i686")):
            return 0
        try:
            target = tvm.target.Target(target)
        except Exception:  # noqa: BLE001 - not a target LLVM takes
            return 0
    if target.kind.name != "llvm":  # pyright: ignore[reportAttributeAccessIssue] - a TargetKind, typed str
        return 0
    triple = str(target.attrs.get("mtriple", "") or "")  # pyright: ignore[reportAttributeAccessIssue] - a Map, typed str
    if triple and not triple.startswith(("x86_64", "i686")):
        return 0
    if codegen.target_has_features("avx512vnni", target):
        return 16
    if codegen.target_has_features("avxvnni", target):
        return 8
    return 0


def pack_weight(w_oihw: np.ndarray, lanes: int) -> np.ndarray:
    """OIHW int8 -> [O/L, C/4, kh, kw, L, 4] (input channels zero-padded to a multiple of 4, output channels to
    a multiple of L)."""
    o, c, kh, kw = w_oihw.shape
    c4, ol = -(-c // GROUP), -(-o // lanes)
    w = np.zeros((ol * lanes, c4 * GROUP, kh, kw), dtype=np.int8)
    w[:o, :c] = w_oihw
    w = w.reshape(ol, lanes, c4, GROUP, kh, kw).transpose(0, 2, 4, 5, 1, 3)
    return np.ascontiguousarray(w)


def conv_kernel(
    x_shape: Sequence[Any],
    x_dtype: str,
    w_shape: Sequence[int],
    padding: Sequence[int],
    strides: Sequence[int],
    dilation: Sequence[int],
    shift: int,
    pad_value: int,
    o: int | None = None,
):
    """PrimFunc (x, packed w) -> NCHW int32: x (NCHW uint8, or int8 read as x + shift) padded with pad_value
    (u8 domain) and laid out [N, C/4, H, W, 4] (block PACK), then per output pixel and L channels a
    reduction over (c/4, ky, kx) whose step is one vpdpbusd on an [N, O/L, H, W, L] accumulator (block
    BLOCK), then copied to NCHW. The step is written as the LLVM call itself, not tensorized: s_tir's
    tensorize copies the intrinsic through tvm.ir.save_json, which crashes with apache-tvm-ffi 0.1.15. x_shape:
    [N, C, H, W], N an int or symbolic (a TVM expression, which TVM does not type)."""
    from tvm.script import tirx as T

    c, h, wd = (int(d) for d in x_shape[1:])
    ol, c4, kh, kw, lanes, _ = (int(d) for d in w_shape)
    pt, pl, pb, pr = padding
    (sh, sw), (dh, dw) = strides, dilation
    hp, wp = h + pt + pb, wd + pl + pr
    oh = (hp - (kh - 1) * dh - 1) // sh + 1
    ow = (wp - (kw - 1) * dw - 1) // sw + 1
    o = ol * lanes if o is None else int(o)  # the output channels (the packed weight may pad them)
    llvm = _LLVM[lanes]
    nbytes = lanes * GROUP

    @T.prim_func(s_tir=True)
    def kernel(var_x: T.handle, var_w: T.handle, var_out: T.handle):
        T.func_attr({"op_pattern": 4, "tirx.noalias": True})  # kOutEWiseFusable: the epilogue fuses in
        n = T.int64()  # the batch (made static below when the call's is)
        # int64 shapes, as Relax's: FuseTIR maps the epilogue's buffers onto these
        x = T.match_buffer(var_x, (n, T.int64(c), T.int64(h), T.int64(wd)), x_dtype)
        w = T.match_buffer(var_w, [T.int64(d) for d in (ol, c4, kh, kw, lanes, GROUP)], "int8")
        out = T.match_buffer(var_out, (n, T.int64(o), T.int64(oh), T.int64(ow)), "int32")
        xp = T.sblock_alloc_buffer((n, c4, hp, wp, GROUP), "uint8")
        acc = T.sblock_alloc_buffer((n, ol, oh, ow, lanes), "int32")
        for b, cc, yy, xx, ci in T.grid(n, c4, hp, wp, GROUP):
            with T.sblock(PACK):
                vb, vc, vy, vx, vi = T.axis.remap("SSSSS", [b, cc, yy, xx, ci])
                xp[vb, vc, vy, vx, vi] = T.if_then_else(
                    vc * GROUP + vi < c,
                    T.if_then_else(
                        pt <= vy and vy < h + pt and pl <= vx and vx < wd + pl,
                        T.Cast("uint8", T.Cast("int32", x[vb, vc * GROUP + vi, vy - pt, vx - pl]) + shift),
                        T.uint8(pad_value),
                    ),
                    T.uint8(0),  # padded channels meet zero weights
                )
        for b, fo, yy, xx, rc, ry, rx in T.grid(n, ol, oh, ow, c4, kh, kw):
            with T.sblock(BLOCK):
                vb, vf, vy, vx, vc, vky, vkx = T.axis.remap("SSSSRRR", [b, fo, yy, xx, rc, ry, rx])
                T.reads(
                    acc[vb, vf, vy, vx, 0:lanes],
                    xp[vb, vc, vy * sh + vky * dh, vx * sw + vkx * dw, 0:GROUP],
                    w[vf, vc, vky, vkx, 0:lanes, 0:GROUP],
                )
                T.writes(acc[vb, vf, vy, vx, 0:lanes])
                with T.init():
                    acc[vb, vf, vy, vx, T.ramp(0, 1, lanes)] = T.broadcast(T.int32(0), lanes)
                word = T.reinterpret(
                    xp.vload([vb, vc, vy * sh + vky * dh, vx * sw + vkx * dw, 0], "uint8x4"), dtype="int32"
                )
                acc[vb, vf, vy, vx, T.ramp(0, 1, lanes)] = T.call_llvm_pure_intrin(
                    f"int32x{lanes}",
                    llvm,
                    acc.vload([vb, vf, vy, vx, 0], f"int32x{lanes}"),
                    T.reinterpret(T.broadcast(word, lanes), dtype=f"uint8x{nbytes}"),
                    w.vload([vf, vc, vky, vkx, 0, 0], f"int8x{nbytes}"),
                )
        for b, f, yy, xx in T.grid(n, o, oh, ow):
            with T.sblock(UNPACK):
                vb, vf, vy, vx = T.axis.remap("SSSS", [b, f, yy, xx])
                out[vb, vf, vy, vx] = acc[vb, vf // lanes, vy, vx, vf % lanes]

    return anchors.as_replacement(kernel, x_shape, x_dtype)


_info = anchors.info


_dtype = anchors.dtype


def _shape(expr: tvm.ir.Expr) -> list[Any] | None:
    """The shape, the batch (first) dimension as it is (int or symbolic), the others ints; else None."""
    import tvm

    shape = getattr(_info(expr), "shape", None)
    dims = getattr(shape, "values", None)
    if dims is None:
        return None
    rest = [int(d) if isinstance(d, (int, tvm.tirx.IntImm)) else None for d in list(dims)[1:]]
    if None in rest:
        return None
    first = dims[0]
    return [int(first) if isinstance(first, tvm.tirx.IntImm) else first, *rest]


def rewrite(mod: tvm.IRModule, lanes: int) -> tuple[tvm.IRModule, int]:
    """(module, rewritten anchors): the fold's int8 conv2d/matmul as vpdpbusd kernels (see the module doc)."""
    import tvm
    from tvm import relax

    sub_op = tvm.ir.Op.get("relax.subtract")
    astype_op = tvm.ir.Op.get("relax.astype")

    def source(rewriter: PyExprMutator, x: tvm.ir.Expr) -> tuple[tvm.ir.Expr, int, int, int] | None:
        """(u8/s8 tensor, its shift to u8, the u8 value of a padded tap, zero point subtracted) or None."""
        dtype = _dtype(x)
        if dtype == "uint8":
            return x, 0, 0, 0
        if dtype == "int8":
            return x, SHIFT, SHIFT, SHIFT
        if dtype != "int16" or not isinstance(x, relax.Var):
            return None
        # the fold's int16(x_u8) - zp: read x_u8, pad with zp (the 0 it stands for), subtract zp * sum(W)
        value = rewriter.lookup_binding(x)
        if not (isinstance(value, tvm.ir.Call) and value.op.same_as(sub_op)):
            return None
        wide, zp = value.args
        if not isinstance(zp, tvm.ir.expr.Constant) or anchors.const_tensor(zp).numpy().size != 1:
            return None
        if isinstance(wide, relax.Var):
            wide = rewriter.lookup_binding(wide)
        if not (isinstance(wide, tvm.ir.Call) and wide.op.same_as(astype_op)):
            return None
        zp = int(anchors.const_tensor(zp).numpy().reshape(()))
        if _dtype(wide.args[0]) != "uint8" or not 0 <= zp <= 255:
            return None
        return wide.args[0], 0, zp, zp

    def conv(
        rewriter: PyExprMutator,
        x: tvm.ir.Expr,
        w_oihw: np.ndarray,
        padding: list[int],
        strides: list[int],
        dilation: list[int],
    ) -> tvm.ir.Expr | None:
        shape = _shape(x)
        src = source(rewriter, x) if shape is not None and len(shape) == 4 else None
        if src is None:
            return None
        x, shift, pad_value, comp = src
        x_shape, x_dtype = _shape(x), _dtype(x)
        assert x_shape is not None and x_dtype is not None  # source gives a u8/s8 tensor of the anchor's shape
        bb = rewriter.builder_
        packed = pack_weight(w_oihw, lanes)
        kernel = conv_kernel(
            x_shape, x_dtype, packed.shape, padding, strides, dilation, shift, pad_value, w_oihw.shape[0]
        )
        gv = bb.add_func(kernel, BLOCK)
        n, _c, h, wd = x_shape
        kh, kw = w_oihw.shape[2:]
        oh = (h + padding[0] + padding[2] - (kh - 1) * dilation[0] - 1) // strides[0] + 1
        ow = (wd + padding[1] + padding[3] - (kw - 1) * dilation[1] - 1) // strides[1] + 1
        out = relax.TensorType([n, w_oihw.shape[0], oh, ow], "int32")
        y = relax.call_tir(gv, [x, relax.const(packed)], out)  # pyright: ignore[reportArgumentType] - TVM takes a list
        if comp:
            total = comp * w_oihw.astype(np.int64).sum(axis=(1, 2, 3))
            y = relax.op.subtract(bb.emit(y), relax.const(total.reshape(1, -1, 1, 1).astype(np.int32)))
        # not emitted: it replaces the conv in its own binding (an alias binding would stop FuseOps
        # from fusing the epilogue into the kernel)
        return y

    def matmul(rewriter: PyExprMutator, x: tvm.ir.Expr, w_kn: np.ndarray) -> tvm.ir.Expr | None:
        shape = _shape(x)
        # (an int16 view would not reshape as its source)
        if shape is None or len(shape) != 2 or _dtype(x) not in ("uint8", "int8"):
            return None
        (m, k), n = shape, w_kn.shape[1]
        bb = rewriter.builder_
        shape4 = relax.ShapeExpr([m, k, 1, 1])  # pyright: ignore[reportArgumentType] - TVM takes ints
        x4 = bb.emit(relax.op.reshape(x, shape4))
        y = conv(rewriter, x4, w_kn.T.reshape(n, k, 1, 1), [0, 0, 0, 0], [1, 1], [1, 1])
        return None if y is None else relax.op.reshape(bb.emit(y), relax.ShapeExpr([m, n]))

    return anchors.rewrite(mod, conv, matmul)


def schedule_rule():
    """A dlight CPU rule for the conv2d_vnni kernels, ahead of schedule.py's rules: the layout pass parallel
    over its outer loops; then parallel over (batch, output-channel tiles, rows), per tile of X columns an
    F x X x L int32 accumulator tile, the reduction (c/4, ky, kx) outside, the (L channels x 4 inputs) step one
    vpdpbusd, and the epilogue computed from the tile while it is hot."""
    from tvm.s_tir.dlight.base.utils import get_extent

    def schedule(sch: Schedule, conv: SBlockRV) -> None:
        last = kernel_rules.inline_around(sch, BLOCK, PACK)
        n, f, y, x, rc, ry, rx = sch.get_loops(conv)
        width, tiles = get_extent(sch, x), get_extent(sch, f)
        assert isinstance(width, int) and isinstance(tiles, int)  # symbolic extents leave the kernel unscheduled
        cols = next(t for t in range(TILE[1], 0, -1) if width % t == 0)
        tile = next(t for t in range(TILE[0], 0, -1) if tiles % t == 0)
        fo, ft = sch.split(f, factors=[None, tile])
        xo, xi = sch.split(x, factors=[None, cols])
        sch.reorder(n, fo, y, xo, rc, ry, rx, ft, xi)  # pyright: ignore[reportArgumentType] - takes loops, typed lists
        sch.parallel(sch.fuse(n, fo, y))  # pyright: ignore[reportArgumentType] - takes loops, typed lists
        sch.reverse_compute_at(last, xo, preserve_unit_loops=True)
        init = sch.decompose_reduction(conv, rc)
        for loop in sch.get_loops(init)[-2:]:
            sch.unroll(loop)
        sch.unroll(xi)
        sch.unroll(ft)
        pack = sch.get_sblock(PACK)
        ploops = sch.get_loops(pack)
        sch.parallel(sch.fuse(ploops[0], ploops[1]))  # pyright: ignore[reportArgumentType] - takes loops, typed lists

    return kernel_rules.block_rule(BLOCK, schedule)
