# expect: QAT005 QAT005 QAT005 QAT005 QAT005 QAT005 QAT005
"""Compile an ONNX model with TVM the Relay way (TVM <= 0.19)."""
import onnx
import tvm
from tvm import relay
from tvm.contrib import graph_executor

onnx_model = onnx.load("model.onnx")
mod, params = relay.frontend.from_onnx(onnx_model, {"input": (1, 3, 224, 224)})
with tvm.transform.PassContext(opt_level=3):
    lib = relay.build(mod, target="llvm", params=params)
module = graph_executor.GraphModule(lib["default"](tvm.cpu()))
with relay.quantize.qconfig(calibrate_mode="global_scale", global_scale=8.0):
    qmod = relay.quantize.quantize(mod, params)
