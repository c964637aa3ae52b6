"""TVM INT8 ResNet-18 or MobileNetV2: the default schedule rule against the previous one, next to ONNX Runtime.

Exports the build benchmark's ResNet-18 (or with --model mobilenet_v2 torchvision's MobileNetV2, whose
depthwise convs run on depthwise.py's kernels under "+dw"; random weights, two PT2E QAT steps, 3 x side x
side) to QDQ ONNX once, builds TVM INT8 (our fold) with schedule.py's default rule ("vnni": vpdpbusd kernels
where the CPU has VNNI) with and without depthwise.py's x86 depthwise kernels ("vnni+dw", "vnni") and with the
previous rule ("packed": int32 multiply-adds, no depthwise.py), checks that all give the same outputs, and
times them interleaved in one process next to
ONNX Runtime INT8 on our export and on quantize_static's model (median ms, batch 1 and 16).

Run: python -m benchmarks.tvm_int8_bench [side] [runs] [work folder] [--fp32] [--model mobilenet_v2]"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

BASE = "packed"  # the rule the default is compared with


def export(folder: Path, side: int, model: str = "resnet18") -> tuple[Path, list]:
    """(QDQ ONNX path, calibration batches) of the build benchmark's ResNet-18 (or another vision_models net)."""
    from benchmarks.build_bench import write_resnet_workspace
    from qat_kernel.pipeline import session
    from qat_kernel.pipeline.training import first_inputs
    from qat_kernel.rpc.context import RequestContext
    from qat_kernel.runtimes.onnx import qdq_export

    config = write_resnet_workspace(folder, side, model)
    ctx = RequestContext(0, "bench", {"config": str(config)}, lambda *_: None)
    cfg = session.load(str(config), ctx)
    trained, _ = session.get(cfg, ctx)
    converted = session.convert(trained, ctx)
    onnx_file, _ = qdq_export.qdq_onnx(cfg, trained, converted, ctx)
    calibration = [b.numpy() for b in first_inputs(trained.train, 64)]
    return Path(onnx_file), calibration


def _time(fns: dict, inputs: dict, runs: int, warmup: int = 3) -> dict:
    """{name: {batch: median ms}}, the functions called round-robin so load changes hit all alike."""
    samples = {n: {b: [] for b in inputs} for n in fns}
    for b, x in inputs.items():
        for fn in fns.values():
            for _ in range(warmup):
                fn(x)
        for _ in range(runs):
            for n, fn in fns.items():
                time.sleep(0.02)  # the previous runtime's worker threads spin a while after a call: let them stop
                t0 = time.perf_counter()
                fn(x)
                samples[n][b].append((time.perf_counter() - t0) * 1e3)
    return {n: {b: round(statistics.median(v), 3) for b, v in d.items()} for n, d in samples.items()}


def main(argv: list[str]) -> int:
    from qat_kernel.runtimes.onnx.fp32_twin import strip_qdq
    from qat_kernel.runtimes.ort.as_executed import quantize_static_twin
    from qat_kernel.runtimes.ort.sessions import session as ort_session
    from qat_kernel.runtimes.tvm import schedule
    from qat_kernel.runtimes.tvm.build import build_tvm
    from qat_kernel.runtimes.tvm.run import load_tvm

    fp32_rows = "--fp32" in argv
    model = "resnet18"
    if "--model" in argv:
        i = argv.index("--model")
        model = argv[i + 1]
        argv = argv[:i] + argv[i + 2 :]
    argv = [a for a in argv if not a.startswith("--")]
    side = int(argv[0]) if argv else 112
    runs = int(argv[1]) if len(argv) > 1 else 20
    work = Path(argv[2]) if len(argv) > 2 else Path(tempfile.mkdtemp(prefix="qat-tvm-int8-"))
    onnx_file, calibration = export(work / model, side, model)
    fp32 = strip_qdq(onnx_file, work / "fp32.onnx")
    qs = quantize_static_twin(fp32, work / "model.qs.onnx", calibration)
    fns, builds = {}, {}
    for name in ("ort-int8", "ort-qs-int8"):
        sess = ort_session(onnx_file if name == "ort-int8" else qs)
        fns[name] = (lambda s, n: lambda a: s.run(None, {n: a})[0])(sess, sess.get_inputs()[0].name)
    variants = [("tvm-int8", True)] + ([("tvm-fp32", False)] if fp32_rows else [])
    for name, fold in variants:
        # the int8 default also with depthwise.py's kernels ("+dw"); the other builds without them
        kinds = [(BASE, False), (schedule.DEFAULT_RULE, False)] + ([(schedule.DEFAULT_RULE, None)] if fold else [])
        for rule, dw in kinds:
            key = f"{name}[{rule}{'' if dw is False else '+dw'}]"
            with schedule.use_rule(rule):
                t0 = time.perf_counter()
                src = onnx_file if fold else fp32
                report = build_tvm(src, "x86-64", work / key, fold_int8=fold, depthwise=dw)
            builds[key] = round(time.perf_counter() - t0, 1)
            fns[key] = load_tvm(report["artifact"])
    rng = np.random.default_rng(0)
    inputs = {b: rng.random((b, 3, side, side), dtype=np.float32) for b in (1, 16)}
    checks = {}
    for key in [k for k in fns if k.startswith("tvm-") and not k.endswith(f"[{BASE}]")]:
        old, new = fns[key.split("[")[0] + f"[{BASE}]"], fns[key]
        for b, x in inputs.items():
            a, c = old(x), new(x)
            checks[f"{key} b{b}"] = "identical" if np.array_equal(a, c) else f"max diff {np.abs(a - c).max():.3g}"
    print(
        json.dumps(
            {
                "model": f"{model} 3x{side}x{side}",
                "runs": runs,
                "build_s": builds,
                "outputs": checks,
                "median_ms": _time(fns, inputs, runs),
            },
            indent=1,
        ),
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
