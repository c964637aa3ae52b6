"""Default CPU schedules for fused reduction kernels (conv2d, matmul, pooling + their epilogue).

TVM 0.27's CPU pipeline (relax.backend.cpu_generic) applies no schedule: each fused PrimFunc runs
as written by TOPI, e.g. conv2d as n, f, y, x, c, ky, kx with the reduction innermost, and its
epilogue (bias, relu, requantize) as separate full passes over the output. Three rules, applied
to the int8 and the fp32 builds (so the comparison stays fair); no tuning, any kernel a rule cannot
match keeps the next rule's (or TVM's default) code.

"vnni" (the default) -- "packed", and where the target's CPU has AVX512-VNNI or AVX-VNNI (LLVM's
  features of its mcpu/mattr, vnni.isa_for) build.py first replaces the folded int8 conv2d and
  matmul kernels by vnni.py's: activations laid out [N, C/4, H, W, 4] u8, weights packed at build
  time to [O/16, C/4, kh, kw, 16, 4], and each (c/4, ky, kx) step of a 16*F channels x X columns
  register tile one vpdpbusd (64 u8 x s8 products into 16 int32 lanes), epilogue fused as below.
  x86 targets with AVX2 and no VNNI get the same kernels on vpmaddwd (vnni.isa_for: activations and weights
  widened to s16, two channels to a word, 8 int32 lanes). Outputs identical to "packed" (integer sums).
  Other targets get exactly "packed". On a 2-core AMD EPYC with AVX2 only (2026-12-07, tvm_int8_bench, 10
  runs, docs/measurements.md): ResNet-18 INT8 3x112x112 "packed" 52.9 / 292.3 ms -> "vnni" (vpmaddwd) 9.8 /
  152.2 ms, ONNX Runtime INT8 on our export 7.6 / 102.0 in the same run.
  ResNet-18 INT8, median ms batch 1 / 16 (benchmarks/tvm_int8_bench; a shared 2-core AMD EPYC Zen 4,
  other jobs running, so noisy; more runs in docs/measurements.md): 112x112 "packed" 38.8 / 273.3 -> "vnni" 6.3 /
  151.3, ONNX Runtime INT8 on our export 14.5 / 227.3, quantize_static's 3.2 / 110.5 in the same run;
  224x224 123.6 / 1393 -> 36.0 / 617, ORT 69.0 / 896 and 38.3 / 437.
  Per kernel (benchmarks/tvm_kernels, docs/measurements.md): ResNet-18's vnni 3x3 convs reach 24-47 % of the measured
  vpdpbusd peak; in MobileNetV2 the depthwise convs, then "packed", took ~36 % of the time at ~1.5 %.
  Under "vnni" and "packed", x86 builds run the int8 depthwise convs (all without AVX512; with it strided ones,
  or rows at most 16 wide) as depthwise.py's channel-blocked kernels (16 int32 lanes over channels), scheduled
  by its rule.

"packed" -- NCHW conv2d with a constant weight and output channels divisible by 16:
  a module pass first repacks the weight constant at build time to OIHW16o (the PrimFunc's weight
  parameter and every call site's constant together) and marks the PrimFunc. Its schedule then
  computes a register tile of 16*F output channels x X output columns:

    parallel for (n, f_outer, y) fused:
      for x_outer:
        acc[F][X][16] = 0                      # a small stack tile LLVM keeps in vector registers
        for c, ky, kx:
          unrolled F x X:                      # each weight vector serves X columns
            acc[f][x][0:16] += broadcast(in) * w[0:16]   # fp32 FMA / int32 multiply-add
        out[..] = epilogue(acc)                # bias/relu/requantize/residual add inlined

  The additions run in the same order as before (c, ky, kx per output), so the int32 sums and the
  fp32 sums are unchanged. The int8 products are int32 multiply-adds here ("vnni" uses vpdpbusd).

"rows" (the previous default, still the fallback for other kernels) -- one reduction block with
an element-wise epilogue, layout unchanged:

    parallel for (n, f) fused:                 # batch x output channels (conv), batch (matmul)
      for y_outer:                            # conv: output rows in tiles of 4 (or 2)
        init acc[.., x] = 0                   # vectorized
        for reductions (c, ky, kx | k):
          unrolled y_inner (4 rows):          # conv: each weight load serves 4 rows
            vectorized x: acc[.., x] += a * b # integer or float multiply-accumulate
        vectorized x: out = epilogue(acc)     # bias/relu/requantize inlined, while acc is hot

Measured on the digits model (2-core EPYC, busy machine, batch 16): the larger conv went from
~570 us unscheduled to ~200 us with "rows"; the row tile alone was worth ~2x. On ResNet-18 (int8,
3x112x112) "rows" left every conv at 2-13 ms (narrow rows vectorize badly, and residual kernels
with a dequantized second input did not match); "packed" took the
whole model from ~96 ms to ~9 ms at batch 1 (benchmarks/tvm_int8_bench measures it).

MetaSchedule tuning would do better but takes minutes per model, which a build command cannot
afford here.
"""

