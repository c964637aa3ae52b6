# expect: QAT004@46
"""pytest checks of eager QAT preconditions: the failing calls live inside pytest.raises, where they are
expected to raise (nothing to report), and what happens inside does not change the model's mode after."""
import pytest
import torch
import torch.ao.quantization as tq
from torch import nn


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = tq.QuantStub()
        self.conv = nn.Conv2d(1, 4, 3)
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.dequant = tq.DeQuantStub()

    def forward(self, x):
        return self.dequant(self.relu(self.bn(self.conv(self.quant(x)))))


def test_prepare_qat_needs_train_mode():
    model = Small().eval()
    model.qconfig = tq.get_default_qat_qconfig("x86")
    with pytest.raises(AssertionError, match="training mode"):
        tq.prepare_qat(model)


def test_fusion_needs_eval_mode():
    model = Small()
    with pytest.raises(AssertionError, match="Fusion only for eval"):
        tq.fuse_modules(model, [["conv", "bn", "relu"]])
    model.eval()
    fused = tq.fuse_modules(model, [["conv", "bn", "relu"]])
    assert isinstance(fused.conv, torch.ao.nn.intrinsic.ConvReLU2d)


def test_prepare_after_a_refused_one():
    model = Small()
    model.qconfig = tq.get_default_qat_qconfig("x86")
    with pytest.raises(AssertionError):
        model.train(False)
        tq.prepare_qat(model)
    model.train()
    prepared = tq.prepare_qat(model)
    assert prepared.training
