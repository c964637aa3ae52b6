# expect: QAT009@35
"""A model whose fuse_model() fuses conv+bn+relu with fuse_modules, called on a freshly built model (train
mode): torch raises "Fusion only for eval!". The evaluation path fuses after eval() and is fine."""
import torch
import torch.nn as nn
from torch.ao.quantization import DeQuantStub, QuantStub, convert, fuse_modules, get_default_qconfig, prepare


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = QuantStub()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu1 = nn.ReLU()
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(8)
        self.relu2 = nn.ReLU()
        self.fc = nn.Linear(8 * 8 * 8, 10)
        self.dequant = DeQuantStub()

    def forward(self, x):
        x = self.quant(x)
        x = self.relu1(self.bn1(self.conv1(x)))
        x = self.relu2(self.bn2(self.conv2(x)))
        return self.dequant(self.fc(torch.flatten(x, 1)))

    def fuse_model(self):
        fuse_modules(self, [["conv1", "bn1", "relu1"], ["conv2", "bn2", "relu2"]], inplace=True)


def ptq_broken(calibration):
    model = Net()
    model.load_state_dict(torch.load("float.pt", weights_only=True))
    model.fuse_model()
    model.eval()
    model.qconfig = get_default_qconfig("x86")
    prepared = prepare(model)
    for x in calibration:
        prepared(x)
    return convert(prepared)


def ptq(calibration):
    model = Net()
    model.load_state_dict(torch.load("float.pt", weights_only=True))
    model.eval()
    model.fuse_model()
    model.qconfig = get_default_qconfig("x86")
    prepared = prepare(model)
    for x in calibration:
        prepared(x)
    return convert(prepared)
