"""build/ort's summary lines, its build-report.md and the Q/DQ re-placement section of it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeAlias

from qat_kernel.jobs.reports.tables import cell as _cell
from qat_kernel.jobs.reports.tables import executed_markdown
from qat_kernel.runtimes.bench import table as bench_table


def _counts(d: dict[str, int]) -> str:
    order = ["int8", "fp32", "fp16", "bf16", "conversion", "other"]
    return ", ".join(f"{k} {d[k]}" for k in order + sorted(set(d) - set(order)) if k in d)


def summary(result: dict[str, Any]) -> list[str]:
    lines = [
        f"ONNX Runtime {result['ortVersion']} ({result['provider']}, optimisation level "
        f"{result['optimization']}): {result['onnx']}"
    ]
    for v in result["variants"]:
        lines.append(
            f"{v['label']}: conv/matmul ops {_counts(v['convMatmulPerPrecision'])}; all ops "
            f"{_counts(v['perPrecision'])}"
        )
        fp32 = [o for o in v["ops"] if o["precision"] == "fp32"]
        for o in fp32[:5]:
            lines.append(f"  fp32: {o['opType']} {o['name']}: {o.get('reason', '')}")
        if len(fp32) > 5:
            lines.append(f"  ... and {len(fp32) - 5} more fp32 ops (see the report)")
        if "accuracy" in v:
            text = f"  top-1 accuracy {v['accuracy'] * 100:.2f}%"
            if "top1AgreementVsTorchInt8" in v:
                text += f", same prediction as PyTorch INT8 on {v['top1AgreementVsTorchInt8'] * 100:.2f}%"
            lines.append(text + f" of {result['samples']} validation samples")
    rq = result.get("qdqReplacement")
    if rq is not None:
        lines.append(f"Q/DQ re-placement of our export ({_what(rq)}), before -> after:")
        for label, cell in rows(rq):
            lines.append(f"  {label}: {cell(rq['before'])} -> {cell(rq['after'])}")
    bench = result.get("bench")
    if bench is not None:
        lines += bench_table(bench)
    lines.append(f"Folder: {result['outDir']} (report {result['reportPath']})")
    for note in result.get("notes", []):
        lines.append(f"Note: {note}")
    return lines


def _steps(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.2f}" if v < 10 else f"{v:.0f}"


def _pct(v: float | None, digits: int = 1) -> str:
    return "n/a" if v is None else f"{v * 100:.{digits}f} %"


def _sig(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.3g}"


def _ms(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.3f} ms"


def _count(side: dict[str, Any], key: str, precision: str) -> str:
    return str(side[key].get(precision, 0))


# (row label, the cell of one side of the re-placement)
Row: TypeAlias = tuple[str, Callable[[dict[str, Any]], str]]
ROWS: tuple[Row, ...] = (
    ("conv/matmul ops int8", lambda s: _count(s, "convMatmulPerPrecision", "int8")),
    ("conv/matmul ops fp32", lambda s: _count(s, "convMatmulPerPrecision", "fp32")),
    ("compute ops int8", lambda s: _count(s, "computePerPrecision", "int8")),
    ("compute ops fp32", lambda s: _count(s, "computePerPrecision", "fp32")),
    ("Q/DQ left (conversions)", lambda s: _count(s, "perPrecision", "conversion")),
    ("fp32 compute ops", lambda s: _cell(", ".join(s["fp32Ops"])) if s["fp32Ops"] else "none"),
    ("top-1 agreement vs PyTorch INT8", lambda s: _pct(s.get("top1AgreementVsTorchInt8"))),
    ("max abs diff vs PyTorch INT8", lambda s: _sig(s.get("maxAbsDiff"))),
    ("of the largest output", lambda s: _pct(s.get("maxRelDiff"), 2)),
    ("top-1 accuracy", lambda s: _pct(s.get("accuracy"))),
    ("latency batch 1 (median)", lambda s: _ms((s.get("latencyMs") or {}).get("b1"))),
    ("latency batch 16 (median)", lambda s: _ms((s.get("latencyMs") or {}).get("b16"))),
)


# In the output's own quantization steps: only where the output is quantized.
QUANTIZED_ROWS: tuple[Row, ...] = (
    ("max diff vs PyTorch INT8 (output steps)", lambda s: _steps(s.get("maxDiffSteps"))),
    ("within one output step", lambda s: _pct(s.get("withinOneStep"))),
)
# A float output (logits) from a conv/matmul: the steps of its int32 accumulator, a detail.
ACCUMULATOR_ROWS: tuple[Row, ...] = (("detail: int32-accumulator steps", lambda s: _steps(s.get("maxDiffSteps"))),)
ACCUMULATOR_NOTE = (
    "Accumulator steps are units of the last layer's int32 accumulator (input scale x weight scale): far finer "
    "than one rounding step of the activations before it, so hundreds of them are a small difference in the logits."
)


def rows(rq: dict[str, Any]) -> tuple[Row, ...]:
    """The before/after rows for this output kind: parity in the units a user reads."""
    kind = rq.get("outputKind")
    extra = QUANTIZED_ROWS if kind == "quantized" else ACCUMULATOR_ROWS if kind == "accumulator" else ()
    return ROWS[:9] + extra + ROWS[9:]


def _what(rq: dict[str, Any]) -> str:
    kinds = [i["kind"] for i in rq["inserted"]]
    parts = []
    for kind, word, plural in (
        ("activation", "Q/DQ pair", "s"),
        ("bias", "int32 bias", "es"),
        ("op", "op rewrite", "s"),
    ):
        n = kinds.count(kind)
        if n:
            parts.append(f"{n} {word}{plural if n > 1 else ''}")
    return ", ".join(parts)


def _scale(i: dict[str, Any]) -> str:
    if "scale" not in i:
        return ""
    v = i["scale"]
    origin = {"calibration": " (calibrated)", "neighbour": f" (from {i.get('neighbour') or 'its DequantizeLinear'})"}
    return (f"{v:.3e}" if abs(v) < 1e-3 else f"{v:#.4g}") + origin.get(i.get("source") or "", "")


def replacement_markdown(rq: dict[str, Any]) -> list[str]:
    """The Q/DQ re-placement section (build/ort's report, and the Build for Target report in VS Code, which
    shows these lines as they are): what changed, the before/after table, each insertion and its scale."""
    calibrated = sum(1 for i in rq["inserted"] if i.get("source") == "calibration")
    kept = "the trained scales and zero points are kept"
    if calibrated:
        kept += f", {calibrated} new scale{'s' if calibrated > 1 else ''} calibrated on {rq['calibrationSamples']} "
        kept += "training inputs"
    out = [
        "## Q/DQ re-placement",
        "",
        f"Our QDQ export with Q/DQ re-placed where ONNX Runtime's fusion needs them ({_what(rq)}); {kept}. "
        f"File: `{rq['onnx']}`",
        "",
        "| | before (our export) | after (re-placed) |",
        "|---|---|---|",
        *[f"| {label} | {cell(rq['before'])} | {cell(rq['after'])} |" for label, cell in rows(rq)],
        "",
    ]
    if rq.get("outputKind") == "accumulator":
        out += [ACCUMULATOR_NOTE, ""]
    if rq["inserted"]:
        out += ["| change | tensor | for | scale | why |", "|---|---|---|---|---|"]
        for i in rq["inserted"]:
            on = f"{i['opType']} {_cell(i['node'])}"
            out.append(f"| {i['kind']} | {_cell(i['tensor'])} | {on} | {_scale(i)} | {_cell(i['why'])} |")
        out.append("")
    return out


def markdown(result: dict[str, Any]) -> str:
    out = [f"# ONNX Runtime build: {Path(result['onnx']).name}", "", *[f"    {line}" for line in result["summary"]], ""]
    rq = result.get("qdqReplacement")
    if rq is not None:
        out += rq.get("markdown") or replacement_markdown(rq)
    for v in result["variants"]:
        out += executed_markdown(v)
    return "\n".join(out) + "\n"
