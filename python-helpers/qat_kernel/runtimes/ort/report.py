"""build/ort's reports: where they go and the rows' labels (jobs/reports/ort.py renders them)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qat_kernel.pipeline.config import Config

OUT_NAME = "ort-cpu"  # build/ort's folder under <config folder>/out/
REPORT = "build-report.json"
MARKDOWN = "build-report.md"

LABELS = {
    "torch-fp32": "PyTorch FP32 (eager)",
    "torch-int8": "PyTorch INT8 (PT2E converted)",
    "ort-fp32": "ONNX Runtime FP32 (Q/DQ stripped)",
    "ort-int8": "ONNX Runtime INT8 (our QDQ export)",
    "ort-replaced-int8": "ONNX Runtime INT8 (our QDQ, re-placed)",
    "ort-qs-int8": "ONNX Runtime INT8 (quantize_static)",
}


def out_dir_for(cfg: Config) -> Path:
    return cfg.out(OUT_NAME)
