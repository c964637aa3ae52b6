# expect: QAT008@26 QAT012@24
"""Eager-mode int8: the state_dict is saved (fine), a full pickle too (loads, but forward then fails), and the
ONNX export goes through the TorchScript exporter at opset 13 (fine) and through the default exporter (fails)."""
import torch
import torch.ao.quantization as tq

from model_eager import QuantNet


def int8_model(calibration):
    model = QuantNet().eval()
    model.qconfig = tq.get_default_qconfig("x86")
    tq.fuse_modules(model, [["conv1", "bn1", "relu1"]], inplace=True)
    prepared = tq.prepare(model)
    for x in calibration:
        prepared(x)
    return tq.convert(prepared)


def save(calibration):
    int8 = int8_model(calibration)
    example = (torch.randn(1, 1, 8, 8),)
    torch.save(int8.state_dict(), "int8_state.pt")
    torch.save(int8, "int8_full.pt")
    torch.onnx.export(int8, example, "int8_ts.onnx", opset_version=13, dynamo=False)
    torch.onnx.export(int8, example, "int8_dynamo.onnx", opset_version=17)
