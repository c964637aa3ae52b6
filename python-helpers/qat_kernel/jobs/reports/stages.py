"""compare/stages' summary lines (what a task prints) and its Markdown report (out/<name>.stages.md)."""

from __future__ import annotations

import math
from typing import Any

from qat_kernel.analysis import divergence


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{v * 100:.2f} %"


def _db(v: float | None) -> str:
    if v is None:
        return "—"
    return "∞" if math.isinf(v) and v > 0 else f"{v:.1f}"


def _steps(v: float | None) -> str:
    return "—" if v is None else f"{v:.2f}"


def _where(found: dict[str, Any]) -> str:
    source = found.get("source")
    at = f" ({source['file']}:{source['line']})" if source else ""
    return f"{found['module']} ({found['op']}){at}"


def _finding(key: str, found: dict[str, Any] | None) -> str:
    label = divergence.pair_label(key)
    if found is None:
        return f"{label}: every layer agrees to rounding (≤ {divergence.ROUNDING_STEPS:g} output steps)"
    amount = (
        f"{found['localSteps']:.1f} output steps"
        if found.get("localSteps") is not None
        else f"{found['localSqnr']:.1f} dB"
    )
    return f"{label}: first diverges at {_where(found)}, locally {amount}: {found['cause']}"


def summary(r: dict[str, Any]) -> list[str]:
    a = r["accuracy"]
    stages = " · ".join(f"{s['label']} {_pct(a.get(s['id']))}" for s in r["stages"])
    lines = [f"accuracy on {a['samples']} samples: {stages}"]
    lines += [_finding(key, r["divergence"].get(key)) for key in r["bisected"]]
    ids = [s["id"] for s in r["stages"]]
    missing = [row["module"] for row in r["layers"] if not all(row["stages"].get(s) for s in ids)]
    lines += [f"{divergence.LABELS[stage]} not compared: {why}" for stage, why in r.get("missing", {}).items()]
    if missing:
        lines.append(f"layers not found in every stage: {', '.join(missing[:8])}{' …' if len(missing) > 8 else ''}")
    lines.append(f"report: {r['markdownPath']}")
    return lines


def markdown(r: dict[str, Any], config: str, onnx: str) -> str:
    """The report of result `r` for the config named `config`; `onnx`: the ONNX file as the report names it."""
    a = r["accuracy"]
    out = [
        f"# Where INT8 diverges: {config}",
        "",
        f"{r['samples']} validation samples compared at every quantized layer's output; ONNX model `{onnx}` (run in "
        "ONNX Runtime and built with TVM for this CPU); "
        f"CPU {r['cpu']['model']} (int8 dot products: {', '.join(r['cpu']['int8DotProducts']) or 'none'}).",
        "",
        "| stage | " + " | ".join(s["label"] for s in r["stages"]) + " |",
        "|---|" + "---|" * len(r["stages"]),
        f"| top-1 accuracy ({a['samples']} samples) | " + " | ".join(_pct(a.get(s["id"])) for s in r["stages"]) + " |",
        "",
        *[f"- {divergence.LABELS[stage]} not compared: {why}" for stage, why in r.get("missing", {}).items()],
        *[f"- {w}" for w in r.get("warnings", [])],
        *([""] if r.get("missing") or r.get("warnings") else []),
        "## First divergence",
        "",
        *[f"- {_finding(key, r['divergence'].get(key))}" for key in r["bisected"]],
        "",
        f"A layer diverges when the later stage's layer, fed the earlier stage's input there (local), is more than "
        f"{divergence.ROUNDING_STEPS:g} of its output quantization steps away (a float output: under "
        f"{divergence.FLOAT_SQNR_DB:g} dB SQNR). One step is a rounding tie.",
        "",
        "## Final outputs",
        "",
        "| pair | SQNR dB | cosine | max abs | top-1 agreement |",
        "|---|---|---|---|---|",
    ]
    for key, m in r["outputs"].items():
        top1 = _pct(m.get("top1Agreement")) if "top1Agreement" in m else "—"
        out.append(
            f"| {divergence.pair_label(key)} | {_db(m['sqnr'])} | {m['cosine']:.6f} | {m['maxAbs']:.4g} | {top1} |"
        )
    out += ["", "## Per layer", "", _layer_table(r), ""]
    return "\n".join(out)


def _layer_table(r: dict[str, Any]) -> str:
    keys = r["pairs"]
    head = ["#", "module", "op"]
    for key in keys:
        label = divergence.pair_label(key)
        head += [f"{label} SQNR dB", f"{label} steps"]
        if key in r["bisected"]:
            head += [f"{label} local steps"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    first = {found["index"]: key for key, found in r["divergence"].items()}
    for i, row in enumerate(r["layers"]):
        mark = " ⚠" if i in first else ""
        cells: list[Any] = [i, f"`{row['module']}`{mark}", row["op"]]
        for key in keys:
            c = row["pairs"].get(key, {})
            prop = c.get("propagated")
            cells += [_db(prop["sqnr"]) if prop else "—", _steps(c.get("propagatedSteps"))]
            if key in r["bisected"]:
                cells.append(_steps(c.get("localSteps")) if c.get("local") else "—")
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines)
