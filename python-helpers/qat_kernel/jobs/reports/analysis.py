"""The summary lines of the training and analysis jobs (qat/train, eval/accuracy, qat/convert,
analyze/histograms, export/onnx, compare/layers, analyze/sensitivity, search/mixed-precision on a torchao model) and
of kernel/info, as a `qat` task prints them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from qat_kernel.jobs.reports.tables import kib


def _pct(v: float) -> str:
    return f"{v * 100:.2f} %"


def _p3(v: float) -> str:
    return f"{v:#.3g}"


_PERPLEXITY_LABELS = {
    "fp32": "FP32",
    "ptq": "PTQ",
    "qatFloat": "QAT float",
    "fakeQuant": "QAT fake-quant",
    "converted": "converted",
}


def perplexity_lines(perplexity: dict[str, Any] | None) -> list[str]:
    """A language model's validation perplexities, in the order FP32, PTQ, QAT float, QAT fake-quant, converted."""
    if not perplexity:
        return []
    parts = [f"{label} {perplexity[k]:.2f}" for k, label in _PERPLEXITY_LABELS.items() if k in perplexity]
    return [f"perplexity {' · '.join(parts)} on {perplexity['tokens']} validation tokens (lower is better)"]


def drift_lines(drift: dict[str, Any] | None, top: int = 3) -> list[str]:
    """The layers whose observer scale moved most during QAT (first to last sampled step), largest first."""
    if not drift:
        return []
    moved = []
    for layer in drift["layers"]:
        first, last = layer["scaleMean"][0], layer["scaleMean"][-1]
        moved.append((layer, first, last, (last - first) / first if first else 0.0))
    moved.sort(key=lambda m: -abs(m[3]))
    lines = [
        f"observer drift over steps {drift['steps'][0]}-{drift['steps'][-1]} (mean scale, first -> last), largest:"
    ]
    for layer, first, last, rel in moved[:top]:
        name = f"{layer['module']} {layer['role']}"
        lines.append(f"  {name:<24} {_p3(first)} -> {_p3(last)} ({'+' if rel >= 0 else '-'}{abs(rel) * 100:.1f} %)")
    return lines


def train(r: dict[str, Any]) -> list[str]:
    head = f"{r['flow']} QAT: {r['epochs']} epochs, {r['steps']} steps"
    if r.get("seconds"):
        head += f" in {r['seconds']:.1f} s"
    d = r.get("distributed")
    if d:
        head += f" on {d['processes']} processes (torchrun, {d['backend']})"
    a = r["accuracy"]
    return [
        head,
        f"accuracy FP32 {_pct(a['fp32'])} · fake-quant {_pct(a['fakeQuant'])} on {a['samples']} samples",
        *perplexity_lines(r.get("perplexity")),
        *drift_lines(r.get("drift")),
        f"checkpoint: {r['checkpoint']}" if r.get("checkpoint") else "no checkpoint written",
        *[f"warning: {w}" for w in r.get("warnings") or []],
    ]


def evaluate(r: dict[str, Any]) -> list[str]:
    text = (
        f"accuracy on {r['samples']} samples ({r['flow']}): FP32 {_pct(r['fp32'])} · QAT float {_pct(r['qatFloat'])}"
        f" · fake-quant {_pct(r['fakeQuant'])} · INT8 {_pct(r['int8'])}"
    )
    if r.get("ptq") is not None:
        text += f" · PTQ INT8 {_pct(r['ptq'])}"
    return [text, *perplexity_lines(r.get("perplexity"))]


def convert(r: dict[str, Any]) -> list[str]:
    kind = (
        "ExportedProgram (torch.export.load)"
        if r["format"] == "exported-program"
        else "state_dict (torch.load weights_only)"
    )
    a, s = r["accuracy"], r["size"]
    name = "converted" if r.get("recipe") else "INT8"
    return [
        f"{name} {kind}: {r['path']}",
        *([r["recipe"]] if r.get("recipe") else []),
        f"accuracy FP32 {_pct(a['fp32'])} -> {name} {_pct(a['int8'])} on {a['samples']} samples; tensors "
        f"{kib(s['fp32Bytes'])} -> {kib(s['int8Bytes'])} ({s['ratio']:.2f}x smaller), file {kib(s['fileBytes'])}",
        *perplexity_lines(r.get("perplexity")),
    ]


