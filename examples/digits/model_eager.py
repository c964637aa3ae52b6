"""The digits CNN ready for eager-mode (legacy torch.ao) quantization: QuantStub before and
DeQuantStub after the float model, as in qat_train.py. Model entry of eager.qat.yaml (flow: eager);
QAT Studio fuses conv1+bn1+relu1, conv2+bn2+relu2 and fc1+relu3 itself."""
import torch
from torch import nn
from torch.ao.quantization import DeQuantStub, QuantStub

from model import DigitsNet


class QuantDigitsNet(DigitsNet):
    def __init__(self):
        super().__init__()
        self.quant = QuantStub()
        self.dequant = DeQuantStub()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dequant(super().forward(self.quant(x)))


def make_model() -> nn.Module:
    torch.manual_seed(0)
    return QuantDigitsNet()
