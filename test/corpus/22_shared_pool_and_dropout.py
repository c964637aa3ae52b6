# expect: none
"""A CNN that reuses one MaxPool2d and one Dropout module across stages (they take no part in
X86InductorQuantizer's fused patterns) and one ReLU per conv."""
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 16, 3, padding=1)
        self.r1 = nn.ReLU()
        self.c2 = nn.Conv2d(16, 32, 3, padding=1)
        self.r2 = nn.ReLU()
        self.pool = nn.MaxPool2d(2)
        self.drop = nn.Dropout(0.2)
        self.fc = nn.Linear(32 * 8 * 8, 10)

    def forward(self, x):
        x = self.pool(self.r1(self.c1(x)))
        x = self.drop(x)
        x = self.pool(self.r2(self.c2(x)))
        x = self.drop(x)
        return self.fc(torch.flatten(x, 1))


def prepare(quantizer):
    m = torch.export.export(CNN().eval(), (torch.randn(2, 3, 32, 32),)).module()
    return prepare_pt2e(m, quantizer)
