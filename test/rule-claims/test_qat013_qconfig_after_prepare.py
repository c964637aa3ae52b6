"""QAT013: a qconfig set after prepare/prepare_qat changes nothing: the observers were inserted from the old one."""

import pytest
import torch
import torch.ao.quantization as tq
from conftest import ConvBnRelu


@pytest.mark.parametrize("qat", [True, False], ids=["prepare_qat", "prepare"])
def test_qconfig_after_prepare_has_no_effect(qat):
    model = ConvBnRelu().train() if qat else ConvBnRelu().eval()
    model.qconfig = tq.get_default_qat_qconfig("x86") if qat else tq.get_default_qconfig("x86")
    prepared = (tq.prepare_qat if qat else tq.prepare)(model)
    before = {name: type(m).__name__ for name, m in prepared.named_modules()}
    prepared.qconfig = tq.QConfig(activation=tq.default_fake_quant, weight=tq.default_weight_fake_quant)
    prepared.conv.qconfig = tq.get_default_qat_qconfig("qnnpack")
    prepared(torch.randn(2, 3, 8, 8))
    assert {name: type(m).__name__ for name, m in prepared.named_modules()} == before
