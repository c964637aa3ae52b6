"""QAT012: torch.save of an eager-converted model pickles and loads, then the forward of its quantized convs
fails (a Linear-only model survives); the state_dict loads into a model prepared and converted the same way."""

import io

import pytest
import torch
import torch.ao.quantization as tq
from conftest import ConvBnRelu
from torch import nn


def _int8():
    model = ConvBnRelu().train()
    model.qconfig = tq.get_default_qat_qconfig("x86")
    tq.fuse_modules_qat(model, [["conv", "bn", "relu"]], inplace=True)
    prepared = tq.prepare_qat(model)
    prepared(torch.randn(4, 3, 8, 8))
    return tq.convert(prepared.eval())


def test_pickled_int8_model_fails_in_forward():
    buf = io.BytesIO()
    torch.save(_int8(), buf)
    buf.seek(0)
    loaded = torch.load(buf, weights_only=False)
    with pytest.raises(AttributeError, match="_backward_hooks"):
        loaded(torch.randn(2, 3, 8, 8))


class LinearOnly(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = tq.QuantStub()
        self.fc = nn.Linear(4, 2)
        self.dequant = tq.DeQuantStub()

    def forward(self, x):
        return self.dequant(self.fc(self.quant(x)))


def test_a_linear_only_int8_model_survives_pickling():
    model = LinearOnly().eval()
    model.qconfig = tq.get_default_qconfig("x86")
    prepared = tq.prepare(model)
    prepared(torch.randn(4, 4))
    int8 = tq.convert(prepared)
    buf = io.BytesIO()
    torch.save(int8, buf)
    buf.seek(0)
    x = torch.randn(2, 4)
    assert torch.equal(torch.load(buf, weights_only=False)(x), int8(x))


def test_state_dict_round_trip_works():
    int8 = _int8()
    buf = io.BytesIO()
    torch.save(int8.state_dict(), buf)
    buf.seek(0)
    again = _int8()
    again.load_state_dict(torch.load(buf, weights_only=True))
    x = torch.randn(2, 3, 8, 8)
    assert torch.equal(again(x), int8(x))
