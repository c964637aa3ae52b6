# expect: QAT005@7 QAT005@8 QAT005@11 QAT005@12 QAT005@13 QAT005@15 QAT005@16
"""A TVM deployment script from the Relay days (before 0.20): from_onnx with params, relay.build,
graph_executor, and Relay's own quantizer."""
import numpy as np
import onnx
import tvm
from tvm import relay
from tvm.contrib import graph_executor

onnx_model = onnx.load("model.onnx")
mod, params = relay.frontend.from_onnx(onnx_model, {"input": (1, 3, 224, 224)})
with relay.quantize.qconfig(calibrate_mode="global_scale", global_scale=8.0):
    mod = relay.quantize.quantize(mod, params)
with tvm.transform.PassContext(opt_level=3):
    lib = relay.build(mod, target="llvm", params=params)
module = graph_executor.GraphModule(lib["default"](tvm.cpu()))
module.set_input("input", np.random.rand(1, 3, 224, 224).astype("float32"))
module.run()
print(module.get_output(0).numpy().shape)
