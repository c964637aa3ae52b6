"""QCFG017: flow: torchao with a weight group size that does not divide a quantized Linear's in_features. The base
configs the kernel builds for each scheme (8da4w, int4-weight-only, and 8da8w / int8-weight-only with a group
size) make quantize_(model, QATConfig(base, step="prepare")) raise ValueError "in_features (K) % group_size (N)
must be == 0"; per_channel (PerAxis(0)) takes any in_features, and a Linear the filter leaves out (the config's
exclude) is not checked."""

import re

import pytest
import torch
from torch import nn
from torchao.quantization import Int8DynamicActivationIntxWeightConfig, IntxWeightOnlyConfig, quantize_
from torchao.quantization.granularity import PerAxis, PerGroup
from torchao.quantization.qat import FakeQuantizedLinear, QATConfig

SCHEMES = {
    "8da4w": lambda g: Int8DynamicActivationIntxWeightConfig(weight_dtype=torch.int4, weight_granularity=g),
    "8da8w": lambda g: Int8DynamicActivationIntxWeightConfig(weight_dtype=torch.int8, weight_granularity=g),
    "int4-weight-only": lambda g: IntxWeightOnlyConfig(weight_dtype=torch.int4, granularity=g),
    "int8-weight-only": lambda g: IntxWeightOnlyConfig(weight_dtype=torch.int8, granularity=g),
}


def _model() -> nn.Module:
    return nn.Sequential(nn.Linear(64, 48), nn.ReLU(), nn.Linear(48, 10))  # in_features 64 and 48


@pytest.mark.parametrize("scheme", list(SCHEMES))
def test_group_size_that_does_not_divide_raises(scheme):
    with pytest.raises(ValueError, match=re.escape("in_features (48) % group_size (32) must be == 0")):
        quantize_(_model(), QATConfig(SCHEMES[scheme](PerGroup(32)), step="prepare"))


@pytest.mark.parametrize("scheme", list(SCHEMES))
def test_dividing_group_size_per_channel_and_excluded_linears_prepare(scheme):
    for granularity in (PerGroup(16), PerAxis(0)):
        model = _model()
        quantize_(model, QATConfig(SCHEMES[scheme](granularity), step="prepare"))
        assert isinstance(model[0], FakeQuantizedLinear) and isinstance(model[2], FakeQuantizedLinear)
        assert model(torch.randn(2, 64)).shape == (2, 10)
    model = _model()
    quantize_(model, QATConfig(SCHEMES[scheme](PerGroup(32)), step="prepare"), filter_fn=lambda m, fqn: fqn == "0")
    assert isinstance(model[0], FakeQuantizedLinear) and type(model[2]) is nn.Linear
