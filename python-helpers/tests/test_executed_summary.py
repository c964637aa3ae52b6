"""runtimes/ort/as_executed.executed_summary on the digits QDQ fixture: what ORT's CPU EP runs, in brief (the
mixed-precision page explains a slow all-int8 end with it)."""

from __future__ import annotations

from pathlib import Path

from qat_kernel.runtimes.ort.as_executed import executed_summary

DIGITS = Path(__file__).resolve().parents[2] / "test" / "fixtures" / "digits" / "digits.qdq.onnx"


def test_the_digits_qdq_model_runs_int8_convs_and_one_fp32_gemm():
    summary = executed_summary(DIGITS.read_bytes())
    assert set(summary) == {"nodes", "compute", "conversions", "reorders", "fp32Ops"}
    assert summary["compute"]["int8"] >= 2 and summary["conversions"] >= 1
    assert summary["nodes"] >= summary["conversions"] + summary["compute"]["int8"] + summary["compute"]["fp32"]
    # The classifier's Gemm feeds the graph output with no QuantizeLinear after it: ORT leaves it fp32, and says why.
    gemm = [op for op in summary["fp32Ops"] if op["opType"] == "Gemm"]
    assert gemm and gemm[0]["count"] == 1 and "QuantizeLinear" in gemm[0]["reason"]
    # A path gives the same as the bytes.
    assert executed_summary(DIGITS) == summary
