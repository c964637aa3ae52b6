"""Method table: RPC method name -> handler(ctx) returning the result object.

Handler modules import only the standard library at load time; heavy packages are imported inside
the handlers, so the kernel starts fast."""
from . import build_tvm, compare_layers, eval_accuracy, export_onnx, kernel_info, qat_train, sensitivity
from . import graph_export

METHODS = {
    "kernel/info": kernel_info.run,
    "compare/layers": compare_layers.run,
    "qat/train": qat_train.run,
    "eval/accuracy": eval_accuracy.run,
    "export/onnx": export_onnx.run,
    "analyze/sensitivity": sensitivity.run,
    "build/tvm": build_tvm.run,
    "graph/export": graph_export.run,
}
