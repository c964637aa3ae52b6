"""Eager-mode QAT in the style of many existing scripts (QuantStub/DeQuantStub, fuse, prepare_qat,
convert). QAT Studio's language server checks the train/eval order of these calls while you edit.
Run: python qat_train.py"""
from pathlib import Path

import torch
from torch import nn
from torch.ao.quantization import (DeQuantStub, QuantStub, convert, fuse_modules_qat,
                                   get_default_qat_qconfig, prepare_qat)

from data import loaders
from model import DigitsNet


class QuantDigitsNet(DigitsNet):
    def __init__(self):
        super().__init__()
        self.quant = QuantStub()
        self.dequant = DeQuantStub()

    def forward(self, x):
        return self.dequant(super().forward(self.quant(x)))


def accuracy(model, batches):
    correct = total = 0
    with torch.no_grad():
        for x, y in batches:
            correct += (model(x).argmax(1) == y).sum().item()
            total += len(y)
    return correct / total


def main():
    torch.manual_seed(0)
    train, val = loaders()
    model = QuantDigitsNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.train()
    for _ in range(3):
        for x, y in train:
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()

    torch.backends.quantized.engine = "x86"
    model.qconfig = get_default_qat_qconfig("x86")
    model = fuse_modules_qat(model, [["conv1", "bn1", "relu1"], ["conv2", "bn2", "relu2"], ["fc1", "relu3"]])
    model.train()
    model = prepare_qat(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    for x, y in train:
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

    model.eval()
    int8 = convert(model)
    print(f"INT8 accuracy: {accuracy(int8, val):.4f}")
    # Save the state_dict: a pickled converted eager model loads but fails in forward.
    Path("out").mkdir(exist_ok=True)
    torch.save(int8.state_dict(), "out/digits_int8_eager.pt")


if __name__ == "__main__":
    main()
