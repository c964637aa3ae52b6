"""build/ort's report, rendered once by the kernel: the Q/DQ re-placement section from the build/ort fixture and
from a residual model's shape of result (a Conv feeding an Add gets a calibrated Q/DQ pair)."""

from __future__ import annotations

import json

from conftest import PROTOCOL

from qat_kernel.jobs.reports.ort import markdown, replacement_markdown, summary

FIXTURE = json.loads((PROTOCOL / "fixtures" / "rpc" / "BuildOrtResult.json").read_text(encoding="utf-8"))


def test_the_fixture_renders_a_before_after_table_with_counts_parity_and_latency():
    lines = replacement_markdown(FIXTURE["qdqReplacement"])
    md = "\n".join(lines)
    assert lines[0] == "## Q/DQ re-placement"
    assert "(1 int32 bias); the trained scales and zero points are kept. File: `" in md
    assert md.split("File: `")[1].split("`")[0].endswith("digits.qdq.replaced.onnx")
    assert "| | before (our export) | after (re-placed) |" in md
    assert "| conv/matmul ops int8 | 3 | 4 |" in md and "| conv/matmul ops fp32 | 1 | 0 |" in md
    assert "| fp32 compute ops | node_linear_1 | none |" in md
    assert "| top-1 agreement vs PyTorch INT8 | 100.0 % | 100.0 % |" in md
    # float logits: the difference as is and relative to the largest output; accumulator steps only a detail
    assert (
        "| max abs diff vs PyTorch INT8 | 0.0347 | 0.0347 |" in md
        and "| of the largest output | 0.33 % | 0.33 % |" in md
    )
    assert "| detail: int32-accumulator steps | 516 | 516 |" in md and "(output steps)" not in md
    assert "| latency batch 16 (median) | 0.102 ms | 0.082 ms |" in md
    assert "| bias | fc2.bias | Gemm node_linear_1 | 7.323e-05 |" in md


def test_the_result_carries_the_lines_the_report_shows():
    rq = FIXTURE["qdqReplacement"]
    assert rq["markdown"] == replacement_markdown(rq)
    report = markdown(FIXTURE)
    assert "\n".join(rq["markdown"]) in report
    assert any(line.startswith("Q/DQ re-placement of our export (1 int32 bias)") for line in summary(FIXTURE))


def _side(variant: str, fp32: int) -> dict:
    return {
        "variant": variant,
        "perPrecision": {"int8": 6, "fp32": fp32, "conversion": 9},
        "computePerPrecision": {"int8": 2, "fp32": fp32},
        "convMatmulPerPrecision": {"int8": 4 - fp32, "fp32": fp32},
        "fp32Ops": ["node_conv2d_2", "node_add"] if fp32 else [],
        "maxDiffSteps": None,
        "top1AgreementVsTorchInt8": 1,
    }


def test_calibrated_activations_are_named_as_such_and_missing_figures_read_na():
    rq = {
        "onnx": "/w/out/res.qdq.replaced.onnx",
        "artifact": "/w/out/ort-cpu/model.qdq.replaced.onnx",
        "calibrationSamples": 512,
        "activationDtype": "uint8",
        "before": _side("ours", 2),
        "after": _side("replaced", 0),
        "inserted": [
            {
                "kind": "activation",
                "tensor": "conv2d_2",
                "node": "node_conv2d_2",
                "opType": "Conv",
                "why": "no Q | on its output",
                "source": "calibration",
                "scale": 0.04913,
                "zeroPoint": 108,
                "dtype": "uint8",
            },
            {
                "kind": "activation",
                "tensor": "view",
                "node": "node_view",
                "opType": "Reshape",
                "why": "layout",
                "source": "neighbour",
                "neighbour": "node_dq_5",
                "scale": 0.0237,
                "zeroPoint": 0,
                "dtype": "uint8",
            },
        ],
    }
    md = "\n".join(replacement_markdown(rq))
    assert (
        "(2 Q/DQ pairs); the trained scales and zero points are kept, 1 new scale calibrated on 512 training inputs."
        in md
    )
    assert "| fp32 compute ops | node_conv2d_2, node_add | none |" in md
    # no outputKind: no step rows, the absolute and relative difference read n/a
    assert "| max abs diff vs PyTorch INT8 | n/a | n/a |" in md and "steps" not in md
    quantized = "\n".join(replacement_markdown({**rq, "outputKind": "quantized"}))
    assert "| max diff vs PyTorch INT8 (output steps) | n/a | n/a |" in quantized and "accumulator" not in quantized
    accumulator = "\n".join(replacement_markdown({**rq, "outputKind": "accumulator"}))
    assert "| detail: int32-accumulator steps | n/a | n/a |" in accumulator
    assert "(output steps)" not in accumulator and "Accumulator steps are units of" in accumulator
    assert "| latency batch 1 (median) | n/a | n/a |" in md
    assert "| activation | conv2d_2 | Conv node_conv2d_2 | 0.04913 (calibrated) | no Q \\| on its output |" in md
    assert "| 0.02370 (from node_dq_5) |" in md
