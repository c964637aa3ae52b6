"""examples/cifar end to end through the kernel methods (in process): MobileNetV2 with 4-bit per-tensor
weights loses its accuracy in the depthwise convs; compare/layers and analyze/sensitivity point at them; the
per-channel override for those layers gets the accuracy back. Short schedule: FP32 pre-training of a few
epochs (cached in the copy's out/, as the example does) and a few QAT steps: the example's own schedule.
7 to 14 minutes measured on a 2-core machine under heavy load (analyze/sensitivity over 52 layers is most of it)."""

from __future__ import annotations

import re

import pytest
import yaml
from conftest import copy_cifar_pretrained

FP32_EPOCHS = 6
QAT_STEPS = 10
FIX = {
    "match": r"features\.1\.conv\.0|features\.([2-9]|1[0-7])\.conv\.3",
    "weight": {"observer": "MovingAveragePerChannelMinMaxObserver", "qscheme": "per_channel_symmetric", "ch_axis": 0},
}


def _depthwise(module: str) -> bool:
    return re.fullmatch(FIX["match"], module) is not None


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cifar") / "cifar"
    copy_cifar_pretrained(folder, FP32_EPOCHS)
    broken = folder / "mobilenetv2.qat.yaml"
    fixed = folder / "mobilenetv2-fixed.qat.yaml"
    data = yaml.safe_load(broken.read_text(encoding="utf-8"))
    data["train"]["steps"] = QAT_STEPS
    broken.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    data["overrides"] = [FIX]
    fixed.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return broken, fixed


def _run(method: str, params: dict) -> dict:
    from qat_kernel import methods

    return methods.call(method, params)


@pytest.fixture(scope="module")
def broken(example):
    config = str(example[0])
    train = _run("qat/train", {"config": config, "checkpoint": False})
    accuracy = _run("eval/accuracy", {"config": config})
    compare = _run("compare/layers", {"config": config})
    sensitivity = _run("analyze/sensitivity", {"config": config, "samples": 128})
    return train, accuracy, compare, sensitivity


@pytest.fixture(scope="module")
def fixed(example, broken):
    config = str(example[1])
    _run("qat/train", {"config": config, "checkpoint": False})
    return _run("eval/accuracy", {"config": config})


def test_per_tensor_weights_lose_accuracy(broken):
    _, accuracy, _, _ = broken
    print("broken:", {k: accuracy[k] for k in ("fp32", "qatFloat", "fakeQuant", "int8")})
    assert accuracy["fakeQuant"] < accuracy["fp32"] - 0.3
    assert accuracy["int8"] < accuracy["fp32"] - 0.3


def test_compare_names_the_depthwise_convs(broken):
    _, _, compare, _ = broken
    worst = sorted(compare["layers"], key=lambda layer: layer["local"]["sqnr"])[:5]
    print("worst local SQNR:", [(layer["module"], round(layer["local"]["sqnr"], 1)) for layer in worst])
    # Measured: 3 of the 5 worst are depthwise convs, one of them first or second (the others: the
    # pointwise projections right after them, also 4-bit per tensor; which of the two is first varies with
    # the CPU the FP32 model was pre-trained on: AVX2 and AVX512 sum in different orders, 0.1 vs 0.2 dB).
    assert sum(_depthwise(layer["module"]) for layer in worst) >= 3
    assert any(_depthwise(layer["module"]) for layer in worst[:2])


def test_sensitivity_ranks_depthwise_convs_among_the_worst(broken):
    _, _, _, sensitivity = broken
    top = sensitivity["layers"][:5]
    print("most sensitive:", [(row["module"], round(row["quantizedAlone"]["sqnr"], 1)) for row in top])
    # Measured: quantized alone, the last 1x1 conv and the classifier rank first (4-bit per tensor hurts
    # them too); late depthwise convs follow: two of the top 5 on an AMD Zen 4, one on an Intel Xeon with AMX
    # (where the stem is fifth). Sensitivity does not single the depthwise convs out.
    assert sum(_depthwise(row["module"]) for row in top) >= 1


def test_per_channel_override_recovers_accuracy(broken, fixed):
    _, before, _, _ = broken
    print("fixed:", {k: fixed[k] for k in ("fp32", "qatFloat", "fakeQuant", "int8")})
    assert fixed["fp32"] == before["fp32"]  # same cached FP32 model
    # Per-channel weights on the depthwise convs alone: most of the loss back (pointwise convs stay
    # 4-bit per tensor and keep a few points). The converted INT8 model scores below the fake-quant one by a
    # CPU-dependent margin: within 0.15 of FP32 on an AMD Zen 4, 0.53-0.61 against fake-quant 0.75 on an Intel
    # Xeon with AMX (PyTorch's x86 quantized kernels there), so INT8 is held to most of its loss back.
    assert fixed["fakeQuant"] >= fixed["fp32"] - 0.1
    assert fixed["int8"] - before["int8"] >= 0.5 * (fixed["fp32"] - before["int8"])
    assert fixed["int8"] > before["int8"] + 0.3
