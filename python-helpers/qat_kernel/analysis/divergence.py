"""Where two stages of one model part ways: the first layer, in graph order, whose *local* error between the
stages (the later stage's layer fed the earlier stage's input there) is more than rounding, and what is
known to cause it.

Stages (STAGES): the FP32 model, the QAT model with fake quantization on, the converted PyTorch INT8 model,
the QDQ ONNX model in ONNX Runtime, the portable C runner and the QDQ model built with TVM's int8 fold. The pairs
bisected (PAIRS) are those expected to compute the same numbers: fake-quant vs INT8 (the same quantization,
simulated vs integer kernels), INT8 vs ONNX Runtime, the C runner and TVM (the same integer model in two
runtimes); FP32 vs fake-quant is the quantization error itself, which compare/layers explains per layer, and is
listed propagated only.

A quantized output is judged in its own quantization steps: two runtimes on one grid differ by whole steps
and one step is a rounding tie (round half to even vs away from zero, a bias rounded to int32); more than
ROUNDING_STEPS is a divergence. A float output (a last layer's logits) diverges below FLOAT_SQNR_DB."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

STAGES = ("fp32", "fakeQuant", "int8", "ort", "c", "tvm")
LABELS = {
    "fp32": "FP32",
    "fakeQuant": "fake-quant",
    "int8": "PyTorch INT8",
    "ort": "ONNX Runtime",
    "c": "C runner",
    "tvm": "TVM",
}
PAIRS = (("fakeQuant", "int8"), ("int8", "ort"), ("int8", "c"), ("int8", "tvm"))
# Stages whose int8 kernels sum u8 x s8 pairs in int16 (vpmaddubsw) on an x86 CPU without VNNI or AMX. Not TVM:
# its fold's kernels accumulate u8 x s8 products in int32 (tests/test_tvm_stage.py: a layer that saturates in
# ONNX Runtime on such a CPU is exact in TVM).
SATURATING = ("int8", "ort")
PROPAGATED_ONLY = (("fp32", "fakeQuant"),)
ROUNDING_STEPS = 1.5
# Stages that add a layer's bias to the int32 accumulator as round(bias / (input scale × weight scale)): ONNX
# Runtime's QLinearConv/QGemm (its QDQ fusion quantizes a float bias so). PyTorch INT8 (x86/fbgemm), the TVM fold
# and the C runner add the float bias to the dequantized sums.
INTEGER_BIAS = ("ort",)
FLOAT_SQNR_DB = 30.0


def pair_key(a: str, b: str) -> str:
    return f"{a}:{b}"


def pair_label(key: str) -> str:
    a, b = key.split(":")
    return f"{LABELS[a]} → {LABELS[b]}"


@dataclass
class BiasRounding:
    """The most a bias rounded to int32 at the accumulator's scale moves a layer's output, over its channels."""

    steps: float  # |bias - rounded bias| in output steps, at the worst channel
    channel: int
    accumulator_steps: float  # that channel's accumulator step (input scale × weight scale) in output steps
    weight_scale: float


def bias_rounding(
    bias: Sequence[float], input_scale: float, weight_scales: Sequence[float], output_scale: float
) -> BiasRounding | None:
    """What rounding `bias` to int32 at input_scale × weight_scale (per channel, or one scale for all) costs in
    output steps at the worst channel; None when the numbers do not fit (no bias, scales of another length)."""
    if not bias or output_scale <= 0 or input_scale <= 0 or len(weight_scales) not in (1, len(bias)):
        return None
    found: BiasRounding | None = None
    for channel, b in enumerate(bias):
        acc = input_scale * weight_scales[channel if len(weight_scales) > 1 else 0]
        if acc <= 0 or not math.isfinite(b):
            continue
        units = b / acc
        error = abs(units - round(units)) * acc / output_scale
        if found is None or error > found.steps:
            found = BiasRounding(
                error, channel, acc / output_scale, weight_scales[channel if len(weight_scales) > 1 else 0]
            )
    return found


@dataclass
class LayerFacts:
    """What the causes below are read from, per layer (None where a stage does not know it)."""

    input_scale: dict[str, float]  # stage -> the scale its input quantization uses
    output_scale: dict[str, float]  # stage -> the scale its output quantization uses
    weight_scale: dict[str, list[float]]  # stage -> the weight's scales (one per channel, or one)
    activation_levels: int | None  # quant_max - quant_min + 1 of the layer's input
    weight_levels: int | None  # of its weight
    saturating_cpu: bool  # x86 without VNNI / AMX (runtimes.cpu.saturating_int8)
    bias: BiasRounding | None = None  # the bias rounded to PyTorch INT8's accumulator scale
    kept_float: dict[str, str] = field(default_factory=dict)  # stage -> why it computes this layer in float


def diverged(local: dict[str, float] | None, steps: float | None) -> bool:
    """Whether one layer's local comparison is more than rounding."""
    if local is None:
        return False
    if steps is not None:
        return steps > ROUNDING_STEPS
    return local["sqnr"] < FLOAT_SQNR_DB


def severity(local: dict[str, float] | None, steps: float | None) -> float:
    """A sort key: larger is worse (steps where the output is quantized, else dB under the float floor)."""
    if local is None:
        return float("-inf")
    if steps is not None:
        return steps
    return (FLOAT_SQNR_DB - local["sqnr"]) / 6.02  # about one bit per 6 dB, to rank beside steps


