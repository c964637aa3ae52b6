"""build/tvm: the config's INT8 model compiled with TVM (Relax) for a target, checked and timed.

Flow: load the config -> resolve the target (a preset of targets.PRESETS or the `name` of an entry
of the config's `targets`; a missing toolchain fails here, before any training) -> the trained model
(reused from the session cache, else trained) -> its QDQ ONNX export (the file compare/layers or
export/onnx wrote for this very model is reused, else exported now to export.onnx.path) ->
tvm_build.build_tvm with our int8 fold (layers the config's overrides keep in `precision: fp16` run
in float16: their ONNX nodes, found by module scope, get float16 inputs, weights and outputs and a
float32 accumulator; `fp16Layers` and the per-node `fp16` precision report them) -> parity on real
validation samples against ONNX Runtime and the PyTorch INT8 model (`verify`, default on; only where
the library runs on this machine) -> latency of TVM INT8 against TVM FP32, ONNX Runtime and PyTorch
FP32/INT8 at batch 1 and 16 (`bench`, default off).

Everything is written into a staging folder next to <config folder>/out/tvm-<target name>/ and moved
into place when the request succeeds, so a cancelled or failed request leaves no folder (and an
earlier build untouched). The folder: model.so, build-report.json (build_tvm's report plus parity,
bench and summary), build-report.md (jobs/reports/tvm.py: the report the client opens, also the result's
`markdown`), ort/ (ONNX Runtime's optimised graph of the same export, for its precision as executed) and, with
bench, bench/ (the TVM FP32 builds and the FP32 ONNX twin timed). Beside the other graph files, out/<config
name>.tvm.qatgraph.json: the library's kernels as a graph (runtimes/tvm/kernel_graph.py), the `tvm` pane of
QAT: Open Model Graphs Side by Side.

A config target with `rpc: host:port` names a TVM RPC server on the board: the connection is made
before any training, the library is uploaded there, parity runs on the board's outputs, and `rpc`
holds the board's latency (timed there) and, when the library also runs here, the largest
difference between the board's outputs and this machine's.

Stages (`stage` of $/progress): load, fp32, export, qat, convert (training, when not reused),
target, onnx, build, rpc, verify, bench."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qat_kernel import atomic
from qat_kernel.analysis.model_graph import default_path, runtime_graph
from qat_kernel.jobs import opening
from qat_kernel.jobs.reports.tvm import markdown as report_markdown
from qat_kernel.jobs.reports.tvm import summary as report_summary
from qat_kernel.pipeline import model_io
from qat_kernel.rpc.context import RequestContext
from qat_kernel.runtimes import cpu, parity, targets
from qat_kernel.runtimes.onnx import qdq_export
from qat_kernel.runtimes.tvm import mixed
from qat_kernel.runtimes.tvm import rpc as tvm_rpc
from qat_kernel.runtimes.tvm import run as tvm_run

if TYPE_CHECKING:
    from collections.abc import Callable

    import numpy as np
    import torch

    from qat_kernel.pipeline.losses import Loss
    from qat_kernel.pipeline.model_io import Inputs
    from qat_kernel.pipeline.trained_model import Trained

MARKDOWN = "build-report.md"
DEFAULT_PARITY_SAMPLES = 1024
DEFAULT_BENCH_RUNS = 100

ROW_LABELS = {
    "torch-fp32": "PyTorch FP32 (eager)",
    "torch-int8": "PyTorch INT8 (PT2E converted)",
    "tvm-int8": "TVM INT8 (int8 fold)",
    "tvm-qdq-fp32": "TVM QDQ, no fold (fp32 math)",
    "tvm-fp32": "TVM FP32",
    "ort-int8": "ONNX Runtime INT8 (QDQ)",
    "ort-fp32": "ONNX Runtime FP32",
}


# ----------------------------------------------------------------------------------------- verify


def verify(
    onnx_file: Path,
    artifact: Path,
    x: Inputs,
    labels: np.ndarray,
    torch_out: np.ndarray | None,
    ctx: RequestContext,
    loss: Loss,
    tvm_fn: Callable[[Inputs], np.ndarray] | None = None,
) -> dict[str, Any]:
    """tvm_vs_ort.verify_parity's comparisons (TVM vs ORT, TVM vs PyTorch INT8, ORT vs PyTorch
    INT8) plus each one's top-1 accuracy against the labels."""
    import numpy as np

    from qat_kernel.runtimes.ort.sessions import run_ort
    from qat_kernel.runtimes.tvm.run import run_tvm

    where = " on the board (TVM RPC)" if tvm_fn is not None else ""
    ctx.progress("verify", f"running the TVM library{where} on {len(x)} validation samples", 0.1)
    out = tvm_fn(x) if tvm_fn is not None else run_tvm(artifact, x)
    ctx.check_cancelled()
    ctx.progress("verify", "running ONNX Runtime on the same samples", 0.5)
    ref = run_ort(onnx_file, x)
    ctx.check_cancelled()
    step = parity.onnx_output_step(onnx_file)
    result: dict[str, Any] = {"samples": int(len(x)), "outputKind": step["kind"]}
    if step["step"] is not None:
        result["outputStep"] = float(np.min(step["step"]))
    result["vsOrt"] = parity.compare(out, ref, step["step"])
    if torch_out is not None:
        result["vsTorch"] = parity.compare(out, torch_out, step["step"])
        result["ortVsTorch"] = parity.compare(ref, torch_out, step["step"])
    if parity.accuracy(out, labels, loss) is not None:
        result["accuracy"] = {"tvm": parity.accuracy(out, labels, loss), "ort": parity.accuracy(ref, labels, loss)}
        if torch_out is not None:
            result["accuracy"]["torch"] = parity.accuracy(torch_out, labels, loss)
    ctx.progress("verify", "parity checked", 1.0)
    return result


