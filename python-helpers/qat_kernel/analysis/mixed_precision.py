"""Mixed precision on the QAT-trained model, what search/mixed-precision (jobs/search_mixed_precision.py)
measures with: each layer emulated at int8, fp16 or fp32 by switching its fake quantizers, the candidates to
measure in order under a budget, and the config overrides that select a candidate.

  int8  the trained fake quantizers on;
  fp16  emulated: those quantizers round to float16 and back (x.to(float16).to(float32)) instead of to
        the int8 grid, so the layer computes on float16 weights and inputs; sums stay float32, as
        ORT's and TVM's float16 layers accumulate;
  fp32  those quantizers off.
A quantizer two layers share takes the lower of their precisions. Quantizers no layer owns stay on
while any layer is int8 and are off when none is (the all-fp16 and all-fp32 ends have no int8 left)."""

from __future__ import annotations

import contextlib
import math
import re
from typing import TYPE_CHECKING, Any, TypedDict

from qat_kernel.analysis import metrics
from qat_kernel.pipeline import trained_model

if TYPE_CHECKING:
    from collections.abc import Iterator

    import numpy as np
    import numpy.typing as npt
    import torch

    from qat_kernel.rpc.context import RequestContext

PRECISIONS = ("int8", "fp16", "fp32")
RANK = {p: i for i, p in enumerate(PRECISIONS)}  # a shared quantizer takes the lowest
OBJECTIVES = (("accuracy", "max"), ("latencyMs", "min"), ("bytes", "min"))
LATENCY_OBJECTIVES = (("accuracy", "max"), ("latencyMs", "min"))
SIZE_OBJECTIVES = (("accuracy", "max"), ("bytes", "min"))
DEFAULT_BUDGET = {"candidates": 24, "seconds": 600}  # the schema's defaults of budget's keys
TIMED_RUNS = 20  # timed calls per candidate and batch, spread over the rounds


class Measured(TypedDict):
    """What `measure` gives for one candidate."""

    accuracy: float  # top-1 of the emulated candidate
    sqnr: float | None  # of its logits against the reference logits; None without them or where not finite


def schedule(layers: int, pairs: int) -> list[int]:
    """Prefix lengths k (1..layers-1) for `pairs` steps of the greedy paths: geometric, so the most
    sensitive layers are tried one at a time and the last step reaches layers-1."""
    top = layers - 1
    if top < 1 or pairs < 1:
        return []
    if pairs >= top:
        return list(range(1, top + 1))
    ks: list[int] = []
    for i in range(1, pairs + 1):
        k = min(top, max(1, round(top ** (i / pairs))))
        while k in ks and k < top:
            k += 1
        if k not in ks:
            ks.append(k)
    return sorted(ks)


def plan_candidates(order: list[str], precisions: list[str], budget: int) -> list[tuple[str, dict[str, str]]]:
    """[(label, {module: precision})] in measuring order, at most `budget` of them (the order:
    jobs/search_mixed_precision.py)."""
    floats = [p for p in ("fp16", "fp32") if p in precisions]
    plans: list[tuple[str, dict[str, str]]] = [("all int8", dict.fromkeys(order, "int8"))]
    plans += [(f"all {p}", dict.fromkeys(order, p)) for p in reversed(floats)]  # fp32 end before fp16
    room = max(0, budget - len(plans))
    for k in schedule(len(order), -(-room // max(1, len(floats)))):
        for p in floats:
            assignment = dict.fromkeys(order, "int8")
            assignment.update(dict.fromkeys(order[:k], p))
            plans.append((f"{k} most sensitive {p}", assignment))
    return plans[:budget]


def overrides_for(assignment: dict[str, str]) -> list[dict[str, str]]:
    """The config overrides that keep a candidate's float layers float: deepest module first, so a
    layer's own override wins over one on a module that contains it (overrides match parents too)."""
    floats = [(m, p) for m, p in assignment.items() if p != "int8"]
    floats.sort(key=lambda mp: -mp[0].count("."))
    return [{"match": re.escape(m), "precision": p} for m, p in floats]


def _half(x: torch.Tensor) -> torch.Tensor:
    return x.to(dtype=__import__("torch").float16).to(x.dtype)


@contextlib.contextmanager
def emulating(trained: trained_model.Trained, assignment: dict[str, str]) -> Iterator[torch.nn.Module]:
    """The QAT model with each layer at its precision of `assignment` (module -> int8|fp16|fp32;
    missing modules int8), fake quantizers restored afterwards."""
    fqs = trained.qat.fake_quants()
    state: dict[str, str] = {}
    for layer, owned in trained.qat.layers():
        p = assignment.get(layer.module, "int8")
        for name in owned.all:
            state[name] = min(state.get(name, p), p, key=RANK.__getitem__)
    any_int8 = any(p == "int8" for p in state.values())
    enabled = {name: state.get(name, "int8" if any_int8 else "fp32") != "fp32" for name in fqs}
    halves = [fqs[n] for n, p in state.items() if p == "fp16"]
    with trained_model.evaluating(trained.qat, fake_quant=enabled) as model:
        for m in halves:
            m.forward = _half  # an instance attribute: nn.Module.__call__ runs it instead of the class's
        try:
            yield model
        finally:
            for m in halves:
                with contextlib.suppress(AttributeError):
                    del m.forward


def measure(
    trained: trained_model.Trained,
    assignment: dict[str, str],
    ctx: RequestContext,
    reference: torch.Tensor | None = None,
    limit: int | None = None,
) -> Measured:
    """{accuracy, sqnr} of the emulated candidate on the first `limit` validation samples (sqnr vs
    `reference` logits, None when equal to them)."""
    from qat_kernel.pipeline.training import predict

    with emulating(trained, assignment) as model:
        logits, targets = predict(model, trained.val, ctx, limit)
    out: Measured = {"accuracy": trained.loss.accuracy(logits, targets) or 0.0, "sqnr": None}
    if reference is not None:
        s = metrics.sqnr(reference, logits)
        out["sqnr"] = s if math.isfinite(s) else None
    return out


def float_weights(trained: trained_model.Trained, ctx: RequestContext) -> dict[str, npt.NDArray[np.float32]]:
    """{module: the float weight its weight fake quantizer receives} (BN folded as QAT computes it), read
    by pre-hooks during one forward of the QAT model on a validation batch."""
    import torch

    fqs = trained.qat.fake_quants()
    found: dict[str, npt.NDArray[np.float32]] = {}
    hooks = []
    for layer, owned in trained.qat.layers():
        for name in owned.weight[:1]:

            def grab(_m: torch.nn.Module, args: tuple[Any, ...], module: str = layer.module) -> None:
                found.setdefault(module, args[0].detach().float().numpy().copy())

            hooks.append(fqs[name].register_forward_pre_hook(grab))
    try:
        x = next(iter(trained.val))[0][:2]
        with trained_model.evaluating(trained.qat, fake_quant=False) as model, torch.no_grad():
            ctx.check_cancelled()
            model(*x)
    finally:
        for h in hooks:
            h.remove()
    return found