def _relative(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or not max(abs(a), abs(b)):
        return None
    return abs(a - b) / max(abs(a), abs(b))


def _relative_all(a: list[float] | None, b: list[float] | None) -> float | None:
    if a is None or b is None or len(a) != len(b) or not a:
        return None
    return max(_relative(x, y) or 0.0 for x, y in zip(a, b))


def cause(pair: tuple[str, str], facts: LayerFacts, steps: float | None) -> str:
    """The likely cause of a divergence at one layer between `pair`'s stages, from what is known to cause one;
    says so when none matched."""
    a, b = pair
    rel = _relative_all(facts.weight_scale.get(a), facts.weight_scale.get(b))
    if rel is not None and rel > 1e-4:
        return (
            f"the weight quantization differs: {LABELS[b]}'s weight scales are up to {rel * 100:.1f} % away from "
            f"{LABELS[a]}'s: the model runs on another grid than it was trained on. torch's fused fake quantizer "
            "(FusedMovingAvgObsFakeQuantize) computes symmetric scales with another formula than the observer that "
            "convert reads; QAT Studio trains symmetric schemes with FakeQuantize, which reads the observer: retrain "
            "(in your own QAT code, wrap symmetric observers in FakeQuantize)"
        )
    for where, scales in (("output", facts.output_scale), ("input", facts.input_scale)):
        rel = _relative(scales.get(a), scales.get(b))
        if rel is not None and rel > 1e-4:
            return (
                f"the {where} quantization differs: {LABELS[b]} uses scale {scales[b]:.6g} where "
                f"{LABELS[a]} uses {scales[a]:.6g}; the two models were not made from the same quantized model "
                "(an edited or stale export): export again from this model"
            )
    saturating = (
        facts.saturating_cpu
        and b in SATURATING
        and (facts.activation_levels or 0) > 128
        and (facts.weight_levels or 0) > 128
    )
    bias = facts.bias
    if bias is not None and b in INTEGER_BIAS and steps is not None and 0.5 <= bias.steps and steps <= bias.steps + 1:
        return (
            f"{LABELS[b]} adds the bias as int32 at the accumulator's scale (input scale × weight scale), which is "
            f"{bias.accumulator_steps:.1f} output steps at channel {bias.channel}: rounding the bias there moves that "
            f"channel's outputs by up to {bias.steps:.1f} steps, where {LABELS[a]} adds the float bias. The weight "
            f"scale there ({bias.weight_scale:.3g}) is coarse against the output's: finer weights for this layer "
            "(8-bit, or a narrower weight range) shrink the accumulator step; the integer runtime has no float bias"
        )
    if saturating:
        return (
            "this CPU has no int8 dot-product instruction (VNNI or AMX): the int8 kernel sums u8 × s8 pairs in "
            "int16 (vpmaddubsw), which saturates at full 8-bit ranges; give the layer 7-bit activations "
            "(quant_max: 127) or weights in [-64, 63], or deploy on a CPU with VNNI"
        )
    if b in facts.kept_float:
        return (
            f"{LABELS[b]} computes this layer in float32, not in int8: {facts.kept_float[b]}. Its output is "
            f"rounded from float sums where {LABELS[a]} rounds an integer accumulator; see the build report's float "
            "islands (build/tvm) for what keeps it float"
        )
    if steps is not None and steps <= 3:
        return (
            f"a few output steps ({steps:.1f}): rounding that compounds inside the layer (requantization of the "
            "int32 accumulator, a bias rounded to the accumulator's scale)"
        )
    return f"no known cause matched: {LABELS[b]} computes this layer differently from {LABELS[a]}"


def bisect(rows: list[dict[str, Any]], facts: dict[str, LayerFacts], pair: tuple[str, str]) -> dict[str, Any] | None:
    """The first row (graph order) whose local comparison for `pair` diverged, with its cause; None when every
    layer agrees to rounding. `facts`: module -> LayerFacts."""
    key = pair_key(*pair)
    for index, row in enumerate(rows):
        compared = row.get("pairs", {}).get(key)
        if not compared:
            continue
        local, steps = compared.get("local"), compared.get("localSteps")
        if diverged(local, steps):
            assert local is not None
            found = {
                "pair": key,
                "index": index,
                "module": row["module"],
                "op": row["op"],
                "localSteps": steps,
                "localSqnr": local["sqnr"],
                "cause": cause(pair, facts[row["module"]], steps),
            }
            if row.get("source"):
                found["source"] = row["source"]
            return found
    return None


def worst(rows: list[dict[str, Any]], pair: tuple[str, str]) -> dict[str, Any] | None:
    """The row whose local comparison for `pair` is worst ({module, localSteps, localSqnr}), None without any."""
    key = pair_key(*pair)
    scored = [
        (severity(c.get("local"), c.get("localSteps")), row, c)
        for row in rows
        if (c := row.get("pairs", {}).get(key)) and c.get("local")
    ]
    if not scored:
        return None
    _, row, c = max(scored, key=lambda s: s[0])
    return {"module": row["module"], "localSteps": c.get("localSteps"), "localSqnr": c["local"]["sqnr"]}