# ------------------------------------------------------------------------------------------ bench


def time_build(
    onnx_file: Path,
    artifact: Path,
    report: dict[str, Any],
    spec: str | dict[str, Any],
    work: Path,
    x: Inputs,
    trained: Trained,
    converted: torch.fx.GraphModule,
    runs: int,
    ctx: RequestContext,
) -> dict[str, Any]:
    """The library just built, PyTorch FP32/INT8 of the session's model and backend_rows' comparison rows
    (TVM without the fold, TVM FP32, ONNX Runtime INT8/FP32), all built first and then timed together in
    interleaved rounds (runtimes.bench.time_rows) at batch 1 and 16 on real validation inputs; speedups
    against PyTorch FP32."""
    import torch

    from qat_kernel.analysis.model_size import model_bytes
    from qat_kernel.jobs.tvm_vs_ort import backend_rows
    from qat_kernel.runtimes.bench import fastest as fastest_rows
    from qat_kernel.runtimes.bench import time_rows
    from qat_kernel.runtimes.tvm.run import load_tvm

    main_name = "tvm-int8" if report["fold_int8"] else "tvm-qdq-fp32"
    others = tuple(
        r for r in ("tvm-int8", "tvm-qdq-fp32", "tvm-fp32", "ort-int8", "ort-fp32") if r not in (main_name, "tvm-int8")
    )
    built = backend_rows(onnx_file, work, spec, others, ctx.progress, ctx.check_cancelled)
    fns = {
        "torch-fp32": (lambda a: model_io.call(trained.fp32, a), None),
        "torch-int8": (lambda a: model_io.call(converted, a), None),
        main_name: (load_tvm(artifact), artifact),
        **{name: (b["fn"], b["artifact"]) for name, b in built.items()},
    }
    sizes = {
        "torch-fp32": model_bytes(trained.fp32),
        "torch-int8": model_bytes(converted),
        main_name: report["artifact_bytes"],
        **{name: b["bytes"] for name, b in built.items()},
    }
    ops = {main_name: report["ops_per_precision"], **{n: b.get("ops_per_precision") for n, b in built.items()}}
    with torch.no_grad():
        table = time_rows(fns, x, sizes, runs, ctx, ROW_LABELS)
    for row in table["rows"]:
        if ops.get(row["name"]) is not None:
            row["opsPerPrecision"] = ops[row["name"]]
    table["fastest"] = fastest_rows(table["rows"])
    return table


# ------------------------------------------------------------------------------------ ORT as executed


