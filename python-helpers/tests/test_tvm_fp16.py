"""fp16 layers in build/tvm: the layers a config's overrides keep in `precision: fp16` run in float16
(inputs, weights and outputs; float32 accumulation) while the other layers keep their int8 fold.

Library level on the committed digits export and its FP32 twin (no training); kernel level on a copy
of examples/digits whose override keeps fc1 fp16 (one QAT run, then build/tvm with parity against
the PyTorch model on the 540 real validation digits)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("tvm")
onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from conftest import copy_example, edit_config

from qat_kernel.runtimes.onnx import fp16
from qat_kernel.runtimes.onnx.fp32_twin import strip_qdq
from qat_kernel.runtimes.ort.sessions import run_ort
from qat_kernel.runtimes.tvm.build import build_tvm
from qat_kernel.runtimes.tvm.run import run_tvm

DIGITS_QDQ = Path(__file__).resolve().parents[2] / "test/fixtures/digits/digits.qdq.onnx"


@pytest.fixture(scope="module")
def digits_x() -> np.ndarray:
    from sklearn.datasets import load_digits

    return (load_digits().images / 16.0).astype(np.float32)[:, None]


def test_module_scopes_and_matching():
    model = onnx.load(str(DIGITS_QDQ))
    modules = {n.name: fp16.module_of(n) for n in model.graph.node}
    assert modules["node_conv2d_1"] == "conv2" and modules["node_linear"] == "fc1"
    assert modules["node_quantize_per_tensor"] == ""  # Q/DQ sit at the root scope
    match = fp16.pattern_matcher(["layer1", "fc1"])
    assert match("fc1") == "fc1" and match("layer1.0.conv1") == "layer1" and match("fc2") is None
    assert match("") is None


def test_no_fp16_override_reports_zero_fp16_ops(tmp_path):
    report = build_tvm(DIGITS_QDQ, "x86-64", tmp_path / "int8")
    assert report["ops_per_precision"]["float16"] == 0
    assert report["ops_after"]["anchors_per_precision"]["float16"] == 0
    assert report["fp16"] is None
    assert "fp16" not in {o["precision"] for o in report["ops"]}
    assert "float16" not in report["kernels_per_precision"]


def test_quantized_layer_cannot_be_fp16_and_says_why(tmp_path):
    """In the committed export fc1 is quantized (its weight comes through a DequantizeLinear): asking
    for fc1 in fp16 leaves it int8 and the report says so."""
    report = build_tvm(DIGITS_QDQ, "x86-64", tmp_path / "b", fp16=["fc1"])
    assert report["ops_per_precision"]["float16"] == 0
    assert report["ops_after"]["anchors_per_precision"]["int8"] == 4
    layer = report["fp16"]["layers"][0]
    assert layer["module"] == "fc1" and layer["onnx_nodes"] == []
    assert layer["skipped"][0]["onnx_node"] == "node_linear"
    assert any(
        "could not be converted" in n and "node_linear" in n and "dequantized from int8" in n for n in report["notes"]
    )
    ops = {o["onnx_node"]: o for o in report["ops"]}
    assert ops["node_linear"]["precision"] == "int8"


def test_fp16_conv_layer_of_the_fp32_twin(tmp_path, digits_x):
    """conv2 of the FP32 twin in float16 (the conv2d path, with its float32 accumulator): close to
    ONNX Runtime's fp32 run; the rest stays fp32."""
    fp32 = strip_qdq(DIGITS_QDQ, tmp_path / "fp32.onnx")
    report = build_tvm(fp32, "x86-64", tmp_path / "b", fold_int8=False, fp16=["conv2"])
    assert report["fp16"]["onnx_nodes"] == {"node_conv2d_1": "conv2"}
    assert report["fp16"]["widened_ops"] == 1
    assert report["ops_after"]["anchors_per_precision"]["float16"] == 1
    assert report["ops_after"]["anchors_per_precision"]["float32"] == 3
    ops = {o["onnx_node"]: o for o in report["ops"]}
    assert ops["node_conv2d_1"]["precision"] == "fp16" and ops["node_conv2d"]["precision"] == "fp32"
    assert report["kernels_per_precision"].get("float16", 0) >= 1
    out, ref = run_tvm(report["artifact"], digits_x), run_ort(fp32, digits_x)
    assert (out.argmax(1) == ref.argmax(1)).mean() >= 0.99
    assert np.abs(out - ref).max() < 0.1 * np.abs(ref).max()


# --------------------------------------------------------------------------- through the kernel


@pytest.fixture(scope="module")
def fc1_fp16_build(kernel, tmp_path_factory, validate):
    config = copy_example(tmp_path_factory.mktemp("fp16") / "digits")
    edit_config(config, lambda d: d.update(overrides=[{"match": "fc1", "precision": "fp16"}]))
    result = kernel.request("build/tvm", {"config": str(config), "target": "x86-64"}, timeout=600)
    validate("BuildTvmResult", result)
    return result, config


def test_fc1_fp16_ops_counted_and_others_int8(fc1_fp16_build):
    result, _ = fc1_fp16_build
    after = result["opsPerPrecision"]["after"]
    assert after["float16"] > 0 and after["int8"] > 0
    assert result["anchorsPerPrecision"]["after"]["float16"] == 1  # fc1's matmul
    assert result["anchorsPerPrecision"]["after"]["int8"] == 3  # conv1, conv2, fc2
    assert result["anchorsPerPrecision"]["after"]["float32"] == 0
    assert result["kernelsPerPrecision"].get("float16", 0) >= 1
    ops = {o["onnxNode"]: o for o in result["ops"]}
    fc1 = [o for o in ops.values() if o["precision"] == "fp16"]
    assert [o["opType"] for o in fc1] == ["Gemm"] and "float32 accumulation" in fc1[0]["detail"]
    assert {o["precision"] for o in ops.values() if o["opType"] == "Conv"} == {"int8"}
    gemms = [o for o in ops.values() if o["opType"] == "Gemm"]
    assert sorted(o["precision"] for o in gemms) == ["fp16", "int8"]
    (layer,) = result["fp16Layers"]
    assert layer["module"] == "fc1" and layer["converted"] and layer["onnxNodes"] == [fc1[0]["onnxNode"]]
    assert layer["override"].startswith("overrides.0")
    text = "\n".join(result["summary"])
    assert "in fp16" in text and "fp16 layer fc1" in text


def test_fc1_fp16_outputs_close_to_pytorch(fc1_fp16_build):
    result, _ = fc1_fp16_build
    parity = result["parity"]
    assert parity["samples"] == 540
    vs_torch = parity["vsTorch"]
    print(
        f"fc1 fp16: TVM vs PyTorch top-1 {vs_torch['top1Agreement']:.4f}, max |diff| {vs_torch['maxAbsDiff']:.4g}, "
        f"cosine min {vs_torch['cosineMin']:.6f}; vs ORT max |diff| {parity['vsOrt']['maxAbsDiff']:.4g}"
    )
    assert vs_torch["top1Agreement"] >= 0.99
    assert vs_torch["cosineMin"] > 0.999
    assert vs_torch["maxAbsDiff"] < 0.25
    assert parity["vsOrt"]["top1Agreement"] >= 0.99
    accuracy = parity["accuracy"]
    assert abs(accuracy["tvm"] - accuracy["torch"]) <= 2 / 540
