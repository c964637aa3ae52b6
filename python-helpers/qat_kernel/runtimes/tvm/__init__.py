"""TVM (Relax, 0.27) build of a QDQ ONNX model with real int8 kernels, parity and latency.

Public API (plain functions, JSON-serialisable dict results; `progress(stage, message, fraction)`
and `check_cancelled()` callbacks where a call has stages):
  build_tvm(onnx_path, target, out_dir, fold_int8=True, progress=None, check_cancelled=None, batch=None,
            schedule=True, fp16=None)   fp16: layers run in float16 (mixed.py)
  run_tvm(artifact, inputs) -> np.ndarray;  load_tvm(artifact) -> callable
  verify_parity(onnx_path, artifact, inputs, reference_int8_outputs=None)
  bench_latency(fn, inputs, warmup, runs);  compare_backends(onnx_path, work_dir, inputs_by_batch, ...)
  resolve_target(target), PRESETS, ToolchainMissing, elf_machine(path)
  fold_qdq(mod, provenance=None), count_ops(func), strip_qdq(onnx_path, out_path)
  convert_fp16_layers(model, match), pattern_matcher(patterns), widen_accumulators(mod)
"""

from __future__ import annotations

from qat_kernel.runtimes.tvm.bench import compare_backends
from qat_kernel.runtimes.tvm.build import build_tvm, import_onnx, tvm_version
from qat_kernel.runtimes.tvm.errors import ToolchainMissing, TvmBuildError
from qat_kernel.runtimes.tvm.fold import count_ops, fold_qdq
from qat_kernel.runtimes.tvm.mixed import convert_fp16_layers, pattern_matcher, widen_accumulators
from qat_kernel.runtimes.tvm.run import (
    bench_latency,
    compare,
    load_tvm,
    output_step,
    run_ort,
    run_tvm,
    strip_qdq,
    verify_parity,
)
from qat_kernel.runtimes.tvm.targets import PRESETS, elf_machine, host_arch, resolve_target

__all__ = [
    "PRESETS",
    "ToolchainMissing",
    "TvmBuildError",
    "bench_latency",
    "build_tvm",
    "compare",
    "compare_backends",
    "convert_fp16_layers",
    "count_ops",
    "elf_machine",
    "fold_qdq",
    "host_arch",
    "import_onnx",
    "load_tvm",
    "output_step",
    "resolve_target",
    "run_ort",
    "run_tvm",
    "strip_qdq",
    "tvm_version",
    "pattern_matcher",
    "verify_parity",
    "widen_accumulators",
]
