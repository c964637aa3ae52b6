# expect: QAT004@14 QAT013@15 QAT013@32
"""Per-layer qconfigs set too late: after prepare_qat the fake-quant modules are in place, so the override on
the classifier changes nothing. A second model sets it before preparing."""
import torch
import torch.ao.quantization as tq

from model_eager import QuantNet


def late():
    model = QuantNet()
    model.train()
    model.qconfig = tq.get_default_qat_qconfig("x86")
    model = tq.prepare_qat(model)
    model.fc2.qconfig = None
    return model


def early():
    model = QuantNet()
    model.train()
    model.qconfig = tq.get_default_qat_qconfig("x86")
    model.fc2.qconfig = None
    model = tq.prepare_qat(model)
    return model


def in_place():
    model = QuantNet().train()
    model.qconfig = tq.get_default_qat_qconfig("x86")
    tq.prepare_qat(model, inplace=True)
    model.qconfig = tq.get_default_qat_qconfig("qnnpack")
    return model
