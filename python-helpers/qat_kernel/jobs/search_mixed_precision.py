"""search/mixed-precision: per-layer int8 / fp16 / fp32 under a budget, and the Pareto front of what was measured.
This is the PT2E search; a `flow: torchao` config is searched by analysis/torchao_search.py instead (per nn.Linear
int4 / int8 / fp16 under a perplexity budget, every candidate a torchao model), from the top of `search`.

Accuracy is measured on the QAT-trained model (no retraining per candidate, as analyze/sensitivity), on
the validation samples, by switching each layer's fake quantizers (PT2E: its weight and its input
activation):
  int8  the trained fake quantizers on;
  fp16  emulated: those quantizers round to float16 and back (x.to(float16).to(float32)) instead of to
        the int8 grid, so the layer computes on float16 weights and inputs; sums stay float32, as
        ORT's and TVM's float16 layers accumulate;
  fp32  those quantizers off.
A quantizer two layers share takes the lower of their precisions. Quantizers no layer owns stay on
while any layer is int8 and are off when none is (the all-fp16 and all-fp32 ends have no int8 left).

Latency is measured on ONNX Runtime (CPU EP): each candidate is built from the config's QDQ export
(runtimes/ort/candidates.py), every built candidate is timed at the end in interleaved rounds
(runtimes/bench.time_rows: fair between candidates on a busy machine), and size is the candidate's
ONNX initializers (weights at their precision). ORT's top-1 on the same samples is reported next to the emulated one.

Candidates, in this order until the budget (count or seconds) is spent: the ends (all int8, all fp32,
all fp16), then greedy paths in sensitivity order: one probe per layer (everything int8 but that
layer, in the highest float precision searched: accuracy only) ranks the layers by what keeping them
float recovers (accuracy, then output SQNR), and the k most sensitive layers go fp16 (one path) or fp32
(the other), for k on a schedule that is dense at the sensitive end and reaches L-1 within the budget.

The front is the non-dominated candidates on (accuracy max, latency min, size min), accuracy as measured on
ONNX Runtime, equal top-1 ordered by the emulated top-1 then the logits' SQNR against the QAT-float model
(identical logits: best); `latencyFront` and `sizeFront`
are the two-objective fronts the plots draw. The all-int8 end is always on the front (the smallest);
the all-fp32 end is whenever no candidate is more accurate (its SQNR is the best), else only if no
more accurate candidate is also as fast. The two ends carry `executed`: what ORT's CPU EP runs for them
(runtimes/ort/as_executed.executed_summary), which tells why all int8 is slower than all fp32 where it is.
Every candidate carries the overrides that
select it (most specific module first, so the first match wins) for the config's `overrides:`."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from qat_kernel.analysis import pareto, torchao_search
from qat_kernel.analysis.mixed_precision import (
    DEFAULT_BUDGET,
    LATENCY_OBJECTIVES,
    OBJECTIVES,
    PRECISIONS,
    SIZE_OBJECTIVES,
    TIMED_RUNS,
    Measured,
    float_weights,
    measure,
    overrides_for,
    plan_candidates,
)
from qat_kernel.jobs import opening
from qat_kernel.jobs.reports import analysis as report
from qat_kernel.pipeline import session, trained_model
from qat_kernel.pipeline.config import Config
from qat_kernel.rpc.context import RequestContext
from qat_kernel.rpc.errors import ConfigInvalid

if TYPE_CHECKING:
    from pathlib import Path


def _torchao(
    ctx: RequestContext,
    cfg: Config,
    started: float,
    budget: dict[str, Any],
    precisions: list[str] | None,
    samples: int | None,
    steps: int | None,
    perplexity_budget: float,
) -> dict[str, Any]:
    """search/mixed-precision of a `flow: torchao` language model (analysis/torchao_search.py), its summary rendered."""
    searched = torchao_search.checked_precisions(precisions)  # before training
    opened = opening.model(cfg, ctx, steps=steps)
    result = torchao_search.search(
        ctx,
        cfg,
        opened.trained,
        budget=budget,
        precisions=searched,
        samples=samples,
        perplexity_budget=perplexity_budget,
    )
    result.update(reused=opened.reused, seconds=round(time.monotonic() - started, 2))
    result["summary"] = report.torchao_search(result)
    return result


def _finite(v: float | None) -> float | None:
    return v if v is not None and math.isfinite(v) else None


def _sqnr_key(v: float | None) -> float:
    return math.inf if v is None else v


def search(
    ctx: RequestContext,
    *,
    config: str,
    budget: dict[str, Any],
    precisions: list[str] | None,
    samples: int | None,
    steps: int | None,
    batch: int,
    perplexity_budget: float = 5.0,
) -> dict[str, Any]:
    """Measure candidates within `budget` ({candidates, seconds}); return them all and their fronts. A `flow:
    torchao` config is searched per nn.Linear by analysis/torchao_search.py (precisions None: each flow's default)."""
    cfg = opening.load(ctx, config, torchao=True)
    started = time.monotonic()
    if cfg.get("flow") == "torchao":
        return _torchao(ctx, cfg, started, budget, precisions, samples, steps, perplexity_budget)
    budget = {**DEFAULT_BUDGET, **budget}
    precisions = list(PRECISIONS) if precisions is None else precisions
    if "int4" in precisions:
        raise ConfigInvalid(
            "precisions: int4 is for flow: torchao (its nn.Linear modules); the PT2E flow's layers are int8 only: "
            "search int8 and at least one of fp16, fp32",
            path="precisions",
        )
    if "int8" not in precisions or not {"fp16", "fp32"} & set(precisions):
        raise ConfigInvalid("precisions: search int8 and at least one of fp16, fp32", path="precisions")
    opening.require_pt2e(cfg, "the mixed-precision search builds candidates from the PT2E QDQ export")
    opened = opening.model(cfg, ctx, steps=steps)
    trained, reused = opened.trained, opened.reused

    import numpy as np
    import onnx

    from qat_kernel.pipeline.model_io import Inputs
    from qat_kernel.pipeline.training import first_inputs, predict
    from qat_kernel.runtimes import bench, cpu
    from qat_kernel.runtimes.onnx import qdq_export
    from qat_kernel.runtimes.ort import as_executed
    from qat_kernel.runtimes.ort import candidates as ort_candidates
    from qat_kernel.runtimes.ort import sessions as ort_session

    layers = trained.qat.layers()
    if not layers:
        raise ConfigInvalid("overrides: no layer is quantized, so there is nothing to search", path="overrides")
    modules = [g.module for g, _ in layers]
    ops = {g.module: g.op for g, _ in layers}

    # The all-int8 QDQ export, reused when this model wrote it.
    _, path = qdq_export.onnx_path(cfg)
    opset = cfg.get("export.onnx.opset", qdq_export.DEFAULT_OPSET)
    if not session.exported(trained, path, opset):
        converted = session.convert(trained, ctx)
        qdq_export.export_for_config(cfg, trained, converted, ctx, opset=opset)
    qdq = onnx.load(str(path))
    nodes_of = ort_candidates.layer_nodes(qdq)
    unexported = [m for m in modules if m not in nodes_of]
    if unexported:
        raise ConfigInvalid(
            f"export: no Conv/Gemm/MatMul of {', '.join(unexported)} in {path.name}: the export carries no module "
            "scopes for them",
            path="export",
        )

    # References on the same samples: QAT-float logits (sqnr) and the inputs ORT sees.
    with trained_model.evaluating(trained.qat, fake_quant=False) as model:
        reference, targets = predict(model, trained.val, ctx, samples)
    inputs = Inputs.concat(first_inputs(trained.val, len(targets)))[: len(targets)].numpy()
    labels = targets.numpy()

    weights = float_weights(trained, ctx)
    searching = time.monotonic()  # the seconds budget counts from here: training and export are not the search

    def over_time() -> bool:
        return time.monotonic() - searching > budget["seconds"]

    # Sensitivity probes (accuracy only): everything int8 but one layer, in the highest float precision.
    probe_precision = "fp32" if "fp32" in precisions else "fp16"
    probes: dict[str, Measured] = {}
    total = len(modules) + budget["candidates"] + 1
    for i, module in enumerate(modules):
        ctx.check_cancelled()
        probes[module] = measure(trained, {module: probe_precision}, ctx, reference, samples)
        ctx.progress(
            "probe", f"{module} {probe_precision} alone: {probes[module]['accuracy'] * 100:.2f} %", (i + 1) / total
        )
    everything = measure(trained, {}, ctx, reference, samples)
    order = sorted(
        modules,
        key=lambda m: (-probes[m]["accuracy"], -_sqnr_key(probes[m]["sqnr"]), modules.index(m)),
    )

    plans = plan_candidates(order, precisions, budget["candidates"])
    built: list[dict[str, Any]] = []
    fns: dict[str, tuple[Callable[[Any], Any], str | Path | None]] = {}
    notes: list[str] = []
    stopped = None
    for label, assignment in plans:
        ctx.check_cancelled()
        if len(built) >= 2 and over_time():  # the two ends are always measured
            stopped = f"the {budget['seconds']} s budget ran out after {len(built)} candidates"
            break
        acc = (
            everything
            if all(p == "int8" for p in assignment.values())
            else measure(trained, assignment, ctx, reference, samples)
        )
        try:
            model = ort_candidates.build(qdq, assignment, nodes_of, weights)
            run = ort_session.run_fn(ort_session.session(model.SerializeToString()))
            ort_out = np.concatenate([run(inputs[j : j + 64]) for j in range(0, len(inputs), 64)])
        except Exception as exc:  # noqa: BLE001 - ORT raises its own types; one candidate it cannot run is a note
            if label in ("all int8", "all fp32"):
                raise
            notes.append(f"{label}: left out, ONNX Runtime could not run it ({type(exc).__name__}: {str(exc)[:200]})")
            continue
        cid = f"c{len(built)}"
        executed = None
        if label in ("all int8", "all fp32"):
            # What ORT runs for the two ends, to tell why int8 is not faster where it is not.
            try:
                executed = as_executed.executed_summary(model.SerializeToString())
            except Exception as exc:  # noqa: BLE001 - an analysis that fails is a note, not a failed search
                notes.append(f"{label}: precision as executed not read ({type(exc).__name__}: {str(exc)[:200]})")
        counts = {p: sum(1 for v in assignment.values() if v == p) for p in PRECISIONS}
        built.append(
            {
                "id": cid,
                "label": label,
                "assignment": [{"module": m, "precision": assignment[m]} for m in modules],
                "counts": counts,
                "accuracy": acc["accuracy"],
                "sqnr": _finite(acc["sqnr"]),
                "ortAccuracy": trained.loss.accuracy(ort_out, labels),
                "bytes": ort_candidates.weight_bytes(model),
                "overrides": overrides_for(assignment),
                **({"executed": executed} if executed else {}),
            }
        )
        fns[cid] = (run, None)
        ctx.progress("candidate", f"{label}: {acc['accuracy'] * 100:.2f} %", (len(modules) + len(built)) / total)
    if stopped is None and len(built) < len(plans):
        stopped = f"{len(built)} of {len(plans)} candidates"
    if len(plans) < len(plan_candidates(order, precisions, 10**6)):
        notes.append(
            f"the candidate budget ({budget['candidates']}) covers {len(plans)} of the "
            f"{len(plan_candidates(order, precisions, 10**6))} candidates of the greedy paths"
        )
    if stopped:
        notes.append(f"stopped early: {stopped}")

    # Every built candidate timed in the same interleaved rounds.
    table = bench.time_rows(
        fns,
        inputs,
        {c["id"]: c["bytes"] for c in built},
        TIMED_RUNS,
        ctx,
        {c["id"]: c["label"] for c in built},
    )
    key = f"b{batch}"
    for candidate, row in zip(built, table["rows"]):
        candidate["latency"] = row["latency"]
        candidate["latencyMs"] = row["latency"][key]["medianMs"]
    notes += table["notes"]
    fronts = {
        "front": OBJECTIVES,
        "latencyFront": LATENCY_OBJECTIVES,
        "sizeFront": SIZE_OBJECTIVES,
    }
    # Accuracy as measured on ONNX Runtime (what the candidate gives deployed); ties (common on a few hundred
    # samples) are broken by the emulated top-1, then by the logits' SQNR against the float model.
    scored = [{**c, "accuracy": (c["ortAccuracy"], c["accuracy"], _sqnr_key(c["sqnr"]))} for c in built]
    result_fronts = {
        field: [built[i]["id"] for i in pareto.front(scored, objectives)] for field, objectives in fronts.items()
    }
    on = set(result_fronts["front"])
    for c in built:
        c["onFront"] = c["id"] in on
    ends = {"int8": built[0]["id"], "fp32": next((c["id"] for c in built if c["label"] == "all fp32"), None)}
    fp16_end = next((c["id"] for c in built if c["label"] == "all fp16"), None)
    if fp16_end:
        ends["fp16"] = fp16_end
    ends = {k: v for k, v in ends.items() if v is not None}
    ranked = [
        {
            "module": m,
            "op": ops[m],
            "rank": order.index(m) + 1,
            "probe": {
                "precision": probe_precision,
                "accuracy": probes[m]["accuracy"],
                "sqnr": _finite(probes[m]["sqnr"]),
            },
        }
        for m in modules
    ]
    return {
        "flow": trained.flow,
        "samples": len(targets),
        "precisions": [p for p in PRECISIONS if p in precisions],
        "accuracy": {"fp32": trained.fp32_accuracy},
        "backend": {
            "runtime": "onnxruntime",
            "version": __import__("onnxruntime").__version__,
            "device": "CPU",
            "batch": batch,
            "rounds": table["rounds"],
            "runs": table["runs"],
            "threads": table["threads"],
            "cpu": cpu.summary(),
        },
        "layers": ranked,
        "candidates": built,
        "ends": ends,
        **result_fronts,
        "objectives": [{"key": k, "sense": s} for k, s in OBJECTIVES],
        "budget": {
            "candidates": budget["candidates"],
            "seconds": budget["seconds"],
            "measured": len(built),
            "planned": len(plans),
        },
        "notes": notes,
        "onnx": str(path),
        "reused": reused,
        "seconds": round(time.monotonic() - started, 2),
    }
