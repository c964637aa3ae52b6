"""search/mixed-precision on a `flow: torchao` language model: a copy of examples/tinylm made tiny (one layer of width
32, as tests/test_torchao_flow.py, fewer batches), its 8 nn.Linear searched at int4 / int8 / fp16 as real torchao
models. The front is non-dominated and holds the all-int4 end, int8 loses less perplexity than int4, the overrides a
candidate suggests select its assignment in the torchao plan and train, and a pt2e config asking for int4 is refused."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import REPO, copy_tinylm
from rpc_client import RpcError

from qat_kernel.analysis import pareto
from qat_kernel.pipeline import torchao_flow
from qat_kernel.pipeline.config import Config

WIDTH, BLOCK, BATCH, TRAIN_BATCHES, VAL_BATCHES = 32, 32, 8, 100, 4
LINEARS = 8  # q, k, v, o, gate, up, down and the lm_head

# The example's model and data, smaller; the pre-trained FP32 model cached in out/ so a second config trains from it.
TINY = f"""
import torch
from pathlib import Path
from data import loaders
from model import build, pretrain

CACHE = Path(__file__).parent / "out" / "tiny.fp32.pt"


def tiny_data():
    train, val = loaders(batch_size={BATCH}, block={BLOCK})
    return train[:{TRAIN_BATCHES}], val[:{VAL_BATCHES}]


def tiny_model():
    model = build(hidden={WIDTH}, layers=1, heads=2, block={BLOCK})
    if CACHE.is_file():
        model.load_state_dict(torch.load(CACHE, weights_only=True))
        return model.eval()
    torch.manual_seed(0)
    model = pretrain(model, tiny_data()[0], epochs=2, lr=5e-3)
    CACHE.parent.mkdir(exist_ok=True)
    torch.save(model.state_dict(), CACHE)
    return model
