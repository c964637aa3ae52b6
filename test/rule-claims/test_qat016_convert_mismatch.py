"""QAT016: converting with another base config than the prepare used raises nothing; the int model is the
convert config's PTQ of the trained weights, not what the fake-quantized training simulated."""

import pytest
import torch
from torch import nn
from torchao.quantization import Int8DynamicActivationIntxWeightConfig, IntxWeightOnlyConfig, quantize_
from torchao.quantization.granularity import PerGroup
from torchao.quantization.qat import QATConfig


def mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 8))


PREPARED = Int8DynamicActivationIntxWeightConfig(weight_dtype=torch.int4, weight_granularity=PerGroup(32))


@pytest.mark.parametrize(
    "convert",
    [
        Int8DynamicActivationIntxWeightConfig(weight_dtype=torch.int4, weight_granularity=PerGroup(16)),
        IntxWeightOnlyConfig(weight_dtype=torch.int4, granularity=PerGroup(32)),
    ],
    ids=["other_group_size", "other_config"],
)
def test_mismatched_convert_is_not_what_was_trained(convert):
    x = torch.randn(4, 64)
    model = mlp()
    quantize_(model, QATConfig(PREPARED, step="prepare"))
    simulated = model(x)
    quantize_(model, QATConfig(convert, step="convert"))  # no error, no warning needed
    converted = model(x)
    ptq = mlp()
    quantize_(ptq, convert)
    assert torch.equal(converted, ptq(x))  # the convert config's own PTQ of the weights
    assert not torch.allclose(converted, simulated, atol=1e-4)

    # the same base config in both steps gives the int model the training saw
    matched = mlp()
    quantize_(matched, QATConfig(PREPARED, step="prepare"))
    simulated = matched(x)
    quantize_(matched, QATConfig(PREPARED, step="convert"))
    assert torch.allclose(matched(x), simulated, atol=1e-6)
