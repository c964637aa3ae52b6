"""int8 conv2d / dense on x86 dot-product instructions, chosen from the target's CPU features (isa_for):

- AVX512-VNNI / AVX-VNNI: vpdpbusd, four u8 x s8 products summed into each s32 lane (64 products an instruction
  with AVX512, 32 with AVX-VNNI's 256-bit form);
- AVX2 without VNNI: vpmaddwd, two s16 x s16 products summed into each s32 lane (16 an instruction), on the u8
  activations and s8 weights widened to s16 (weights at build time, activations in the layout pass). Exact: the
  u8 x s8 vpmaddubsw sequence (ONNX Runtime's and oneDNN's AVX2 path) saturates its int16 pair sums when two
  products pass 32767 together; vpmaddwd's pair sums of two u8 x s8 products cannot. It does as many products per
  multiply-unit instruction as vpmaddubsw + vpmaddwd(1) (16 a 256-bit instruction), with one add more per 32
  products: its ceiling measured 141 GMAC/s against their 178 on a 2-core AVX2-only EPYC (benchmarks/int8_peak).

vpdpbusd multiplies u8 by s8, exactly the fold's operands (u8 activations of zero point 0, s8 weights), but it
reads four consecutive input channels of one pixel as one 32-bit word, which NCHW spreads H*W apart. This Relax
pass, run after the fold, replaces each int8 conv2d / matmul with a constant int8 weight by one kernel:

    conv2d(x [N, C, H, W], W[O, C, kh, kw], padding p)            (NCHW, OIHW, int32 out)
      -> xp[n, c/4, h, w, c%4]  = pad(x) as u8, channels padded to a multiple of 4   (a pass over the input)
         acc[n, o/L, y, x, 0:L] = sum over c/4, ky, kx of vpdpbusd(xp[.., 0:4] broadcast, Wp[o/L, c/4, ky, kx])
         out[n, o, y, x]        = acc[n, o/L, y, x, o%L]            (NCHW again, for the fused epilogue)
    matmul(x [M, K], W[K, N]) -> the same as a 1x1 conv on [M, K, 1, 1]

Wp is the weight repacked with numpy at build time to [O/L, C/4, kh, kw, L, 4] (L = 16 int32 lanes with AVX512,
8 with AVX-VNNI only): one (c/4, ky, kx) step is one 64-byte (32-byte) register. On AVX2 the word is two input
channels as s16, the weight [O/8, C/2, kh, kw, 8, 2] s16 and the step one vpmaddwd and a vpaddd (the Isa's
`group`, `act`, `weight`). An s8 activation is shifted to
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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from qat_kernel.runtimes.tvm import anchors, kernel_rules

if TYPE_CHECKING:
    import tvm
    from tvm.relax import PyExprMutator
    from tvm.s_tir import Schedule
    from tvm.s_tir.schedule import SBlockRV

SHIFT = 128
TILE = [2, 8]  # VNNI: at most F channel blocks x X columns of accumulators (16 of the 32 zmm registers)
# AVX2: at most 8 accumulators (LLVM interleaves the unrolled taps' products; tiles of 12 and 15 measured on
# ResNet-18's 3x3 conv shapes were within +-15 % of 8, no one better on all)
AVX2_TILE = 8


@dataclass(frozen=True)
class Isa:
    """One x86 dot-product path: the instruction a (group input channels x lanes output channels) step runs, the
    laid-out activation's and packed weight's element types, the names of its kernels' blocks and how many vector
    registers its register tile may take (accumulators + one weight vector per channel block + a broadcast)."""

    name: str  # "avx512vnni" | "avxvnni" | "avx2"
    instruction: str  # what the report names: "vpdpbusd" | "vpmaddwd"
    llvm: str  # the LLVM intrinsic of the step
    lanes: int  # int32 accumulator lanes (output channels) per vector
    group: int  # input channels per 32-bit word
    act: str  # the laid-out activation's element type (values in the u8 domain)
    weight: str  # the packed weight's element type
    registers: int  # vector registers (16 ymm with AVX2, 32 zmm with AVX512)

    @property
    def block(self) -> str:
        """The reduction block (and PrimFunc name hint) of the rewritten kernels."""
        return "conv2d_vnni" if self.instruction == "vpdpbusd" else f"conv2d_{self.name}"

    @property
    def pack(self) -> str:
        """The block that lays the activation out."""
        return f"{self.block}_pack"

    @property
    def unpack(self) -> str:
        """The block that copies the accumulator to NCHW."""
        return f"{self.block}_unpack"


AVX512VNNI = Isa("avx512vnni", "vpdpbusd", "llvm.x86.avx512.vpdpbusd.512", 16, 4, "uint8", "int8", 32)
AVXVNNI = Isa("avxvnni", "vpdpbusd", "llvm.x86.avx512.vpdpbusd.256", 8, 4, "uint8", "int8", 16)
AVX2 = Isa("avx2", "vpmaddwd", "llvm.x86.avx2.pmadd.wd", 8, 2, "int16", "int16", 16)
ISAS = (AVX512VNNI, AVXVNNI, AVX2)


def isa_for(target: dict[str, Any] | tvm.target.Target) -> Isa | None:
    """The dot-product path of an LLVM x86 target, from LLVM's features of its mcpu/mattr (never the host's
    name): AVX512-VNNI, else AVX-VNNI, else AVX2; None for other targets and x86 CPUs without AVX2."""
    import tvm
    from tvm.target import codegen

    if isinstance(target, dict):
        if target.get("kind") != "llvm" or not str(target.get("mtriple", "x86_64")).startswith(("x86_64", "i686")):
            return None
        try:
            target = tvm.target.Target(target)
        except Exception:  # noqa: BLE001 - not a target LLVM takes
            return None
    if target.kind.name != "llvm":  # pyright: ignore[reportAttributeAccessIssue] - a TargetKind, typed str
        return None
    triple = str(target.attrs.get("mtriple", "") or "")  # pyright: ignore[reportAttributeAccessIssue] - a Map, typed str
    if triple and not triple.startswith(("x86_64", "i686")):
        return None
    if codegen.target_has_features("avx512vnni", target):
        return AVX512VNNI
    if codegen.target_has_features("avxvnni", target):
        return AVXVNNI
    if codegen.target_has_features("avx2", target):
        return AVX2
    return None


def vnni_lanes(target: dict[str, Any] | tvm.target.Target) -> int:
    """int32 lanes of vpdpbusd on an LLVM x86 target: 16 with avx512vnni, 8 with avxvnni only, 0 without."""
    isa = isa_for(target)
    return isa.lanes if isa is not None and isa.instruction == "vpdpbusd" else 0


def pack_weight(w_oihw: np.ndarray, isa: Isa) -> np.ndarray:
    """OIHW int8 -> [O/L, C/G, kh, kw, L, G] of the Isa's weight type (G input channels to a word, zero-padded to
    a multiple of G; output channels to a multiple of L)."""
    o, c, kh, kw = w_oihw.shape
    g, lanes = isa.group, isa.lanes
    cg, ol = -(-c // g), -(-o // lanes)
    w = np.zeros((ol * lanes, cg * g, kh, kw), dtype=isa.weight)
    w[:o, :c] = w_oihw
    w = w.reshape(ol, lanes, cg, g, kh, kw).transpose(0, 2, 4, 5, 1, 3)
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
    o: int | None,
    isa: Isa,
    dense: bool = False,
):
    """PrimFunc (x, packed w) -> NCHW int32: x (NCHW uint8, or int8 read as x + shift) padded with pad_value
    (u8 domain) and laid out [N, C/G, H, W, G] in the Isa's activation type (block isa.pack), then per output
    pixel and L channels a reduction over (c/G, ky, kx) whose step is one vpdpbusd (or vpmaddwd and an add) on an
    [N, O/L, H, W, L] accumulator (block isa.block), then copied to NCHW. The step is written as the LLVM call
    itself, not tensorized: s_tir's tensorize copies the intrinsic through tvm.ir.save_json, which crashes with
    apache-tvm-ffi 0.1.15. x_shape: [N, C, H, W], N an int or symbolic (a TVM expression, which TVM does not
    type). w_shape is pack_weight()'s for this Isa. dense: x is [M, K] and the output [M, O] (a matmul as a 1x1
    conv, its epilogue fused as a conv's), the spatial loops of extent 1."""
    from tvm.script import tirx as T

    c, h, wd = (int(d) for d in (*x_shape[1:], 1, 1)[:3]) if dense else (int(d) for d in x_shape[1:])
    ol, cg, kh, kw, lanes, group = (int(d) for d in w_shape)
    assert (lanes, group) == (isa.lanes, isa.group), (w_shape, isa)
    pt, pl, pb, pr = padding
    (sh, sw), (dh, dw) = strides, dilation
    hp, wp = h + pt + pb, wd + pl + pr
    oh = (hp - (kh - 1) * dh - 1) // sh + 1
    ow = (wp - (kw - 1) * dw - 1) // sw + 1
    o = ol * lanes if o is None else int(o)  # the output channels (the packed weight may pad them)
    act, bits = isa.act, {"uint8": 8, "int16": 16}[isa.act]
    word_type = f"{act}x{group}"  # one 32-bit word of group input channels
    step_type = f"{act}x{lanes * group}"  # the word broadcast over the lanes
    w_type = f"{isa.weight}x{lanes * group}"
    assert bits * group == 32
    madd = isa.instruction == "vpmaddwd"  # (a, b) -> pair sums, added to the accumulator; else (acc, a, b)
    block, pack, unpack = isa.block, isa.pack, isa.unpack

    def x_at(x: Any, b: Any, ci: Any, y: Any, xx: Any) -> Any:
        return x[b, ci] if dense else x[b, ci, y, xx]

    def word(xp: Any, b: Any, ci: Any, y: Any, xx: Any, ky: Any, kx: Any) -> Any:
        """The 32-bit word of group input channels one step reads."""
        return T.reinterpret(xp.vload([b, ci, y * sh + ky * dh, xx * sw + kx * dw, 0], word_type), dtype="int32")

    def out_at(b: Any, f: Any, y: Any, xx: Any) -> tuple[Any, ...]:
        return (b, f) if dense else (b, f, y, xx)

    @T.prim_func(s_tir=True)
    def kernel(var_x: T.handle, var_w: T.handle, var_out: T.handle):
        T.func_attr({"op_pattern": 4, "tirx.noalias": True})  # kOutEWiseFusable: the epilogue fuses in
        n = T.int64()  # the batch (made static below when the call's is)
        # int64 shapes, as Relax's: FuseTIR maps the epilogue's buffers onto these
        x = T.match_buffer(var_x, (n, T.int64(c)) if dense else (n, T.int64(c), T.int64(h), T.int64(wd)), x_dtype)
        w = T.match_buffer(var_w, [T.int64(d) for d in (ol, cg, kh, kw, lanes, group)], isa.weight)
        out = T.match_buffer(var_out, (n, T.int64(o)) if dense else (n, T.int64(o), T.int64(oh), T.int64(ow)), "int32")
        xp = T.sblock_alloc_buffer((n, cg, hp, wp, group), act)
        acc = T.sblock_alloc_buffer((n, ol, oh, ow, lanes), "int32")
        for b, cc, yy, xx, ci in T.grid(n, cg, hp, wp, group):
            with T.sblock(pack):
                vb, vc, vy, vx, vi = T.axis.remap("SSSSS", [b, cc, yy, xx, ci])
                xp[vb, vc, vy, vx, vi] = T.if_then_else(
                    vc * group + vi < c,
                    T.if_then_else(
                        pt <= vy and vy < h + pt and pl <= vx and vx < wd + pl,
                        T.Cast(act, T.Cast("int32", x_at(x, vb, vc * group + vi, vy - pt, vx - pl)) + shift),
                        T.Cast(act, T.int32(pad_value)),
                    ),
                    T.Cast(act, T.int32(0)),  # padded channels meet zero weights
                )
        for b, fo, yy, xx, rc, ry, rx in T.grid(n, ol, oh, ow, cg, kh, kw):
            with T.sblock(block):
                vb, vf, vy, vx, vc, vky, vkx = T.axis.remap("SSSSRRR", [b, fo, yy, xx, rc, ry, rx])
                T.reads(
                    acc[vb, vf, vy, vx, 0:lanes],
                    xp[vb, vc, vy * sh + vky * dh, vx * sw + vkx * dw, 0:group],
                    w[vf, vc, vky, vkx, 0:lanes, 0:group],
                )
                T.writes(acc[vb, vf, vy, vx, 0:lanes])
                with T.init():
                    acc[vb, vf, vy, vx, T.ramp(0, 1, lanes)] = T.broadcast(T.int32(0), lanes)
                # (written into the broadcast, not bound to a name: a bound word becomes a variable the step
                # stores to memory each time in a kernel of symbolic batch, a third of its speed)
                if madd:
                    acc[vb, vf, vy, vx, T.ramp(0, 1, lanes)] = acc.vload(
                        [vb, vf, vy, vx, 0], f"int32x{lanes}"
                    ) + T.call_llvm_pure_intrin(
                        f"int32x{lanes}",
                        isa.llvm,
                        T.reinterpret(T.broadcast(word(xp, vb, vc, vy, vx, vky, vkx), lanes), dtype=step_type),
                        w.vload([vf, vc, vky, vkx, 0, 0], w_type),
                    )
                else:
                    acc[vb, vf, vy, vx, T.ramp(0, 1, lanes)] = T.call_llvm_pure_intrin(
                        f"int32x{lanes}",
                        isa.llvm,
                        acc.vload([vb, vf, vy, vx, 0], f"int32x{lanes}"),
                        T.reinterpret(T.broadcast(word(xp, vb, vc, vy, vx, vky, vkx), lanes), dtype=step_type),
                        w.vload([vf, vc, vky, vkx, 0, 0], w_type),
                    )
        for b, f, yy, xx in T.grid(n, o, oh, ow):
            with T.sblock(unpack):
                vb, vf, vy, vx = T.axis.remap("SSSS", [b, f, yy, xx])
                out[out_at(vb, vf, vy, vx)] = acc[vb, vf // lanes, vy, vx, vf % lanes]

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


def rewrite(mod: tvm.IRModule, isa: Isa) -> tuple[tvm.IRModule, int]:
    """(module, rewritten anchors): the fold's int8 conv2d/matmul as the Isa's kernels (see the module doc)."""
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

    def dot(
        rewriter: PyExprMutator,
        x: tvm.ir.Expr,
        w_oihw: np.ndarray,
        padding: list[int],
        strides: list[int],
        dilation: list[int],
        dense: bool = False,
    ) -> tvm.ir.Expr | None:
        """The kernel standing in for a conv2d (anchors.rewrite's on_conv), or with dense for a matmul."""
        shape = _shape(x)
        src = source(rewriter, x) if shape is not None and len(shape) == (2 if dense else 4) else None
        if src is None:
            return None
        x, shift, pad_value, comp = src
        x_shape, x_dtype = _shape(x), _dtype(x)
        assert x_shape is not None and x_dtype is not None  # source gives a u8/s8 tensor of the anchor's shape
        bb = rewriter.builder_
        packed = pack_weight(w_oihw, isa)
        o = w_oihw.shape[0]
        kernel = conv_kernel(
            x_shape, x_dtype, packed.shape, padding, strides, dilation, shift, pad_value, o, isa, dense
        )
        gv = bb.add_func(kernel, isa.block.replace("conv2d", "matmul") if dense else isa.block)
        if dense:
            out_shape = [x_shape[0], o]
        else:
            n, _c, h, wd = x_shape
            kh, kw = w_oihw.shape[2:]
            oh = (h + padding[0] + padding[2] - (kh - 1) * dilation[0] - 1) // strides[0] + 1
            ow = (wd + padding[1] + padding[3] - (kw - 1) * dilation[1] - 1) // strides[1] + 1
            out_shape = [n, o, oh, ow]
        y = relax.call_tir(gv, [x, relax.const(packed)], relax.TensorType(out_shape, "int32"))  # pyright: ignore[reportArgumentType] - TVM takes a list
        if comp:
            total = comp * w_oihw.astype(np.int64).sum(axis=(1, 2, 3))
            total = total.reshape((1, -1) if dense else (1, -1, 1, 1)).astype(np.int32)
            y = relax.op.subtract(anchors.emit(bb, y), relax.const(total))
        # not emitted: it replaces the conv in its own binding (an alias binding would stop FuseOps
        # from fusing the epilogue into the kernel)
        return y

    def matmul(rewriter: PyExprMutator, x: tvm.ir.Expr, w_kn: np.ndarray) -> tvm.ir.Expr | None:
        # [M, K] x [K, N]: the kernel of a 1x1 conv on 2-D buffers, its epilogue fused as a conv's
        n, k = w_kn.shape[1], w_kn.shape[0]
        return dot(rewriter, x, w_kn.T.reshape(n, k, 1, 1), [0, 0, 0, 0], [1, 1], [1, 1], True)

    return anchors.rewrite(mod, dot, matmul)


def tile(isa: Isa, width: int, tiles: int) -> tuple[int, int]:
    """(F channel blocks, X columns) of a kernel's register tile: with VNNI at most TILE (16 of the 32 zmm
    registers); with AVX2 the most accumulators, at most AVX2_TILE, whose tile, its F weight vectors and the
    broadcast word fit the 16 ymm registers, the wider in channels on a tie. X divides the output width and F
    the channel blocks (a remainder would cost every step a bounds check)."""
    cols = [t for t in range(8, 0, -1) if width % t == 0]
    blocks = [f for f in range(4, 0, -1) if tiles % f == 0]
    if isa.instruction == "vpdpbusd":
        return next(f for f in blocks if f <= TILE[0]), next(t for t in cols if t <= TILE[1])
    fits = [(f, x) for f in blocks for x in cols if f * x <= AVX2_TILE and f * x + f + 1 <= isa.registers]
    return max(fits, key=lambda fx: (fx[0] * fx[1], fx[0]))


def schedule_rule():
    """A dlight CPU rule for the kernels of every Isa, ahead of schedule.py's rules: the layout pass parallel
    over its outer loops; then parallel over (batch, output-channel tiles, rows), per tile of X columns an
    F x X x L int32 accumulator tile (tile()), the reduction (c/G, ky, kx) outside, the (L channels x G inputs)
    step one instruction, and the epilogue computed from the tile while it is hot."""
    from tvm.s_tir.dlight.base.utils import get_extent

    def schedule(sch: Schedule, conv: SBlockRV) -> None:
        # (both VNNI widths share a block and a tile rule)
        isa = next(i for i in ISAS if i.block == kernel_rules.sblock(sch, conv).name_hint)
        last = kernel_rules.inline_around(sch, isa.block, isa.pack)
        n, f, y, x, rc, ry, rx = sch.get_loops(conv)
        width, tiles = get_extent(sch, x), get_extent(sch, f)
        assert isinstance(width, int) and isinstance(tiles, int)  # symbolic extents leave the kernel unscheduled
        tile_f, cols = tile(isa, width, tiles)
        fo, ft = sch.split(f, factors=[None, tile_f])
        xo, xi = sch.split(x, factors=[None, cols])
        sch.reorder(n, fo, y, xo, rc, ry, rx, ft, xi)  # pyright: ignore[reportArgumentType] - takes loops, typed lists
        sch.parallel(sch.fuse(n, fo, y))  # pyright: ignore[reportArgumentType] - takes loops, typed lists
        sch.reverse_compute_at(last, xo, preserve_unit_loops=True)
        init = sch.decompose_reduction(conv, rc)
        for loop in sch.get_loops(init)[-2:]:
            sch.unroll(loop)
        sch.unroll(xi)
        sch.unroll(ft)
        pack = sch.get_sblock(isa.pack)
        ploops = sch.get_loops(pack)
        sch.parallel(sch.fuse(ploops[0], ploops[1]))  # pyright: ignore[reportArgumentType] - takes loops, typed lists

    return kernel_rules.block_rule(tuple(dict.fromkeys(i.block for i in ISAS)), schedule)
