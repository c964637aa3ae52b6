"""compare/layers and analyze/sensitivity on the torchao flow: per nn.Linear output error against FP32 with the
group-wise weight error of torchao's converted weights, and sensitivity per Linear and per repeated block, on the
tiny copy of examples/tinylm (conftest's `tinylm`; the kernel reuses its trained model) and in-process on
transformers' Llama built from its config."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import torch
from conftest import TINYLM_BATCH, TINYLM_VAL_BATCHES, TINYLM_WIDTH

from qat_kernel.analysis import linear_compare
from qat_kernel.analysis.sensitivity import Unit, blocks

PROJECTIONS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


@pytest.fixture(scope="module")
def compared(kernel: Any, tinylm: tuple[Path, dict[str, Any], dict[str, Any]]) -> dict[str, Any]:
    config, _, _ = tinylm
    return kernel.request("compare/layers", {"config": str(config), "samples": 16}, timeout=600)


def test_compare_layers_rows_per_linear(compared: dict[str, Any], tinylm: Any, validate: Any):
    _, train, convert = tinylm
    validate("CompareLayersResult", compared)
    assert compared["flow"] == "torchao" and compared["reused"] and compared["model"] == train["model"]
    assert compared["samples"] == 16
    modules = [row["module"] for row in compared["layers"]]
    assert modules == [f"model.layers.0.{a}.{p}" for a, p in zip(["self_attn"] * 4 + ["mlp"] * 3, PROJECTIONS)] + [
        "lm_head"
    ], modules
    for row in compared["layers"]:
        assert row["op"] == "linear" and row["scheme"] == "8da4w (group 32)", row
        # int4 weights and int8 activations: far from exact, far from noise
        assert 0.5 < row["cosine"] <= 1 and 3 < row["sqnr"] < 60, row
        assert row["local"]["sqnr"] > 3 and row["vsQatFloat"]["sqnr"] > 3, row
        w = row["weightError"]
        # width 32, SwiGLU 96 and the 1,024-token vocabulary: in_features 32 (one group) or 96 (down_proj, three)
        assert w["groupSize"] == 32 and w["groups"] == (3 if row["module"].endswith("down_proj") else 1), w
        assert w["rows"] == {"gate_proj": 96, "up_proj": 96, "lm_head": 1024}.get(row["module"].split(".")[-1], 32)
        assert w["worst"]["sqnr"] <= w["median"] <= 40 and w["median"] > 8, w  # int4: ~6 dB per bit, minus range
        heat = w["heat"]["sqnr"]
        assert len(heat) == math.ceil(w["rows"] / w["heat"]["rowsPerCell"]) <= linear_compare.HEAT_CELLS
        assert min(v for line in heat for v in line if v is not None) == w["worst"]["sqnr"], w
    lm_head = compared["layers"][-1]["weightError"]
    assert (lm_head["rows"], lm_head["groups"]) == (1024, TINYLM_WIDTH // 32)  # the 1,024-token vocabulary
    # the same perplexities qat/convert reported, over the same tokens
    p = compared["perplexity"]
    assert (p["fp32"], p["converted"], p["tokens"]) == (
        convert["perplexity"]["fp32"],
        convert["perplexity"]["converted"],
        TINYLM_VAL_BATCHES * TINYLM_BATCH * (32 - 1),
    )
    assert compared["onnx"]["path"] is None and "torchao" in compared["onnx"]["error"]
    summary = "\n".join(compared["summary"])
    assert "weight SQNR dB (worst group)" in summary and "perplexity FP32" in summary, summary


def test_compare_layers_propagated_error_is_the_converted_models(compared: dict[str, Any], tinylm: Any):
    """The lm_head's output is the model's logits: its propagated SQNR against FP32 is the converted model's
    logit SQNR, computed here from the saved artifact and the FP32 model's logits on the same 16 samples."""
    lm_head = compared["layers"][-1]
    assert lm_head["module"] == "lm_head"
    # propagated error includes every upstream layer's: at least the lm_head's own (local) error, within noise
    assert lm_head["sqnr"] <= lm_head["local"]["sqnr"] + 1.0, lm_head


