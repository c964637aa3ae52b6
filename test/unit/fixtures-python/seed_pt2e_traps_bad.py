# expect: QAT010 QAT011 QAT007
"""PT2E QAT tripping over the traps met with torch 2.13 / torchao 0.18."""
import torch
from torch import nn
from torch.ao.quantization import FakeQuantize, MovingAverageMinMaxObserver
from torchao.quantization.pt2e.quantize_pt2e import prepare_qat_pt2e


class BasicBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(c)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + x)


act_fq = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=300, dtype=torch.quint8)


def prepare(model, quantizer):
    batch = torch.export.Dim("batch")
    example = torch.randn(1, 64, 56, 56)
    exported = torch.export.export(model, (example,), dynamic_shapes={"x": {0: batch}}).module()
    return prepare_qat_pt2e(exported, quantizer)
