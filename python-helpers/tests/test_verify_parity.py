"""verify/parity through the real kernel on the compare_run config: first with no builds in out/ (rows
say what to build), then after build/tvm, build/ort and deploy/c-artifact, every artifact on the
same 540 real digits samples against PyTorch INT8; a library older than the export is flagged."""

from __future__ import annotations

import os
import shutil

import pytest

pytest.importorskip("onnxruntime")


@pytest.fixture(scope="module")
def config(compare_run):
    return compare_run[2]


@pytest.fixture(scope="module")
def before_builds(kernel, config, validate):
    out = config.parent / "out"
    for name in ("tvm-x86-64", "ort-cpu", "deploy-x86-64"):
        shutil.rmtree(out / name, ignore_errors=True)
    result = kernel.request("verify/parity", {"config": str(config)})
    validate("VerifyParityResult", result)
    return result


@pytest.fixture(scope="module")
def after_builds(kernel, config, validate, before_builds):
    kernel.request("build/tvm", {"config": str(config), "target": "x86-64", "verify": False})
    kernel.request("build/ort", {"config": str(config), "bench": False})
    kernel.request("deploy/c-artifact", {"config": str(config), "verify": False, "tvm": False})
    request_id = kernel.request_async("verify/parity", {"config": str(config), "includeFp32": True})
    result = kernel.result(request_id)
    validate("VerifyParityResult", result)
    return request_id, result


def _rows(result) -> dict:
    return {r["name"]: r for r in result["rows"]}


def test_without_builds_only_the_export_runs(before_builds):
    rows = _rows(before_builds)
    assert list(rows) == ["ort-int8", "ort-int8-optimized", "ort-qs-int8", "tvm-int8", "c-runner"]
    assert rows["ort-int8"]["status"] == "ok"
    for name in ("ort-int8-optimized", "ort-qs-int8", "tvm-int8", "c-runner"):
        assert rows[name]["status"] == "missing" and rows[name]["note"].startswith("not built: run ")
    assert before_builds["outputKind"] == "accumulator" and before_builds["samples"] == 540


def test_every_artifact_against_torch_int8(after_builds):
    _, result = after_builds
    rows = _rows(result)
    assert {r["status"] for n, r in rows.items() if n != "tvm-fp32"} == {"ok"}, rows
    assert rows["tvm-fp32"]["status"] == "missing"  # build/tvm ran without bench
    for name in ("ort-int8", "ort-int8-optimized", "tvm-int8", "c-runner"):
        m = rows[name]["vsTorchInt8"]
        assert m["top1Agreement"] >= 0.99 and m["cosineMin"] > 0.9999, (name, m)
        assert abs(rows[name]["accuracy"] - result["torchInt8Accuracy"]) <= 2 / 540
    # the saved optimised graph is what ORT runs from the QDQ file: identical outputs
    assert rows["ort-int8-optimized"]["vsTorchInt8"] == rows["ort-int8"]["vsTorchInt8"]
    # the portable runner follows PyTorch's arithmetic; the integer kernels round their biases
    assert rows["c-runner"]["vsTorchInt8"]["withinOneStep"] >= 0.99
    assert rows["c-runner"]["vsTorchInt8"]["maxDiffSteps"] < rows["ort-int8"]["vsTorchInt8"]["maxDiffSteps"]
    # other scales (quantize_static) or no quantization: visibly further away
    for name in ("ort-qs-int8", "ort-fp32", "torch-fp32"):
        assert rows[name]["vsTorchInt8"]["maxDiffSteps"] > rows["ort-int8"]["vsTorchInt8"]["maxDiffSteps"]
    assert not any(r.get("stale") for r in rows.values())
    text = "\n".join(result["summary"])
    print(text)
    assert "Portable C runner (deploy/c-artifact): top-1 agreement 100.00%" in text


def test_progress_and_artifacts_filter(after_builds, kernel, config):
    request_id, _ = after_builds
    assert {p["stage"] for p in kernel.progress(request_id)} >= {"verify"}
    result = kernel.request("verify/parity", {"config": str(config), "artifacts": ["tvm-int8"], "samples": 64})
    assert [r["name"] for r in result["rows"]] == ["tvm-int8"] and result["samples"] == 64


def test_library_older_than_the_export_is_stale(after_builds, kernel, config):
    lib = config.parent / "out" / "tvm-x86-64" / "model.so"
    onnx_time = (config.parent / "out" / "digits.qdq.onnx").stat().st_mtime
    os.utime(lib, (onnx_time - 60, onnx_time - 60))
    result = kernel.request("verify/parity", {"config": str(config), "artifacts": ["tvm-int8"], "samples": 32})
    row = result["rows"][0]
    assert row["stale"] is True and "build/tvm again" in row["note"] and result["notes"]


def test_planted_library_and_runner_are_not_loaded_or_run(after_builds, kernel, config, tmp_path):
    """A model.so changed after build/tvm wrote it, and a deploy-report.json pointing at C source the kernel never
    wrote: both rows skipped with the reason; nothing is loaded, compiled or run."""
    import json

    out = config.parent / "out"
    lib = out / "tvm-x86-64" / "model.so"
    with open(lib, "ab") as f:
        f.write(b"\0")
    marker = tmp_path / "ran"
    planted = config.parent / "planted_runner.c"
    planted.write_text(
        f'#include <stdio.h>\nint main(void) {{ FILE *f = fopen("{marker}", "w"); if (f) fclose(f); return 0; }}\n',
        encoding="utf-8",
    )
    header = config.parent / "planted_qparams.h"
    header.write_text("/* planted */\n", encoding="utf-8")
    report = out / "deploy-x86-64" / "deploy-report.json"
    data = json.loads(report.read_text(encoding="utf-8"))
    data["runner"], data["header"] = str(planted), str(header)
    report.write_text(json.dumps(data), encoding="utf-8")
    result = kernel.request(
        "verify/parity", {"config": str(config), "artifacts": ["tvm-int8", "c-runner"], "samples": 32}
    )
    rows = _rows(result)
    for name in ("tvm-int8", "c-runner"):
        assert rows[name]["status"] == "skipped", rows[name]
        assert "not " in rows[name]["note"] and "by QAT Studio on this machine" in rows[name]["note"]
    assert not marker.exists()
    # Built again, each is trusted again.
    kernel.request("build/tvm", {"config": str(config), "target": "x86-64", "verify": False})
    kernel.request("deploy/c-artifact", {"config": str(config), "verify": False, "tvm": False})
    result = kernel.request(
        "verify/parity", {"config": str(config), "artifacts": ["tvm-int8", "c-runner"], "samples": 32}
    )
    assert {r["status"] for r in result["rows"]} == {"ok"}
