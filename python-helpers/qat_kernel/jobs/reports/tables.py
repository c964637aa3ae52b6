"""What the job reports share: Markdown tables and their cells, number formats, the latency table (every row
timed in the same interleaved rounds, ratios against the first row of that run), parity against PyTorch INT8
with the thresholds its verdict uses, and ONNX Runtime's precision as executed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def cell(text: object) -> str:
    """A Markdown table cell: pipes escaped, one line."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def table(header: list[str], rows: Sequence[Sequence[object]]) -> list[str]:
    """A Markdown table, then a blank line."""
    return [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *["| " + " | ".join(cell(c) for c in row) + " |" for row in rows],
        "",
    ]


def pct(v: float | None, digits: int = 2, missing: str = "n/a") -> str:
    return missing if v is None else f"{v * 100:.{digits}f} %"


def ms(v: float | None, missing: str = "n/a") -> str:
    return missing if v is None else f"{v:.3f} ms"


def sig(v: float | None, missing: str = "n/a") -> str:
    return missing if v is None else f"{v:.3g}"


def steps(v: float | None, missing: str = "n/a") -> str:
    return missing if v is None else f"{v:.2f}" if v < 10 else f"{v:.0f}"


def kib(n: int) -> str:
    return f"{n / 1024:.1f} KiB"


def counts(
    d: dict[str, int], order: tuple[str, ...] = ("int8", "int16", "int32", "float16", "fp16", "float32", "fp32")
) -> str:
    """{precision: n} as `int8 3, float32 1`, the usual order first."""
    keys = [k for k in order if k in d] + sorted(k for k in d if k not in order)
    return ", ".join(f"{k} {d[k]}" for k in keys)


# ------------------------------------------------------------------------------------------ latency


def latency_markdown(bench: dict[str, Any]) -> list[str]:
    """The latency table of one run: every row timed in the same interleaved rounds at the same batch sizes,
    each ratio the baseline's median (the first row: PyTorch FP32, eager) over the row's at that batch."""
    rows = bench["rows"]
    base = rows[0]["label"]
    batches = [k for k in ("b1", "b16") if k in rows[0]["latency"]]

    def figure(r: dict[str, Any], k: str) -> list[str]:
        s = r["latency"][k]
        noisy = " (noisy)" if s.get("noisy") or rows[0]["latency"][k].get("noisy") else ""
        ratio = r.get("speedupVsTorchFp32", {}).get(k)
        return [f"{s['medianMs']:.3f} ms{noisy}", f"{s['p10Ms']:.3f}–{s['p90Ms']:.3f}", _x(ratio)]

    header = ["runtime"]
    for k in batches:
        header += [f"batch {k[1:]} median", "p10–p90", f"vs {base}"]
    header.append("size")
    out = [
        "## Latency on this machine",
        "",
        f"Every row timed in the same run, at the same batch sizes ({', '.join(k[1:] for k in batches)}); "
        f"each ratio is {base}'s median over the row's at that batch (above 1: faster than {base}).",
        "",
        *table(header, [[r["label"], *sum((figure(r, k) for k in batches), []), f"{r['bytes']:,} B"] for r in rows]),
    ]
    t = bench.get("threads")
    threads = ""
    if t:
        threads = (
            f"; threads: PyTorch {t.get('torch') or '?'}, ONNX Runtime {t.get('onnxruntime') or '?'}, "
            f"TVM {t.get('tvm') or 'default'} of {t['cpus']} CPUs"
        )
    out.append(
        f"Timed in {bench.get('rounds', 1)} interleaved rounds (every row, then again), {bench['runs']} calls a "
        f"figure after {bench['warmup']} warm-up calls{threads}."
    )
    out += [f"Note: {n}" for n in bench.get("notes", [])]
    return out + [""]


def _x(v: float | None) -> str:
    return "" if v is None else f"{v:.2f}x"


# ------------------------------------------------------------------------------------------- parity


def parity_verdict(m: dict[str, Any] | None, output_kind: str) -> str:
    """ok / check / fail of one artifact against PyTorch INT8 by parity.THRESHOLDS."""
    from qat_kernel.runtimes import parity

    return parity.verdict(m, output_kind)


def parity_thresholds(output_kind: str) -> str:
    """The thresholds of parity_verdict, in words, for the report."""
    from qat_kernel.runtimes import parity

    t = parity.THRESHOLDS
    ok = f"top-1 agreement ≥ {t['okTop1'] * 100:.0f} %"
    if output_kind == "quantized":
        ok += f" and ≥ {t['okWithinOneStep'] * 100:.0f} % of samples within one output quantization step"
    return (
        f"Status against PyTorch INT8: **ok** where {ok}; **fail** where top-1 agreement is under "
        f"{t['failTop1'] * 100:.0f} %; **check** in between (look at the differing samples before deploying)."
    )


def parity_markdown(
    title: str, rows: list[tuple[str, dict[str, Any] | None, float | None]], output_kind: str
) -> list[str]:
    """The parity table: (label, parity.compare() against PyTorch INT8, accuracy) per artifact, with each one's
    verdict and the thresholds it was judged by."""
    quantized = output_kind == "quantized"
    header = ["artifact", "status", "top-1 agreement", "max abs diff", "of the largest output"]
    if quantized:
        header += ["max diff (output steps)", "within one step"]
    header.append("accuracy")
    body = []
    for label, m, acc in rows:
        m = m or {}
        line = [label, parity_verdict(m, output_kind), pct(m.get("top1Agreement"), 1), sig(m.get("maxAbsDiff"))]
        line.append(pct(m.get("maxRelDiff"), 2))
        if quantized:
            line += [steps(m.get("maxDiffSteps")), pct(m.get("withinOneStep"), 1)]
        line.append(pct(acc, 2))
        body.append(line)
    out = [f"## {title}", "", parity_thresholds(output_kind), "", *table(header, body)]
    if quantized:
        out += ["Output steps are the output's own quantization step (its dequantize scale).", ""]
    detail = [(label, m["maxDiffSteps"]) for label, m, _ in rows if m and m.get("maxDiffSteps") is not None]
    if output_kind == "accumulator" and detail:
        out += [
            "Detail, in steps of the last layer's int32 accumulator (input scale x weight scale, far finer than one "
            "rounding step of the activations before it, so a few hundred is a small difference in the logits): "
            + ", ".join(f"{label} {steps(v)}" for label, v in detail)
            + ".",
            "",
        ]
    return out


# --------------------------------------------------------------------------------- precision as executed


def executed_markdown(variant: dict[str, Any], with_role: bool = True) -> list[str]:
    """ONNX Runtime's precision as executed of one model (a build/ort variant, or build/tvm's look at the same
    export): its compute op counts and the table of its ops."""
    out = [
        f"## {variant['label']}: precision as executed",
        "",
        f"Compute ops: {counts(variant['computePerPrecision'])}; optimised graph: `{variant['optimized']}`"
        + (
            f" ({variant['bytes']['optimized']:,} bytes; source {variant['bytes']['onnx']:,} bytes)"
            if variant.get("bytes")
            else ""
        ),
        "",
    ]
    ops = variant["ops"] if with_role else [o for o in variant["ops"] if o["role"] == "compute"]
    header = ["node", "op", "precision", *(["role"] if with_role else []), "why fp32"]
    body = [
        [o["name"], o["opType"], o["precision"], *([o["role"]] if with_role else []), o.get("reason") or ""]
        for o in ops
    ]
    return out + table(header, body)