from __future__ import annotations

import contextlib
import re
from typing import TYPE_CHECKING, Any, cast

from qat_kernel.runtimes.tvm import kernel_rules

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    import numpy as np
    import tvm
    from tvm.s_tir import Schedule
    from tvm.s_tir.schedule import LoopRV, SBlockRV

    # (packed PrimFunc, weight parameter index, numpy repack of the weight constant)
    PackPlan = tuple[tvm.tirx.PrimFunc, int, Callable[[np.ndarray], np.ndarray]]

RULES = ("vnni", "packed", "rows")
DEFAULT_RULE = "vnni"
PACK_ATTR = "qat.packed_conv"  # PrimFunc attribute: the weight layout ("OIHW16o")
LANES = 16  # output channels per vector (one 512-bit register of int32/fp32)
_current = [DEFAULT_RULE]


def current_rule() -> str:
    return _current[0]


@contextlib.contextmanager
def use_rule(rule: str):
    """Build with `rule` ("vnni" | "packed" | "rows") as the default inside the block (benchmarks)."""
    if rule not in RULES:
        raise ValueError(f"unknown schedule rule {rule!r}; one of {RULES}")
    saved = _current[0]
    _current[0] = rule
    try:
        yield
    finally:
        _current[0] = saved


def _rule_class():
    from tvm import s_tir
    from tvm.s_tir.dlight.analysis import normalize_prim_func
    from tvm.s_tir.dlight.base.utils import get_extent
    from tvm.s_tir.dlight.cpu.base import CPUScheduleRule

    class ReductionEpilogue(CPUScheduleRule):
        def __init__(self, max_lanes: int = 64, rows: int = 4, parallel: bool = True):
            self.max_lanes = max_lanes
            self.rows = rows
            self.parallel = parallel

        def _vectorize(self, sch: Schedule, loop: LoopRV) -> None:
            extent = get_extent(sch, loop)
            if not isinstance(extent, int) or extent < 2:
                return
            if extent > self.max_lanes:
                if extent % self.max_lanes:
                    return
                loop = sch.split(loop, factors=[None, self.max_lanes])[-1]
            sch.vectorize(loop)

        def apply(self, func: tvm.tirx.PrimFunc, target: tvm.target.Target, tunable: bool):
            if not self.is_target_available(target):
                return None
            try:
                return self._apply(func)
            except Exception:  # noqa: BLE001 - a kernel we cannot schedule keeps the default code
                return None

        def _apply(self, func: tvm.tirx.PrimFunc):
            sch = s_tir.Schedule(func)
            infos = normalize_prim_func(sch)
            if not infos:
                return None
            reductions = [i for i, b in enumerate(infos) if not b.is_injective()]
            if len(reductions) != 1:
                return None
            idx = reductions[0]
            red = infos[idx]
            kind = red.dom_kind()
            if not re.fullmatch("S+R+", kind):
                return None
            ns = kind.count("S")
            consumers = infos[idx + 1 :]
            if any(c.dom_kind() != "S" * ns for c in consumers):
                return None
            for c in consumers[:-1]:
                sch.compute_inline(c.block_rv)
            loops = sch.get_loops(red.block_rv)
            s_loops, r_loops = loops[:ns], loops[ns:]
            inner = s_loops[-1]
            if not isinstance(get_extent(sch, inner), int) or ns < 2:
                return None
            s_outer, tile = list(s_loops[:-1]), []
            if ns >= 4 and self.rows > 1:
                # register tile: `rows` output rows share each weight load (conv-like n, f, y, x)
                ext = get_extent(sch, s_loops[-2])
                rows = next((r for r in (self.rows, 2) if isinstance(ext, int) and ext % r == 0 and ext > r), 1)
                if rows > 1:
                    yo, yi = sch.split(s_loops[-2], factors=[None, rows])
                    s_outer, tile = s_outer[:-1] + [yo], [yi]
            sch.reorder(*s_outer, *r_loops, *tile, inner)  # pyright: ignore[reportArgumentType] - takes loops, typed lists
            last = consumers[-1].block_rv if consumers else None
            if last is not None:
                sch.reverse_compute_at(last, s_outer[-1], preserve_unit_loops=True)
            # vectorize the update's innermost spatial loop and parallelize (batch, channel) for
            # conv-like kernels, batch for matmul -- before decompose_reduction: both checks want a
            # reduction block that still has its init
            self._vectorize(sch, inner)
            for t in tile:
                sch.unroll(t)
            outer = s_outer[: min(2, len(s_outer))]
            fused = outer[0]
            if len(outer) > 1:
                fused = sch.fuse(*outer)  # pyright: ignore[reportArgumentType] - takes loops, typed lists
            if self.parallel:
                sch.parallel(fused)
            init = sch.decompose_reduction(red.block_rv, r_loops[0])
            self._vectorize(sch, sch.get_loops(init)[-1])
            if last is not None:
                self._vectorize(sch, sch.get_loops(last)[-1])
            return sch

    return ReductionEpilogue