def ort_executed(onnx_file: Path, work: Path, final: Path) -> dict[str, Any]:
    """ONNX Runtime's precision as executed of the same QDQ export (an OrtVariant, paths under `final`): what
    the report shows beside TVM's per-op table."""
    from qat_kernel.runtimes.ort import as_executed
    from qat_kernel.runtimes.ort.report import LABELS as ORT_LABELS

    work.mkdir(parents=True, exist_ok=True)
    optimized = work / "model.optimized.onnx"
    as_executed.optimized_session(onnx_file, optimized, "all")
    analysis = as_executed.precision_as_executed(optimized, onnx_file)
    return {
        "name": "ours",
        "label": ORT_LABELS["ort-int8"],
        "onnx": str(onnx_file),
        "optimized": str(final / optimized.name),
        "bytes": {"onnx": Path(onnx_file).stat().st_size, "optimized": optimized.stat().st_size},
        **{k: analysis[k] for k in ("perPrecision", "computePerPrecision", "convMatmulPerPrecision", "opTypes", "ops")},
    }


# ------------------------------------------------------------------------------------------- run


def _rebased(report: dict[str, Any], stage: Path, out_dir: Path) -> dict[str, Any]:
    """`report` as it reads once the staged folder is in place."""
    moved = atomic.rebase(report, str(stage), str(out_dir))
    assert isinstance(moved, dict)  # rebase gives a dict for a dict
    return moved


