"""QAT001: eager prepare_qat asserts on an eval-mode model; prepare_qat_fx and quantize_qat accept one."""

import pytest
import torch
import torch.ao.quantization as tq
from conftest import ConvBnRelu
from torch.ao.quantization.quantize_fx import prepare_qat_fx


def test_prepare_qat_refuses_an_eval_model():
    model = ConvBnRelu().eval()
    model.qconfig = tq.get_default_qat_qconfig("x86")
    with pytest.raises(AssertionError, match="prepare_qat only works on models in training mode"):
        tq.prepare_qat(model)


def test_prepare_qat_takes_a_train_model():
    model = ConvBnRelu().train()
    model.qconfig = tq.get_default_qat_qconfig("x86")
    assert isinstance(tq.prepare_qat(model).conv.weight_fake_quant, tq.FakeQuantizeBase)


def test_prepare_qat_fx_and_quantize_qat_accept_eval_models():
    example = torch.randn(2, 3, 8, 8)
    prepare_qat_fx(ConvBnRelu().eval(), tq.get_default_qat_qconfig_mapping("x86"), (example,))
    model = ConvBnRelu().eval()
    model.qconfig = tq.get_default_qat_qconfig("x86")
    tq.quantize_qat(model, lambda m, _: m(example), [None])
