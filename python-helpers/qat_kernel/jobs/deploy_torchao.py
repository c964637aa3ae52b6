"""deploy/torchao: a flow: torchao language model deployed to PyTorch's int4/int8 CPU kernels
(runtimes/torchao/packed.py), timed against FP32 in one run, with the deployed format checked against the trained
scheme.

Rows, timed in interleaved rounds (runtimes.bench.time_rows) at batch 1 and 16: PyTorch FP32 (eager), torchao
converted (eager: IntxUnpackedToInt8Tensor, int8 storage dequantized to float in every call) and the deployed model.
Decode: greedy generation of `newTokens` tokens after a `promptTokens`-token validation prompt (transformers'
generate with its KV cache, else a forward loop); prefill: one forward over the prompt. Memory: the bytes of the
tensors each model holds, and the resident-memory peak over its start while the row's model is built and generates
once (sampled every millisecond). Perplexity of the deployed model against the converted one on the whole
validation set: with the trained format they compute the same numbers; with another `format` the result warns,
names the modules and both formats, and the perplexity shows the cost."""

from __future__ import annotations

import copy
import time
from typing import Any

import numpy as np

from qat_kernel.jobs import opening
from qat_kernel.jobs.reports import torchao as report
from qat_kernel.pipeline.torchao_flow import TorchaoQat
from qat_kernel.rpc.context import RequestContext
from qat_kernel.rpc.errors import ConfigInvalid, Unsupported
from qat_kernel.runtimes import cpu
from qat_kernel.runtimes.bench import time_rows
from qat_kernel.runtimes.torchao import packed, run

LABELS = {
    "torch-fp32": "PyTorch FP32 (eager)",
    "torchao-converted": "torchao converted (eager, dequantized per call)",
    "deployed": "deployed (CPU int kernels)",
}


def _prompt(trained: Any, tokens: int) -> np.ndarray:
    """The first `tokens` token ids of the validation samples (up to 16 rows, the largest batch timed)."""
    rows: list[np.ndarray] = []
    for x, _ in trained.val:
        names = list(x.names)
        ids = x.values[names.index("input_ids") if "input_ids" in names else 0]
        array = ids.numpy() if hasattr(ids, "numpy") else np.asarray(ids)
        if not np.issubdtype(array.dtype, np.integer) or array.ndim != 2:
            raise Unsupported(
                f"deploy/torchao generates tokens: the model's first input ({names[0]}) must be token ids of shape "
                f"(batch, length), not {array.dtype} {array.shape}",
                unsupported=[],
            )
        rows.extend(array[:, :tokens])
        if len(rows) >= 16:
            break
    length = min(len(r) for r in rows)
    if length < 1:
        raise ConfigInvalid("promptTokens: the validation sequences are empty", path="promptTokens")
    return np.stack([r[:length] for r in rows[:16]]).astype(np.int64)


def _mismatches(trained: Any, formats: dict[str, packed.Format]) -> list[dict[str, Any]]:
    """Groups of modules whose deployed format differs from the trained scheme: {trained, deployed, modules}."""
    groups: dict[tuple[packed.Format, packed.Format], list[str]] = {}
    for c in trained.qat.quantized:
        if c.module in formats:
            was, now = packed.trained_format(c), formats[c.module]
            if was != now:
                groups.setdefault((was, now), []).append(c.module)
    return [
        {"trained": was.as_dict(), "deployed": now.as_dict(), "modules": names} for (was, now), names in groups.items()
    ]


def _max_logit_diff(a: Any, b: Any, trained: Any) -> float:
    """Largest |logit difference| of two models on the first validation batch."""
    import torch

    x, _ = next(iter(trained.val))
    with torch.no_grad():
        return float((run.logits_of(a(*x)) - run.logits_of(b(*x))).abs().max())


