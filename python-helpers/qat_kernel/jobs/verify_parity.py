"""verify/parity: every deployable artifact of the config run on the same real validation inputs and
compared with the PyTorch INT8 model (the PT2E converted graph) of the session.

Artifacts, each a row (absent files are rows with status "missing", so the table says what to build):
  ort-int8            ONNX Runtime CPU EP on the QDQ export (exported now if this model has none)
  ort-int8-optimized  out/ort-cpu/model.optimized.onnx, the graph build/ort saved
  ort-qs-int8         out/ort-cpu/model.qs.onnx, ORT's quantize_static (other scales: expect drift)
  tvm-int8            out/tvm-<target>/model.so (build/tvm)
  c-runner            out/deploy-<target>/ portable C runner (deploy/c-artifact), compiled for this machine
  and with includeFp32: torch-fp32, ort-fp32 (the QDQ file with Q/DQ stripped), tvm-fp32
  (out/tvm-<target>/bench/tvm-fp32/model.so when build/tvm ran with bench).

Metrics per row (tvm_build.compare): max |diff| in quantization steps of the output (the PyTorch
graph's own step: the output's scale, or one unit of the last layer's int32 accumulator, input scale x
weight scale per channel, as export/onnx reports it), the fraction of samples within one step, per-sample
cosine, top-1 agreement, and top-1 accuracy against the labels. A file older than the QDQ export it
should come from is run anyway and flagged stale."""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from qat_kernel.jobs import opening
from qat_kernel.pipeline import model_io
from qat_kernel.pipeline.config import Config
from qat_kernel.reads import REPORT_BYTES, read_regular_text
from qat_kernel.rpc.context import RequestContext
from qat_kernel.runtimes import parity, provenance, targets
from qat_kernel.runtimes.c import folder as c_folder
from qat_kernel.runtimes.onnx import qdq_export
from qat_kernel.runtimes.ort import report as ort_report

if TYPE_CHECKING:
    import numpy as np

# How a row's artifact is opened: () -> (the model's inputs -> its output), called only when the row runs
Open: TypeAlias = "Callable[[], Callable[[Any], Any]]"

LABELS = {
    "ort-int8": "ONNX Runtime INT8 (QDQ export)",
    "ort-int8-optimized": "ONNX Runtime INT8 (build/ort optimised graph)",
    "ort-qs-int8": "ONNX Runtime INT8 (quantize_static)",
    "tvm-int8": "TVM INT8 (int8 fold)",
    "c-runner": "Portable C runner (deploy/c-artifact)",
    "torch-fp32": "PyTorch FP32 (eager)",
    "ort-fp32": "ONNX Runtime FP32 (Q/DQ stripped)",
    "tvm-fp32": "TVM FP32",
}
INT8_ROWS = ("ort-int8", "ort-int8-optimized", "ort-qs-int8", "tvm-int8", "c-runner")
FP32_ROWS = ("torch-fp32", "ort-fp32", "tvm-fp32")


def _ort(path: Path) -> Callable[[Any], np.ndarray]:
    from qat_kernel.runtimes.ort.sessions import run_fn, session

    return run_fn(session(path))


def _newer_than(artifact: Path, source: Path) -> bool:
    return artifact.stat().st_mtime_ns >= source.stat().st_mtime_ns


def _candidates(cfg: Config, target: str, onnx_file: Path, want_fp32: bool, work: Path) -> list[dict[str, Any]]:
    """(name, artifact, how to run it | None with status and note) for each row."""
    from qat_kernel.runtimes.targets import elf_machine, host_arch

    rows = []
    ort_dir = ort_report.out_dir_for(cfg)
    tvm_dir = targets.out_dir(cfg, "tvm", target)
    qdq_bytes = onnx_file.read_bytes()
    ort_stale = (ort_dir / "model.qdq.onnx").is_file() and (ort_dir / "model.qdq.onnx").read_bytes() != qdq_bytes

    def row(
        name: str,
        artifact: Path | str | None,
        runner: Open | None = None,
        status: str = "ok",
        note: str | None = None,
        stale: bool = False,
    ) -> None:
        r = {"name": name, "label": LABELS[name], "status": status, "run": runner}
        if artifact is not None:
            r["artifact"] = str(artifact)
        if note:
            r["note"] = note
        if stale:
            r["stale"] = True
        rows.append(r)

    row("ort-int8", onnx_file, lambda: _ort(onnx_file))
    for name, file, how in (
        ("ort-int8-optimized", ort_dir / "model.optimized.onnx", "build/ort"),
        ("ort-qs-int8", ort_dir / "model.qs.onnx", "build/ort (quantizeStatic)"),
    ):
        if file.is_file():
            row(
                name,
                file,
                (lambda f: lambda: _ort(f))(file),
                stale=ort_stale,
                note="built from an earlier QDQ export: run build/ort again" if ort_stale else None,
            )
        else:
            row(name, file, status="missing", note=f"not built: run {how}")

    def tvm_row(name: str, lib: Path, how: str) -> None:
        if not lib.is_file():
            row(name, lib, status="missing", note=f"not built: run {how} for target {target}")
            return
        machine = elf_machine(lib)
        if machine is not None and machine != host_arch():
            row(name, lib, status="skipped", note=f"built for {machine}: runs on the board (TVM RPC), not here")
            return
        if not provenance.built_here(lib):
            note = f"not built by QAT Studio on this machine (or changed since): not loaded; run {how} again"
            row(name, lib, status="skipped", note=note)
            return
        report = lib.parent / "build-report.json"
        built_from = None
        if report.is_file():
            try:
                built_from = json.loads(read_regular_text(report, REPORT_BYTES)).get("onnx")
            except (OSError, ValueError, AttributeError):
                built_from = None  # not a report it wrote: the library's age alone decides
        stale = not _newer_than(lib, onnx_file) or (built_from is not None and built_from != str(onnx_file))
        from qat_kernel.runtimes.tvm.run import load_tvm

        row(
            name,
            lib,
            lambda: load_tvm(lib),
            stale=stale,
            note="built from an earlier QDQ export: run build/tvm again" if stale else None,
        )

    tvm_row("tvm-int8", tvm_dir / "model.so", "build/tvm")
    deploy_dir = c_folder.out_dir_for(cfg, target)
    runner = c_folder.host_runner(deploy_dir)
    if runner is None:
        row("c-runner", deploy_dir, status="missing", note=f"not built: run deploy/c-artifact for target {target}")
    elif not runner["builtHere"]:
        row(
            "c-runner",
            runner["source"],
            status="skipped",
            note="not written by QAT Studio on this machine (or changed since): not compiled or run; run "
            "deploy/c-artifact again",
        )
    else:
        stale = not _newer_than(runner["header"], onnx_file)
        row(
            "c-runner",
            runner["source"],
            lambda: c_folder.runner_fn(runner, work),
            stale=stale,
            note="written from an earlier model: run deploy/c-artifact again" if stale else None,
        )
    if want_fp32:
        from qat_kernel.runtimes.onnx.fp32_twin import strip_qdq

        row("torch-fp32", None, None)  # run by the caller: it needs the session's model
        fp32 = strip_qdq(onnx_file, work / "fp32.onnx")
        row("ort-fp32", None, lambda: _ort(fp32), note="the QDQ export with its Q/DQ stripped (same weights)")
        tvm_row("tvm-fp32", tvm_dir / "bench" / "tvm-fp32" / "model.so", "build/tvm with bench")
    return rows


