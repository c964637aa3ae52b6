"""QAT002: torchao imposes no order between move_exported_model_to_eval and convert_pt2e (the converted models
are the same); a converted graph never moved to eval still runs dropout as in training. An eager convert()
in train mode gives the same int8 outputs as one in eval mode (so that is not reported)."""

import copy

import pytest
import torch
import torch.ao.quantization as tq
from conftest import ConvBnRelu
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.relu = nn.ReLU()
        self.drop = nn.Dropout(0.5)
        self.fc = nn.Linear(8 * 6 * 6, 4)

    def forward(self, x):
        return self.fc(self.drop(self.relu(self.conv(x)).flatten(1)))


@pytest.fixture(scope="module")
def prepared_qat():
    from torchao.quantization.pt2e.quantize_pt2e import prepare_qat_pt2e
    from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (
        X86InductorQuantizer,
        get_default_x86_inductor_quantization_config,
    )

    x = torch.randn(2, 3, 8, 8)
    exported = torch.export.export(Net(), (x,)).module()
    quantizer = X86InductorQuantizer().set_global(get_default_x86_inductor_quantization_config(is_qat=True))
    prepared = prepare_qat_pt2e(exported, quantizer)
    for _ in range(3):
        prepared(torch.randn(2, 3, 8, 8))
    return prepared


def test_eval_before_or_after_convert_gives_the_same_model(prepared_qat):
    from torchao.quantization.pt2e import move_exported_model_to_eval
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e

    prepared = prepared_qat
    before = copy.deepcopy(prepared)
    move_exported_model_to_eval(before)
    before = convert_pt2e(before)
    after = convert_pt2e(copy.deepcopy(prepared))
    move_exported_model_to_eval(after)
    x = torch.randn(2, 3, 8, 8)
    assert torch.equal(before(x), after(x))


def test_a_converted_graph_left_in_train_mode_runs_dropout(prepared_qat):
    from torchao.quantization.pt2e import move_exported_model_to_eval
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e

    converted = convert_pt2e(copy.deepcopy(prepared_qat))
    x = torch.randn(2, 3, 8, 8)
    assert not torch.equal(converted(x), converted(x)), "dropout is active: two calls differ"
    move_exported_model_to_eval(converted)
    assert torch.equal(converted(x), converted(x))


def test_eager_convert_in_train_mode_gives_the_same_int8_model():
    model = ConvBnRelu(dropout=True).train()
    model.qconfig = tq.get_default_qat_qconfig("x86")
    tq.fuse_modules_qat(model, [["conv", "bn", "relu"]], inplace=True)
    prepared = tq.prepare_qat(model)
    for _ in range(3):
        prepared(torch.randn(8, 3, 8, 8))
    in_eval = copy.deepcopy(prepared).eval()
    x = torch.randn(4, 3, 8, 8)
    assert torch.equal(tq.convert(in_eval)(x), tq.convert(copy.deepcopy(prepared))(x))