def deploy(
    ctx: RequestContext,
    *,
    config: str,
    fmt: dict[str, Any] | None,
    new_tokens: int,
    prompt_tokens: int,
    runs: int,
    steps: int | None,
    model: str | None,
) -> dict[str, Any]:
    import torch

    from qat_kernel.analysis.model_size import model_bytes
    from qat_kernel.pipeline.training import perplexity

    started = time.monotonic()
    wanted = packed.requested(fmt)
    _, trained, reused, converted = opening.load_model(
        ctx, config, steps=steps, convert=True, model_id=model, torchao=True
    )
    if not isinstance(trained.qat, TorchaoQat):
        raise ConfigInvalid(
            f"flow: deploy/torchao deploys a flow: torchao model; this config's flow is {trained.flow} "
            "(bench/run and build/* deploy the others)",
            path="flow",
        )
    if not trained.is_language_model:
        raise ConfigInvalid(
            "train.loss: deploy/torchao times token generation and perplexity of a language model (loss: next_token)",
            path="train.loss",
        )
    prompt = _prompt(trained, prompt_tokens)
    ctx.progress(
        "deploy",
        f"packing the quantized Linear modules for the CPU kernels ({wanted.label if wanted else 'trained scheme'})",
    )
    built: dict[str, Any] = {}
    rss: dict[str, int] = {}
    generate_once: dict[str, Any] = {}
    # the smallest first: a later row's build can reuse pages an earlier one freed, never the reverse
    for name in ("deployed", "torchao-converted", "torch-fp32"):
        ctx.check_cancelled()
        with run.PeakRss() as peak:
            if name == "deployed":
                built[name] = packed.deploy(converted, trained.qat.model, trained.qat.quantized, wanted)
                m = built[name].model
            else:
                m = copy.deepcopy(converted if name == "torchao-converted" else trained.fp32).eval()
                built[name] = m
            generate_once[name] = run.greedy(m, new_tokens)(prompt[:1])
        rss[name] = peak.delta
    deployed: packed.Deployed = built["deployed"]
    models = {
        "torch-fp32": built["torch-fp32"],
        "torchao-converted": built["torchao-converted"],
        "deployed": deployed.model,
    }
    weight_bytes = {
        "torch-fp32": model_bytes(trained.fp32),
        "torchao-converted": model_bytes(converted),
        "deployed": model_bytes(deployed.model),  # its state_dict: the packed buffers and what stayed
    }

    ctx.progress("perplexity", "perplexity of the deployed model on the validation set")
    ppl_converted = trained.perplexity("converted", ctx)
    ppl_deployed, tokens = perplexity(deployed.model, trained.val, ctx, trained.loss)
    logit_diff = _max_logit_diff(deployed.model, converted, trained)
    same_tokens = bool(
        torch.equal(torch.as_tensor(generate_once["deployed"]), torch.as_tensor(generate_once["torchao-converted"]))
    )

    ctx.progress("bench", "timing decode")
    decode = time_rows(
        {n: (run.greedy(m, new_tokens), None) for n, m in models.items()}, prompt, weight_bytes, runs, ctx, LABELS
    )
    ctx.progress("bench", "timing prefill")
    prefill = time_rows({n: (run.prefill(m), None) for n, m in models.items()}, prompt, weight_bytes, runs, ctx, LABELS)

    rows = []
    for row in decode["rows"]:
        per = {}
        for k, stat in row["latency"].items():
            batch = int(k[1:])
            per[k] = {
                "msPerToken": stat["medianMs"] / new_tokens,
                "tokensPerS": batch * new_tokens / (stat["medianMs"] / 1e3),
            }
        rows.append(
            {
                "name": row["name"],
                "label": row["label"],
                "weightBytes": weight_bytes[row["name"]],
                "rssDeltaBytes": rss[row["name"]],
                "decode": per,
            }
        )

    mismatches = _mismatches(trained, deployed.formats)
    warnings = [report.mismatch_warning(m, ppl_converted, ppl_deployed) for m in mismatches]
    kinds = sorted({f.scheme for f in deployed.formats.values()})
    generation = (
        "transformers generate, greedy, KV cache"
        if run.is_generator(models["deployed"])
        else "a greedy forward loop over the whole sequence (no KV cache)"
    )
    notes = [
        f"kernels: {'; '.join(f'{k}: {packed.KERNELS[k]}' for k in kinds)}",
        f"generation: {generation}; PyTorch with {torch.get_num_threads()} threads; no torch.compile",
        "rssDeltaBytes: the resident-memory peak (sampled every ms from /proc/self/statm) over its value before the "
        "row's model was built and generated once, rows built in the order deployed, converted, FP32: the first also "
        "carries the process's one-time allocations (the first generate, the kernels' first use), and freed pages the "
        "allocator keeps can make a later one read low; weight bytes are the exact figure",
    ]
    if "8da4w" in kinds:
        notes.append(
            "8da4w on x86 runs PyTorch's scalar reference kernel (no KleidiAI), and its packed buffer is float32 "
            "holding one packed byte per element: 2 bytes a weight as stored"
        )
    if deployed.requantized:
        notes.append(
            f"{len(deployed.requantized)} modules were quantized again from the QAT-trained float weights for the "
            "deployed format (torchao's qparams and rounding)"
        )
    result: dict[str, Any] = {
        "model": trained.id,
        "reused": reused,
        "modules": [
            {
                "module": c.module,
                "trained": packed.trained_format(c).as_dict(),
                "deployed": deployed.formats[c.module].as_dict(),
                "kernel": packed.KERNELS[deployed.formats[c.module].scheme],
                "requantized": c.module in deployed.requantized,
            }
            for c in trained.qat.quantized
            if c.module in deployed.formats
        ],
        "matchesTrained": not mismatches,
        "mismatches": mismatches,
        "prompt": {"samples": int(prompt.shape[0]), "tokens": int(prompt.shape[1])},
        "newTokens": new_tokens,
        "rows": rows,
        "decode": decode,
        "prefill": prefill,
        "perplexity": {"converted": ppl_converted, "deployed": ppl_deployed, "tokens": tokens},
        "maxLogitDiff": logit_diff,
        "sameTokens": same_tokens,
        "cpu": cpu.summary(),
        "notes": notes,
        "seconds": 0.0,
    }
    if warnings:
        result["warnings"] = warnings
    result["summary"] = report.deploy(result)
    result["seconds"] = round(time.monotonic() - started, 2)
    return result
