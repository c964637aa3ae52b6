"""build_tvm: QDQ ONNX -> Relax (TVM 0.27 ONNX importer) -> our Q/DQ fold -> tvm.compile ->
shared library + build-report.json, written atomically into an output folder.

Batch: the importer keeps the ONNX model's symbolic batch dim ("batch"), and so does the artifact:
one library serves batch 1 and batch 16 (TVM generates shape-generic loops; no tuning is done on
either path). `batch=N` binds the batch dim to N instead (a static-shape library, N only).

The report's `kernel_graph`: the kernels the library runs as the graph view's nodes, each with the ONNX
nodes and modules it came from (kernel_graph.py); None, with a note, where they cannot be traced.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qat_kernel import atomic
from qat_kernel.rpc.errors import KernelError, TvmBuildError
from qat_kernel.runtimes import provenance as ledger
from qat_kernel.runtimes.onnx import fp16 as fp16mod
from qat_kernel.runtimes.targets import ResolvedTarget, elf_machine, resolve_target
from qat_kernel.runtimes.tvm import depthwise as depthwisemod
from qat_kernel.runtimes.tvm import dotprod as dotprodmod
from qat_kernel.runtimes.tvm import failures as failuresmod
from qat_kernel.runtimes.tvm import fold as foldmod
from qat_kernel.runtimes.tvm import guard as guardmod
from qat_kernel.runtimes.tvm import kernel_graph as kernelgraph
from qat_kernel.runtimes.tvm import mixed as mixedmod
from qat_kernel.runtimes.tvm import schedule as schedulemod
from qat_kernel.runtimes.tvm import vnni as vnnimod

if TYPE_CHECKING:
    import onnx
    import tvm
    from tvm.relax.frontend.onnx.onnx_frontend import ONNXGraphImporter

    # {relax var: the ONNX node name it came from}
    Provenance = dict[tvm.ir.Var, str]

ARTIFACT = "model.so"
REPORT = "build-report.json"

Progress = Callable[[str, str, float], None]


def _noop_progress(stage: str, message: str, fraction: float) -> None:
    pass


def _noop_cancel() -> None:
    pass


def tvm_version() -> str:
    import tvm

    return str(tvm.__version__)


def _input_shapes(model: onnx.ModelProto, batch: int | None) -> dict[str, list[int]]:
    """shape_dict for the importer: graph inputs with their symbolic dims bound to `batch`."""
    if batch is None:
        return {}
    inits = {t.name for t in model.graph.initializer}
    shapes = {}
    for inp in model.graph.input:
        if inp.name in inits:
            continue
        dims = inp.type.tensor_type.shape.dim
        shapes[inp.name] = [d.dim_value if d.HasField("dim_value") else int(batch) for d in dims]
    return shapes


def _input_dtypes(model: onnx.ModelProto) -> dict[str, str]:
    """dtype_dict for the importer: each graph input's own element type (token ids are int64, an attention mask
    int64 or bool). One dtype for all would make the importer read integer inputs as float32 and lose shapes
    on the mask arithmetic behind them (a Reshape after attention then has no shape to infer -1 from)."""
    import onnx.helper

    inits = {t.name for t in model.graph.initializer}
    out = {}
    for inp in model.graph.input:
        elem = inp.type.tensor_type.elem_type
        if inp.name not in inits and elem:
            out[inp.name] = str(onnx.helper.tensor_dtype_to_np_dtype(elem))
    return out


def import_onnx(
    onnx_path: str | Path | onnx.ModelProto, batch: int | None = None, workspace: str | Path | None = None
) -> tuple[tvm.IRModule, Provenance, onnx.ModelProto]:
    """(Relax module, {relax var: onnx node name}, onnx model). `onnx_path` may also be a loaded
    onnx.ModelProto.

    The provenance comes from the importer's own table of ONNX tensor -> Relax expr (the bindings a
    node emits come right before its output binding); if that private API changes, the module is
    imported with the public from_onnx and the report has no ONNX node names. A model the importer
    cannot convert raises failures.BuildFailure naming the node, its module and its line in the user's
    files under `workspace` (the config's folder)."""
    import onnx

    model = onnx_path if isinstance(onnx_path, onnx.ModelProto) else onnx.load(str(onnx_path))
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
    shapes = _input_shapes(model, batch)
    importer = None
    try:
        try:
            from tvm.relax.frontend.onnx.onnx_frontend import ONNXGraphImporter

            importer = ONNXGraphImporter(shapes, _input_dtypes(model), keep_params_in_input=False, sanitize=True)
            try:
                import onnx.checker

                onnx.checker.check_model(model)
            except Exception:  # noqa: BLE001 - from_onnx only warns too
                pass
            # TVM types the graph as a ModelProto (it reads a GraphProto) and opset as an int (None here for a model
            # that declares no default-domain opset, as before)
            mod = importer.from_onnx(model.graph, opset)  # pyright: ignore[reportArgumentType] - see above
            provenance = _provenance(mod, importer, model)
        except (ImportError, AttributeError, TypeError):
            from tvm.relax.frontend.onnx import from_onnx

            shape_dict, dtype_dict = shapes or None, _input_dtypes(model)
            # TVM types the model as a GraphProto; it takes the ModelProto
            mod = from_onnx(
                model,  # pyright: ignore[reportArgumentType] - see above
                shape_dict=shape_dict,
                dtype_dict=dtype_dict,
                opset=opset,
            )
            provenance = {}
    except KernelError:
        raise
    except Exception as exc:  # noqa: BLE001 - the importer's errors are of many types (TVM's, ValueError, ...)
        node = failuresmod.failed_import_node(model, importer, exc)
        raise failuresmod.build_failure("import", exc, node, workspace) from exc
    return mod, provenance, model


def _has_symbolic_inputs(model: onnx.ModelProto) -> bool:
    inits = {t.name for t in model.graph.initializer}
    return any(
        not d.HasField("dim_value")
        for inp in model.graph.input
        if inp.name not in inits
        for d in inp.type.tensor_type.shape.dim
    )


def _import_with_fallback(
    model: onnx.ModelProto, batch: int | None, workspace: str | Path | None
) -> tuple[tvm.IRModule, Provenance, int | None, list[str]]:
    """(module, provenance, the batch built for, notes). The symbolic batch first; where TVM's importer cannot
    infer a shape through it (TVM 0.27 loses the shape of an attention's matmul behind a Reshape with -1 over
    the symbolic batch, in Hugging Face encoders), the batch is bound to 1 and the library runs one sample per
    call (load_tvm splits larger batches)."""
    try:
        mod, provenance, _ = import_onnx(model, batch, workspace)
        return mod, provenance, batch, []
    except failuresmod.BuildFailure as exc:
        if batch is not None or not _has_symbolic_inputs(model):
            raise
        first = exc
    try:
        mod, provenance, _ = import_onnx(model, 1, workspace)
    except failuresmod.BuildFailure:
        raise first from None
    why = first.message.split(" What to do")[0].removeprefix("build/tvm failed ").rstrip(".")
    note = f"built for batch 1: with a symbolic batch it failed {why[:400]}; larger batches run one sample per call"
    return mod, provenance, 1, [note]


def _provenance(mod: tvm.IRModule, importer: ONNXGraphImporter, model: onnx.ModelProto) -> Provenance:
    out_to_node = {o: n.name or f"{n.op_type}_{i}" for i, n in enumerate(model.graph.node) for o in n.output}
    nodes = importer._nodes  # pyright: ignore[reportPrivateUsage] - its ONNX tensor -> Relax expr table (see import_onnx)
    exprs = [(nodes[k], node) for k, node in out_to_node.items() if k in nodes]
    func = mod["main"]
    prov: Provenance = {}
    pending = []
    for block in func.body.blocks:
        for b in block.bindings:
            node = next((n for e, n in exprs if e.same_as(b.var) or e.same_as(b.value)), None)
            pending.append(b.var)
            if node is not None:
                for v in pending:
                    prov[v] = node
                pending = []
    return prov


def _node_reason(op_type: str, fp32: list[dict[str, Any]]) -> str:
    """Why an ONNX node stays fp32, from its Relax bindings that do: a conv/matmul's own reason, else the one
    reason they share; an op the importer expands (HardSwish: add, clip, divide, multiply) is named as such."""
    calls = [r for r in fp32 if r["op"] not in ("TupleGetItem", "Tuple", "Var", "DataflowVar")] or fp32
    anchors = [r for r in calls if r["op"] in ("nn.conv2d", "matmul")]
    if anchors:
        return anchors[0]["reason"]
    ops = list(dict.fromkeys(r["op"] for r in calls))
    if len(ops) == 1:
        return calls[0]["reason"]
    return f"{op_type}: no integer pattern for this op (runs in fp32 as {', '.join(ops)})"


ANCHOR_BINDINGS = ("nn.conv2d", "matmul")  # the ops count_ops's conv/matmul figures count


def _onnx_ops(model: onnx.ModelProto, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per ONNX node (graph order): its precision after the fold, how, and why not, with the module it came
    from (the export's name scopes). A node with a conv2d/matmul binding (Conv, Gemm, MatMul) takes its
    precision from that binding, as the conv/matmul counts of the summary do: helper bindings the importer
    attributes to the node (a constant's isnan check, a bias reshape) do not make an int8 conv fp32."""
    by_node: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        if row["onnx_node"]:
            by_node.setdefault(row["onnx_node"], []).append(row)
    ops = []
    for i, node in enumerate(model.graph.node):
        name = node.name or f"{node.op_type}_{i}"
        mine = by_node.get(name, [])
        if not mine:
            continue
        anchors = [r for r in mine if r["op"] in ANCHOR_BINDINGS]
        judged = anchors or mine
        fp32 = [r for r in judged if r["precision"] == "fp32"]
        ints = [r for r in judged if r["precision"] in ("int8", "int32")]
        halves = [r for r in judged if r["precision"] == "fp16"]
        if halves:
            precision, detail, reason = "fp16", halves[0]["detail"], None
        elif fp32:
            precision, detail, reason = "fp32", None, _node_reason(node.op_type, fp32)
        elif ints:
            precision, detail, reason = "int8", ints[0]["detail"], None
        else:
            precision, detail, reason = "folded", mine[0]["detail"], None
        source = failuresmod.node_source(node, i)
        ops.append(
            {
                "onnx_node": name,
                "op_type": node.op_type,
                "precision": precision,
                "detail": detail,
                "reason": reason,
                "module": source.get("module") or None,
                "module_class": source.get("module_class") if source.get("module") else None,
                "relax": [r["var"] for r in mine],
            }
        )
    return ops


def relax_pipeline_for(target: tvm.target.Target, resolved: ResolvedTarget, capture: dict[str, Any], schedule: bool):
    """The backend's default Relax pipeline, plus (CPU, schedule=True) our default schedule for
    fused reduction kernels, and passes that keep the fused, legalized module for the report (capture["mod"])
    and the modules before and after FuseOps (capture["legalized"], capture["fused"], for the kernel graph).
    The schedule rules that failed on a kernel (guard.py) land in capture["fallbacks"], the groups FuseTIR
    failed on (left unfused, guard.fuse_tir) in capture["unfused"]."""
    import importlib

    import tvm

    from qat_kernel.runtimes.tvm.schedule import cpu_schedule_pass

    gpu = resolved.device == "cuda"
    backend = importlib.import_module(f"tvm.relax.backend.{'cuda' if gpu else 'cpu_generic'}.pipeline")
    extra = [cpu_schedule_pass(fallbacks=capture.setdefault("fallbacks", []))] if schedule and not gpu else []
    unfused = capture.setdefault("unfused", [])

    def keep(key: str) -> Any:  # a tvm.transform.Pass (module_pass is typed as returning the function)
        @tvm.transform.module_pass(opt_level=0, name=f"keep_{key}")
        def _keep(mod: tvm.IRModule, _ctx: tvm.transform.PassContext) -> tvm.IRModule:
            capture[key] = mod
            return mod

        return _keep

    legalize = []
    for p in backend.legalize_passes(target):
        if p.info.name == "FuseOps":
            legalize += [keep("legalized"), p]
        else:
            legalize += [keep("fused"), guardmod.fuse_tir(unfused)] if p.info.name == "FuseTIR" else [p]

    @tvm.transform.module_pass(opt_level=0)
    def _capture(mod: tvm.IRModule, _ctx: tvm.transform.PassContext) -> tvm.IRModule:
        capture["mod"] = mod
        return mod

    @tvm.transform.module_pass(opt_level=0)
    def _pipe(mod: tvm.IRModule, _ctx: tvm.transform.PassContext) -> tvm.IRModule:
        with target:
            seq = tvm.transform.Sequential(
                backend.library_dispatch_passes(target)
                + legalize
                + extra
                + [_capture]
                + backend.dataflow_lower_passes(target)
                + backend.finalize_passes(target)
            )
            return seq(mod)

    return _pipe


def _buffer_dtype(param: Any) -> str | None:
    """The element type of a PrimFunc's buffer parameter; None for a scalar one (TVM 0.27 passes a symbolic
    dim such as the batch as an int64 parameter of the kernels whose shapes need it: reshape, transpose,
    a matmul on [batch, seq, d]), whose Var has no dtype. Typed Any: a tirx Buffer or Var, tried for a dtype."""
    try:
        return str(param.dtype)
    except AttributeError:
        return None


def lowered_kernels(mod: tvm.IRModule | None) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The PrimFuncs the library runs (after legalize + fuse): name, buffer dtypes, precision (the
    dtype its data input is read in: a fused int8 conv reads uint8/int8 and accumulates in int32)."""
    import tvm

    kernels: list[dict[str, Any]] = []
    counts: dict[str, int] = {}
    if mod is None:
        return kernels, counts
    for gv, func in mod.functions_items():
        if not isinstance(func, tvm.tirx.PrimFunc):
            continue
        params = func.params  # pyright: ignore[reportAttributeAccessIssue] - undeclared FFI field
        dtypes = [d for d in map(_buffer_dtype, params) if d not in (None, "handle")]
        if not dtypes:
            continue
        precision = foldmod.precision_of_dtype(dtypes[0])
        kernels.append({"name": gv.name_hint, "inputs": dtypes[:-1], "output": dtypes[-1], "precision": precision})
        counts[precision] = counts.get(precision, 0) + 1
    kernels.sort(key=lambda k: k["name"])
    return kernels, counts


def _fp16_matcher(fp16: str | list[str] | Callable[[str], str | None] | None) -> Callable[[str], str | None] | None:
    if fp16 is None or callable(fp16):
        return fp16
    patterns = [fp16] if isinstance(fp16, str) else list(fp16)
    return fp16mod.pattern_matcher(patterns) if patterns else None


def _fp16_report(rewrite: fp16mod.Fp16Rewrite, widened: int) -> tuple[dict[str, Any], list[str]]:
    """The report's `fp16` section and the notes on matched layers that stayed (partly) fp32."""
    notes = list(rewrite.notes)
    layers = []
    for layer in rewrite.layers:
        layers.append(
            {
                "module": layer["module"],
                "match": layer["match"],
                "onnx_nodes": list(layer["nodes"]),
                "skipped": list(layer["skipped"]),
            }
        )
        for s in layer["skipped"]:
            head = (
                f"fp16 layer {layer['module']!r} could not be converted"
                if not layer["nodes"]
                else f"fp16 layer {layer['module']!r} partly converted"
            )
            notes.append(f"{head}: {s['op_type']} {s['onnx_node']} stays fp32 ({s['reason']})")
    return {
        "layers": layers,
        "onnx_nodes": dict(rewrite.nodes),
        "casts": sorted(rewrite.owner),
        "accumulator": "float32",
        "widened_ops": widened,
    }, notes


def _fp32_rows(mod: tvm.IRModule, provenance: Provenance, reason: str) -> list[dict[str, Any]]:
    """The report's rows of a module built without the fold: every binding fp32, for `reason`."""
    return [
        {
            "var": b.var.name,
            "op": foldmod.short_op(foldmod.op_name(b.value)),
            "onnx_node": provenance.get(b.var),
            "precision": "fp32",
            "detail": None,
            "group": None,
            "reason": reason,
        }
        for block in mod["main"].body.blocks
        for b in block.bindings
    ]


def _kernel_graph(
    compiled: tvm.IRModule,
    imported: tvm.IRModule,
    provenance: dict[Any, str],
    fold: foldmod.FoldResult | None,
    capture: dict[str, Any],
    model: onnx.ModelProto,
    kernels: list[dict[str, Any]],
    workspace: str | os.PathLike[str] | None,
    notes: list[str],
) -> dict[str, Any] | None:
    """The kernels of the build as graph nodes (kernel_graph.py) for `compiled`, the module tvm.compile built;
    None, with a note, where they cannot be traced back to the ONNX nodes."""
    try:
        if compiled is imported or fold is None:
            known = kernelgraph.imported_sources(provenance)
        else:
            known = kernelgraph.folded_sources(fold.renamed, fold.bindings)
        legalized = capture.get("legalized") or compiled
        sources = kernelgraph.binding_sources(legalized["main"], known)
        ops = kernelgraph.binding_ops(compiled["main"])
        folder = None if workspace is None else str(workspace)
        fused = capture.get("fused")
        return kernelgraph.kernel_graph(capture["mod"], fused, legalized, sources, ops, model, kernels, folder)
    except Exception as exc:  # noqa: BLE001 - TVM's IR changes between versions: the build stands without it
        notes.append(f"the kernels' graph was not made ({failuresmod.first_line(exc)})")
        return None


def build_tvm(
    onnx_path: str | Path,
    target: str | dict[str, Any],
    out_dir: str | Path,
    fold_int8: bool = True,
    progress: Progress | None = None,
    check_cancelled: Callable[[], None] | None = None,
    batch: int | None = None,
    schedule: bool = True,
    fp16: str | list[str] | Callable[[str], str | None] | None = None,
    dotprod: bool | None = None,
    vnni: bool | None = None,
    depthwise: bool | None = None,
    workspace: str | Path | None = None,
) -> dict[str, Any]:
    """Build the QDQ ONNX model for `target` (preset "x86-64" | "aarch64" | "cuda", or a TVM target
    dict) into out_dir/model.so, with out_dir/build-report.json; returns that report.

    fold_int8=False builds the importer's module as-is (Q/DQ lowered to fp32 math): the "TVM FP32"
    baseline. schedule=False skips our default CPU schedule (schedule.py): TVM's unscheduled code.
    fp16: the layers to run in float16 (mixed.py): regular expressions matched against the module
    path each ONNX node's metadata names (as config overrides match), or a callable
    module path -> the override that keeps it fp16 (None: not fp16). dotprod: lay the int8 conv/matmul out
    for sdot (dotprod.py; None: where the target is aarch64 with +dotprod). vnni: lay them out for the x86
    target's dot-product instruction (vnni.py: vpdpbusd with AVX512-VNNI or AVX-VNNI, else vpmaddwd with AVX2;
    None: under the default schedule rule "vnni"; either way only for such x86 targets with our schedule).
    depthwise: run the int8 depthwise convs as channel-blocked kernels (depthwise.py; None: under the rules
    "vnni" and "packed"; either way only for x86 CPU targets with our schedule). Raises ToolchainMissing (with
    the install command) before any work when the target's compiler is missing.

    A part that fails on this model falls back instead of ending the build, with a note in the report: a
    schedule rule on one kernel (that kernel keeps the next rule's or TVM's default code, guard.py), a kernel
    layout rewrite (the plain int8 kernels), the fold (every op fp32), and a compile error (TVM's own pipeline
    on the int8 module, then without the fold; the rows say what runs in which precision). What still cannot
    be built raises failures.BuildFailure: the stage, the ONNX node, its module and its line in the user's
    files under `workspace` (the config's folder) where known, and what to do."""
    import tvm

    progress = progress or _noop_progress
    check_cancelled = check_cancelled or _noop_cancel
    onnx_path, out_dir = Path(onnx_path), Path(out_dir)
    t_start = time.perf_counter()

    progress("target", "Checking the target's toolchain", 0.0)
    resolved = resolve_target(target)
    check_cancelled()

    progress("import", f"Importing {onnx_path.name} with TVM {tvm_version()}", 0.05)
    t0 = time.perf_counter()
    import onnx

    model = onnx.load(str(onnx_path))
    matcher = _fp16_matcher(fp16)
    fp16_section, fp16_notes, fp16_nodes = None, [], {}
    if matcher is not None:
        fp16_rewrite = fp16mod.convert_fp16_layers(model, matcher)
        fp16_nodes = fp16_rewrite.nodes
        mod, provenance, batch, import_notes = _import_with_fallback(fp16_rewrite.model, batch, workspace)
        provenance = {v: fp16_rewrite.owner.get(n, n) for v, n in provenance.items()}
        widened = 0
        if fp16_nodes:
            mod, widened = mixedmod.widen_accumulators(mod)
        fp16_section, fp16_notes = _fp16_report(fp16_rewrite, widened)
    else:
        mod, provenance, batch, import_notes = _import_with_fallback(model, batch, workspace)
    import_s = time.perf_counter() - t0
    before = foldmod.count_ops(mod["main"])
    check_cancelled()

    notes: list[str] = list(import_notes)
    imported = mod
    fold_report = None
    rows: list[dict[str, Any]] = []
    fold_s = 0.0
    res = None
    if fold_int8:
        progress("fold", "Folding Q/DQ patterns into int8 arithmetic", 0.2)
        t0 = time.perf_counter()
        try:
            res = foldmod.fold_qdq(mod, provenance)
        except Exception as exc:  # noqa: BLE001 - a pattern the fold mishandles: build the model without it
            notes.append(f"the int8 fold failed ({failuresmod.first_line(exc)}): built without it, every op in fp32")
            res = None
        fold_s = time.perf_counter() - t0
        if res is not None:
            mod, rows = res.mod, res.bindings
            fold_report = {"folded": res.folded, "notes": res.notes}
        check_cancelled()
    if not rows:
        if not fold_int8:
            why = "fold disabled (fold_int8=False)"
        elif fold_report is None:
            why = "the int8 fold failed (see the notes)"
        else:
            why = "nothing folded (" + "; ".join(fold_report["notes"]) + ")"
        rows = _fp32_rows(mod, provenance, f"{why}: Q/DQ lowered to fp32 math by LegalizeOps")
    folded_mod = mod
    after = foldmod.count_ops(mod["main"])
    if fp16_nodes:
        for row in rows:
            if row["onnx_node"] in fp16_nodes:
                row.update(
                    precision="fp16",
                    reason=None,
                    group=None,
                    detail=f"float16 (layer {fp16_nodes[row['onnx_node']]} kept fp16 by the config; "
                    "float16 inputs and weights, float32 accumulation)",
                )

    # the kernel layouts for the target's dot-product instructions; one that fails leaves the module as it was
    def rewrite(name: str, fn: Callable[[tvm.IRModule], tuple[tvm.IRModule, int]]) -> int | None:
        nonlocal mod
        try:
            mod, rewritten = fn(mod)
        except Exception as exc:  # noqa: BLE001 - the plain int8 kernels still build
            error = failuresmod.first_line(exc)
            notes.append(f"the {name} rewrite failed ({error}): those ops keep the plain int8 kernels")
            return None
        check_cancelled()
        return rewritten

    folded = fold_report is not None
    dotprod_report = None
    if folded and (dotprod if dotprod is not None else dotprodmod.wants_dotprod(resolved.target)):
        rewritten = rewrite("sdot", dotprodmod.rewrite)
        dotprod_report = None if rewritten is None else {"rewritten": rewritten, "instruction": "sdot"}

    vnni_report = None
    isa = vnnimod.isa_for(resolved.target) if folded and schedule and resolved.device == "cpu" else None
    if isa is not None and (vnni if vnni is not None else schedulemod.current_rule() == "vnni"):
        rewritten = rewrite(isa.instruction, lambda m: vnnimod.rewrite(m, isa))
        vnni_report = (
            None if rewritten is None else {"rewritten": rewritten, "instruction": isa.instruction, "lanes": isa.lanes}
        )

    depthwise_report = None
    x86 = folded and schedule and resolved.device == "cpu" and depthwisemod.is_x86(resolved.target)
    if x86 and (depthwise if depthwise is not None else schedulemod.current_rule() in ("vnni", "packed")):
        wide = depthwisemod.widest(resolved.target)
        rewritten = rewrite("depthwise", lambda m: depthwisemod.rewrite(m, wide))
        depthwise_report = None if rewritten is None else {"rewritten": rewritten, "lanes": depthwisemod.LANES}

    progress("compile", f"Compiling for {json.dumps(resolved.target)}", 0.3)
    tvm_target = resolved.tvm_target()
    t0 = time.perf_counter()
    saved_env = {k: os.environ.get(k) for k in resolved.env}
    os.environ.update(resolved.env)
    try:
        # Our schedule and kernel layouts first; where they make something TVM cannot compile, TVM's own
        # pipeline on the int8 module; then on the imported one (fp32). Each fallback is a note.
        attempts = [(mod, schedule, "our CPU schedule" if schedule and resolved.device == "cpu" else "TVM's pipeline")]
        if schedule and resolved.device == "cpu":
            attempts.append((folded_mod, False, "TVM's own pipeline on the int8 module"))
        if folded:
            attempts.append((imported, False, "TVM's own pipeline without the int8 fold"))
        for i, (candidate, scheduled, label) in enumerate(attempts):
            capture: dict[str, Any] = {}
            try:
                executable = tvm.compile(
                    candidate, tvm_target, relax_pipeline=relax_pipeline_for(tvm_target, resolved, capture, scheduled)
                )
                break
            except Exception as exc:  # noqa: BLE001 - TVM's errors are TVMError subclasses and Python ones
                check_cancelled()
                if i + 1 == len(attempts):
                    tried = ", ".join(a[2] for a in attempts)
                    tried = f"Tried: {tried}."
                    raise failuresmod.build_failure("compile", exc, workspace=workspace, tried=tried) from exc
                notes.append(
                    f"TVM could not compile the model with {label} ({failuresmod.first_line(exc)}): "
                    f"built with {attempts[i + 1][2]}"
                )
        else:  # not reached: the last attempt breaks or raises
            raise AssertionError("no compile attempt")
        if candidate is imported and folded:
            rows = _fp32_rows(imported, provenance, "the int8 fold's module did not compile (see the notes)")
            dotprod_report = vnni_report = depthwise_report = fold_report = None
            after = foldmod.count_ops(imported["main"])
        elif not scheduled and schedule:
            dotprod_report = vnni_report = depthwise_report = None
    finally:
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    compile_s = time.perf_counter() - t0
    kernels, kernel_counts = lowered_kernels(capture.get("mod"))
    graph = _kernel_graph(candidate, imported, provenance, res, capture, model, kernels, workspace, notes)
    check_cancelled()

    progress("export", f"Writing the library into {out_dir}", 0.8)
    with atomic.staging(out_dir) as tmp:
        t0 = time.perf_counter()
        fcompile = resolved.fcompile()
        try:
            if fcompile is not None:
                executable.export_library(str(tmp / ARTIFACT), fcompile=fcompile)
            else:
                executable.export_library(str(tmp / ARTIFACT))
        except KernelError:
            raise
        except Exception as exc:  # noqa: BLE001 - the system compiler or linker failed on the generated code
            raise failuresmod.build_failure("export", exc, workspace=workspace) from exc
        export_s = time.perf_counter() - t0
        machine = elf_machine(tmp / ARTIFACT)
        if machine != resolved.arch:
            raise TvmBuildError(f"The library is an ELF for {machine}, expected {resolved.arch}")
        report = {
            "onnx": str(onnx_path),
            "target": json.dumps(resolved.target),
            "target_str": str(tvm_target),
            "preset": resolved.preset,
            "device": resolved.device,
            "arch": machine,
            "runnable_here": resolved.runnable_here,
            "cross_compiler": resolved.cross_compiler,
            "tvm_version": tvm_version(),
            "fold_int8": bool(fold_int8),
            "scheduled": bool(scheduled) and resolved.device == "cpu",
            "batch": batch if batch is not None else "dynamic",
            "artifact": str(out_dir / ARTIFACT),
            "artifact_bytes": (tmp / ARTIFACT).stat().st_size,
            "report_path": str(out_dir / REPORT),
            "times_s": {
                "import": round(import_s, 4),
                "fold": round(fold_s, 4),
                "compile": round(compile_s, 4),
                "export": round(export_s, 4),
            },
            "ops_before": before,
            "ops_after": after,
            "ops_per_precision": after["per_precision"],
            "kernels": kernels,
            "kernels_per_precision": kernel_counts,
            "ops": _onnx_ops(model, rows),
            "kernel_graph": graph,
            "relax_ops": rows,
            "fold": fold_report,
            "dotprod": dotprod_report,
            "vnni": vnni_report,
            "depthwise": depthwise_report,
            "fp16": fp16_section,
            "schedule_fallbacks": list(capture.get("fallbacks") or []),
            "unfused": list(capture.get("unfused") or []),
            "notes": list(resolved.notes)
            + fp16_notes
            + notes
            + guardmod.notes(capture.get("fallbacks") or [])
            + guardmod.fusion_notes(capture.get("unfused") or []),
        }
        report["build_time_s"] = round(time.perf_counter() - t_start, 4)
        (tmp / REPORT).write_text(json.dumps(report, indent=2), encoding="utf-8")
        check_cancelled()
    ledger.record(out_dir / ARTIFACT)
    progress("done", f"Built {out_dir / ARTIFACT} ({report['artifact_bytes']} bytes)", 1.0)
    return report
