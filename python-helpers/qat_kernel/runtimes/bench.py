"""Latency of a model in any runtime, measured one way and reported one way (LatencyStats of the RPC schema):
the build reports (build/tvm, build/ort, build/inductor), bench/run and the TVM board runs all use it.

A latency table is timed in interleaved rounds (A B C, A B C, ...; each row's calls of a round in one block
with one untimed call first, since the runtimes' thread pools spin for a while after a call and a lone call
would run against another runtime's spinning threads). A figure is marked noisy when its calls spread wide
(p90 over p10) or its round medians drift apart: the machine was busy, and no speed-up is headlined from it."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from qat_kernel.pipeline import model_io

if TYPE_CHECKING:
    from qat_kernel.rpc.context import RequestContext

BATCHES = (1, 16)
ROUNDS = 5
NOISY_SPREAD = 1.5  # p90 / p10 of one figure's calls
NOISY_DRIFT = 1.25  # largest / smallest of its round medians
SUB_MS_NOTE = (
    "batch-1 times under 1 ms: ratios there mostly measure call overhead (Python, each runtime's dispatch), "
    "not the kernels"
)
NOISY_NOTE = (
    "noisy: the calls of that figure spread wide (p90/p10 over 1.5) or its round medians drifted (over 1.25x): "
    "the machine was busy while it was timed; its figure and ratio are not reliable and no speed-up is headlined "
    "from it"
)


def stats(times_ms: list[float], batch: int, rounds: list[float] | None = None) -> dict[str, Any]:
    """LatencyStats of timed calls: median with p10/p90, the fastest call, throughput in samples/s, the round
    medians when timed in rounds, and whether the figure is noisy."""
    times = sorted(times_ms)

    def pct(p: float) -> float:
        k = (len(times) - 1) * p
        lo, hi = int(np.floor(k)), int(np.ceil(k))
        return times[lo] + (times[hi] - times[lo]) * (k - lo)

    median = statistics.median(times)
    p10, p90 = pct(0.10), pct(0.90)
    noisy = p10 > 0 and p90 / p10 > NOISY_SPREAD
    out: dict[str, Any] = {
        "medianMs": median,
        "p10Ms": p10,
        "p90Ms": p90,
        "minMs": times[0],
        "runs": len(times),
        "throughputPerS": batch / (median / 1e3) if median > 0 else None,
    }
    if rounds:
        out["roundsMs"] = rounds
        noisy = noisy or (min(rounds) > 0 and max(rounds) / min(rounds) > NOISY_DRIFT)
    out["noisy"] = bool(noisy)
    return out


def bench_latency(
    fn: Callable[[np.ndarray], Any], inputs: np.ndarray, warmup: int = 10, runs: int = 100
) -> dict[str, Any]:
    """stats() of `runs` timed calls fn(inputs) after `warmup` calls."""
    for _ in range(max(0, warmup)):
        fn(inputs)
    times = []
    for _ in range(max(1, runs)):
        t0 = time.perf_counter()
        fn(inputs)
        times.append((time.perf_counter() - t0) * 1e3)
    return stats(times, int(np.shape(inputs)[0]) if np.ndim(inputs) else 1)


def _timed(fn: Callable[[Any], Any], inputs: model_io.Inputs | np.ndarray, calls: int) -> list[float]:
    fn(inputs)  # untimed: the first call after another runtime ran
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn(inputs)
        times.append((time.perf_counter() - t0) * 1e3)
    return times


def threads() -> dict[str, Any]:
    """The thread counts the runtimes use in this process (ORT's and TVM's pools default to the usable CPUs)."""
    import os
    import sys

    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count() or 1
    torch = sys.modules.get("torch")
    tvm_threads = os.environ.get("TVM_NUM_THREADS")
    return {
        "cpus": cpus,
        "torch": torch.get_num_threads() if torch is not None else None,
        "onnxruntime": cpus,
        "tvm": int(tvm_threads) if tvm_threads and tvm_threads.isdigit() else None,
    }


def time_rows(
    fns: dict[str, tuple[Callable[[Any], Any], str | Path | None]],
    x: model_io.Inputs | np.ndarray,
    sizes: dict[str, int],
    runs: int,
    ctx: RequestContext,
    labels: dict[str, str],
    rounds: int = ROUNDS,
    baseline: str = "torch-fp32",
) -> dict[str, Any]:
    """The latency table: fns {row name: (inputs -> out, artifact path | None)}, the baseline (torch-fp32)
    first, each at batch 1 and 16 from the samples `x` (the model's Inputs or one array, repeated to fill a
    batch), `runs` timed calls per row and batch spread over `rounds` interleaved rounds after `warmup` calls of
    each."""
    warmup = max(3, runs // 10)
    per_round = max(1, -(-runs // rounds))
    pool = model_io.repeat_to(x, max(BATCHES))
    inputs = {b: pool[:b] if isinstance(pool, model_io.Inputs) else np.ascontiguousarray(pool[:b]) for b in BATCHES}
    names = list(fns)
    for name in names:
        ctx.check_cancelled()
        for b in BATCHES:
            for _ in range(warmup):
                fns[name][0](inputs[b])
    times = {(n, b): [] for n in names for b in BATCHES}
    medians = {(n, b): [] for n in names for b in BATCHES}
    for r in range(rounds):
        ctx.progress("bench", f"timing round {r + 1} of {rounds} ({len(names)} rows)", r / rounds)
        for name in names:
            for b in BATCHES:
                ctx.check_cancelled()
                block = _timed(fns[name][0], inputs[b], per_round)
                times[(name, b)] += block
                medians[(name, b)].append(statistics.median(block))
    rows = []
    for name in names:
        artifact = fns[name][1]
        row = {"name": name, "label": labels[name], "bytes": int(sizes[name]), "latency": {}}
        if artifact is not None:
            row["artifact"] = str(artifact)
        for b in BATCHES:
            row["latency"][f"b{b}"] = stats(times[(name, b)], b, medians[(name, b)])
        rows.append(row)
    with_ratios(rows)
    ctx.progress("bench", "benchmarked", 1.0)
    table = {"baseline": baseline, "warmup": warmup, "runs": per_round * rounds, "rounds": rounds, "rows": rows}
    table["threads"] = threads()
    table["notes"] = table_notes(rows)
    return table


def table_notes(rows: list[dict[str, Any]]) -> list[str]:
    """What a latency table's figures do not say: sub-millisecond baselines, noisy figures."""
    notes = []
    # the fastest calls: a busy machine can put a sub-millisecond baseline's median far above 1 ms
    if rows and rows[0]["latency"]["b1"]["p10Ms"] < 1.0:
        notes.append(SUB_MS_NOTE)
    if any(r["latency"][k].get("noisy") for r in rows for k in r["latency"]):
        notes.append(NOISY_NOTE)
    return notes


