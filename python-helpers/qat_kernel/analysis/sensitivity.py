"""Per-layer sensitivity to quantization, measured on the QAT-trained model by switching its fake quantizers
(no retraining, one validation pass per setting), and the greedy choice of layers to keep float."""

from __future__ import annotations

from dataclasses import dataclass
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
    first `limit` validation samples; sqnr against `reference` (the QAT-float logits). A language model's also
    has its perplexity."""
    from qat_kernel.pipeline.training import predict

    with trained_model.evaluating(trained.qat, fake_quant=enabled) as model:
        logits, _ = predict(model, trained.val, ctx, limit)
    accuracy = trained.loss.accuracy(logits, targets) or 0.0
    found = {"accuracy": accuracy, "sqnr": metrics.sqnr(reference, logits)}
    if trained.is_language_model:
        found["perplexity"] = perplexity_of(trained, logits, targets)
    return found


def perplexity_of(trained: trained_model.Trained, logits: torch.Tensor, targets: torch.Tensor) -> float:
    """exp of the mean next-token cross-entropy of `logits` (the validation predictions) on `targets`."""
    import math

    nll, tokens = trained.loss.token_nll(logits, targets)
    return math.exp(nll / tokens) if tokens else math.nan


@dataclass(frozen=True)
class Unit:
    """What sensitivity switches as one: a layer, or a block of them. `switches` are the names
    trained_model.evaluating takes (torch.ao fake quantizer names; torchao module paths)."""

    module: str
    op: str
    switches: tuple[str, ...]
    layer: Any = None  # what session.layer_source takes: a Group (pt2e), a Layer (eager), a Choice (torchao)


def units(trained: trained_model.Trained) -> tuple[list[Unit], list[str]]:
    """(the quantized layers, every switch name) of the QAT model: pt2e/eager layers with their fake quantizers;
    torchao's quantized nn.Linear / nn.Embedding modules, each its own switch."""
    from qat_kernel.pipeline.torchao_flow import TorchaoQat

    qat = trained.qat
    if isinstance(qat, TorchaoQat):
        chosen = qat.quantized
        return [Unit(c.module, c.kind, (c.module,), c) for c in chosen], [c.module for c in chosen]
    layers = [Unit(layer.module, layer.op, tuple(fqs.all), layer) for layer, fqs in qat.layers()]
    return layers, list(qat.fake_quants())


def blocks(model: torch.nn.Module, layers: list[Unit]) -> list[Unit]:
    """The repeated blocks the layers sit in: the numbered children of an nn.ModuleList or nn.Sequential (a
    transformer's `model.layers.N`, timm's `blocks.N`, a ResNet stage's `layer1.N`) that hold quantized layers,
    outermost first, each with the switches of its layers. A child counts as a block when its container has at
    least two children of its class holding layers: one block is no repetition, and a Sequential of bare
    layers (an MLP's `net.0`, `net.2`) has layers, not blocks."""
    import torch

    found: dict[str, list[Unit]] = {}
    for unit in layers:
        parts = unit.module.split(".")
        for i in range(len(parts) - 1):  # the block strictly contains the layer
            container = _submodule(model, ".".join(parts[:i]))
            if parts[i].isdigit() and isinstance(container, torch.nn.ModuleList | torch.nn.Sequential):
                found.setdefault(".".join(parts[: i + 1]), []).append(unit)
                break
    kinds: dict[tuple[str, type], int] = {}
    for name in found:
        key = (name.rpartition(".")[0], type(_submodule(model, name)))
        kinds[key] = kinds.get(key, 0) + 1
    return [
        Unit(name, "block", tuple(s for u in members for s in u.switches))
        for name, members in found.items()
        if kinds[(name.rpartition(".")[0], type(_submodule(model, name)))] >= 2
    ]


def _submodule(model: torch.nn.Module, name: str) -> torch.nn.Module | None:
    try:
        return model.get_submodule(name)
    except AttributeError:
        return None


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
