"""search/mixed-precision: per-layer int8 / fp16 / fp32 under a budget, and the Pareto front of what was measured.

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

The front is the non-dominated candidates on (accuracy max, latency min, size min), equal top-1 ordered
by the logits' SQNR against the QAT-float model (identical logits: best); `latencyFront` and `sizeFront`
are the two-objective fronts the plots draw. The all-int8 end is always on the front (the smallest);
the all-fp32 end is whenever no candidate is more accurate (its SQNR is the best), else only if no
more accurate candidate is also as fast. Every candidate carries the overrides that
select it (most specific module first, so the first match wins) for the config's `overrides:`."""

from __future__ import annotations

import contextlib
import math
import re
import time

from qat_kernel.analysis import metrics, pareto
from qat_kernel.pipeline import session, trained_model
from qat_kernel.rpc.context import RequestContext
from qat_kernel.rpc.errors import ConfigInvalid

PRECISIONS = ("int8", "fp16", "fp32")
RANK = {p: i for i, p in enumerate(PRECISIONS)}  # a shared quantizer takes the lowest
OBJECTIVES = (("accuracy", "max"), ("latencyMs", "min"), ("bytes", "min"))
LATENCY_OBJECTIVES = (("accuracy", "max"), ("latencyMs", "min"))
SIZE_OBJECTIVES = (("accuracy", "max"), ("bytes", "min"))
DEFAULT_BUDGET = {"candidates": 24, "seconds": 600}  # the schema's defaults of budget's keys
TIMED_RUNS = 20  # timed calls per candidate and batch, spread over the rounds


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


