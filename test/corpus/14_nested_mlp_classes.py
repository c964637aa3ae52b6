# expect: none
"""Classes nested in a model class, as some repositories write their heads: an MLP sharing one ReLU across
Linear layers (fine for X86InductorQuantizer) and a conv tower with a ReLU per conv."""
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_qat_pt2e


class Detector(nn.Module):
    class Tower(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.convs = nn.ModuleList([nn.Conv2d(c, c, 3, padding=1) for _ in range(3)])
            self.acts = nn.ModuleList([nn.ReLU() for _ in range(3)])

        def forward(self, x):
            for conv, act in zip(self.convs, self.acts):
                x = act(conv(x))
            return x

    class MLP(nn.Module):
        def __init__(self, dims):
            super().__init__()
            self.fc1 = nn.Linear(dims[0], dims[1])
            self.fc2 = nn.Linear(dims[1], dims[2])
            self.fc3 = nn.Linear(dims[2], dims[3])
            self.act = nn.ReLU()

        def forward(self, x):
            x = self.act(self.fc1(x))
            x = self.act(self.fc2(x))
            return self.fc3(x)

    def __init__(self):
        super().__init__()
        self.tower = Detector.Tower(16)
        self.head = Detector.MLP([16, 64, 64, 4])

    def forward(self, x):
        return self.head(self.tower(x).mean((2, 3)))


def prepare(quantizer):
    model = Detector()
    m = torch.export.export(model, (torch.randn(2, 16, 8, 8),)).module()
    return prepare_qat_pt2e(m, quantizer)
