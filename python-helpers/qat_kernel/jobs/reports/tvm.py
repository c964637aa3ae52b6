"""build/tvm's summary lines and its build-report.md, from the job's result alone: the per-op table and the
summary's counts come from the same `ops` and counts, every latency row from the one run of the result's
`bench`, parity judged by parity.THRESHOLDS (stated in the report)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from qat_kernel.jobs.reports.tables import (
    counts,
    executed_markdown,
    latency_markdown,
    parity_markdown,
    parity_thresholds,
    table,
)
from qat_kernel.runtimes import parity
from qat_kernel.runtimes.bench import table as bench_table

ANCHOR_NODES = ("Conv", "ConvTranspose", "Gemm", "MatMul")  # the ONNX ops of the conv/matmul counts


def _pct(value: float) -> str:
    return f"{value * 100:.2f}%"


def node_counts(ops: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """{all: {precision: n}, anchors: {precision: n}} of the per-op rows (anchors: Conv, Gemm, MatMul nodes)."""
    out: dict[str, dict[str, int]] = {"all": {}, "anchors": {}}
    for o in ops:
        out["all"][o["precision"]] = out["all"].get(o["precision"], 0) + 1
        if o["opType"] in ANCHOR_NODES:
            out["anchors"][o["precision"]] = out["anchors"].get(o["precision"], 0) + 1
    return out


def module_of(o: dict[str, Any]) -> str:
    """The module an ONNX node came from (the export's name scopes); "" where the export names none."""
    return o.get("module") or ""


def _parity_line(title: str, m: dict[str, Any], output_kind: str) -> str:
    return (
        f"{title} ({m['samples']} validation samples): {parity.verdict(m, output_kind)}: "
        f"{parity.describe(m, output_kind)}"
    )


def summary(result: dict[str, Any]) -> list[str]:
    """The lines the VS Code task prints, as they are."""
    runs_here = "runs on this machine" if result["runnableHere"] else "cross-built: does not run on this machine"
    where = "preset" if result["targetSource"] == "preset" else "from the config's targets"
    lines = [
        f"TVM {result['tvmVersion']} build for {result['target']} ({where}): {result['tvmTarget']} "
        f"[{result['arch']}, {result['device']}, {runs_here}]"
    ]
    before, after = result["opsPerPrecision"]["before"], result["opsPerPrecision"]["after"]
    a_before, a_after = result["anchorsPerPrecision"]["before"], result["anchorsPerPrecision"]["after"]
    lines.append(f"Compute ops before the int8 fold: {counts(before)} (conv/matmul: {counts(a_before)})")
    fold = "after the int8 fold" if result["foldInt8"] else "built without the fold (foldInt8: false)"
    lines.append(f"Compute ops {fold}: {counts(after)} (conv/matmul: {counts(a_after)})")
    for key, text in (
        (
            "dotprod",
            "{rewritten} conv/matmul laid out for sdot (+dotprod: s8 activations with the u8 offset folded into a "
            "constant, NHWC, input channels innermost)",
        ),
        (
            "vnni",
            "{rewritten} conv/matmul on {instruction} ({lanes} int32 lanes; {words}, weights packed at build time)",
        ),
    ):
        if result.get(key):
            words = {
                "vpdpbusd": "u8 activations 4 channels to a word, s8 weights",
                "vpmaddwd": "activations and weights widened to s16, 2 channels to a word: exact where vpmaddubsw "
                "saturates",
            }.get(result[key].get("instruction", ""), "")
            lines.append("int8 dot products: " + text.format(**result[key], words=words))
    ops = result["ops"]
    per = node_counts(ops)
    n = {p: per["all"].get(p, 0) for p in ("int8", "fp16", "folded", "fp32")}
    fp16 = f", {n['fp16']} in fp16" if n["fp16"] else ""
    lines.append(
        f"ONNX nodes: {n['int8']} run in int8{fp16}, {n['folded']} folded away, {n['fp32']} stay fp32 "
        f"(Conv/Gemm/MatMul nodes: {counts(per['anchors']) or 'none'})"
    )
    for layer in result.get("fp16Layers") or []:
        if layer["converted"]:
            lines.append(
                f"fp16 layer {layer['module']} ({layer['override']}): {', '.join(layer['onnxNodes'])} run in "
                "float16 (float32 accumulation)"
            )
    fp32 = [o for o in ops if o["precision"] == "fp32"]
    for o in fp32[:5]:
        module = f" ({module_of(o)})" if module_of(o) else ""
        lines.append(f"  fp32: {o['opType']} {o['onnxNode']}{module}: {o.get('reason') or 'no reason given'}")
    if len(fp32) > 5:
        lines.append(f"  ... and {len(fp32) - 5} more fp32 nodes (see the report)")
    result_parity = result.get("parity")
    if result_parity is not None:
        kind = result_parity["outputKind"]
        lines.append(_parity_line("Parity vs ONNX Runtime", result_parity["vsOrt"], kind))
        if "vsTorch" in result_parity:
            lines.append(_parity_line("Parity vs PyTorch INT8", result_parity["vsTorch"], kind))
        acc = result_parity.get("accuracy")
        if acc:
            text = f"Top-1 accuracy: TVM {_pct(acc['tvm'])}, ONNX Runtime {_pct(acc['ort'])}"
            if "torch" in acc:
                text += f", PyTorch INT8 {_pct(acc['torch'])}"
            lines.append(text)
    bench = result.get("bench")
    if bench is not None:
        lines += bench_table(bench)
        labels = {r["name"]: r["label"] for r in bench["rows"]}
        fastest = {k: labels[v] if v else "not decided (every figure noisy)" for k, v in bench["fastest"].items()}
        lines.append(f"Fastest: batch 1 {fastest['b1']}, batch 16 {fastest['b16']}")
    board = result.get("rpc")
    if board is not None:
        text = (
            f"On the board through TVM RPC {board['address']}: uploaded {board['uploadBytes']:,} bytes; median "
            f"{board['latency']['b1']['medianMs']:.3f} ms at batch 1, {board['latency']['b16']['medianMs']:.3f} ms "
            "at batch 16 (timed there)"
        )
        if "maxAbsDiffVsLocal" in board:
            text += f"; outputs vs this machine: max |diff| {board['maxAbsDiffVsLocal']:.3g}"
        lines.append(text + ("; parity above ran on the board" if result.get("parity") else ""))
    lines.append(
        f"Artifact: {result['artifact']} ({result['artifactBytes']:,} bytes), built in "
        f"{result['buildSeconds']:.1f} s; report {result['markdownPath']}"
    )
    for note in result.get("notes", []):
        lines.append(f"Note: {note}")
    return lines


def _parity_section(p: dict[str, Any], bench: dict[str, Any] | None) -> list[str]:
    kind = p["outputKind"]
    labels = {r["name"]: r["label"] for r in (bench or {}).get("rows", [])}
    acc = p.get("accuracy") or {}
    rows = []
    if "vsTorch" in p:
        rows.append((labels.get("tvm-int8", "TVM INT8 (this build)"), p["vsTorch"], acc.get("tvm")))
    if "ortVsTorch" in p:
        rows.append((labels.get("ort-int8", "ONNX Runtime INT8 (QDQ)"), p["ortVsTorch"], acc.get("ort")))
    out = []
    if rows:
        out += parity_markdown(f"Parity with PyTorch INT8 ({p['samples']} validation samples)", rows, kind)
        if "torch" in acc:
            out += [f"PyTorch INT8's own top-1 accuracy on these samples: {acc['torch'] * 100:.2f} %.", ""]
    else:
        out += [f"## Parity ({p['samples']} validation samples)", "", parity_thresholds(kind), ""]
    vs_ort = p["vsOrt"]
    out += [
        f"TVM against ONNX Runtime on the same QDQ file: {parity.verdict(vs_ort, kind)}: "
        f"{parity.describe(vs_ort, kind)}.",
        "",
    ]
    return out


def _op_table(result: dict[str, Any]) -> list[str]:
    ops = result["ops"]
    per = node_counts(ops)
    int8_anchors = result["anchorsPerPrecision"]["after"].get("int8", 0)
    out = [
        "## Precision of each op as built (TVM)",
        "",
        f"Each ONNX node of the QDQ export, the module it came from (the export's name scopes) and the precision "
        f"TVM runs it in. Conv/Gemm/MatMul nodes: {counts(per['anchors']) or 'none'}; the build's conv/matmul "
        f"ops after the fold: {counts(result['anchorsPerPrecision']['after'])} (int8 {int8_anchors}).",
        "",
    ]
    body = [
        [o["onnxNode"], module_of(o), o["opType"], o["precision"], o.get("reason") or o.get("detail") or ""]
        for o in ops
    ]
    return out + table(["ONNX node", "module", "op", "precision", "how / why"], body)


def markdown(result: dict[str, Any]) -> str:
    """build-report.md: the summary, latency, parity with its thresholds, each op's precision with its module, and
    ONNX Runtime's precision as executed of the same export."""
    out = [f"# TVM build: {result['target']}", "", *[f"    {line}" for line in result["summary"]], ""]
    artifact = Path(result["artifact"])
    out += [f"Artifact: `{artifact}` ({result['artifactBytes'] / 1024:.1f} KiB) in `{result['outDir']}`", ""]
    bench = result.get("bench")
    if bench is not None:
        out += latency_markdown(bench)
        labels = {r["name"]: r["label"] for r in bench["rows"]}
        b1 = bench["fastest"].get("b1")
        out += [
            f"Fastest at batch 1: **{labels[b1]}**." if b1 else "Fastest at batch 1: not decided (every figure noisy).",
            "",
        ]
    else:
        out += ["## Latency", "", "Not measured in this build (bench: false).", ""]
    if result.get("parity") is not None:
        out += _parity_section(result["parity"], bench)
    out += _op_table(result)
    executed = result.get("ortExecuted")
    if executed is not None:
        out += executed_markdown(executed, with_role=False)
    notes = result.get("notes") or []
    if notes:
        out += ["## Notes", "", *[f"- {n}" for n in notes], ""]
    return "\n".join(out) + "\n"