def summary(result: dict[str, Any]) -> list[str]:
    step = result.get("outputStep")
    lines = [
        f"Parity against PyTorch INT8 on {result['samples']} validation samples (output "
        f"{result['outputKind']}{f', step {step:.3g}' if step is not None else ''}); PyTorch INT8 "
        f"accuracy {result['torchInt8Accuracy'] * 100:.2f}%"
    ]
    for r in result["rows"]:
        if r["status"] != "ok":
            lines.append(f"{r['label']}: {r['status']} ({r.get('note', '')})")
            continue
        m = r["vsTorchInt8"]
        text = f"{r['label']}: {parity.describe(m, result['outputKind'])}"
        if "accuracy" in r:
            text += f", accuracy {r['accuracy'] * 100:.2f}%"
        if r.get("stale"):
            text += " [stale]"
        lines.append(text)
    return lines


def verify(
    ctx: RequestContext,
    *,
    config: str,
    target: str,
    artifacts: list[str] | None,
    include_fp32: bool,
    samples: int,
    steps: int | None,
) -> dict[str, Any]:
    """Every built artifact of the config against PyTorch INT8 on the same samples."""
    import numpy as np
    import torch

    started = time.monotonic()
    cfg, trained, reused, converted = opening.load_model(
        ctx,
        config,
        steps=steps,
        pt2e="verify/parity compares the QDQ ONNX artifacts, which need the pt2e flow",
        convert=True,
    )
    onnx_file, _ = qdq_export.qdq_onnx(cfg, trained, converted, ctx)
    ctx.progress("verify", "PyTorch INT8 outputs on the validation samples", 0.0)
    x, labels, torch_out = parity.reference_outputs(trained, samples, converted, ctx)
    output = parity.torch_output_step(converted)
    step, kind = output["step"], output["kind"]
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="qat-parity-") as tmp:
        rows = _candidates(cfg, target, onnx_file, include_fp32, Path(tmp))
        if artifacts:
            rows = [r for r in rows if r["name"] in artifacts]
        for i, r in enumerate(rows):
            run_fn = r.pop("run")
            if r["status"] != "ok":
                continue
            ctx.check_cancelled()
            ctx.progress("verify", f"running {r['label']}", (i + 1) / (len(rows) + 1))
            try:
                if r["name"] == "torch-fp32":
                    with torch.no_grad():
                        out = model_io.call(trained.fp32, x).float().numpy()
                else:
                    out = np.asarray(run_fn()(x))
            except Exception as exc:  # noqa: BLE001 - one broken artifact must not hide the others
                r["status"], r["note"] = "failed", f"{type(exc).__name__}: {str(exc).strip().splitlines()[0]}"
                continue
            r["vsTorchInt8"] = parity.compare(out, torch_out, step)
            accuracy = parity.accuracy(out, labels, trained.loss)
            if accuracy is not None:
                r["accuracy"] = accuracy
    if any(r.get("stale") for r in rows):
        notes.append(
            "stale rows were built from an earlier model or export: their differences say so, not "
            "that the runtime is wrong"
        )
    result = {
        "reference": "torch-int8",
        "target": target,
        "onnx": str(onnx_file),
        "reused": reused,
        "samples": int(len(x)),
        "outputKind": kind,
        "torchInt8Accuracy": parity.accuracy(torch_out, labels, trained.loss) or 0.0,
        "rows": rows,
        "notes": notes,
    }
    if step is not None:
        result["outputStep"] = float(np.min(step))
    result["summary"] = summary(result)
    result["seconds"] = round(time.monotonic() - started, 2)
    return result
