"""Shared pieces for the rule-claim tests: quiet torch warnings, tiny models, the PT2E x86 flow."""

import json
import pathlib
import warnings

import pytest
import torch
from torch import nn

ROOT = pathlib.Path(__file__).resolve().parents[2]
KNOWLEDGE = ROOT / "server" / "knowledge"


def knowledge(name: str):
    return json.loads((KNOWLEDGE / name).read_text())


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.manual_seed(0)
        yield


def pt2e_quantize(model: nn.Module, example: torch.Tensor, *, qat: bool = False, strict: bool = False):
    """export -> prepare(_qat)_pt2e with X86InductorQuantizer -> one calibration batch -> convert_pt2e."""
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e, prepare_qat_pt2e
    from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (
        X86InductorQuantizer,
        get_default_x86_inductor_quantization_config,
    )

    if not qat:
        model.eval()
    exported = torch.export.export(model, (example,), strict=strict).module()
    quantizer = X86InductorQuantizer().set_global(get_default_x86_inductor_quantization_config(is_qat=qat))
    prepared = (prepare_qat_pt2e if qat else prepare_pt2e)(exported, quantizer)
    prepared(example)
    return convert_pt2e(prepared)


class ConvBnRelu(nn.Module):
    """An eager-mode QAT model: QuantStub, conv + bn + relu, linear, DeQuantStub."""

    def __init__(self, dropout: bool = False):
        super().__init__()
        import torch.ao.quantization as tq

        self.quant = tq.QuantStub()
        self.conv = nn.Conv2d(3, 8, 3)
        self.bn = nn.BatchNorm2d(8)
        self.relu = nn.ReLU()
        self.drop = nn.Dropout(0.5) if dropout else nn.Identity()
        self.fc = nn.Linear(8 * 6 * 6, 4)
        self.dequant = tq.DeQuantStub()

    def forward(self, x):
        x = self.relu(self.bn(self.conv(self.quant(x))))
        return self.dequant(self.fc(self.drop(x.flatten(1))))
