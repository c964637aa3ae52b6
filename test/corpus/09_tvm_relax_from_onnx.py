# expect: none
"""Compile a QDQ ONNX export with TVM Relax and compare it with ONNX Runtime, in the style of TVM's Relax
tutorials (0.27: tvm.compile, relax.VirtualMachine, targets as dicts, tvm.runtime.tensor)."""
import numpy as np
import onnx
import onnxruntime as ort
import tvm
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx


def build(path, shape, target="llvm"):
    model = onnx.load(path)
    mod = from_onnx(model, shape_dict={"x": shape}, keep_params_in_input=False)
    mod = relax.transform.DecomposeOpsForInference()(mod)
    mod = relax.get_pipeline("zero")(mod)
    ex = tvm.compile(mod, target={"kind": target})
    return relax.VirtualMachine(ex, tvm.cpu())


def compare(path, shape):
    x = np.random.rand(*shape).astype("float32")
    vm = build(path, shape)
    out = vm["main"](tvm.runtime.tensor(x)).numpy()
    ref = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    return float(np.abs(out - ref).max())


if __name__ == "__main__":
    print(compare("out/model.qdq.onnx", (1, 1, 8, 8)))
