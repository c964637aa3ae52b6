"""TVM next to ONNX Runtime on one QDQ model, for build/tvm and the tests: parity (verify_parity) and the
comparison rows of a TVM build: TVM INT8 (our fold) vs TVM without it vs TVM FP32 vs ONNX Runtime. PyTorch
FP32/INT8 rows are the caller's (build/tvm's job adds them); every row is timed together, in interleaved
rounds, by runtimes.bench.time_rows. Two backends side by side: a composition, so it lives with the jobs.

Rows:
  tvm-int8        the QDQ model with our Q/DQ fold (integer conv/matmul)
  tvm-qdq-fp32    the QDQ model as the importer leaves it (Q/DQ lowered to fp32 math)
  tvm-fp32        strip_qdq's FP32 twin (same weights, no quantization)
  ort-int8        ONNX Runtime CPU EP on the QDQ model (ORT fuses it to QLinearConv/QGemm...)
  ort-fp32        ONNX Runtime on the FP32 twin
All are called numpy-in/numpy-out (TVM includes its tensor copy in and out)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from qat_kernel.runtimes import parity
from qat_kernel.runtimes.bench import time_rows
from qat_kernel.runtimes.onnx.fp32_twin import strip_qdq
from qat_kernel.runtimes.ort.sessions import run_fn, run_ort
from qat_kernel.runtimes.ort.sessions import session as ort_session
from qat_kernel.runtimes.tvm.build import Progress, build_tvm
from qat_kernel.runtimes.tvm.run import load_tvm, run_tvm

if TYPE_CHECKING:
    from qat_kernel.pipeline.model_io import Inputs
    from qat_kernel.rpc.context import RequestContext

ROWS = ("tvm-int8", "tvm-qdq-fp32", "tvm-fp32", "ort-int8", "ort-fp32")


def verify_parity(
    onnx_path: str | Path,
    artifact: str | Path,
    inputs: np.ndarray,
    reference_int8_outputs: np.ndarray | None = None,
    progress: Progress | None = None,
    check_cancelled: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Run the TVM library and ONNX Runtime (CPU EP) on the same QDQ model and inputs and compare;
    also compare with `reference_int8_outputs` (e.g. PyTorch INT8) when given."""
    progress = progress or (lambda *a: None)
    check_cancelled = check_cancelled or (lambda: None)
    inputs = np.asarray(inputs)
    progress("run-tvm", "Running the TVM library", 0.1)
    out = run_tvm(artifact, inputs)
    check_cancelled()
    progress("run-ort", "Running ONNX Runtime", 0.5)
    ref = run_ort(onnx_path, inputs)
    check_cancelled()
    step = parity.onnx_output_step(onnx_path)
    result = {
        "artifact": str(artifact),
        "onnx": str(onnx_path),
        "outputKind": step["kind"],
        "outputStep": step["step"],
        "vsOrt": parity.compare(out, ref, step["step"]),
        "vsReference": None,
        "ortVsReference": None,
    }
    if reference_int8_outputs is not None:
        result["vsReference"] = parity.compare(out, reference_int8_outputs, step["step"])
        result["ortVsReference"] = parity.compare(ref, reference_int8_outputs, step["step"])
    progress("done", "Parity checked", 1.0)
    return result


def backend_rows(
    onnx_path: str | Path,
    work_dir: str | Path,
    target: str | dict[str, Any] = "x86-64",
    rows: Sequence[str] = ROWS,
    progress: Progress | None = None,
    check_cancelled: Callable[[], None] | None = None,
) -> dict[str, dict[str, Any]]:
    """Builds (TVM) or opens (ONNX Runtime) each row: {name: {fn, artifact, bytes, build_s?,
    ops_per_precision?}}, in the order of `rows`. Nothing is timed here."""
    progress = progress or (lambda *a: None)
    check_cancelled = check_cancelled or (lambda: None)
    work_dir = Path(work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    fp32_onnx = None
    if "tvm-fp32" in rows or "ort-fp32" in rows:
        fp32_onnx = strip_qdq(onnx_path, work_dir / "fp32.onnx")
    out = {}
    for i, name in enumerate(rows):
        progress("bench", f"Building {name}", i / len(rows))
        check_cancelled()
        if name.startswith("tvm-"):
            src = fp32_onnx if name == "tvm-fp32" else onnx_path
            assert src is not None  # the FP32 twin is made above whenever a tvm-fp32 row is asked for
            report = build_tvm(src, target, work_dir / name, fold_int8=(name == "tvm-int8"))
            out[name] = {
                "fn": load_tvm(report["artifact"]),
                "artifact": report["artifact"],
                "bytes": report["artifact_bytes"],
                "build_s": report["build_time_s"],
                "ops_per_precision": report["ops_per_precision"],
            }
        else:
            src = fp32_onnx if name == "ort-fp32" else onnx_path
            assert src is not None  # the fp32 rows' twin is stripped above
            fn = run_fn(ort_session(src))
            out[name] = {"fn": fn, "artifact": str(src), "bytes": Path(src).stat().st_size}
    return out


def compare_backends(
    onnx_path: str | Path,
    work_dir: str | Path,
    x: Inputs | np.ndarray,
    ctx: RequestContext,
    target: str | dict[str, Any] = "x86-64",
    runs: int = 100,
    rows: Sequence[str] = ROWS,
) -> dict[str, Any]:
    """backend_rows timed together (runtimes.bench.time_rows: batch 1 and 16 from the samples `x`, interleaved
    rounds); the first row is the ratios' baseline. Returns the latency table."""
    built = backend_rows(onnx_path, work_dir, target, rows, ctx.progress, ctx.check_cancelled)
    fns = {name: (b["fn"], b["artifact"]) for name, b in built.items()}
    sizes = {name: b["bytes"] for name, b in built.items()}
    table = time_rows(fns, x, sizes, runs, ctx, {name: name for name in built}, baseline=next(iter(built)))
    for row in table["rows"]:
        if built[row["name"]].get("ops_per_precision") is not None:
            row["opsPerPrecision"] = built[row["name"]]["ops_per_precision"]
    return table
