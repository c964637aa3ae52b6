"""compare_backends: TVM INT8 (our fold) vs TVM FP32 vs ONNX Runtime on one QDQ model, same inputs,
batch 1 and a larger batch. PyTorch FP32/INT8 timings are the caller's (bench/run).

Rows:
  tvm-int8        the QDQ model with our Q/DQ fold (integer conv/matmul)
  tvm-qdq-fp32    the QDQ model as the importer leaves it (Q/DQ lowered to fp32 math)
  tvm-fp32        strip_qdq's FP32 twin (same weights, no quantization)
  ort-int8        ONNX Runtime CPU EP on the QDQ model (ORT fuses it to QLinearConv/QGemm...)
  ort-fp32        ONNX Runtime on the FP32 twin
All are timed numpy-in/numpy-out (TVM includes its tensor copy in and out)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from qat_kernel.runtimes.bench import bench_latency
from qat_kernel.runtimes.tvm.build import build_tvm
from qat_kernel.runtimes.tvm.run import load_tvm, ort_session, strip_qdq

ROWS = ("tvm-int8", "tvm-qdq-fp32", "tvm-fp32", "ort-int8", "ort-fp32")


def compare_backends(
    onnx_path,
    work_dir,
    inputs_by_batch: dict,
    target="x86-64",
    warmup: int = 20,
    runs: int = 200,
    rows=ROWS,
    progress: Callable | None = None,
    check_cancelled: Callable | None = None,
) -> dict:
    """inputs_by_batch: {batch size: float32 array}. Returns {"rows": [{name, artifact, bytes,
    build_s?, ops_per_precision?, latency: {"<batch>": bench_latency result}}],
    "fastest": {"<batch>": row name}} (batch keys are strings, as they come back from JSON)."""
    progress = progress or (lambda *a: None)
    check_cancelled = check_cancelled or (lambda: None)
    work_dir = Path(work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    fp32_onnx = None
    if "tvm-fp32" in rows or "ort-fp32" in rows:
        fp32_onnx = strip_qdq(onnx_path, work_dir / "fp32.onnx")
    results = []
    for i, name in enumerate(rows):
        progress("bench", f"Building and timing {name}", i / len(rows))
        check_cancelled()
        row: dict = {"name": name}
        if name.startswith("tvm-"):
            src = fp32_onnx if name == "tvm-fp32" else onnx_path
            report = build_tvm(src, target, work_dir / name, fold_int8=(name == "tvm-int8"))
            fn = load_tvm(report["artifact"])
            row.update(
                artifact=report["artifact"],
                bytes=report["artifact_bytes"],
                build_s=report["build_time_s"],
                ops_per_precision=report["ops_per_precision"],
            )
        else:
            src = fp32_onnx if name == "ort-fp32" else onnx_path
            sess = ort_session(src)
            in_name = sess.get_inputs()[0].name
            fn = (lambda s, n: lambda x: s.run(None, {n: x})[0])(sess, in_name)
            row.update(artifact=str(src), bytes=Path(src).stat().st_size)
        row["latency"] = {}
        for batch, x in inputs_by_batch.items():
            check_cancelled()
            row["latency"][str(batch)] = bench_latency(fn, np.ascontiguousarray(x, dtype=np.float32), warmup, runs)
        results.append(row)
    fastest = {}
    for batch in inputs_by_batch:
        best = min(results, key=lambda r: r["latency"][str(batch)]["medianMs"])
        fastest[str(batch)] = best["name"]
    progress("done", "Benchmarked", 1.0)
    return {"rows": results, "fastest": fastest}
