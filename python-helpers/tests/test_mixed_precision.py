"""search/mixed-precision on a copy of examples/digits (in process, so the test can re-measure the model the
search measured): the result matches the schema, the front is non-dominated, the ends are there, fp16 is
emulated (not run as fp32), and each front point's overrides, written into the config as the extension
writes them, select exactly the layers the point measured and give back its accuracy. A cancel over RPC
ends the request typed."""

from __future__ import annotations

import pytest
import yaml
from conftest import copy_example, non_dominated

METHOD = "search/mixed-precision"


@pytest.fixture(scope="module")
def searched(tmp_path_factory):
    from qat_kernel import methods

    config = copy_example(tmp_path_factory.mktemp("search") / "digits")
    progress = []
    result = methods.call(METHOD, {"config": str(config)}, notify=lambda m, p: progress.append(p))
    return config, result, progress


def test_result_matches_the_schema_and_reports_progress(searched, validate):
    _, result, progress = searched
    validate("MixedPrecisionResult", result)
    stages = {p["stage"] for p in progress}
    assert {"probe", "candidate", "bench"} <= stages
    assert result["budget"]["measured"] == len(result["candidates"]) == result["budget"]["planned"]
    assert result["backend"]["runtime"] == "onnxruntime"


def test_front_is_exactly_the_non_dominated_candidates(searched):
    _, result, _ = searched
    cands = result["candidates"]
    for field, keys in (
        ("front", ("accuracy", "latencyMs", "bytes")),
        ("latencyFront", ("accuracy", "latencyMs")),
        ("sizeFront", ("accuracy", "bytes")),
    ):
        assert result[field] == non_dominated(cands, keys), field
    assert [c["id"] for c in cands if c["onFront"]] == result["front"]


def test_the_ends_are_measured_and_on_the_front(searched):
    _, result, _ = searched
    by_id = {c["id"]: c for c in result["candidates"]}
    for end in ("int8", "fp32", "fp16"):
        assert {a["precision"] for a in by_id[result["ends"][end]]["assignment"]} == {end}
    int8 = by_id[result["ends"]["int8"]]
    fp32 = by_id[result["ends"]["fp32"]]
    # All int8 is the smallest candidate, so nothing dominates it.
    assert int8["bytes"] == min(c["bytes"] for c in by_id.values())
    assert int8["id"] in result["front"] and int8["id"] in result["sizeFront"]
    # All fp32 has the float model's logits (no SQNR loss): with no candidate more accurate, nothing dominates it.
    assert fp32["sqnr"] is None and fp32["overrides"] and not int8["overrides"]
    if fp32["ortAccuracy"] >= max(c["ortAccuracy"] for c in by_id.values()):
        assert fp32["id"] in result["front"]


def test_the_ends_say_what_onnx_runtime_executes(searched):
    """all int8 and all fp32 carry ORT's precision as executed in brief (the page's explanation when int8 is the
    slower one); the other candidates do not."""
    _, result, _ = searched
    by_id = {c["id"]: c for c in result["candidates"]}
    int8 = by_id[result["ends"]["int8"]]["executed"]
    fp32 = by_id[result["ends"]["fp32"]]["executed"]
    assert int8["compute"]["int8"] >= 1 and fp32["compute"]["int8"] == 0
    assert int8["conversions"] > fp32["conversions"] >= 0
    assert int8["nodes"] > fp32["nodes"] > 0
    assert all(op["count"] >= 1 and op["reason"] for op in int8["fp32Ops"])
    assert not any("executed" in c for c in by_id.values() if c["label"] not in ("all int8", "all fp32"))


def test_fp16_is_emulated_and_the_backend_agrees(searched):
    _, result, _ = searched
    by_id = {c["id"]: c for c in result["candidates"]}
    int8, fp16, fp32 = (by_id[result["ends"][k]] for k in ("int8", "fp16", "fp32"))
    # fp16 rounds (finite SQNR), far less than int8 does; fp32 does not round at all.
    assert fp16["sqnr"] is not None and fp16["sqnr"] > int8["sqnr"] + 20
    assert int8["bytes"] < fp16["bytes"] < fp32["bytes"]
    for c in by_id.values():
        assert abs(c["ortAccuracy"] - c["accuracy"]) <= 0.01, c["label"]


def test_front_overrides_reproduce_the_measured_accuracy(searched):
    """Each front point's overrides go first under `overrides:` of a copy of the config (as the extension
    writes them); the config's own plan then gives every layer the point's precision, and the search's
    model at that plan measures the point's accuracy again."""
    from qat_kernel.analysis import mixed_precision
    from qat_kernel.pipeline import qconfig, session
    from qat_kernel.pipeline.config import load_config
    from qat_kernel.rpc.context import RequestContext

    config, result, _ = searched
    ctx = RequestContext(0, METHOD, {}, lambda *_: None)
    trained, reused = session.get(session.load(str(config), ctx), ctx)
    assert reused
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    for c in (c for c in result["candidates"] if c["onFront"]):
        # Beside the config (its model and data entries resolve there); another .yaml leaves its cache key alone.
        picked = config.parent / f"picked-{c['id']}.qat.yaml"
        picked.write_text(
            yaml.safe_dump({**data, "overrides": c["overrides"] + (data.get("overrides") or [])}), encoding="utf-8"
        )
        try:
            plan = qconfig.plan(load_config(str(picked)))
        finally:
            picked.unlink()
        assignment = {a["module"]: plan.for_module(a["module"]).precision for a in c["assignment"]}
        assert assignment == {a["module"]: a["precision"] for a in c["assignment"]}, c["label"]
        again = mixed_precision.measure(trained, assignment, ctx, limit=result["samples"])
        assert again["accuracy"] == c["accuracy"], c["label"]


def test_cancel_ends_the_search_typed(kernel, compare_run):
    _, _, config = compare_run
    request_id = kernel.request_async(METHOD, {"config": str(config)})
    kernel.wait_progress(request_id, timeout=300, where=lambda p: p["stage"] == "probe")
    kernel.notify("$/cancelRequest", {"id": request_id})
    response = kernel.wait_response(request_id, timeout=120)
    assert response["error"]["data"]["kind"] == "cancelled", response


def test_a_search_without_int8_and_a_float_precision_is_refused(kernel, compare_run):
    from rpc_client import RpcError

    _, _, config = compare_run
    with pytest.raises(RpcError) as err:
        kernel.request(METHOD, {"config": str(config), "precisions": ["fp16", "fp32"]})
    assert err.value.data["kind"] == "configInvalid" and "precisions" in err.value.message
    with pytest.raises(RpcError) as err:
        kernel.request(METHOD, {"config": str(config), "precisions": ["int8"]})
    assert err.value.code == -32602
