"""QAT004: eager/FX QAT entry points warn that torch.ao.quantization is deprecated and will be removed."""

import warnings

import torch.ao.quantization as tq
from conftest import ConvBnRelu


def test_prepare_qat_warns_deprecated():
    model = ConvBnRelu().train()
    model.qconfig = tq.get_default_qat_qconfig("x86")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tq.prepare_qat(model)
    messages = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
    assert any("torch.ao.quantization is deprecated and will be removed" in m for m in messages), messages
