"""bench/run's latency table (PyTorch FP32/INT8, ONNX Runtime FP32/INT8 ours and quantize_static, TVM
INT8, Inductor INT8) for the digits example and for a ResNet-18 with random weights.

Run: python -m benchmarks.build_bench <digits.qat.yaml> [resnet-side] [digits-runs] [resnet-runs]
Prints one JSON line with this CPU's int8 peak ({peak}: benchmarks.int8_peak), then one per model: {model,
input, runs, seconds, summary, notes, threads, rounds, rows, macs, gmacs}.

The ResNet-18 (vision_models.resnet18: torchvision's layout, one ReLU module per use) goes through a
temporary workspace written here: a config, a model.py that builds it, and a data.py of seeded random
images at 3 x side x side (default 112, a quarter of ImageNet's pixels, to keep the run short on a small
machine) with random labels. No FP32 training (fp32_epochs 0), two QAT steps: the network's shape,
not its accuracy, is what the table measures. Every row runs the same weights."""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

RESNET_CONFIG = """version: 1
model: {{entry: "model.py:make_model", example_input: [2, 3, {side}, {side}]}}
data: {{entry: "data.py:loaders"}}
flow: pt2e
backend: x86
qconfig:
  activation: {{observer: MovingAverageMinMaxObserver, dtype: quint8, qscheme: per_tensor_affine,
               quant_min: 0, quant_max: 255, averaging_constant: 0.01}}
  weight: {{observer: PerChannelMinMaxObserver, dtype: qint8, qscheme: per_channel_symmetric,
           quant_min: -128, quant_max: 127, ch_axis: 0}}
train: {{fp32_epochs: 0, epochs: 1, steps: 2, lr: 0.0001, optimizer: sgd}}
export: {{onnx: {{opset: 18, path: out/resnet18.qdq.onnx}}}}
"""

RESNET_MODEL = """import torch

from benchmarks.vision_models import {model}


def make_model():
    torch.manual_seed(0)
    return {model}()
"""

RESNET_DATA = """import torch


def loaders(batch_size: int = 16):
    gen = torch.Generator().manual_seed(0)

    def batches(n):
        return [(torch.rand(batch_size, 3, {side}, {side}, generator=gen),
                 torch.randint(0, 1000, (batch_size,), generator=gen)) for _ in range(n)]

    return batches(4), batches(2)
"""


def write_resnet_workspace(folder: Path, side: int, model: str = "resnet18") -> Path:
    """A workspace training `model` (a vision_models function: resnet18, mobilenet_v2, ...) on random data."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "resnet18.qat.yaml").write_text(RESNET_CONFIG.format(side=side), encoding="utf-8")
    (folder / "model.py").write_text(RESNET_MODEL.format(model=model), encoding="utf-8")
    (folder / "data.py").write_text(RESNET_DATA.format(side=side), encoding="utf-8")
    return folder / "resnet18.qat.yaml"


def bench(config: Path, runs: int, model: str, shape: str) -> dict:
    from qat_kernel import methods

    def notify(_method, params):
        if params.get("stage") in ("build", "bench", "compile", "quantize"):
            print(f"  [{model}] {params.get('message')}", file=sys.stderr, flush=True)

    started = time.monotonic()
    result = methods.call("bench/run", {"config": str(config), "runs": runs}, notify)
    rows = [
        {
            "name": r["name"],
            "label": r["label"],
            "bytes": r["bytes"],
            "medianMs": {k: round(v["medianMs"], 3) for k, v in r["latency"].items()},
            "p10Ms": {k: round(v["p10Ms"], 3) for k, v in r["latency"].items()},
            "p90Ms": {k: round(v["p90Ms"], 3) for k, v in r["latency"].items()},
            "ratio": {k: round(v, 2) for k, v in r["speedupVsTorchFp32"].items()},
            "noisy": {k: bool(v.get("noisy")) for k, v in r["latency"].items()},
        }
        for r in result["bench"]["rows"]
    ]
    from benchmarks import int8_peak

    macs = {f"b{b}": int8_peak.model_macs(result["onnx"], b) for b in (1, 16)}
    return {
        "model": model,
        "input": shape,
        "macs": macs,
        "gmacs": int8_peak.achieved(result["bench"]["rows"], macs),
        "runs": runs,
        "seconds": round(time.monotonic() - started, 1),
        "summary": result["summary"],
        "notes": result["bench"]["notes"] + result["notes"],
        "threads": result["bench"]["threads"],
        "rounds": result["bench"]["rounds"],
        "rows": rows,
    }


def main(argv: list[str]) -> int:
    import torch

    digits = Path(argv[0])
    side = int(argv[1]) if len(argv) > 1 else 112
    digits_runs = int(argv[2]) if len(argv) > 2 else 100
    resnet_runs = int(argv[3]) if len(argv) > 3 else 20
    torch.set_num_threads(max(1, torch.get_num_threads()))
    from benchmarks import int8_peak

    print(json.dumps({"peak": int8_peak.peak()}), flush=True)
    with tempfile.TemporaryDirectory(prefix="qat-build-bench-") as tmp:
        import shutil

        work = Path(tmp)
        copy = work / "digits"
        shutil.copytree(digits.parent, copy, ignore=shutil.ignore_patterns("out", "__pycache__"))
        print(json.dumps(bench(copy / digits.name, digits_runs, "digits CNN", "1x8x8")), flush=True)
        config = write_resnet_workspace(work / "resnet18", side)
        print(json.dumps(bench(config, resnet_runs, "ResNet-18 (random weights)", f"3x{side}x{side}")), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
