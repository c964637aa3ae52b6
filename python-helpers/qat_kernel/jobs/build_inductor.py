"""build/inductor: the session's PT2E INT8 model compiled by torch.compile (Inductor, freezing on), the
x86 CPU path PyTorch itself deploys X86InductorQuantizer models on.

Flow: load the config -> the trained model (session cache, else trained) -> convert_pt2e -> check for
Inductor's C++ compiler -> torch.compile(dynamic=False) with torch._inductor.config.freezing set for
the compile and restored after; each batch size (16 for the parity pass, 1 and 16 for timing) is
compiled by its first call, timed as compile seconds -> parity with the uncompiled INT8 graph on the
validation samples (max/mean abs diff, cosine, top-1 agreement, accuracy) -> latency at batch 1 and 16
next to PyTorch FP32 (eager, the baseline of the ratios) and PyTorch INT8 (uncompiled).

Freezing lets Inductor treat the weights as constants: it folds the dequantize of each int8 weight,
prepacks it for oneDNN and lowers dequantize -> conv/linear -> quantize to quantized conv/linear
kernels. A compile that cannot run (no C++ compiler) or fails is reported with a message, not a
traceback; bench/run leaves its row out with a note instead.

Stages (`stage` of $/progress): load, fp32, export, qat, convert, compile, verify, bench."""

from __future__ import annotations

import time
from typing import Any

from qat_kernel.jobs import opening
from qat_kernel.pipeline import model_io
from qat_kernel.rpc.context import RequestContext
from qat_kernel.runtimes import cpu, parity
from qat_kernel.runtimes.bench import BATCHES, time_rows
from qat_kernel.runtimes.bench import table as bench_table
from qat_kernel.runtimes.inductor.int8_compile import (
    LABELS,
    PARITY_BATCH,
    compile_int8,
    compiled_parity,
    padded_outputs,
)


def summary(result: dict[str, Any]) -> list[str]:
    per = result["compileSecondsPerBatch"]
    lines = [
        f"torch {result['torchVersion']} torch.compile (Inductor, freezing, static shapes; C++ compiler "
        f"{result['compiler']}): compiled in {result['compileSeconds']:.1f} s ("
        + ", ".join(f"batch {k[1:]} {v:.1f} s" for k, v in sorted(per.items(), key=lambda kv: int(kv[0][1:])))
        + ")"
    ]
    p = result["parity"]
    text = (
        f"Parity with PyTorch INT8 (uncompiled) on {p['samples']} validation samples: max |diff| "
        f"{p['maxAbsDiff']:.3g}, mean {p['meanAbsDiff']:.3g}, cosine min {p['cosineMin']:.6f}"
    )
    if "top1Agreement" in p:
        text += f", same top-1 on {p['top1Agreement'] * 100:.2f}% ({p['top1Mismatches']} differ)"
    lines.append(text)
    acc = result.get("accuracy") or {}
    if acc:
        lines.append(
            f"Top-1 accuracy: Inductor INT8 {acc['inductorInt8'] * 100:.2f}%, PyTorch INT8 "
            f"{acc['torchInt8'] * 100:.2f}%"
        )
    bench = result.get("bench")
    if bench is not None:
        lines += bench_table(bench)
    for note in result.get("notes", []):
        lines.append(f"Note: {note}")
    return lines


def build(
    ctx: RequestContext, *, config: str, want_bench: bool, bench_runs: int, samples: int, steps: int | None
) -> dict[str, Any]:
    """The PT2E INT8 graph compiled by torch.compile (Inductor, freezing), checked and timed."""
    import torch

    from qat_kernel.analysis.model_size import model_bytes

    started = time.monotonic()
    _, trained, reused, converted = opening.load_model(
        ctx,
        config,
        steps=steps,
        pt2e="build/inductor compiles the PT2E-converted INT8 graph (X86InductorQuantizer); "
        "the eager flow's quantized modules are not an Inductor input, use flow: pt2e",
        convert=True,
    )
    limit = samples
    ctx.progress("verify", "PyTorch INT8 on the validation samples", 0.0)
    x, labels, torch_out = parity.reference_outputs(trained, limit, converted, ctx)
    batches = BATCHES if want_bench else (PARITY_BATCH,)
    fn, seconds, cxx = compile_int8(converted, x, batches, ctx)
    ctx.progress("verify", "Inductor INT8 against PyTorch INT8", 0.5)
    out = padded_outputs(fn, x, PARITY_BATCH, ctx)
    metrics, accuracy = compiled_parity(out, torch_out, labels, trained.loss)
    notes = [
        "Compiled once per batch size with static shapes (dynamic=False); another batch size compiles "
        "again on its first call. Inductor keeps compiled code in its cache folder "
        "(TORCHINDUCTOR_CACHE_DIR), so a later compile of the same graph is faster"
    ]
    result: dict[str, Any] = {
        "torchVersion": torch.__version__.split("+")[0],
        "compiler": cxx,
        "freezing": True,
        "reused": reused,
        "samples": int(len(x)),
        "compileSeconds": round(sum(seconds.values()), 3),
        "compileSecondsPerBatch": seconds,
        "parity": metrics,
    }
    if accuracy:
        result["accuracy"] = accuracy
    if want_bench:
        runs = bench_runs
        fns = {
            "torch-fp32": (lambda a: model_io.call(trained.fp32, a), None),
            "torch-int8": (lambda a: model_io.call(converted, a), None),
            "inductor-int8": (fn, None),
        }
        size = model_bytes(converted)
        sizes = {"torch-fp32": model_bytes(trained.fp32), "torch-int8": size, "inductor-int8": size}
        with torch.no_grad():
            result["bench"] = time_rows(fns, x, sizes, runs, ctx, LABELS)
        notes.append(
            f"PyTorch with {torch.get_num_threads()} threads; the Inductor row's size is the INT8 "
            "graph's tensors (the compiled code lives in Inductor's cache)"
        )
    result["cpu"] = cpu.summary()
    result["notes"] = notes + cpu.notes("inductor")
    result["summary"] = summary(result)
    result["seconds"] = round(time.monotonic() - started, 2)
    return result
