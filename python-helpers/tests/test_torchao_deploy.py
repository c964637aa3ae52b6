"""deploy/torchao on the tiny copy of examples/tinylm the torchao tests share (conftest's `tinylm`: one layer of
width 32, 8da4w group 32): the model deployed to PyTorch's CPU int kernels computes what the torchao converted model
computes when deployed in the trained format, with no warning; another format warns, naming the modules and both
formats, and its perplexity is measured. Figures are checked present and positive, never for speed (any x86 CPU:
AVX2 only, AVX512-VNNI, AMX)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import TINYLM_BATCH as BATCH
from conftest import TINYLM_BLOCK as BLOCK
from conftest import TINYLM_VAL_BATCHES as VAL_BATCHES

LINEARS = 8  # q, k, v, o, gate, up, down and the lm_head

FAST = {"newTokens": 4, "promptTokens": 8, "runs": 5}


@pytest.fixture(scope="module")
def config(tinylm: tuple[Path, dict[str, Any], dict[str, Any]]) -> Path:
    """The session's tiny tinylm (conftest), trained once for the torchao tests."""
    return tinylm[0]


@pytest.fixture(scope="module")
def matched(kernel: Any, config: Path) -> dict[str, Any]:
    return kernel.request("deploy/torchao", {"config": str(config), **FAST}, timeout=900)


@pytest.fixture(scope="module")
def int8_weight_only(kernel: Any, config: Path, matched: dict[str, Any]) -> dict[str, Any]:
    params = {"config": str(config), "format": {"scheme": "int8-weight-only"}, **FAST}
    return kernel.request("deploy/torchao", params, timeout=900)


def test_trained_format_computes_what_the_converted_model_computes(matched: dict[str, Any], validate: Any):
    validate("DeployTorchaoResult", matched)
    assert matched["matchesTrained"] and not matched["mismatches"] and "warnings" not in matched, matched
    assert len(matched["modules"]) == LINEARS
    for m in matched["modules"]:
        assert (
            m["trained"]
            == m["deployed"]
            == {
                "scheme": "8da4w",
                "bits": 4,
                "groupSize": 32,
                "dynamicActivations": True,
            }
        ), m
        assert not m["requantized"] and "_dyn_quant_matmul_4bit" in m["kernel"], m
    p = matched["perplexity"]
    assert p["tokens"] == VAL_BATCHES * BATCH * (BLOCK - 1)
    # the same int8 x int4 products and scales; the op quantizes activations as x * (1/scale), torchao as x / scale,
    # so a value on a rounding edge can land one int8 step apart, and the float sums run in another order. Measured
    # here: perplexity equal to 2e-7 relative, logits to 2.4e-4 (the 2-layer example: 2e-5 and 0.054)
    assert p["deployed"] == pytest.approx(p["converted"], rel=1e-3), p
    assert matched["maxLogitDiff"] < 0.1, matched["maxLogitDiff"]
    assert not any(line.startswith("Warning") for line in matched["summary"]), matched["summary"]


def test_figures_are_present_and_positive(matched: dict[str, Any]):
    rows = {r["name"]: r for r in matched["rows"]}
    assert list(rows) == ["torch-fp32", "torchao-converted", "deployed"]
    for row in rows.values():
        assert row["weightBytes"] > 0 and row["rssDeltaBytes"] >= 0, row
        for k in ("b1", "b16"):
            assert row["decode"][k]["msPerToken"] > 0 and row["decode"][k]["tokensPerS"] > 0, row
    for table in (matched["decode"], matched["prefill"]):
        assert [r["name"] for r in table["rows"]] == list(rows)
        assert all(r["latency"][k]["medianMs"] > 0 for r in table["rows"] for k in ("b1", "b16"))
        assert table["rounds"] == 5 and table["runs"] == 5
    # the quantized Linears' weights stored as int4 (the embedding and norms stay float): fewer bytes than FP32
    assert rows["deployed"]["weightBytes"] < rows["torch-fp32"]["weightBytes"], rows
    assert matched["prompt"] == {"samples": 16, "tokens": 8} and matched["newTokens"] == 4
    assert any("KV cache" in n for n in matched["notes"]), matched["notes"]
    assert any(line.startswith("PyTorch FP32 (eager)") for line in matched["summary"]), matched["summary"]


def test_another_format_warns_with_modules_formats_and_its_perplexity(
    int8_weight_only: dict[str, Any], matched: dict[str, Any], validate: Any
):
    r = int8_weight_only
    validate("DeployTorchaoResult", r)
    assert r["model"] == matched["model"] and r["reused"]
    assert not r["matchesTrained"] and len(r["mismatches"]) == 1, r["mismatches"]
    mismatch = r["mismatches"][0]
    assert mismatch["trained"]["scheme"] == "8da4w" and mismatch["deployed"] == {
        "scheme": "int8-weight-only",
        "bits": 8,
        "groupSize": None,
        "dynamicActivations": False,
    }
    assert len(mismatch["modules"]) == LINEARS and all(m["requantized"] for m in r["modules"])
    (warning,) = r["warnings"]
    assert "int8-weight-only (per channel)" in warning and "8da4w (group 32)" in warning, warning
    assert "model.layers.0.self_attn.q_proj" in warning and "perplexity converted" in warning, warning
    # the cost is measured: a different model from the converted one, its perplexity finite and positive
    p = r["perplexity"]
    assert p["converted"] == matched["perplexity"]["converted"]
    assert 1 < p["deployed"] < 1e4 and p["deployed"] != pytest.approx(p["converted"], rel=1e-6), p
    assert any(line.startswith("Warning: deployed format int8-weight-only") for line in r["summary"]), r["summary"]


def test_a_group_the_kernel_cannot_run_is_unsupported_naming_the_module(kernel: Any, config: Path, matched: Any):
    from rpc_client import RpcError

    with pytest.raises(RpcError) as err:
        kernel.request(
            "deploy/torchao",
            {"config": str(config), "format": {"scheme": "int4-weight-only", "groupSize": 16}, **FAST},
            timeout=300,
        )
    assert err.value.data["kind"] == "unsupported", err.value.data
    assert "model.layers.0.self_attn.q_proj" in err.value.message and "32, 64, 128, 256" in err.value.message