def _span(r: Sequence[float] | None) -> str:
    return (f"[{_p3(r[0])}, {_p3(r[1])}]" if r else "-").ljust(22)


def histograms(r: dict[str, Any]) -> list[str]:
    lines = [
        f"weight and input-activation histograms of {len(r['layers'])} layers on {r['samples']} samples "
        f"({r['bins']} bins); clipped = more than half a step outside the range",
        "layer            weight range           clipped   activation range       clipped",
    ]
    for layer in r["layers"]:
        w, a = layer.get("weight") or {}, layer.get("activation") or {}
        lines.append(
            f"{layer['module']:<16} {_span(w.get('representable'))} {_pct(w.get('clippedFraction', 0)):>8}   "
            f"{_span(a.get('representable'))} {_pct(a.get('clippedFraction', 0)):>8}"
        )
    return lines


def export(r: dict[str, Any]) -> list[str]:
    lines = [f"QDQ ONNX (opset {r['opset']}): {r['path']}"]
    s = r.get("size")
    if s:
        lines.append(
            f"size: FP32 {kib(s['fp32Bytes'])} -> INT8 {kib(s['int8Bytes'])} ({s['ratio']:.2f}x smaller), "
            f"ONNX file {kib(s['onnxFileBytes'])}"
        )
    v = r.get("verify")
    if v:
        text = f"ONNX Runtime vs PyTorch INT8 on {v['samples']} samples: max |Δ| {v['maxAbs']:.2e}"
        if v.get("maxSteps") is not None:
            text += f" = {v['maxSteps']:.2f} quantization steps"
        text += f", same prediction {_pct(v['predictionsEqual'])}, ORT accuracy {_pct(v['ortAccuracy'])}"
        lines.append(text)
    return lines


def compare(r: dict[str, Any]) -> list[str]:
    a = r["accuracy"]
    seconds = f"{r['seconds']:.1f}" if r.get("seconds") is not None else "?"
    lines = [
        f"FP32 {_pct(a['fp32'])} · INT8 {_pct(a['int8'])} on {a['samples']} samples · {seconds} s",
        "layer            cosine    SQNR dB   MSE",
    ]
    grouped = any("weightError" in layer for layer in r["layers"])
    if grouped:
        lines[1] += "        weight SQNR dB (worst group)   scheme"
    for layer in sorted(r["layers"], key=lambda layer: layer["cosine"]):
        below = "  < threshold" if layer["cosine"] < r["threshold"] else ""
        line = f"{layer['module']:<16} {layer['cosine']:.5f}  {layer['sqnr']:>7.2f}   {layer['mse']:.2e}"
        if grouped and "weightError" in layer:
            line += f"  {_weight_error(layer['weightError']):<30} {layer.get('scheme', '')}"
        lines.append(line + below)
    lines.extend(perplexity_lines(r.get("perplexity")))
    onnx = r["onnx"]
    if onnx.get("path"):
        lines.append(f"QDQ ONNX: {onnx['path']}")
    elif r["flow"] == "torchao":
        lines.append(f"no QDQ ONNX: {onnx.get('error')}")
    else:
        lines.append(f"ONNX export failed: {onnx.get('error')}")
    return lines


def _db(v: float | None) -> str:
    return "exact" if v is None else f"{v:.1f}"


def _weight_error(w: dict[str, Any]) -> str:
    """`whole (worst at row r, group g)` of a torchao module's weightError."""
    worst = w["worst"]
    return f"{_db(w['sqnr'])} ({_db(worst['sqnr'])} at row {worst['row']}, group {worst['group']})"