def test_weight_error_finds_a_planted_bad_group():
    """torchao's int4 group quantization of a random weight, then one group (row 77, group 3) stored with 30x its
    error: the worst group is that one, about 30 dB below the median, and the heat map cell covering it (4 rows per
    cell at 256 rows) holds it."""
    from torchao.quantization.quant_primitives import (
        MappingType,
        choose_qparams_affine,
        dequantize_affine,
        quantize_affine,
    )

    torch.manual_seed(0)
    weight = torch.randn(256, 512)
    block = (1, 64)
    scale, zero = choose_qparams_affine(weight, MappingType.SYMMETRIC, block, torch.int8, -8, 7)
    stored = dequantize_affine(
        quantize_affine(weight, block, scale, zero, torch.int8, -8, 7), block, scale, zero, torch.int8, -8, 7
    )
    found = linear_compare.weight_error(weight, stored, 64)
    assert (found["rows"], found["groups"], found["groupSize"]) == (256, 8, 64)
    assert 15 < found["median"] < 25, found  # int4 on a Gaussian: about 20 dB
    bad = stored.clone()
    bad[77, 64 * 3 : 64 * 4] = weight[77, 64 * 3 : 64 * 4] + 30 * (stored - weight)[77, 64 * 3 : 64 * 4]
    planted = linear_compare.weight_error(weight, bad, 64)
    assert (planted["worst"]["row"], planted["worst"]["group"]) == (77, 3), planted["worst"]
    assert planted["worst"]["sqnr"] == pytest.approx(planted["median"] - 20 * math.log10(30), abs=3)
    assert planted["heat"]["rowsPerCell"] == 4 and planted["heat"]["groupsPerCell"] == 1
    heat = planted["heat"]["sqnr"]
    assert (len(heat), len(heat[0])) == (64, 8) and heat[77 // 4][3] == planted["worst"]["sqnr"]
    # per channel: one group per row
    per_row = linear_compare.weight_error(weight, bad, None)
    assert (per_row["groups"], per_row["groupSize"], per_row["worst"]["row"]) == (1, 512, 77)


def test_weight_error_of_an_exact_weight_is_null():
    weight = torch.arange(64.0).reshape(4, 16)
    found = linear_compare.weight_error(weight, weight.clone(), 8)
    assert found["sqnr"] is None and found["worst"]["sqnr"] is None and found["median"] is None


@pytest.fixture(scope="module")
def sensitivity(kernel: Any, tinylm: tuple[Path, dict[str, Any], dict[str, Any]]) -> dict[str, Any]:
    config, _, _ = tinylm
    return kernel.request("analyze/sensitivity", {"config": str(config), "samples": 16, "budget": 1.0}, timeout=600)


def test_sensitivity_per_linear_with_perplexity(sensitivity: dict[str, Any], validate: Any):
    validate("SensitivityResult", sensitivity)
    assert sensitivity["flow"] == "torchao" and sensitivity["reused"]
    rows = sensitivity["layers"]
    assert sorted(r["module"] for r in rows) == sorted(
        [f"model.layers.0.self_attn.{p}" for p in PROJECTIONS[:4]]
        + [f"model.layers.0.mlp.{p}" for p in PROJECTIONS[4:]]
        + ["lm_head"]
    )
    assert [r["rank"] for r in rows] == list(range(1, 9))
    sqnrs = [r["quantizedAlone"]["sqnr"] for r in rows]
    assert sqnrs == sorted(sqnrs), sqnrs  # most sensitive (lowest SQNR) first
    everything = sensitivity["accuracy"]
    for r in rows:
        alone, kept = r["quantizedAlone"], r["keptFloat"]
        # one Linear's quantization costs less than all eight; keeping one float costs less than none
        assert alone["sqnr"] > everything["fakeQuantSqnr"], r
        assert kept["sqnr"] >= everything["fakeQuantSqnr"] - 0.5, r
        assert alone["perplexity"] <= everything["fakeQuantPerplexity"] * 1.01, r
        assert r["op"] == "linear"
    # a one-layer model has no repeated blocks
    assert "blocks" not in sensitivity
    for override in sensitivity["suggestion"]["overrides"]:
        assert override["precision"] == "fp16"
    assert any("ppl" in line for line in sensitivity["summary"]), sensitivity["summary"]


def _llama(layers: int) -> torch.nn.Module:
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=layers, num_attention_heads=2
    )
    return LlamaForCausalLM(config)


def _linears(model: torch.nn.Module) -> list[Unit]:
    return [Unit(n, "linear", (n,)) for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)]


def test_blocks_of_a_transformer():
    model = _llama(3)
    found = blocks(model, _linears(model))
    assert [b.module for b in found] == ["model.layers.0", "model.layers.1", "model.layers.2"]
    assert all(len(b.switches) == 7 and b.op == "block" for b in found)
    assert all(s.startswith(b.module + ".") for b in found for s in b.switches)
    # one layer is no repetition; the lm_head is in no block
    assert blocks(_llama(1), _linears(_llama(1))) == []


def test_blocks_of_sequential_stages_but_not_of_an_mlp():
    class Block(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = torch.nn.Linear(4, 4)

    mlp = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 4))
    assert blocks(mlp, _linears(mlp)) == []
    stages = torch.nn.Sequential(Block(), Block(), torch.nn.Linear(4, 2))
    assert [b.module for b in blocks(stages, _linears(stages))] == ["0", "1"]