def build(
    ctx: RequestContext,
    *,
    config: str,
    target: str,
    fold_int8: bool,
    want_verify: bool,
    want_bench: bool,
    samples: int,
    bench_runs: int,
    steps: int | None,
) -> dict[str, Any]:
    """The config's INT8 model built with TVM for a target, checked and timed."""
    from qat_kernel.runtimes.tvm import build as tvm_build_mod
    from qat_kernel.runtimes.tvm.build import build_tvm

    started = time.monotonic()
    cfg = opening.load(ctx, config)
    name = target
    fold_int8 = fold_int8
    ctx.progress("target", f"resolving target {name}")
    spec, source, _resolved = targets.resolve_config(cfg, name)
    opening.require_pt2e(cfg, "build/tvm compiles the QDQ ONNX export, which needs the pt2e flow")
    rpc = targets.config_rpc(cfg, name)
    remote = None  # (host:port, RPC session)
    if rpc is not None:  # before any training: a board that does not answer fails fast
        rpc_address, rpc_path = rpc
        ctx.progress("target", f"connecting to the TVM RPC server at {rpc_address}")
        remote = rpc_address, tvm_rpc.connect_rpc(rpc_address, rpc_path)
    ctx.check_cancelled()

    _, trained, reused, converted = opening.model(cfg, ctx, steps=steps, convert=True)
    onnx_file, onnx_reused = qdq_export.qdq_onnx(cfg, trained, converted, ctx)

    out_dir = targets.out_dir(cfg, "tvm", name)
    notes: list[str] = []
    with atomic.staging(out_dir) as stage:
        try:

            def build_progress(_stage: str, message: str, fraction: float) -> None:
                ctx.progress("build", message.replace(str(stage), str(out_dir)), fraction)

            fp16 = mixed.fp16_matcher(cfg)
            report = build_tvm(
                onnx_file,
                spec,
                stage,
                fold_int8=fold_int8,
                progress=build_progress,
                check_cancelled=ctx.check_cancelled,
                fp16=fp16,
                workspace=cfg.folder,
            )
            artifact = stage / tvm_build_mod.ARTIFACT
            result: dict[str, Any] = {
                "target": name,
                "targetSource": source,
                "tvmTarget": report["target"],
                "arch": report["arch"],
                "device": report["device"],
                "runnableHere": bool(report["runnable_here"]),
                "tvmVersion": report["tvm_version"],
                "foldInt8": bool(fold_int8),
                "onnx": str(onnx_file),
                "onnxReused": onnx_reused,
                "reused": reused,
                "artifact": str(artifact),
                "artifactBytes": report["artifact_bytes"],
                "outDir": str(out_dir),
                "reportPath": str(out_dir / tvm_build_mod.REPORT),
                "markdownPath": str(out_dir / MARKDOWN),
                "buildSeconds": report["build_time_s"],
                "times": {k: report["times_s"][k] for k in ("import", "fold", "compile", "export")},
                "opsPerPrecision": {
                    "before": report["ops_before"]["per_precision"],
                    "after": report["ops_after"]["per_precision"],
                },
                "anchorsPerPrecision": {
                    "before": report["ops_before"]["anchors_per_precision"],
                    "after": report["ops_after"]["anchors_per_precision"],
                },
                "kernelsPerPrecision": report["kernels_per_precision"],
                "ops": [
                    {
                        "onnxNode": o["onnx_node"],
                        "opType": o["op_type"],
                        "precision": o["precision"],
                        **({"module": o["module"]} if o.get("module") else {}),
                        **({"moduleClass": o["module_class"]} if o.get("module_class") else {}),
                        **({"detail": o["detail"]} if o.get("detail") else {}),
                        **({"reason": o["reason"]} if o.get("reason") else {}),
                    }
                    for o in report["ops"]
                ],
            }
            for key in ("dotprod", "vnni"):
                if report.get(key):
                    result[key] = report[key]
            if report.get("cross_compiler"):
                result["crossCompiler"] = report["cross_compiler"]
            notes.extend(report.get("notes") or [])
            if fp16 is not None:
                result["fp16Layers"] = mixed.fp16_layers(report)
                if not result["fp16Layers"] and not any(n.startswith("fp16 overrides not applied") for n in notes):
                    notes.append(
                        f"fp16 overrides not applied: no ONNX node of {onnx_file.name} belongs to a layer they "
                        "match, so every layer keeps the precision of the export"
                    )

            board = None
            if remote is not None:
                limit = samples
                x, labels, torch_out = parity.reference_outputs(trained, limit, converted, ctx)
                address, rpc_session = remote
                board, result["rpc"] = tvm_rpc.on_board(rpc_session, artifact, report, address, x, bench_runs, ctx)
                if want_verify:
                    result["parity"] = verify(
                        onnx_file, artifact, x, labels, torch_out, ctx, trained.loss, tvm_fn=board
                    )
                    want_verify = False
            if (want_verify or want_bench) and not report["runnable_here"]:
                skipped = " and ".join(w for w, on in (("parity", want_verify), ("latency", want_bench)) if on)
                notes.append(
                    f"{skipped} not measured: the {report['arch']} library does not run on this machine "
                    "(run it on the board through TVM RPC: an `rpc` in the config's target, or under qemu-user)"
                )
            elif want_verify or want_bench:
                limit = samples
                ctx.progress(
                    "verify" if want_verify else "bench", "PyTorch INT8 outputs on the validation samples", 0.0
                )
                x, labels, torch_out = parity.reference_outputs(trained, limit, converted, ctx)
                if want_verify:
                    result["parity"] = verify(onnx_file, artifact, x, labels, torch_out, ctx, trained.loss)
                if want_bench:
                    runs = bench_runs
                    result["bench"] = time_build(
                        onnx_file, artifact, report, spec, stage / "bench", x, trained, converted, runs, ctx
                    )
            if board is not None:
                board.close()
            ctx.check_cancelled()
            try:
                result["ortExecuted"] = ort_executed(onnx_file, stage / "ort", out_dir / "ort")
            except Exception as err:  # noqa: BLE001 - the TVM build stands without ORT's view of the export
                notes.append(f"ONNX Runtime's precision as executed not shown: {type(err).__name__}: {err}")

            result = _rebased(result, stage, out_dir)
            result["cpu"] = cpu.summary()
            result["notes"] = notes
            result["summary"] = report_summary(result)
            result["markdown"] = report_markdown(result)
            result["seconds"] = round(time.monotonic() - started, 2)
            full = _rebased(report, stage, out_dir)
            full.update(
                {
                    "request": {
                        "target": name,
                        "targetSource": source,
                        "foldInt8": bool(fold_int8),
                        "config": str(cfg.path),
                    },
                    "parity": result.get("parity"),
                    "bench": result.get("bench"),
                    "rpc": result.get("rpc"),
                    "notes": notes,
                    "summary": result["summary"],
                }
            )
            atomic.write_json(stage / tvm_build_mod.REPORT, full, indent=2)
            atomic.write_text(stage / MARKDOWN, result["markdown"])
            ctx.check_cancelled()
        finally:
            tvm_run.forget_vms(stage)
    kernels = report.get("kernel_graph")
    if kernels is not None:  # the tvm pane of QAT: Open Model Graphs Side by Side
        atomic.write_json(default_path(cfg, "tvm"), runtime_graph(kernels, trained.fp32, cfg, "tvm"))
    return result
