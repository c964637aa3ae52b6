# expect:
"""ONNX export of a PT2E-converted model (dynamo exporter, QDQ), checked with ONNX Runtime."""
import numpy as np
import onnxruntime as ort
import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e


def export(prepared, example: torch.Tensor, path: str = "model.qdq.onnx"):
    int8 = convert_pt2e(prepared)
    torch.onnx.export(int8, (example,), path, opset_version=18, dynamo=True,
                      input_names=["input"], output_names=["logits"])
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    got = session.run(None, {"input": example.numpy()})[0]
    np.testing.assert_allclose(got, int8(example).detach().numpy(), atol=1e-4)
    return path


def export_float(model, example):
    model.eval()
    torch.onnx.export(model, (example,), "float.onnx", opset_version=11, dynamo=False)
