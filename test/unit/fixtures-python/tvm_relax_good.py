# expect:
"""Build a QDQ ONNX model with TVM Relax (TVM >= 0.20) and run it on the CPU."""
import numpy as np
import onnx
import tvm
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx


def build(path: str, shape=(1, 1, 8, 8), target: str = "llvm"):
    model = onnx.load(path)
    mod = from_onnx(model, shape_dict={"input": list(shape)})
    mod = relax.transform.DecomposeOpsForInference()(mod)
    ex = tvm.compile(mod, target=target)
    vm = relax.VirtualMachine(ex, tvm.cpu())
    data = np.random.rand(*shape).astype("float32")
    out = vm["main"](tvm.runtime.tensor(data))
    return out.numpy()