def plan_candidates(order: list[str], precisions: list[str], budget: int) -> list[tuple[str, dict]]:
    """[(label, {module: precision})] in measuring order, at most `budget` of them (see the module docstring)."""
    floats = [p for p in ("fp16", "fp32") if p in precisions]
    plans: list[tuple[str, dict]] = [("all int8", dict.fromkeys(order, "int8"))]
    plans += [(f"all {p}", dict.fromkeys(order, p)) for p in reversed(floats)]  # fp32 end before fp16
    room = max(0, budget - len(plans))
    for k in schedule(len(order), -(-room // max(1, len(floats)))):
        for p in floats:
            assignment = dict.fromkeys(order, "int8")
            assignment.update(dict.fromkeys(order[:k], p))
            plans.append((f"{k} most sensitive {p}", assignment))
    return plans[:budget]


def overrides_for(assignment: dict) -> list[dict]:
    """The config overrides that keep a candidate's float layers float: deepest module first, so a
    layer's own override wins over one on a module that contains it (overrides match parents too)."""
    floats = [(m, p) for m, p in assignment.items() if p != "int8"]
    floats.sort(key=lambda mp: -mp[0].count("."))
    return [{"match": re.escape(m), "precision": p} for m, p in floats]


def _half(x):
    return x.to(dtype=__import__("torch").float16).to(x.dtype)


@contextlib.contextmanager
def emulating(trained, assignment: dict):
    """The QAT model with each layer at its precision of `assignment` (module -> int8|fp16|fp32;
    missing modules int8), fake quantizers restored afterwards."""
    fqs = trained.qat.fake_quants()
    state: dict = {}
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


def measure(trained, assignment: dict, ctx, reference=None, limit=None) -> dict:
    """{accuracy, sqnr} of the emulated candidate on the first `limit` validation samples (sqnr vs
    `reference` logits, None when equal to them)."""
    from qat_kernel.pipeline.training import predict

    with emulating(trained, assignment) as model:
        logits, targets = predict(model, trained.val, ctx, limit)
    out = {"accuracy": (logits.argmax(1) == targets).float().mean().item(), "sqnr": None}
    if reference is not None:
        s = metrics.sqnr(reference, logits)
        out["sqnr"] = s if math.isfinite(s) else None
    return out


def float_weights(trained, ctx) -> dict:
    """{module: the float weight its weight fake quantizer receives} (BN folded as QAT computes it), read
    by pre-hooks during one forward of the QAT model on a validation batch."""
    import torch

    fqs = trained.qat.fake_quants()
    found: dict = {}
    hooks = []
    for layer, owned in trained.qat.layers():
        for name in owned.weight[:1]:

            def grab(_m, args, module=layer.module):
                found.setdefault(module, args[0].detach().float().numpy().copy())

            hooks.append(fqs[name].register_forward_pre_hook(grab))
    try:
        x = next(iter(trained.val))[0][:2]
        with trained_model.evaluating(trained.qat, fake_quant=False) as model, torch.no_grad():
            ctx.check_cancelled()
            model(x)
    finally:
        for h in hooks:
            h.remove()
    return found


def _finite(v):
    return v if v is not None and math.isfinite(v) else None


def _sqnr_key(v):
    return math.inf if v is None else v


def search(
    ctx: RequestContext,
    *,
    config: str,
    budget: dict,
    precisions: list[str],
    samples: int | None,
    steps: int | None,
    batch: int,
) -> dict:
    """Measure candidates within `budget` ({candidates, seconds}); return them all and their fronts."""
    started = time.monotonic()
    budget = {**DEFAULT_BUDGET, **budget}
    if "int8" not in precisions or not {"fp16", "fp32"} & set(precisions):
        raise ConfigInvalid("precisions: search int8 and at least one of fp16, fp32", path="precisions")
    cfg = session.load(config, ctx)
    session.require_pt2e(cfg, "the mixed-precision search builds candidates from the PT2E QDQ export")
    trained, reused = session.get(cfg, ctx, steps=steps)

    import numpy as np
    import onnx

    from qat_kernel.pipeline.training import first_inputs, predict
    from qat_kernel.runtimes import bench, cpu
    from qat_kernel.runtimes.onnx import qdq_export
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
        exported = qdq_export.export_for_config(cfg, converted, trained.example, ctx, opset=opset)
        if exported["path"] is None:
            raise ConfigInvalid(f"export: the QDQ ONNX export failed: {exported['error']}", path="export")
        session.record_export(trained, path, opset)
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
    inputs = np.concatenate([x.numpy() for x in first_inputs(trained.val, len(targets))])[: len(targets)]
    labels = targets.numpy()

    weights = float_weights(trained, ctx)
    searching = time.monotonic()  # the seconds budget counts from here: training and export are not the search

    def over_time() -> bool:
        return time.monotonic() - searching > budget["seconds"]

    # Sensitivity probes (accuracy only): everything int8 but one layer, in the highest float precision.
    probe_precision = "fp32" if "fp32" in precisions else "fp16"
    probes: dict = {}
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
    built: list[dict] = []
    fns: dict = {}
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
            sess = ort_session.session(model.SerializeToString())
            name = sess.get_inputs()[0].name
            run = (lambda s, n: lambda a: s.run(None, {n: a})[0])(sess, name)
            ort_out = np.concatenate([run(np.ascontiguousarray(inputs[j : j + 64])) for j in range(0, len(inputs), 64)])
        except Exception as exc:  # noqa: BLE001 - ORT raises its own types; one candidate it cannot run is a note
            if label in ("all int8", "all fp32"):
                raise
            notes.append(f"{label}: left out, ONNX Runtime could not run it ({type(exc).__name__}: {str(exc)[:200]})")
            continue
        cid = f"c{len(built)}"
        counts = {p: sum(1 for v in assignment.values() if v == p) for p in PRECISIONS}
        built.append(
            {
                "id": cid,
                "label": label,
                "assignment": [{"module": m, "precision": assignment[m]} for m in modules],
                "counts": counts,
                "accuracy": acc["accuracy"],
                "sqnr": _finite(acc["sqnr"]),
                "ortAccuracy": float((ort_out.argmax(-1) == labels).mean()),
                "bytes": ort_candidates.weight_bytes(model),
                "overrides": overrides_for(assignment),
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
    # Top-1 ties (common on a few hundred samples) are broken by the logits' SQNR against the float model.
    scored = [{**c, "accuracy": (c["accuracy"], _sqnr_key(c["sqnr"]))} for c in built]
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
