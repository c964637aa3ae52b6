"""Latency of a model in any runtime, measured one way and reported one way (LatencyStats of the RPC schema):
the build reports (build/tvm, build/ort, build/inductor), bench/run and the TVM board runs all use it."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import numpy as np

BATCHES = (1, 16)


def stats(times_ms: list[float], batch: int) -> dict:
    """LatencyStats of timed calls: median with p10/p90, the fastest call, throughput in samples/s."""
    times = sorted(times_ms)

    def pct(p: float) -> float:
        k = (len(times) - 1) * p
        lo, hi = int(np.floor(k)), int(np.ceil(k))
        return times[lo] + (times[hi] - times[lo]) * (k - lo)

    median = statistics.median(times)
    return {
        "medianMs": median,
        "p10Ms": pct(0.10),
        "p90Ms": pct(0.90),
        "minMs": times[0],
        "runs": len(times),
        "throughputPerS": batch / (median / 1e3) if median > 0 else None,
    }


def bench_latency(fn: Callable, inputs, warmup: int = 10, runs: int = 100) -> dict:
    """stats() of `runs` timed calls fn(inputs) after `warmup` calls."""
    for _ in range(max(0, warmup)):
        fn(inputs)
    times = []
    for _ in range(max(1, runs)):
        t0 = time.perf_counter()
        fn(inputs)
        times.append((time.perf_counter() - t0) * 1e3)
    return stats(times, int(np.shape(inputs)[0]) if np.ndim(inputs) else 1)


def time_rows(fns: dict, x, sizes: dict, runs: int, ctx, labels: dict) -> dict:
    """The latency table: fns {row name: (numpy in -> out, artifact path | None)}, the baseline (torch-fp32)
    first, each at batch 1 and 16 from the samples `x` (repeated to fill a batch).

    One row after another, not interleaved: PyTorch, ONNX Runtime and TVM each keep a thread pool
    whose workers spin for a while after a call, and interleaved calls run against the previous
    runtime's spinning threads (measured here: PyTorch FP32 at 200 ms instead of 0.15 ms)."""
    warmup = max(3, runs // 10)
    reps = int(np.ceil(max(BATCHES) / len(x)))
    pool = np.concatenate([x] * reps) if reps > 1 else x
    inputs = {b: np.ascontiguousarray(pool[:b]) for b in BATCHES}
    rows = []
    for i, (name, (fn, artifact)) in enumerate(fns.items()):
        label = labels[name]
        ctx.progress("bench", f"timing {label}", i / len(fns))
        row = {"name": name, "label": label, "bytes": int(sizes[name]), "latency": {}}
        if artifact is not None:
            row["artifact"] = str(artifact)
        for b in BATCHES:
            ctx.check_cancelled()
            row["latency"][f"b{b}"] = bench_latency(fn, inputs[b], warmup, runs)
        rows.append(row)
    with_ratios(rows)
    ctx.progress("bench", "benchmarked", 1.0)
    return {"baseline": "torch-fp32", "warmup": warmup, "runs": runs, "rows": rows}


def with_ratios(rows: list[dict]) -> None:
    """speedupVsTorchFp32 of each row: the first row's median over the row's, per batch."""
    base = rows[0]["latency"]
    for row in rows:
        row["speedupVsTorchFp32"] = {
            k: base[k]["medianMs"] / row["latency"][k]["medianMs"] for k in base if row["latency"][k]["medianMs"] > 0
        }


def table(bench: dict) -> list[str]:
    """The latency table as text lines (reports and the build report in VS Code show these)."""
    rows = bench["rows"]
    width = max(len(r["label"]) for r in rows)
    lines = [f"{'median ms (ratio to PyTorch FP32)':<{width}}  {'batch 1':>18}  {'batch 16':>18}  {'size':>11}"]
    for r in rows:
        cells = [
            f"{r['latency'][k]['medianMs']:>8.3f} ({r['speedupVsTorchFp32'].get(k, 0):>5.2f}x)" for k in ("b1", "b16")
        ]
        lines.append(f"{r['label']:<{width}}  {cells[0]:>18}  {cells[1]:>18}  {r['bytes']:>11,} B")
    return lines
