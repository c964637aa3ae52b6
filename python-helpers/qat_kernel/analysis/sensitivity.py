"""Per-layer sensitivity to quantization, measured on the QAT-trained model by switching its fake quantizers
(no retraining, one validation pass per setting), and the greedy choice of layers to keep float."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from qat_kernel.analysis import metrics
from qat_kernel.pipeline import trained_model

if TYPE_CHECKING:
    from collections.abc import Callable

    import torch

    from qat_kernel.rpc.context import RequestContext


def measure(
    trained: trained_model.Trained,
    enabled: dict[str, bool],
    reference: torch.Tensor,
    targets: torch.Tensor,
    ctx: RequestContext,
    limit: int | None,
) -> dict[str, float]:
    """{accuracy, sqnr} of the QAT model with the fake quantizers of `enabled` (name -> on) switched so, on the
    first `limit` validation samples; sqnr against `reference` (the QAT-float logits)."""
    from qat_kernel.pipeline.training import predict

    with trained_model.evaluating(trained.qat, fake_quant=enabled) as model:
        logits, _ = predict(model, trained.val, ctx, limit)
    accuracy = trained.loss.accuracy(logits, targets) or 0.0
    return {"accuracy": accuracy, "sqnr": metrics.sqnr(reference, logits)}


def suggest(
    rows: list[dict[str, Any]],
    everything: dict[str, float],
    target: float,
    measure: Callable[[set[str]], dict[str, float]],
    steps: list[dict[str, Any]] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """Greedy mixed precision: keep layers float, largest keptFloat gain first, until the accuracy
    reaches `target`. measure(set of fake-quant names off) -> {accuracy, sqnr}. (chosen rows, last);
    `steps` gets {module, accuracy, sqnr} after each layer chosen (the accuracy with it and those before it float)."""
    helpful = sorted(rows, key=lambda r: (-r["keptFloat"]["accuracy"], -r["keptFloat"]["sqnr"]))
    chosen: list[dict[str, Any]] = []
    current = everything
    for row in helpful:
        if current["accuracy"] >= target:
            break
        chosen.append(row)
        current = measure({n for r in chosen for n in r["fakeQuants"]})
        if steps is not None:
            steps.append({"module": row["module"], "accuracy": current["accuracy"], "sqnr": current["sqnr"]})
    return chosen, current


def target_for(fp32: float, qat_float: float, budget: float) -> tuple[float, str]:
    """The accuracy the suggestion aims at and what it is measured from: `budget` points below the FP32 model,
    or below the QAT-float model (every fake quantizer off) when that is already further down: no choice of
    float layers gets above it, and aiming there would keep every layer float."""
    if qat_float < fp32 - budget / 100.0:
        return qat_float - budget / 100.0, "qatFloat"
    return fp32 - budget / 100.0, "fp32"
