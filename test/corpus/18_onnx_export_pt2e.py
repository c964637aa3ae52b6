# expect: none
"""Export a PT2E-quantized model to QDQ ONNX (the dynamo exporter, opset 18), check it in ONNX Runtime."""
import numpy as np
import onnxruntime as ort
import torch
from torchao.quantization.pt2e import move_exported_model_to_eval
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (
    X86InductorQuantizer,
    get_default_x86_inductor_quantization_config,
)

from model import make_model


def export_qdq(path="out/model.qdq.onnx"):
    model = make_model().eval()
    example = (torch.randn(2, 1, 8, 8),)
    m = torch.export.export(model, example, dynamic_shapes={"x": {0: torch.export.Dim("batch")}}).module()
    m = prepare_pt2e(m, X86InductorQuantizer().set_global(get_default_x86_inductor_quantization_config()))
    m(*example)
    m = convert_pt2e(m)
    move_exported_model_to_eval(m)
    torch.onnx.export(m, example, path, opset_version=18, input_names=["x"], dynamic_axes={"x": {0: "batch"}})
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    got = sess.run(None, {"x": example[0].numpy()})[0]
    want = m(*example).detach().numpy()
    return float(np.abs(got - want).max())
