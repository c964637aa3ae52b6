"""search/mixed-precision on a `flow: torchao` language model (jobs/search_mixed_precision.py opens the model and
renders the summary): per nn.Linear int4 / int8 / fp16 (fp32) under a perplexity budget, and the Pareto front of what
was measured on (perplexity min, bytes min).

Every candidate is a real torchao model built from the QAT-trained float weights (analysis/linear_precision.py: what
each precision is, how bytes are counted); its perplexity is measured on the validation batches (the first `samples`
sequences), the FP32 model's on the same ones.

Candidates, in this order until the budget (count or seconds) is spent: the ends (all int4, all int8, all fp16, all
fp32, those of `precisions`), then one probe per Linear (all int4 but that one at int8; every probe is a candidate
too) that ranks the Linears by the perplexity keeping them at int8 recovers, then greedy paths in that order: the k
most sensitive at int8 (one path), at fp16 (the next), at fp32, for k on analysis/mixed_precision.schedule. The
ends are always measured; `budget.candidates` counts the ends and the paths' candidates (the probes come on top),
`budget.seconds` every candidate after the ends.

The chosen candidate is the smallest whose perplexity is within `perplexityBudget` percent of the FP32 model's
(none when no candidate is); every candidate carries the overrides that select it."""

from __future__ import annotations

import time
from typing import Any

from qat_kernel.analysis import linear_precision as lp
from qat_kernel.analysis import pareto
from qat_kernel.analysis.mixed_precision import DEFAULT_BUDGET, schedule
from qat_kernel.pipeline import torchao_flow
from qat_kernel.pipeline.config import Config
from qat_kernel.pipeline.trained_model import Trained
from qat_kernel.rpc.context import RequestContext
from qat_kernel.rpc.errors import ConfigInvalid