def fastest(rows: list[dict[str, Any]]) -> dict[str, str | None]:
    """Per batch, the row with the lowest median among the figures that are not noisy (None when all are)."""
    out = {}
    for b in BATCHES:
        k = f"b{b}"
        steady = [r for r in rows if not r["latency"][k].get("noisy")]
        out[k] = min(steady, key=lambda r: r["latency"][k]["medianMs"])["name"] if steady else None
    return out


def with_ratios(rows: list[dict[str, Any]]) -> None:
    """speedupVsTorchFp32 of each row: the first row's median over the row's, per batch."""
    base = rows[0]["latency"]
    for row in rows:
        row["speedupVsTorchFp32"] = {
            k: base[k]["medianMs"] / row["latency"][k]["medianMs"] for k in base if row["latency"][k]["medianMs"] > 0
        }


def _ms(v: float) -> str:
    return f"{v:.3f}" if v < 100 else f"{v:.1f}"


def _cell(row: dict[str, Any], base: dict[str, Any], k: str) -> str:
    stat = row["latency"][k]
    ratio = row.get("speedupVsTorchFp32", {}).get(k, 0)
    text = f"{_ms(stat['medianMs'])} [{_ms(stat['p10Ms'])}-{_ms(stat['p90Ms'])}] ({ratio:.2f}x)"
    return text + (" noisy" if stat.get("noisy") or base["latency"][k].get("noisy") else "")


def table(bench: dict[str, Any]) -> list[str]:
    """The latency table as text lines (reports and the build report in VS Code show these): medians with
    p10-p90 and the ratio to the first row; `noisy` where the figure or its baseline is."""
    rows = bench["rows"]
    cells = {r["name"]: [_cell(r, rows[0], k) for k in ("b1", "b16")] for r in rows}
    width = max(len(r["label"]) for r in rows + [{"label": "runtime"}])
    cw = max(len(c) for pair in cells.values() for c in pair)
    lines = [
        f"Latency: median ms [p10-p90] (ratio to {rows[0]['label']}: its median over the row's)",
        f"{'runtime':<{width}}  {'batch 1':>{cw}}  {'batch 16':>{cw}}  {'size':>13}",
    ]
    for r in rows:
        b1, b16 = cells[r["name"]]
        lines.append(f"{r['label']:<{width}}  {b1:>{cw}}  {b16:>{cw}}  {r['bytes']:>11,} B")
    t = bench.get("threads")
    if t:
        lines.append(
            f"threads: PyTorch {t['torch']}, ONNX Runtime {t['onnxruntime']}, TVM {t['tvm'] or 'default'} "
            f"of {t['cpus']} CPUs; {bench.get('rounds', 1)} interleaved rounds, {bench['runs']} timed calls a figure"
        )
    lines += [f"Note: {n}" for n in bench.get("notes", [])]
    return lines
