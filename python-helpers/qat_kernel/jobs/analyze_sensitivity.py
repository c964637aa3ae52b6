"""analyze/sensitivity: which layers lose accuracy when quantized.

Measured on the QAT-trained model by switching its fake quantizers per layer (no retraining, no
re-export; one validation pass per setting):
  quantizedAlone: only this layer's fake quantizers on (its weights and its input activation in
                  pt2e; weights and output in eager), every other layer float;
  keptFloat:      every layer quantized except this one.
Output SQNR compares the logits with those of the same model, fake quantization all off (the
QAT-float model), so it is the quantization error alone. Layers are ranked by quantizedAlone SQNR,
lowest (most sensitive) first.

The torchao flow's layers are its quantized nn.Linear / nn.Embedding modules (weights and, for 8da*, the
per-token input quantization switched together). Repeated blocks (the children of an nn.ModuleList: a
transformer's `model.layers.N`; analysis/sensitivity.blocks) are measured the same way as a whole, ranked
in `blocks` (the torchao flow only, so far). A language model's
measurements also carry the perplexity.

The suggestion keeps layers float, most helpful first (largest keptFloat accuracy gain, then SQNR
gain), until fake-quant accuracy is within `budget` points of the FP32 model's accuracy (of the QAT-float
model's when that is lower still: no float layers get above it), and returns them as YAML overrides
({match, precision}) ready to paste under `overrides:`, with the accuracy after each layer added (`steps`)."""

from __future__ import annotations

import re
import time
from typing import Any

from qat_kernel.analysis.sensitivity import Unit, blocks, measure, suggest, target_for, units
from qat_kernel.jobs import opening
from qat_kernel.jobs.reports import analysis as report
from qat_kernel.pipeline import session, trained_model
from qat_kernel.rpc.context import RequestContext

DEFAULT_BUDGET = 1.0  # accuracy points (percent) below FP32
DEFAULT_PRECISION = "fp16"


def analyze(
    ctx: RequestContext, *, config: str, budget: float, precision: str, samples: int | None, steps: int | None
) -> dict[str, Any]:
    """Rank the quantized layers by the accuracy their quantization costs; suggest the fewest to keep float."""
    started = time.monotonic()
    cfg = opening.load(ctx, config, torchao=True)
    limit = samples
    _, trained, reused, _ = opening.model(cfg, ctx, steps=steps)

    from qat_kernel.pipeline.training import predict

    layers, names = units(trained)
    groups = blocks(trained.qat.model, layers) if trained.flow == "torchao" else []
    total = 2 * (len(layers) + len(groups)) + 2
    done = 0

    def step(message: str) -> None:
        nonlocal done
        done += 1
        ctx.progress("sensitivity", message, done / total)

    with trained_model.evaluating(trained.qat, fake_quant=False) as model:
        reference, targets = predict(model, trained.val, ctx, limit)
    qat_float_accuracy = trained.loss.accuracy(reference, targets) or 0.0
    step("QAT float reference")
    everything = measure(trained, dict.fromkeys(names, True), reference, targets, ctx, limit)
    step("all layers quantized")

    def measured(unit: Unit) -> dict[str, Any]:
        alone = dict.fromkeys(names, False)
        alone.update(dict.fromkeys(unit.switches, True))
        quantized_alone = measure(trained, alone, reference, targets, ctx, limit)
        step(f"{unit.module} quantized alone")
        # Quantizers no layer owns (e.g. an eager QuantStub's) stay on: part of "all quantized".
        kept_float = measure(trained, {n: n not in unit.switches for n in names}, reference, targets, ctx, limit)
        step(f"{unit.module} kept float")
        row = {
            "module": unit.module,
            "op": unit.op,
            "quantizedAlone": quantized_alone,
            "keptFloat": kept_float,
            "fakeQuants": list(unit.switches),
        }
        source = session.layer_source(trained, unit.layer) if unit.layer is not None else None
        if source:
            row["source"] = source
        return row

    rows = [measured(unit) for unit in layers]
    block_rows = [measured(unit) for unit in groups]
    for block, unit in zip(block_rows, groups, strict=True):
        block["layers"] = len(unit.switches)
        del block["fakeQuants"]
    block_rows.sort(key=lambda r: (r["quantizedAlone"]["sqnr"], r["quantizedAlone"]["accuracy"]))
    for rank, row in enumerate(block_rows, start=1):
        row["rank"] = rank
    rows.sort(key=lambda r: (r["quantizedAlone"]["sqnr"], r["quantizedAlone"]["accuracy"]))
    for rank, row in enumerate(rows, start=1):
        row["rank"] = rank

    target, reference_model = target_for(trained.fp32_accuracy, qat_float_accuracy, budget)
    greedy: list[dict[str, Any]] = []  # the suggestion's steps, one per layer added
    chosen, current = suggest(
        rows,
        everything,
        target,
        lambda off: measure(trained, {n: n not in off for n in names}, reference, targets, ctx, limit),
        greedy,
    )
    within = current["accuracy"] >= target
    for row in rows:
        del row["fakeQuants"]
    result = {
        "flow": trained.flow,
        "samples": len(targets),
        "budget": budget,
        "accuracy": {
            "fp32": trained.fp32_accuracy,
            "qatFloat": qat_float_accuracy,
            "fakeQuant": everything["accuracy"],
            "fakeQuantSqnr": everything["sqnr"],
            **({"fakeQuantPerplexity": everything["perplexity"]} if "perplexity" in everything else {}),
        },
        "layers": rows,
        **({"blocks": block_rows} if block_rows else {}),
        "suggestion": {
            "overrides": [{"match": re.escape(r["module"]), "precision": precision} for r in chosen],
            "accuracy": current["accuracy"],
            "sqnr": current["sqnr"],
            "withinBudget": within,
            "target": target,
            "reference": reference_model,
            "steps": greedy,
        },
        "reused": reused,
        "seconds": round(time.monotonic() - started, 2),
    }
    result["summary"] = report.sensitivity(result)
    return result