def plan_paths(order: list[str], uppers: list[str], budget: int) -> list[tuple[str, dict[str, str]]]:
    """[(label, assignment)] of the greedy paths: the k most sensitive Linears at each precision of `uppers`, the
    rest int4, for k on the schedule; at most `budget` of them."""
    plans: list[tuple[str, dict[str, str]]] = []
    for k in schedule(len(order), -(-budget // max(1, len(uppers)))):
        for p in uppers:
            assignment = dict.fromkeys(order, "int4")
            assignment.update(dict.fromkeys(order[:k], p))
            plans.append((f"{k} most sensitive {p}", assignment))
    return plans[: max(0, budget)]


def checked_precisions(precisions: list[str] | None) -> list[str]:
    """The request's precisions (None: the default) in PRECISIONS order; ConfigInvalid without int4 and another."""
    precisions = [p for p in lp.PRECISIONS if p in (precisions or lp.DEFAULT_PRECISIONS)]
    if "int4" not in precisions or len(precisions) < 2:
        raise ConfigInvalid(
            "precisions: a torchao search takes int4 and at least one of int8, fp16, fp32 (e.g. [int4, int8, fp16])",
            path="precisions",
        )
    return precisions


def search(
    ctx: RequestContext,
    cfg: Config,
    trained: Trained,
    *,
    budget: dict[str, Any],
    precisions: list[str],
    samples: int | None,
    perplexity_budget: float,
) -> dict[str, Any]:
    """Measure candidates of `trained` (cfg's torchao model) within `budget` ({candidates, seconds}); return them
    all, the front and the chosen one (the result less `reused`, `seconds` and `summary`)."""
    budget = {**DEFAULT_BUDGET, **budget}
    if not trained.is_language_model:
        raise ConfigInvalid(
            "train.loss: the torchao search measures perplexity, so it takes a language model (train.loss: next_token)",
            path="train.loss",
        )
    qat = trained.qat
    assert isinstance(qat, torchao_flow.TorchaoQat)
    modules = lp.searched(trained)
    if not modules:
        raise ConfigInvalid("torchao: the plan quantizes no nn.Linear, so there is nothing to search", path="torchao")

    qplan = torchao_flow.plan(cfg)
    owners = dict(qat.model.named_modules())
    by_precision = lp.schemes(qplan, [int(owners[m].in_features) for m in modules])
    planned = {c.module: c.scheme for c in qat.choices}
    notes: list[str] = []
    if any(c.scheme is not None and c.scheme.range_learning for c in qat.choices):
        notes.append(
            "range learning: the candidates quantize the trained weights with the base configs' own scales, not the "
            "learnt ones"
        )

    float_copy = lp.float_model(trained)
    # What torchao would refuse for the int4 scheme (a group size that does not divide a Linear), named first.
    all4 = dict.fromkeys(modules, "int4")
    torchao_flow.check(float_copy, lp.choices(trained, all4, by_precision), qplan, [])
    batches = lp.limited(trained.val, samples)
    sequences = sum(len(y) for _, y in batches)
    fp32_ppl, tokens = lp.perplexity(trained.fp32, batches, trained, ctx)
    qat_float_ppl, _ = lp.perplexity(float_copy, batches, trained, ctx)
    limit = fp32_ppl * (1 + perplexity_budget / 100)

    measured: list[dict[str, Any]] = []
    seen: dict[tuple[str, ...], dict[str, Any]] = {}

    def measure(label: str, assignment: dict[str, str]) -> dict[str, Any]:
        assignment = {m: assignment[m] for m in modules}  # model order: the overrides' order within a depth
        key = tuple(assignment.values())
        if key in seen:
            return seen[key]
        ctx.check_cancelled()
        model = lp.build(float_copy, lp.choices(trained, assignment, by_precision), assignment)
        ppl, _ = lp.perplexity(model, batches, trained, ctx)
        candidate = {
            "id": f"c{len(measured)}",
            "label": label,
            "assignment": [{"module": m, "precision": assignment[m]} for m in modules],
            "counts": {p: sum(1 for v in assignment.values() if v == p) for p in lp.PRECISIONS},
            "perplexity": ppl,
            "bytes": lp.candidate_bytes(model, assignment),
            "withinBudget": ppl <= limit,
            "overrides": lp.overrides_for(assignment, planned, by_precision),
        }
        measured.append(candidate)
        seen[key] = candidate
        return candidate

    uppers = [p for p in precisions if p != "int4"]
    paths_full = plan_paths(modules, uppers, 10**6)
    ends_count = len(precisions)
    path_room = max(0, budget["candidates"] - ends_count)
    planned_count = ends_count + len(modules) + len(plan_paths(modules, uppers, path_room))
    total = max(1, planned_count)

    ends: dict[str, str] = {}
    for p in precisions:
        c = measure(f"all {p}", dict.fromkeys(modules, p))
        ends[p] = c["id"]
        ctx.progress("candidate", f"all {p}: perplexity {c['perplexity']:.3f}", len(measured) / total)
    searching = time.monotonic()  # the seconds budget counts from here: training and the ends are not the search

    def over_time() -> bool:
        return time.monotonic() - searching > budget["seconds"]

    stopped = None
    probes: dict[str, float] = {}
    probe_precision = "int8" if "int8" in uppers else uppers[0]
    for module in modules:
        if over_time():
            stopped = f"the {budget['seconds']} s budget ran out after {len(probes)} of {len(modules)} probes"
            break
        assignment = {**all4, module: probe_precision}
        c = measure(f"{module} {probe_precision} alone", assignment)
        probes[module] = c["perplexity"]
        ctx.progress(
            "probe", f"{module} {probe_precision} alone: perplexity {c['perplexity']:.3f}", len(measured) / total
        )
    int4_ppl = seen[tuple(["int4"] * len(modules))]["perplexity"]
    order = sorted(modules, key=lambda m: (probes.get(m, int4_ppl), modules.index(m)))

    paths = plan_paths(order, uppers, path_room)
    if stopped is None:
        for label, assignment in paths:
            if over_time():
                stopped = f"the {budget['seconds']} s budget ran out after {len(measured)} candidates"
                break
            c = measure(label, assignment)
            ctx.progress("candidate", f"{label}: perplexity {c['perplexity']:.3f}", min(1.0, len(measured) / total))
    if len(paths) < len(paths_full):
        notes.append(
            f"the candidate budget ({budget['candidates']}) covers {len(paths)} of the {len(paths_full)} candidates "
            "of the greedy paths"
        )
    if stopped:
        notes.append(f"stopped early: {stopped}")
    if "fp16" in precisions:
        notes.append(
            "fp16 is emulated (weights, biases and inputs rounded to float16, sums in float32); QAT with an fp16 "
            "override trains that layer in fp32"
        )

    front_idx = pareto.front(measured, lp.OBJECTIVES)
    front = [measured[i]["id"] for i in front_idx]
    for c in measured:
        c["onFront"] = c["id"] in front
    within = [c for c in measured if c["withinBudget"]]
    chosen = min(within, key=lambda c: (c["bytes"], c["perplexity"])) if within else None
    if chosen is None:
        best = min(measured, key=lambda c: c["perplexity"])
        notes.append(
            f"no candidate is within {perplexity_budget:g} % of the FP32 perplexity ({limit:.3f}): the lowest is "
            f"{best['label']} ({best['perplexity']:.3f})"
        )
    layers = [
        {
            "module": m,
            "rank": order.index(m) + 1,
            **(
                {"probe": {"precision": probe_precision, "perplexity": probes[m], "recovered": int4_ppl - probes[m]}}
                if m in probes
                else {}
            ),
        }
        for m in modules
    ]
    return {
        "flow": "torchao",
        "model": trained.id,
        "samples": sequences,
        "tokens": tokens,
        "precisions": precisions,
        "schemes": {p: s.label for p, s in by_precision.items() if p in precisions},
        "perplexity": {"fp32": fp32_ppl, "qatFloat": qat_float_ppl, "limit": limit},
        "perplexityBudget": perplexity_budget,
        "layers": layers,
        "candidates": measured,
        "ends": ends,
        "front": front,
        "chosen": chosen["id"] if chosen else None,
        "objectives": [{"key": k, "sense": s} for k, s in lp.OBJECTIVES],
        "budget": {
            "candidates": budget["candidates"],
            "seconds": budget["seconds"],
            "measured": len(measured),
            "planned": planned_count,
        },
        "notes": notes,
    }