"""


@pytest.fixture(scope="module")
def searched(kernel: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """(config, search/mixed-precision result) of one tiny run."""
    config = copy_tinylm(tmp_path_factory.mktemp("tinylm-search"), TINY, steps=40)
    result = kernel.request(
        "search/mixed-precision",
        {"config": str(config), "budget": {"candidates": 7}, "perplexityBudget": 0.5},
        timeout=900,
    )
    return config, result


def _by_id(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in result["candidates"]}


def test_result_validates_and_measures_ends_probes_and_paths(searched: tuple[Path, dict[str, Any]], validate: Any):
    _, r = searched
    validate("MixedPrecisionSearchResult", r)
    validate("TorchaoMixedPrecisionResult", r)
    assert r["flow"] == "torchao" and r["precisions"] == ["int4", "int8", "fp16"]
    assert r["schemes"] == {"int4": "8da4w (group 32)", "int8": "8da8w (per channel)"}
    assert len(r["layers"]) == LINEARS and sorted(layer["rank"] for layer in r["layers"]) == list(range(1, 9))
    assert r["samples"] == VAL_BATCHES * BATCH and r["tokens"] == VAL_BATCHES * BATCH * (BLOCK - 1)
    labels = [c["label"] for c in r["candidates"]]
    assert labels[:3] == ["all int4", "all int8", "all fp16"], labels
    assert sum(label.endswith("int8 alone") for label in labels) == LINEARS, labels
    assert any("most sensitive fp16" in label for label in labels), labels
    by_id = _by_id(r)
    int4, int8, fp16 = (by_id[r["ends"][p]] for p in ("int4", "int8", "fp16"))
    # packed bytes of the 8 Linears (q, k, v, o 32x32; gate, up 96x32; down 32x96; lm_head 1024x32; no biases):
    # int4 half a byte per weight and per group of 32 a float32 scale and an int8 zero point (what torchao holds);
    # int8 a byte per weight and a scale and zero point per row; fp16 two bytes per weight
    n, rows = 4 * 32 * 32 + 3 * 96 * 32 + 1024 * 32, 4 * 32 + 2 * 96 + 32 + 1024
    assert fp16["bytes"] == 2 * n and int8["bytes"] == n + 5 * rows, (int8["bytes"], fp16["bytes"])
    assert int4["bytes"] == n // 2 + 5 * (n // 32), int4["bytes"]
    assert int4["bytes"] < int8["bytes"] < fp16["bytes"], (int4["bytes"], int8["bytes"], fp16["bytes"])
    assert any(line.startswith("chosen") or line.startswith("no candidate") for line in r["summary"]), r["summary"]


def test_front_is_non_dominated_and_holds_the_int4_end(searched: tuple[Path, dict[str, Any]]):
    _, r = searched
    objectives = [(o["key"], o["sense"]) for o in r["objectives"]]
    assert objectives == [("perplexity", "min"), ("bytes", "min")]
    cands = r["candidates"]
    front = set(r["front"])
    for i, c in enumerate(cands):
        beaten = pareto.dominated_by(cands, i, objectives)
        assert (not beaten) == (c["id"] in front) == c["onFront"], (c["label"], beaten)
    assert r["ends"]["int4"] in front  # the smallest
    if r["chosen"] is not None:
        chosen = _by_id(r)[r["chosen"]]
        assert chosen["perplexity"] <= r["perplexity"]["limit"] and chosen["id"] in front
        assert all(c["bytes"] >= chosen["bytes"] for c in cands if c["withinBudget"])


def test_int8_loses_less_perplexity_than_int4(searched: tuple[Path, dict[str, Any]]):
    _, r = searched
    by_id = _by_id(r)
    int4, int8, fp16 = (by_id[r["ends"][p]]["perplexity"] for p in ("int4", "int8", "fp16"))
    qat_float = r["perplexity"]["qatFloat"]
    # every candidate is the QAT-trained weights at some precision: int8 stays closer to them in float than int4
    # (QAT fine-tuning itself can move the perplexity either side of the FP32 model's)
    assert abs(int8 - qat_float) < abs(int4 - qat_float), (qat_float, int4, int8, fp16)
    # fp16 rounding is a small step from float
    assert abs(fp16 - qat_float) < abs(int4 - qat_float), (qat_float, int4, int8, fp16)
    # a probe raises one Linear to int8: never far above all int4 (the ranking's premise)
    for layer in r["layers"]:
        assert layer["probe"]["perplexity"] < int4 * 1.01, layer


def _with_overrides(config: Path, overrides: list[dict[str, Any]], name: str, steps: int) -> Path:
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    data["overrides"] = overrides + (data.get("overrides") or [])
    data["train"]["steps"] = steps
    path = config.with_name(name)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_suggested_overrides_select_the_assignment(searched: tuple[Path, dict[str, Any]]):
    config, r = searched
    expect = {"int4": ("8da4w", 32), "int8": ("8da8w", None)}
    for c in r["candidates"]:
        path = _with_overrides(config, c["overrides"], "picked.qat.yaml", 3)
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        qplan = torchao_flow.plan(Config(path=path, folder=path.parent, data=data))
        for row in c["assignment"]:
            choice = qplan.choose(row["module"], "linear")
            if row["precision"] in expect:
                assert choice.scheme is not None, (c["label"], row)
                assert (choice.scheme.name, choice.scheme.group_size) == expect[row["precision"]], (c["label"], row)
            else:
                assert choice.scheme is None and choice.precision == row["precision"], (c["label"], row)
        # the all-int4 end is the config as it is
        if c["label"] == "all int4":
            assert c["overrides"] == []
        for o in c["overrides"]:
            assert re.fullmatch(o["match"], re.sub(r"\\(.)", r"\1", o["match"])), o


def test_training_with_the_suggested_overrides_runs(kernel: Any, searched: tuple[Path, dict[str, Any]], validate: Any):
    config, r = searched
    # a candidate that keeps Linears fp16 (a precision override) and others int4 (the config's scheme)
    pick = next(c for c in r["candidates"] if c["counts"]["fp16"] and c["counts"]["int4"])
    path = _with_overrides(config, pick["overrides"], "mixed.qat.yaml", 3)
    train = kernel.request("qat/train", {"config": str(path)}, timeout=600)
    validate("QatTrainResult", train)
    assert train["flow"] == "torchao" and train["steps"] == 3
    floats = {row["module"] for row in pick["assignment"] if row["precision"] in ("fp16", "fp32")}
    assert {row["module"] for row in train.get("keptFloat", [])} == floats, (train.get("keptFloat"), pick)
    convert = kernel.request("qat/convert", {"config": str(path)}, timeout=600)
    counts = pick["counts"]
    parts = {f"{counts['int4']} linear 8da4w (group 32)", f"{counts['int8']} linear 8da8w (per channel)"}
    # the float ones: the Linears kept fp16 / fp32 and the token embedding
    parts = {p for p in parts if not p.startswith("0 ")} | {f"{counts['fp16'] + counts['fp32'] + 1} float"}
    assert set(convert["recipe"].removeprefix("torchao QAT: ").split(", ")) == parts, (convert["recipe"], pick)


def test_pt2e_config_asking_int4_is_refused(kernel: Any, searched: tuple[Path, dict[str, Any]]):
    config, _ = searched
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    data["flow"] = "pt2e"
    data.pop("torchao", None)
    data["qconfig"] = yaml.safe_load((REPO / "examples" / "digits" / "digits.qat.yaml").read_text())["qconfig"]
    path = config.with_name("pt2e.qat.yaml")
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    with pytest.raises(RpcError) as err:
        kernel.request("search/mixed-precision", {"config": str(path), "precisions": ["int4", "int8", "fp16"]})
    assert err.value.data["kind"] == "configInvalid" and err.value.data["path"] == "precisions", err.value.message
    assert "int4" in err.value.message


def test_cancel_ends_the_search_typed(kernel: Any, searched: tuple[Path, dict[str, Any]]):
    config, r = searched
    # the session's model again (reused), cancelled at its first probe
    request_id = kernel.request_async("search/mixed-precision", {"config": str(config)})
    kernel.wait_progress(request_id, timeout=300, where=lambda p: p["stage"] == "probe")
    kernel.notify("$/cancelRequest", {"id": request_id})
    response = kernel.wait_response(request_id, timeout=120)
    assert response["error"]["data"]["kind"] == "cancelled", response


def test_result_fixture_is_a_torchao_search(searched: tuple[Path, dict[str, Any]], validate: Any):
    """protocol/fixtures/rpc/MixedPrecisionSearchResult.torchao.json has this result's shape."""
    fixture = REPO / "protocol" / "fixtures" / "rpc" / "MixedPrecisionSearchResult.torchao.json"
    sample = json.loads(fixture.read_text(encoding="utf-8"))
    validate("TorchaoMixedPrecisionResult", sample)
    _, r = searched
    assert set(sample) == set(r)
