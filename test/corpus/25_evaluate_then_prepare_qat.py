# expect: QAT001@28 QAT004@28
"""A QAT script that measures the float model first: evaluate() puts the model in eval mode, and the
prepare_qat that follows without a train() asserts. The retry after train() is fine."""
import torch
import torch.ao.quantization as tq

from data import loaders
from model_eager import QuantNet


def evaluate(model, loader):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
            total += len(y)
    return correct / total


def main():
    train, val = loaders()
    model = QuantNet()
    model.load_state_dict(torch.load("float.pt", weights_only=True))
    print("float accuracy", evaluate(model, val))
    model.qconfig = tq.get_default_qat_qconfig("x86")
    try:
        model = tq.prepare_qat(model)
    except AssertionError:
        model.train()
        model = tq.prepare_qat(model)
    return model
