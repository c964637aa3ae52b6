"""QAT018: a weight group size that does not divide a Linear's in_features. The Intx configs make quantize_
raise ValueError at prepare; Int4WeightOnlyConfig prepares and the first forward raises RuntimeError."""

import re

import pytest
import torch
from torch import nn
from torchao.quantization import (
    Int4WeightOnlyConfig,
    Int8DynamicActivationIntxWeightConfig,
    IntxWeightOnlyConfig,
    quantize_,
)
from torchao.quantization.granularity import PerGroup
from torchao.quantization.qat import FakeQuantizedLinear, IntxFakeQuantizeConfig, QATConfig


@pytest.mark.parametrize(
    "qat_config",
    [
        QATConfig(Int8DynamicActivationIntxWeightConfig(weight_dtype=torch.int4, weight_granularity=PerGroup(32))),
        QATConfig(IntxWeightOnlyConfig(weight_dtype=torch.int4, granularity=PerGroup(32)), step="prepare"),
        QATConfig(weight_config=IntxFakeQuantizeConfig(torch.int4, group_size=32), step="prepare"),
    ],
    ids=["int8_dyn_intx", "intx_weight_only", "intx_fake_quantize_config"],
)
def test_intx_prepare_raises(qat_config):
    model = nn.Sequential(nn.Linear(96, 10), nn.ReLU(), nn.Linear(10, 4))
    with pytest.raises(ValueError, match=re.escape("in_features (10) % group_size (32) must be == 0")):
        quantize_(model, qat_config)
    # a group size that divides every in_features works
    ok = nn.Sequential(nn.Linear(96, 10), nn.ReLU(), nn.Linear(10, 4))
    quantize_(ok, QATConfig(weight_config=IntxFakeQuantizeConfig(torch.int4, group_size=2)))
    assert isinstance(ok[0], FakeQuantizedLinear) and isinstance(ok[2], FakeQuantizedLinear)
    assert ok(torch.randn(2, 96)).shape == (2, 4)


def test_int4_weight_only_prepares_then_forward_fails():
    model = nn.Sequential(nn.Linear(100, 8))
    quantize_(model, QATConfig(Int4WeightOnlyConfig(group_size=32), step="prepare"))
    assert isinstance(model[0], FakeQuantizedLinear)
    with pytest.raises(RuntimeError, match=re.escape("shape '[8, -1, 32]' is invalid for input of size 800")):
        model(torch.randn(2, 100))
