"""bench/run through the real kernel on the compare_run config: one latency table (PyTorch FP32/INT8,
Inductor INT8, ONNX Runtime FP32/INT8 ours, re-placed and quantize_static, TVM FP32/INT8) at batch 1 and 16
with ratios to PyTorch FP32; a target that does not run here is refused before any work."""

from __future__ import annotations

import pytest
from rpc_client import RpcError

pytest.importorskip("tvm")


@pytest.fixture(scope="module")
def bench(kernel, compare_run, validate):
    result = kernel.request("bench/run", {"config": str(compare_run[2]), "runs": 10})
    validate("BenchRunResult", result)
    return result


def test_every_runtime_timed_against_pytorch_fp32(bench):
    rows = {r["name"]: r for r in bench["bench"]["rows"]}
    assert list(rows) == [
        "torch-fp32",
        "torch-int8",
        "inductor-int8",
        "ort-fp32",
        "ort-int8",
        "ort-replaced-int8",
        "ort-qs-int8",
        "tvm-fp32",
        "tvm-int8",
    ]
    assert bench["bench"]["baseline"] == "torch-fp32" and bench["samples"] == 540
    assert rows["torch-fp32"]["speedupVsTorchFp32"] == {"b1": 1.0, "b16": 1.0}
    for row in rows.values():
        for b in ("b1", "b16"):
            stats = row["latency"][b]
            assert stats["runs"] == 10 and 0 < stats["p10Ms"] <= stats["medianMs"] <= stats["p90Ms"]
            base = rows["torch-fp32"]["latency"][b]["medianMs"]
            assert row["speedupVsTorchFp32"][b] == pytest.approx(base / stats["medianMs"])
    assert rows["ort-int8"]["bytes"] < rows["ort-fp32"]["bytes"]
    for b, name in bench["fastest"].items():  # the fastest figure that is not noisy; none when all are
        steady = [r for r in rows.values() if not r["latency"][b]["noisy"]]
        assert name == (min(steady, key=lambda r: r["latency"][b]["medianMs"])["name"] if steady else None)


def test_table_lines(bench):
    text = "\n".join(bench["summary"])
    print(text)
    assert bench["summary"][0].startswith("Latency: median ms [p10-p90] (ratio to PyTorch FP32 (eager)")
    assert bench["summary"][1].split() == ["runtime", "batch", "1", "batch", "16", "size"]
    for label in (
        "PyTorch FP32 (eager)",
        "PyTorch INT8",
        "ONNX Runtime INT8 (our QDQ export)",
        "ONNX Runtime INT8 (quantize_static)",
        "TVM INT8 (int8 fold)",
        "Inductor INT8 (PT2E, freezing)",
        "ONNX Runtime INT8 (our QDQ, re-placed)",
        "TVM FP32 (Q/DQ stripped)",
    ):
        assert label in text
    # The baseline row is the first under the header: its own ratio is 1, at both batch sizes.
    base_row = bench["summary"][2]
    assert base_row.startswith("PyTorch FP32 (eager)") and base_row.count("(1.00x)") == 2, base_row
    assert any(line.startswith("threads: PyTorch ") for line in bench["summary"]), text


def test_cross_target_is_refused_before_training(kernel, compare_run):
    with pytest.raises(RpcError) as err:
        kernel.request("bench/run", {"config": str(compare_run[2]), "target": "aarch64"}, timeout=60)
    if err.value.code == -32003:  # no aarch64 cross compiler here: refused for that, with the command
        assert "aarch64" in err.value.data["install"]
        return
    assert err.value.code == -32001 and err.value.data["path"] == "targets"
    assert "aarch64" in err.value.message


def test_tvm_row_is_the_configs_mixed_build(kernel, tmp_path, validate):
    """A config that keeps fc1 in fp16 times TVM's mixed build (fc1 in float16, the rest int8) and says so."""
    from conftest import copy_example, edit_config

    config = copy_example(tmp_path / "digits")
    edit_config(config, lambda d: d.update(overrides=[{"match": "fc1", "precision": "fp16"}]))
    result = kernel.request(
        "bench/run",
        {
            "config": str(config),
            "runs": 3,
            "quantizeStatic": False,
            "inductor": False,
            "replaceQdq": False,
            "tvmFp32": False,
        },
        timeout=600,
    )
    validate("BenchRunResult", result)
    assert [r["name"] for r in result["bench"]["rows"]] == [
        "torch-fp32",
        "torch-int8",
        "ort-fp32",
        "ort-int8",
        "tvm-int8",
    ]
    assert any(n.startswith("TVM INT8 row: mixed precision, fc1 in fp16") for n in result["notes"]), result["notes"]