def _conv_block(sch: Schedule) -> SBlockRV | None:
    """The TOPI conv2d_nchw block (n, f, y, x spatial; c, ky, kx reduction), else None."""
    try:
        block = sch.get_sblock("conv2d_nchw")
    except Exception:  # noqa: BLE001 - no such block (or several)
        return None
    stmt = kernel_rules.sblock(sch, block)
    kinds = [int(iv.iter_type) for iv in stmt.iter_vars]
    if kinds != [0, 0, 0, 0, 2, 2, 2] or len(stmt.reads) != 2 or len(stmt.writes) != 1:
        return None
    return block


def _static(shape: Sequence[Any]) -> list[int] | None:
    """The dims as ints, None when one is symbolic."""
    import tvm

    dims = [int(d) for d in shape if isinstance(d, (int, tvm.tirx.IntImm))]
    return dims if len(dims) == len(shape) else None


def _pack_plan(func: tvm.tirx.PrimFunc) -> PackPlan | None:
    """(packed PrimFunc, weight parameter index, numpy repack) for a conv2d kernel whose weight is a
    parameter with output channels divisible by 16, else None."""
    from tvm import s_tir

    sch = s_tir.Schedule(func)
    conv = _conv_block(sch)
    if conv is None:
        return None
    stmt = kernel_rules.sblock(sch, conv)
    # buffers: TVM declares their shape and dtype on no class
    weight: Any = stmt.reads[1].source
    out: Any = stmt.writes[0].source
    names = [p.name for p in func.params]  # pyright: ignore[reportAttributeAccessIssue] - undeclared FFI field
    if weight.name not in names or len(weight.shape) != 4:
        return None
    dims = _static(weight.shape)
    if dims is None:
        return None
    o, c, kh, kw = dims
    w_dtype, acc = str(weight.dtype), str(out.dtype)
    if o % LANES or w_dtype not in ("int8", "float32", "float16"):
        return None
    if w_dtype == "int8" and acc != "int32" or w_dtype != "int8" and acc != w_dtype:
        return None
    kind = "OIHW16o"

    def repack(w: np.ndarray) -> np.ndarray:
        return w.reshape(o // LANES, LANES, c, kh, kw).transpose(0, 2, 3, 4, 1)

    index_map = lambda f, ci, y, x: (f // LANES, ci, y, x, f % LANES)  # noqa: E731
    sch.transform_layout(conv, ("read", 1), index_map)
    return sch.mod["main"].with_attr(PACK_ATTR, kind), names.index(weight.name), repack


def pack_conv_weights_pass():
    """Module pass: repack the constant weight of each conv2d kernel the "packed" rule can schedule,
    at build time: the PrimFunc's weight parameter takes the packed layout, and each call_tir site's
    constant is repacked with numpy to match. A PrimFunc called with a non-constant weight anywhere
    is left as it is."""
    import numpy as np
    import tvm
    from tvm import relax

    call_tir = tvm.ir.Op.get("relax.call_tir")

    def weight_const(call: tvm.ir.Expr, widx: int) -> tvm.ir.expr.Constant | None:
        if not (isinstance(call, tvm.ir.Call) and call.op.same_as(call_tir)):
            return None
        args = call.args[1]
        fields = getattr(args, "fields", None)
        if fields is None or widx >= len(fields):
            return None
        w = fields[widx]
        return w if isinstance(w, tvm.ir.expr.Constant) else None

    @relax.expr_functor.mutator
    class Rewriter(relax.PyExprMutator):
        def __init__(
            self,
            mod: tvm.IRModule,
            plans: dict[tvm.ir.GlobalVar, PackPlan],
            renamed: dict[tvm.ir.GlobalVar, tvm.ir.GlobalVar],
        ):
            super().__init__(mod)
            self.plans = plans
            self.renamed = renamed

        def visit_call_(self, op: tvm.ir.Call):
            call = self.visit_expr_post_order(op)
            if not (isinstance(call, tvm.ir.Call) and call.op.same_as(call_tir)):
                return call
            callee = call.args[0]
            if not isinstance(callee, tvm.ir.GlobalVar) or callee not in self.plans:
                return call
            _func, widx, repack = self.plans[callee]
            w: Any = weight_const(op, widx)  # a constant: its payload is a field TVM does not declare
            packed = relax.const(np.ascontiguousarray(repack(w.value.numpy())))
            weights = call.args[1]
            assert isinstance(weights, relax.Tuple)  # weight_const found the constant in it
            fields = list(weights.fields)
            fields[widx] = packed
            args = [self.renamed[callee], relax.Tuple(fields)] + list(call.args[2:])
            return tvm.ir.Call(call.op, args, call.attrs, call.ty_args, call.span)

    @tvm.transform.module_pass(opt_level=0, name="QatPackConvWeights")
    def _pass(mod: tvm.IRModule, _ctx: tvm.transform.PassContext) -> tvm.IRModule:
        plans: dict[tvm.ir.GlobalVar, PackPlan] = {}
        for gv, func in mod.functions_items():
            if isinstance(func, tvm.tirx.PrimFunc) and (func.attrs is None or PACK_ATTR not in func.attrs):
                try:
                    plan = _pack_plan(func)
                except Exception:  # noqa: BLE001 - not a kernel we pack
                    plan = None
                if plan is not None:
                    plans[gv] = plan
        if not plans:
            return mod
        seen: dict[tvm.ir.GlobalVar, int] = {}
        ok: dict[tvm.ir.GlobalVar, int] = {}
        for _gv, func in mod.functions_items():
            if not isinstance(func, relax.Function):
                continue

            def visit(expr: tvm.ir.Expr) -> None:
                if isinstance(expr, tvm.ir.GlobalVar) and expr in plans:
                    seen[expr] = seen.get(expr, 0) + 1
                elif isinstance(expr, tvm.ir.Call) and expr.op.same_as(call_tir):
                    callee = expr.args[0]
                    if isinstance(callee, tvm.ir.GlobalVar) and callee in plans:
                        if weight_const(expr, plans[callee][1]) is not None:
                            ok[callee] = ok.get(callee, 0) + 1

            relax.analysis.post_order_visit(func.body, visit)
        plans = {gv: p for gv, p in plans.items() if ok.get(gv, 0) and ok.get(gv) == seen.get(gv)}
        if not plans:
            return mod
        # the packed PrimFuncs replace the old ones under the same names; new GlobalVars, since a
        # GlobalVar carries its function's signature
        work = tvm.IRModule(
            {gv: f for gv, f in mod.functions_items() if gv not in plans},
            attrs=mod.attrs,  # pyright: ignore[reportAttributeAccessIssue] - undeclared FFI field
            global_infos=mod.global_infos,  # pyright: ignore[reportAttributeAccessIssue] - undeclared FFI field
        )
        bb = relax.BlockBuilder(work)
        renamed = {gv: bb.add_func(func, gv.name_hint) for gv, (func, _widx, _repack) in plans.items()}
        work = bb.get()
        rewriter = Rewriter(work, plans, renamed)
        for gv, func in work.functions_items():
            if isinstance(func, relax.Function):
                # visiting a Function gives a Function; TVM types the result as any Expr
                rewriter.builder_.update_func(gv, cast(relax.Function, rewriter.visit_expr(func)))
        return rewriter.builder_.get()

    return _pass


def _packed_rule_class():
    from tvm import s_tir
    from tvm.s_tir.dlight.base.utils import get_extent
    from tvm.s_tir.dlight.cpu.base import CPUScheduleRule

    class PackedConv(CPUScheduleRule):
        """Schedules the conv2d kernels pack_conv_weights_pass marked (see the module docstring)."""

        def apply(self, func: tvm.tirx.PrimFunc, target: tvm.target.Target, tunable: bool):
            if not self.is_target_available(target) or func.attrs is None or PACK_ATTR not in func.attrs:
                return None
            try:
                return self._apply(func, str(func.attrs[PACK_ATTR]))
            except Exception:  # noqa: BLE001 - the next rule (or TVM's default code) takes it
                return None

        def _apply(self, func: tvm.tirx.PrimFunc, kind: str):
            sch = s_tir.Schedule(func)
            conv = _conv_block(sch)
            if conv is None:
                return None
            data_buf = kernel_rules.sblock(sch, conv).reads[0].source
            root = sch.get_sblock("root")
            blocks = list(sch.get_child_blocks(root))
            index = [kernel_rules.sblock(sch, b).name_hint for b in blocks].index("conv2d_nchw")
            pad = None
            for b in blocks[:index]:
                if kernel_rules.sblock(sch, b).writes[0].source.same_as(data_buf):
                    pad = b
                else:
                    sch.compute_inline(b)
            consumers = list(sch.get_child_blocks(root))
            index = [kernel_rules.sblock(sch, b).name_hint for b in consumers].index("conv2d_nchw")
            consumers = consumers[index + 1 :]
            if not consumers:
                consumers = [sch.cache_write(conv, 0, "global")]
            for c in consumers[:-1]:
                sch.compute_inline(c)
            last = consumers[-1]
            sch.transform_layout(conv, ("write", 0), lambda n, f, y, x: (n, f // LANES, y, x, f % LANES))

            n, f, y, x, c, ky, kx = sch.get_loops(conv)
            width, channels = get_extent(sch, x), get_extent(sch, f)
            if not isinstance(width, int) or not isinstance(channels, int):
                return None
            cols = next(t for t in (8, 7, 6, 5, 4, 3, 2, 1) if width % t == 0)
            fo_tile = 2 if (channels // LANES) % 2 == 0 and cols <= 8 else 1
            fo, fi = sch.split(f, factors=[None, LANES])
            fo, ft = sch.split(fo, factors=[None, fo_tile])
            xo, xi = sch.split(x, factors=[None, cols])
            red = [c, ky, kx]
            inner = [ft, xi, fi]
            sch.reorder(n, fo, y, xo, *red, *inner)  # pyright: ignore[reportArgumentType] - takes loops, typed lists
            outer = sch.fuse(n, fo, y)  # pyright: ignore[reportArgumentType] - takes loops, typed lists
            sch.parallel(outer)
            sch.reverse_compute_at(last, xo, preserve_unit_loops=True)
            # vectorize/unroll the update before decompose_reduction: the checks want a reduction
            # block that still has its init
            sch.vectorize(fi)
            sch.unroll(xi)
            sch.unroll(ft)
            init = sch.decompose_reduction(conv, red[0])
            iloops = sch.get_loops(init)
            sch.vectorize(iloops[-1])
            if pad is not None:
                pad_loops = sch.get_loops(pad)[:2]
                sch.parallel(sch.fuse(*pad_loops))  # pyright: ignore[reportArgumentType] - takes loops, typed lists
            return sch

    return PackedConv


def cpu_schedule_pass(rule: str | None = None, fallbacks: list[dict[str, str]] | None = None):
    """Our CPU schedule pass: rules "vnni" (default; see use_rule) and "packed" repack conv2d weights,
    then apply the packed conv rule, our row-tile rule, then TVM's own CPU rules to unscheduled
    PrimFuncs; rule "rows" applies the row-tile rule and TVM's rules only. ("vnni" differs from
    "packed" before this pass: build.py lays the int8 kernels out for vpdpbusd, vnni.py.)
    A rule that raises on a kernel is skipped for that kernel (guard.py); `fallbacks` collects those."""
    import tvm
    from tvm.s_tir import dlight as dl

    from qat_kernel.runtimes.tvm import depthwise, dotprod, guard, vnni

    rule = rule or _current[0]
    if rule not in RULES:
        raise ValueError(f"unknown schedule rule {rule!r}; one of {RULES}")
    fallbacks = [] if fallbacks is None else fallbacks
    # the sdot kernels of an aarch64 +dotprod build (dotprod.py) first: no other rule may take them
    # so do the vpdpbusd kernels of an x86 VNNI build (vnni.py)
    sdot = dotprod.schedule_rule()
    dot = vnni.schedule_rule()
    dw = depthwise.schedule_rule()  # the x86 depthwise kernels (depthwise.py)
    if rule == "rows":
        return guard.apply_rules([sdot, dot, dw, _rule_class()(), dl.cpu.GEMV(), dl.cpu.Reduction()], fallbacks)
    return tvm.transform.Sequential(
        [
            pack_conv_weights_pass(),
            guard.apply_rules(
                [sdot, dot, dw, _packed_rule_class()(), _rule_class()(), dl.cpu.GEMV(), dl.cpu.Reduction()],
                fallbacks,
            ),
        ]
    )