def sensitivity(r: dict[str, Any]) -> list[str]:
    a = r["accuracy"]
    lines = [
        f"fake-quant {_pct(a['fakeQuant'])} vs QAT float {_pct(a['qatFloat'])}; budget {r['budget']} points",
        "rank layer            quantized alone      kept float",
    ]
    if "fakeQuantPerplexity" in a:
        lines[0] += f"; perplexity with every layer fake-quantized {a['fakeQuantPerplexity']:.2f}"
    lines.extend(_sensitivity_rows(r["layers"]))
    if r.get("blocks"):
        lines.append("rank block            quantized alone      kept float")
        lines.extend(_sensitivity_rows(r["blocks"]))
    s = r["suggestion"]
    if s["overrides"]:
        keep = ", ".join(f"{o['match']} {o['precision']}" for o in s["overrides"])
        within = " (within budget)" if s["withinBudget"] else " (still over budget)"
        lines.append(f"suggested: keep {keep} -> {_pct(s['accuracy'])}{within}")
    else:
        lines.append("no override needed within the budget")
    return lines


def _measured(m: dict[str, Any]) -> str:
    text = f"{_pct(m['accuracy']):>8} {m['sqnr']:>6.1f} dB"
    return text + (f" ppl {m['perplexity']:>7.2f}" if "perplexity" in m else "")


def _sensitivity_rows(rows: list[dict[str, Any]]) -> list[str]:
    return [
        f"{row['rank']:>4} {row['module']:<16} {_measured(row['quantizedAlone'])}   {_measured(row['keptFloat'])}"
        for row in rows
    ]


def _candidate(c: dict[str, Any]) -> str:
    return f"{c['label']}: perplexity {c['perplexity']:.3f}, {kib(c['bytes'])}"


def torchao_search(r: dict[str, Any]) -> list[str]:
    """search/mixed-precision on a torchao model: the ends, the front, the chosen candidate and its overrides."""
    by_id = {c["id"]: c for c in r["candidates"]}
    schemes = ", ".join(f"{p} = {label}" for p, label in r["schemes"].items())
    ppl = r["perplexity"]
    lines = [
        f"torchao mixed precision: {len(r['candidates'])} candidates over {len(r['layers'])} nn.Linear ({schemes}); "
        f"perplexity on {r['tokens']} validation tokens",
        f"perplexity FP32 {ppl['fp32']:.3f} · QAT float {ppl['qatFloat']:.3f}; budget +{r['perplexityBudget']:g} % "
        f"of FP32 -> at most {ppl['limit']:.3f}",
        "ends: " + " · ".join(_candidate(by_id[i]) for i in r["ends"].values()),
        f"front ({len(r['front'])} of {len(r['candidates'])}, perplexity vs weight bytes of the searched Linears):",
    ]
    lines += [f"  {_candidate(by_id[i])}" for i in r["front"]]
    chosen = by_id.get(r["chosen"]) if r["chosen"] else None
    if chosen is None:
        lines.append(f"no candidate within +{r['perplexityBudget']:g} % of the FP32 perplexity")
    else:
        lines.append(f"chosen (smallest within budget): {_candidate(chosen)}")
        if chosen["overrides"]:
            keys = ("scheme", "group_size", "precision")
            rows = [f"{o['match']} " + " ".join(f"{k} {o[k]}" for k in keys if k in o) for o in chosen["overrides"]]
            lines.append(f"  overrides: {'; '.join(rows)}")
        else:
            lines.append("  overrides: none (the config as it is)")
    lines += [f"note: {n}" for n in r["notes"]]
    return lines


def kernel_info(r: dict[str, Any]) -> list[str]:
    lines = [f"Python {r['python']} ({r['executable']})"]
    for name, p in r["packages"].items():
        lines.append(f"{name:<12} {p['version'] if p.get('version') else 'missing: ' + str(p.get('error'))}")
    return lines
