"""bench/run: one latency table of the config's model in every runtime, on real validation inputs at
batch 1 and 16, each row's median as a ratio to PyTorch FP32 (eager).

Rows: PyTorch FP32 and INT8 (the session's models), ONNX Runtime FP32 (the QDQ export with its Q/DQ
stripped), ONNX Runtime INT8 on our QDQ export and on quantize_static's (ORT's own Q/DQ placement,
calibrated on the config's training inputs), and TVM INT8 (build/tvm's library with the int8 fold,
built for `target` into a temporary folder), and Inductor INT8 (build/inductor's torch.compile of the
INT8 graph with freezing; left out with a note when it cannot compile here). Every row computes the same
network; only where and how it is quantized differ, which is what the ratios compare."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from qat_kernel.jobs import opening
from qat_kernel.pipeline import model_io
from qat_kernel.rpc.context import RequestContext
from qat_kernel.rpc.errors import Cancelled, ConfigInvalid, KernelError
from qat_kernel.runtimes import cpu, parity, targets
from qat_kernel.runtimes.bench import BATCHES, table, time_rows
from qat_kernel.runtimes.bench import fastest as fastest_rows
from qat_kernel.runtimes.inductor import int8_compile as inductor
from qat_kernel.runtimes.onnx import qdq_export
from qat_kernel.runtimes.ort import report as ort_report
from qat_kernel.runtimes.ort.as_executed import CALIBRATION_SAMPLES
from qat_kernel.runtimes.tvm import mixed

if TYPE_CHECKING:
    import numpy as np
    import torch

    from qat_kernel.pipeline.model_io import Inputs

LABELS = {
    **ort_report.LABELS,
    "tvm-fp32": "TVM FP32 (Q/DQ stripped)",
    "tvm-int8": "TVM INT8 (int8 fold)",
    "inductor-int8": inductor.LABEL,
}
ROW_ORDER = (
    "torch-fp32",
    "torch-int8",
    "inductor-int8",
    "ort-fp32",
    "ort-int8",
    "ort-replaced-int8",
    "ort-qs-int8",
    "tvm-fp32",
    "tvm-int8",
)

# A row of the latency table: (inputs -> output, the artifact timed | None), as runtimes.bench.time_rows takes it
Timed: TypeAlias = "tuple[Callable[[Any], Any], str | Path | None]"


def _add_replaced(
    fns: dict[str, Timed],
    sizes: dict[str, int],
    onnx_file: Path,
    work: Path,
    calibration: list[Inputs],
    notes: list[str],
    ort: Callable[[Path], Callable[[Any], Any]],
    ctx: RequestContext,
) -> None:
    """ONNX Runtime on our export with its Q/DQ re-placed (build/ort's qdq_replace, trained scales kept);
    left out with a note when there is nothing to re-place or the pass fails."""
    from qat_kernel.runtimes.ort import qdq_replace

    ctx.progress("replace", "re-placing the export's Q/DQ for ONNX Runtime")
    target = work / "model.qdq.replaced.onnx"
    try:
        record = qdq_replace.replace(onnx_file, target, calibration)
    except Exception as err:  # noqa: BLE001 - the other rows stand without it
        notes.append(f"Q/DQ re-placement row left out: {type(err).__name__}: {err}")
        return
    if not record["inserted"]:
        notes.append("Q/DQ re-placement row left out: nothing to re-place in the export")
        return
    fns["ort-replaced-int8"] = (ort(target), None)
    sizes["ort-replaced-int8"] = target.stat().st_size


def _add_inductor(
    fns: dict[str, Timed],
    sizes: dict[str, int],
    converted: torch.fx.GraphModule,
    x: Inputs,
    torch_out: np.ndarray,
    notes: list[str],
    ctx: RequestContext,
) -> None:
    """The Inductor INT8 row, compiled now; a compile that fails here leaves it out with a note."""
    import numpy as np

    from qat_kernel.analysis.model_size import model_bytes

    ctx.progress("build", "Inductor INT8: torch.compile with freezing")
    try:
        fn, seconds, _cxx = inductor.compile_int8(converted, x, BATCHES, ctx)
        n = min(len(x), inductor.PARITY_BATCH)
        diff = float(np.abs(inductor.padded_outputs(fn, x[:n]) - torch_out[:n]).max())
    except Cancelled:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure of a row becomes that row's typed error
        err = exc if isinstance(exc, KernelError) else inductor.failure(exc)
        install = err.data.get("install")
        notes.append(
            f"{inductor.LABEL} left out: {err.message}"
            + (f" (install: {install})" if install and install not in err.message else "")
        )
        return
    fns["inductor-int8"] = (fn, None)
    sizes["inductor-int8"] = model_bytes(converted)
    notes.append(
        f"{inductor.LABEL}: compiled in {sum(seconds.values()):.1f} s (batch 1 and 16, static "
        f"shapes); max |diff| from PyTorch INT8 {diff:.3g} on {n} validation samples"
    )


def _label(name: str | None) -> str:
    return LABELS[name] if name else "not decided (every figure noisy)"


def bench(
    ctx: RequestContext,
    *,
    config: str,
    target: str,
    want_qs: bool,
    want_inductor: bool,
    want_replace: bool,
    want_tvm_fp32: bool,
    runs: int,
    samples: int,
    steps: int | None,
) -> dict[str, Any]:
    """One latency table of every runtime on the config's model."""
    import torch

    from qat_kernel.analysis.model_size import model_bytes
    from qat_kernel.pipeline.training import first_inputs
    from qat_kernel.runtimes.onnx.fp32_twin import strip_qdq
    from qat_kernel.runtimes.ort import as_executed
    from qat_kernel.runtimes.ort.sessions import run_fn
    from qat_kernel.runtimes.ort.sessions import session as ort_session
    from qat_kernel.runtimes.tvm.build import build_tvm as tvm_build_fn
    from qat_kernel.runtimes.tvm.run import forget_vms, load_tvm

    started = time.monotonic()
    cfg = opening.load(ctx, config, pt2e="bench/run times the QDQ ONNX export, which needs the pt2e flow")
    spec, _source, resolved = targets.resolve_config(cfg, target)
    if not resolved.runnable_here:
        raise ConfigInvalid(
            f"targets: bench/run times on this machine; {target} builds for {resolved.arch}"
            f"{'' if resolved.device == 'cpu' else ' ' + resolved.device} (time it on the board "
            "with build/tvm and an rpc address)",
            path="targets",
        )
    _, trained, reused, converted = opening.model(cfg, ctx, steps=steps, convert=True)
    onnx_file, _ = qdq_export.qdq_onnx(cfg, trained, converted, ctx)
    x, _labels, torch_out = parity.reference_outputs(trained, samples, converted, ctx)
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="qat-bench-") as tmp:
        work = Path(tmp)
        fp32 = strip_qdq(onnx_file, work / "fp32.onnx")

        def ort(path: Path) -> Callable[[Any], np.ndarray]:
            sess = ort_session(path)
            return run_fn(sess)

        fns: dict[str, Timed] = {
            "torch-fp32": (lambda a: model_io.call(trained.fp32, a), None),
            "torch-int8": (lambda a: model_io.call(converted, a), None),
            "ort-fp32": (ort(fp32), None),
            "ort-int8": (ort(onnx_file), onnx_file),
        }
        sizes: dict[str, int] = {
            "torch-fp32": model_bytes(trained.fp32),
            "torch-int8": model_bytes(converted),
            "ort-fp32": fp32.stat().st_size,
            "ort-int8": onnx_file.stat().st_size,
        }
        calibration = [b.numpy() for b in first_inputs(trained.train, CALIBRATION_SAMPLES)]
        if want_replace:
            _add_replaced(fns, sizes, onnx_file, work, calibration, notes, ort, ctx)
        if want_qs:
            ctx.progress("quantize", "quantize_static on the FP32 twin")
            qs = as_executed.quantize_static_twin(fp32, work / "model.qs.onnx", calibration)
            fns["ort-qs-int8"] = (ort(qs), None)
            sizes["ort-qs-int8"] = qs.stat().st_size
        ctx.progress("build", f"TVM INT8 build for {target}")
        # The config's fp16 layers run in float16 as in build/tvm: the row is the config's mixed build.
        fp16 = mixed.fp16_matcher(cfg)
        report = tvm_build_fn(onnx_file, spec, work / "tvm", check_cancelled=ctx.check_cancelled, fp16=fp16)
        if fp16 is not None:
            layers = [layer["module"] for layer in mixed.fp16_layers(report) if layer["converted"]]
            if layers:
                notes.append(f"TVM INT8 row: mixed precision, {', '.join(layers)} in fp16 (the config's overrides)")
        fns["tvm-int8"] = (load_tvm(report["artifact"]), None)
        sizes["tvm-int8"] = report["artifact_bytes"]
        ctx.check_cancelled()
        if want_tvm_fp32:
            ctx.progress("build", f"TVM FP32 build for {target}")
            fp32_report = tvm_build_fn(
                fp32, spec, work / "tvm-fp32", fold_int8=False, check_cancelled=ctx.check_cancelled
            )
            fns["tvm-fp32"] = (load_tvm(fp32_report["artifact"]), None)
            sizes["tvm-fp32"] = fp32_report["artifact_bytes"]
            ctx.check_cancelled()
        if want_inductor:
            _add_inductor(fns, sizes, converted, x, torch_out, notes, ctx)
            # timed right after the other PyTorch rows: they share one OpenMP pool, and a row timed
            # after TVM or ONNX Runtime runs against their still-spinning workers
            fns = {k: fns[k] for k in ROW_ORDER if k in fns}
        with torch.no_grad():
            bench = time_rows(fns, x, sizes, runs, ctx, LABELS)
        forget_vms(work)
    fastest = fastest_rows(bench["rows"])
    notes.append(
        f"TVM target {report['target']}; ONNX Runtime CPU EP with its default optimisations; PyTorch in "
        f"eager mode with {torch.get_num_threads()} threads"
    )
    result = {
        "target": target,
        "onnx": str(onnx_file),
        "reused": reused,
        "samples": int(len(x)),
        "bench": bench,
        "fastest": fastest,
        "cpu": cpu.summary(),
        "notes": notes + cpu.notes("bench"),
    }
    result["summary"] = (
        table(bench)
        + [f"Fastest: batch 1 {_label(fastest['b1'])}, batch 16 {_label(fastest['b16'])}"]
        + [f"Note: {n}" for n in result["notes"]]
    )
    result["seconds"] = round(time.monotonic() - started, 2)
    return result
