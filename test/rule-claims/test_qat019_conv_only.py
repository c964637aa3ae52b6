"""QAT019: QATConfig on a model with convolutions and no Linear/Embedding changes nothing: no error, no warning,
the same modules and the same outputs before and after prepare (and convert)."""

import warnings

import torch
from torch import nn
from torchao.quantization import Int8DynamicActivationIntxWeightConfig, quantize_
from torchao.quantization.granularity import PerGroup
from torchao.quantization.qat import QATConfig


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, 3)
        self.bn = nn.BatchNorm2d(32)
        self.conv2 = nn.Conv2d(32, 32, 3)

    def forward(self, x):
        return self.conv2(torch.relu(self.bn(self.conv1(x))))


def test_convolutions_are_left_alone():
    model = ConvNet()
    x = torch.randn(2, 3, 16, 16)
    before = model(x)
    modules = [(n, type(m)) for n, m in model.named_modules()]
    base = Int8DynamicActivationIntxWeightConfig(weight_dtype=torch.int4, weight_granularity=PerGroup(32))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        quantize_(model, QATConfig(base, step="prepare"))
    assert not [w for w in caught if "QAT" in str(w.message) or "quantiz" in str(w.message).lower()]
    assert [(n, type(m)) for n, m in model.named_modules()] == modules
    assert torch.equal(model(x), before)
    quantize_(model, QATConfig(base, step="convert"))
    assert [(n, type(m)) for n, m in model.named_modules()] == modules
    assert torch.equal(model(x), before)
