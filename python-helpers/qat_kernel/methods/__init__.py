"""Method table: RPC method name -> handler(ctx) returning the result object.

Handler modules import only the standard library at load time; heavy packages are imported inside
the handlers, so the kernel starts fast."""

from qat_kernel.methods import (
    bench_run,
    build_inductor,
    build_ort,
    build_tvm,
    compare_layers,
    deploy_c,
    eval_accuracy,
    export_onnx,
    graph_export,
    histograms,
    kernel_info,
    qat_convert,
    qat_train,
    sensitivity,
    verify_parity,
)

METHODS = {
    "kernel/info": kernel_info.run,
    "compare/layers": compare_layers.run,
    "qat/train": qat_train.run,
    "eval/accuracy": eval_accuracy.run,
    "export/onnx": export_onnx.run,
    "analyze/sensitivity": sensitivity.run,
    "build/tvm": build_tvm.run,
    "build/ort": build_ort.run,
    "build/inductor": build_inductor.run,
    "verify/parity": verify_parity.run,
    "deploy/c-artifact": deploy_c.run,
    "bench/run": bench_run.run,
    "graph/export": graph_export.run,
    "qat/convert": qat_convert.run,
    "analyze/histograms": histograms.run,
}
