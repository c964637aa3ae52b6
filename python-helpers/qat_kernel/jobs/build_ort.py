"""build/ort: the config's QDQ ONNX export in ONNX Runtime's CPU EP, as deployed.

Flow: load the config -> the trained model (session cache, else trained) -> its QDQ ONNX export
(reused when this model wrote it) -> an ORT session that saves the graph it optimised
(SessionOptions.optimized_model_filepath) -> "precision as executed" of that graph (ort_build) ->
the Q/DQ re-placement of our export (qdq_replace: the trained scales kept, Q/DQ pairs added where
ORT's fusion needs them, int32 bias for a float-output Gemm), analysed the same way, with before/after
counts, latency and parity vs PyTorch INT8 -> optionally ORT's own quantize_static on the FP32 twin
(same weights, Q/DQ removed) with the config's training inputs as calibration data, analysed the same
way, so the report shows our Q/DQ placement next to ORT's -> top-1 accuracy of each on the validation
samples -> latency at batch 1 and 16 against PyTorch FP32 (`bench`, default on) -> build-report.json and
build-report.md.

Everything goes to a staging folder beside <config folder>/out/ort-cpu/ that replaces it when the
request succeeds. Files: model.qdq.onnx (the deployable QDQ file), model.optimized.onnx (ORT's graph
for this CPU), with replaceQdq: model.qdq.replaced.onnx, model.replaced.optimized.onnx (the re-placed
file is also written beside the export, <export>.replaced.onnx), and with quantizeStatic: fp32.onnx,
model.qs.onnx, model.qs.optimized.onnx.

Stages (`stage` of $/progress): load, fp32, export, qat, convert, onnx, optimize, replace, quantize,
verify, bench."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qat_kernel import atomic
from qat_kernel.jobs import opening
from qat_kernel.jobs.reports.ort import markdown, replacement_markdown, summary
from qat_kernel.pipeline import model_io
from qat_kernel.rpc.context import RequestContext
from qat_kernel.runtimes import cpu, parity
from qat_kernel.runtimes.bench import time_rows
from qat_kernel.runtimes.onnx import qdq_export
from qat_kernel.runtimes.ort.as_executed import CALIBRATION_SAMPLES
from qat_kernel.runtimes.ort.report import LABELS, MARKDOWN, REPORT, out_dir_for
from qat_kernel.runtimes.ort.sessions import run_fn

if TYPE_CHECKING:
    import numpy as np
    import onnxruntime

    from qat_kernel.pipeline.losses import Loss
    from qat_kernel.pipeline.model_io import Inputs


def _variant(
    name: str, label: str, source: Path, optimized: Path, analysis: dict[str, Any], final: Path
) -> dict[str, Any]:
    def moved(p: Path) -> str:
        return str(final / p.name)

    return {
        "name": name,
        "label": label,
        "onnx": moved(source),
        "optimized": moved(optimized),
        "bytes": {"onnx": source.stat().st_size, "optimized": optimized.stat().st_size},
        "perPrecision": analysis["perPrecision"],
        "computePerPrecision": analysis["computePerPrecision"],
        "convMatmulPerPrecision": analysis["convMatmulPerPrecision"],
        "opTypes": analysis["opTypes"],
        "ops": analysis["ops"],
    }


def _accuracy(out: np.ndarray, labels: np.ndarray, torch_out: np.ndarray | None, loss: Loss) -> dict[str, float]:
    result = {"accuracy": parity.accuracy(out, labels, loss) or 0.0}
    if torch_out is not None:
        result["top1AgreementVsTorchInt8"] = float((out.argmax(-1) == torch_out.argmax(-1)).mean())
    return result


def replaced_path(export: Path) -> Path:
    """Where the re-placed model goes beside the export: out/digits.qdq.onnx -> out/digits.qdq.replaced.onnx."""
    stem = export.name[:-5] if export.name.endswith(".onnx") else export.name
    return export.with_name(f"{stem}.replaced.onnx")


def _replace(
    qdq: Path,
    export: Path,
    stage: Path,
    calibration: list[Inputs],
    level: str,
    out_dir: Path,
    variants: list[dict[str, Any]],
    sessions: dict[str, onnxruntime.InferenceSession],
    notes: list[str],
) -> dict[str, Any] | None:
    """The re-placed model of our export in the staging folder, its ORT session and variant; the
    replacement record without parity/latency (added later). None, with a note, when there is
    nothing to re-place or the pass fails."""
    from qat_kernel.runtimes.ort import as_executed, qdq_replace

    target = stage / "model.qdq.replaced.onnx"
    optimized = stage / "model.replaced.optimized.onnx"
    try:
        record = qdq_replace.replace(qdq, target, calibration)
        built = None
        if record["inserted"]:
            built = (
                as_executed.optimized_session(target, optimized, level),
                as_executed.precision_as_executed(optimized, target),
            )
    except Exception as err:  # noqa: BLE001 - the rest of the build stands without it
        notes.append(f"Q/DQ re-placement not done: {type(err).__name__}: {err}")
        target.unlink(missing_ok=True)
        optimized.unlink(missing_ok=True)
        return None
    if built is None:
        notes.append(
            "Q/DQ re-placement: no float tensor between quantized ops and no float-output Gemm bias "
            "in our export; nothing to change"
        )
        target.unlink(missing_ok=True)
        return None
    session, analysis = built
    sessions["ort-replaced-int8"] = session
    variant = _variant("replaced", LABELS["ort-replaced-int8"], target, optimized, analysis, out_dir)
    variants.insert(1, variant)
    # sessions keep the variants' order: ours, replaced, quantize_static
    ours = variants[0]

    def side(v: dict[str, Any]) -> dict[str, Any]:
        return {
            "variant": v["name"],
            "perPrecision": v["perPrecision"],
            "computePerPrecision": v["computePerPrecision"],
            "convMatmulPerPrecision": v["convMatmulPerPrecision"],
            "fp32Ops": [o["name"] for o in v["ops"] if o["precision"] == "fp32" and o["role"] == "compute"],
        }

    return {
        "onnx": str(replaced_path(export)),
        "artifact": str(out_dir / target.name),
        "inserted": record["inserted"],
        "calibrationSamples": record["calibrationSamples"],
        "activationDtype": record["activationDtype"],
        "before": side(ours),
        "after": side(variant),
    }


def _replacement_parity(
    replacement: dict[str, Any],
    variants: list[dict[str, Any]],
    outputs: dict[str, np.ndarray],
    torch_out: np.ndarray,
    qdq: Path,
) -> None:
    """The difference from PyTorch INT8 of before and after: absolute, relative to the largest output, and in
    the steps of our export's output (its quantization step, or its int32 accumulator's: outputKind)."""
    step = parity.onnx_output_step(qdq)
    replacement["outputKind"] = step["kind"]
    by_name = {v["name"]: v for v in variants}
    for side, name in (("before", "ours"), ("after", "replaced")):
        c = parity.compare(outputs[name], torch_out, step["step"])
        entry = replacement[side]
        entry.update(
            {
                "maxAbsDiff": c["maxAbsDiff"],
                "maxRelDiff": c["maxRelDiff"],
                "maxDiffSteps": c.get("maxDiffSteps"),
                "withinOneStep": c.get("withinOneStep"),
            }
        )
        for key in ("accuracy", "top1AgreementVsTorchInt8"):
            if key in by_name[name]:
                entry[key] = by_name[name][key]


def build(
    ctx: RequestContext,
    *,
    config: str,
    optimization: str,
    want_qs: bool,
    want_bench: bool,
    want_replace: bool,
    bench_runs: int,
    samples: int,
    steps: int | None,
) -> dict[str, Any]:
    """The config's QDQ export in ONNX Runtime as deployed, with precision as executed."""
    import onnxruntime

    from qat_kernel.analysis.model_size import model_bytes
    from qat_kernel.pipeline.training import first_inputs
    from qat_kernel.runtimes.onnx.fp32_twin import strip_qdq
    from qat_kernel.runtimes.ort import as_executed
    from qat_kernel.runtimes.ort.sessions import session as ort_session

    started = time.monotonic()
    cfg, trained, reused, converted = opening.load_model(
        ctx, config, steps=steps, pt2e="build/ort runs the QDQ ONNX export, which needs the pt2e flow", convert=True
    )
    level = optimization
    onnx_file, onnx_reused = qdq_export.qdq_onnx(cfg, trained, converted, ctx)

    out_dir = out_dir_for(cfg)
    notes: list[str] = []
    with atomic.staging(out_dir) as stage:
        ctx.progress("optimize", f"ONNX Runtime {onnxruntime.__version__}: optimising the QDQ graph", 0.0)
        qdq = stage / "model.qdq.onnx"
        shutil.copyfile(onnx_file, qdq)
        sess = as_executed.optimized_session(qdq, stage / "model.optimized.onnx", level)
        variants = [
            _variant(
                "ours",
                LABELS["ort-int8"],
                qdq,
                stage / "model.optimized.onnx",
                as_executed.precision_as_executed(stage / "model.optimized.onnx", qdq),
                out_dir,
            )
        ]
        sessions = {"ort-int8": sess}
        ctx.check_cancelled()

        calibration: list[Inputs] = []  # what quantize_static and the re-placement calibrate on
        if want_qs or want_replace:
            calibration = [b.numpy() for b in first_inputs(trained.train, CALIBRATION_SAMPLES)]
        replacement = None
        if want_replace:
            ctx.progress("replace", "re-placing Q/DQ of our export where ORT's QDQ fusion needs them")
            replacement = _replace(qdq, onnx_file, stage, calibration, level, out_dir, variants, sessions, notes)
            ctx.check_cancelled()
        fp32 = None
        if want_qs or want_bench:
            fp32 = strip_qdq(qdq, stage / "fp32.onnx")
        if want_qs:
            assert fp32 is not None
            ctx.progress("quantize", f"quantize_static on the FP32 twin, {CALIBRATION_SAMPLES} calibration samples")
            qs = as_executed.quantize_static_twin(fp32, stage / "model.qs.onnx", calibration)
            ctx.check_cancelled()
            sessions["ort-qs-int8"] = as_executed.optimized_session(qs, stage / "model.qs.optimized.onnx", level)
            variants.append(
                _variant(
                    "quantize_static",
                    LABELS["ort-qs-int8"],
                    qs,
                    stage / "model.qs.optimized.onnx",
                    as_executed.precision_as_executed(stage / "model.qs.optimized.onnx", qs),
                    out_dir,
                )
            )
            notes.append(
                f"quantize_static: QDQ format, uint8 activations, int8 per-channel weights, MinMax "
                f"calibration on {sum(len(b) for b in calibration)} training samples"
            )
        if level == "all":
            notes.append(
                "model.optimized.onnx holds layout transforms for this CPU (level all): deploy "
                "model.qdq.onnx elsewhere and let ONNX Runtime optimise it there"
            )

        limit = samples
        ctx.progress("verify", "PyTorch INT8 and ONNX Runtime on the validation samples", 0.0)
        x, labels, torch_out = parity.reference_outputs(trained, limit, converted, ctx)
        outputs = {}
        for v, key in zip(variants, sessions):
            outputs[v["name"]] = out = run_fn(sessions[key])(x)
            if out.ndim == 2 and out.shape[-1] > 1:
                v.update(_accuracy(out, labels, torch_out, trained.loss))
        ctx.check_cancelled()

        result: dict[str, Any] = {
            "ortVersion": onnxruntime.__version__,
            "provider": "CPUExecutionProvider",
            "optimization": level,
            "onnx": str(onnx_file),
            "onnxReused": onnx_reused,
            "reused": reused,
            "outDir": str(out_dir),
            "reportPath": str(out_dir / REPORT),
            "markdownPath": str(out_dir / MARKDOWN),
            "samples": int(len(x)),
            "variants": variants,
        }
        if replacement is not None:
            result["qdqReplacement"] = replacement
            _replacement_parity(replacement, variants, outputs, torch_out, qdq)
        if want_bench:
            import torch

            assert fp32 is not None  # stripped above for the benchmark
            fp32_sess = ort_session(fp32)
            with torch.no_grad():
                fns = {
                    "torch-fp32": (lambda a: model_io.call(trained.fp32, a), None),
                    "torch-int8": (lambda a: model_io.call(converted, a), None),
                    "ort-fp32": (run_fn(fp32_sess), out_dir / fp32.name),
                    "ort-int8": (run_fn(sessions["ort-int8"]), out_dir / qdq.name),
                }
                sizes = {
                    "torch-fp32": model_bytes(trained.fp32),
                    "torch-int8": model_bytes(converted),
                    "ort-fp32": fp32.stat().st_size,
                    "ort-int8": qdq.stat().st_size,
                }
                if "ort-replaced-int8" in sessions:
                    fns["ort-replaced-int8"] = (
                        run_fn(sessions["ort-replaced-int8"]),
                        out_dir / "model.qdq.replaced.onnx",
                    )
                    sizes["ort-replaced-int8"] = (stage / "model.qdq.replaced.onnx").stat().st_size
                if "ort-qs-int8" in sessions:
                    fns["ort-qs-int8"] = (run_fn(sessions["ort-qs-int8"]), out_dir / "model.qs.onnx")
                    sizes["ort-qs-int8"] = (stage / "model.qs.onnx").stat().st_size
                runs = bench_runs
                result["bench"] = time_rows(fns, x, sizes, runs, ctx, LABELS)
            if replacement is not None:
                rows = {r["name"]: r for r in result["bench"]["rows"]}
                for side, name in (("before", "ort-int8"), ("after", "ort-replaced-int8")):
                    replacement[side]["latencyMs"] = {k: rows[name]["latency"][k]["medianMs"] for k in ("b1", "b16")}
        result["cpu"] = cpu.summary()
        result["notes"] = notes + cpu.notes("ort")
        if result.get("qdqReplacement") is not None:
            result["qdqReplacement"]["markdown"] = replacement_markdown(result["qdqReplacement"])
        result["summary"] = summary(result)
        result["seconds"] = round(time.monotonic() - started, 2)
        report = {
            **result,
            "request": {
                "config": str(cfg.path),
                "optimization": level,
                "quantizeStatic": bool(want_qs),
                "bench": bool(want_bench),
                "replaceQdq": bool(want_replace),
            },
        }
        atomic.write_json(stage / REPORT, report, indent=2)
        result["markdown"] = markdown(result)
        atomic.write_text(stage / MARKDOWN, result["markdown"])
        ctx.check_cancelled()
        del sess, sessions
    if replacement is not None:
        atomic.copy_file(out_dir / "model.qdq.replaced.onnx", replacement["onnx"])
    return result
