"""QAT010: one activation module called twice where a call follows a conv makes X86InductorQuantizer fail under
the default (non-strict) torch.export with "Input partition has more than one output node"; strict=True passes,
and so do an activation shared after Linear layers, one that follows no conv, GELU, and separate modules."""

import pytest
import torch
from conftest import pt2e_quantize
from torch import nn

FAILS = "Input partition has more than one output node"


class ConvShared(nn.Module):
    def __init__(self, act=None):
        super().__init__()
        self.c1 = nn.Conv2d(8, 8, 3, padding=1)
        self.c2 = nn.Conv2d(8, 8, 3, padding=1)
        self.act = act or nn.ReLU()

    def forward(self, x):
        return self.act(self.c2(self.act(self.c1(x))))


class BasicBlock(nn.Module):
    """torchvision's BasicBlock: conv-bn-relu, conv-bn, add, the same relu."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(8, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + x)


class ConvAddShared(nn.Module):
    """relu(conv + x) twice: the conv + add + relu pattern."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(8, 8, 3, padding=1)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.relu(self.conv(x) + x) + x)


class LinearShared(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(8, 8)
        self.l2 = nn.Linear(8, 8)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.l2(self.relu(self.l1(x))))


class NoConvBefore(nn.Module):
    """The shared ReLU only sees inputs, never a conv output."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(8, 8, 3, padding=1)
        self.c2 = nn.Conv2d(8, 8, 3, padding=1)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.c1(self.relu(x)) + self.c2(self.relu(x * 2))


class Separate(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(8, 8, 3, padding=1)
        self.c2 = nn.Conv2d(8, 8, 3, padding=1)
        self.r1 = nn.ReLU()
        self.r2 = nn.ReLU()

    def forward(self, x):
        return self.r2(self.c2(self.r1(self.c1(x))))


IMG = torch.randn(2, 8, 8, 8)


@pytest.mark.parametrize("qat", [False, True], ids=["ptq", "qat"])
@pytest.mark.parametrize(
    "make", [ConvShared, BasicBlock, ConvAddShared, lambda: ConvShared(nn.ReLU6()), lambda: ConvShared(nn.Hardswish())]
)
def test_shared_activation_after_a_conv_fails_non_strict(make, qat):
    with pytest.raises(ValueError, match=FAILS):
        pt2e_quantize(make(), IMG, qat=qat)


@pytest.mark.parametrize("make", [ConvShared, BasicBlock])
def test_strict_export_passes(make):
    pt2e_quantize(make(), IMG, strict=True)


@pytest.mark.parametrize(
    "make, example",
    [
        (LinearShared, torch.randn(2, 8)),
        (NoConvBefore, IMG),
        (lambda: ConvShared(nn.GELU()), IMG),
        (Separate, IMG),
    ],
    ids=["linear", "no-conv-before", "gelu", "separate"],
)
def test_these_quantize_fine(make, example):
    pt2e_quantize(make(), example, qat=True)
