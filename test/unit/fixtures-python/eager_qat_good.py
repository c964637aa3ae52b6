# expect: QAT004
"""Eager-mode QAT done right (the style of examples/digits/qat_train.py): fuse in train mode with
fuse_modules_qat, qconfig before prepare_qat, eval before convert, save the state_dict."""
import copy
from pathlib import Path

import torch
from torch import nn
from torch.ao.quantization import (DeQuantStub, QuantStub, convert, fuse_modules_qat,
                                   get_default_qat_qconfig, prepare_qat)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = QuantStub()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.relu1 = nn.ReLU()
        self.conv2 = nn.Conv2d(16, 16, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(16)
        self.relu2 = nn.ReLU()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, 10)
        self.dequant = DeQuantStub()

    def forward(self, x):
        x = self.quant(x)
        x = self.relu1(self.bn1(self.conv1(x)))
        x = self.relu2(self.bn2(self.conv2(x)))
        x = torch.flatten(self.pool(x), 1)
        return self.dequant(self.fc(x))


def train_one_epoch(model, batches, opt):
    model.train()
    for x, y in batches:
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()


def main(batches):
    model = Net()
    model.train()
    torch.backends.quantized.engine = "x86"
    model.qconfig = get_default_qat_qconfig("x86")
    model = fuse_modules_qat(model, [["conv1", "bn1", "relu1"], ["conv2", "bn2", "relu2"]])
    model = prepare_qat(model)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    for epoch in range(3):
        train_one_epoch(model, batches, opt)
        if epoch == 1:
            model.apply(torch.ao.quantization.disable_observer)
            model.apply(torch.ao.nn.intrinsic.qat.freeze_bn_stats)
    model.eval()
    int8 = convert(copy.deepcopy(model))
    Path("out").mkdir(exist_ok=True)
    torch.save(int8.state_dict(), "out/int8.pt")
    example = torch.randn(1, 1, 8, 8)
    torch.onnx.export(model, (example,), "out/fake_quant.onnx", opset_version=17)
    return int8
