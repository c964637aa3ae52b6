"""QAT008: ONNX export of int8 models. An eager-converted model fails the default (dynamo) exporter at any opset;
with dynamo=False, opset < 13 raises for per-channel DequantizeLinear and 13 works. A PT2E-converted model
asked for opset < 13 is written at opset 18."""

import pytest
import torch
import torch.ao.quantization as tq
from conftest import pt2e_quantize
from torch import nn

onnx = pytest.importorskip("onnx")


class Eager(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = tq.QuantStub()
        self.conv = nn.Conv2d(3, 4, 3)
        self.dequant = tq.DeQuantStub()

    def forward(self, x):
        return self.dequant(self.conv(self.quant(x)))


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)

    def forward(self, x):
        return torch.relu(self.conv(x))


X = torch.randn(2, 3, 8, 8)


@pytest.fixture(scope="module")
def eager_int8():
    model = Eager().eval()
    model.qconfig = tq.get_default_qconfig("x86")
    prepared = tq.prepare(model)
    prepared(X)
    return tq.convert(prepared)


@pytest.mark.parametrize("opset", [11, 17])
def test_eager_int8_fails_the_dynamo_exporter_at_any_opset(eager_int8, tmp_path, opset):
    from torch.onnx._internal.exporter._errors import TorchExportError

    with pytest.raises(TorchExportError):
        torch.onnx.export(eager_int8, (X,), tmp_path / "m.onnx", opset_version=opset)


def test_eager_int8_below_opset_13_fails_torchscript_export(eager_int8, tmp_path):
    with pytest.raises(Exception, match="ONNX export of DequantizeLinear in opset 12"):
        torch.onnx.export(eager_int8, (X,), tmp_path / "m.onnx", opset_version=12, dynamo=False)
    torch.onnx.export(eager_int8, (X,), tmp_path / "m13.onnx", opset_version=13, dynamo=False)
    assert onnx.load(tmp_path / "m13.onnx").opset_import[0].version == 13


def test_pt2e_int8_below_opset_13_comes_out_at_opset_18(tmp_path):
    converted = pt2e_quantize(Small(), X)
    torch.onnx.export(converted, (X,), tmp_path / "q.onnx", opset_version=12)
    versions = [o.version for o in onnx.load(tmp_path / "q.onnx").opset_import if o.domain in ("", "ai.onnx")]
    assert versions == [18]
