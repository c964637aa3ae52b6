"""eval/accuracy, export/onnx and analyze/sensitivity on the compare_run config (the kernel reuses
the model compare/layers trained), and the real results the issue asks of digits."""

import onnx
import pytest
from rpc_client import RpcError


@pytest.fixture(scope="module")
def accuracy(kernel, compare_run, validate):
    _, _, config = compare_run
    result = kernel.request("eval/accuracy", {"config": str(config), "ptq": True})
    validate("EvalAccuracyResult", result)
    return result


@pytest.fixture(scope="module")
def exported(kernel, compare_run, validate, tmp_path_factory):
    _, _, config = compare_run
    path = tmp_path_factory.mktemp("export") / "digits.int8.onnx"
    request_id = kernel.request_async("export/onnx", {"config": str(config), "path": str(path)})
    result = kernel.result(request_id)
    validate("ExportOnnxResult", result)
    return request_id, result, path


def test_methods_reuse_the_trained_model(accuracy, exported, compare_run):
    _, compared, _ = compare_run
    assert accuracy["reused"] is True and exported[1]["reused"] is True
    # Same model: the INT8 accuracy compare/layers measured.
    assert accuracy["int8"] == compared["accuracy"]["int8"]
    assert accuracy["fp32"] == compared["accuracy"]["fp32"]
    assert accuracy["seconds"] < 30  # no QAT: convert + a PTQ export/calibration at most


def test_qat_int8_within_one_point_of_fp32(accuracy):
    assert accuracy["samples"] == 540
    assert accuracy["fp32"] > 0.95
    assert accuracy["int8"] >= accuracy["fp32"] - 0.01, accuracy
    # PTQ of the same FP32 model and qconfig: a real INT8 model too, near FP32 on this easy task.
    assert accuracy["ptq"] >= accuracy["fp32"] - 0.03, accuracy
    # Fake quantization predicts the converted model: the same ops, rounding for rounding.
    assert abs(accuracy["fakeQuant"] - accuracy["int8"]) <= 2 / 540, accuracy


def test_int8_model_is_at_least_3_5x_smaller(exported):
    """Tensor bytes: FP32 state_dict vs the INT8 graph's constants (int8 weights, fp32 biases,
    per-channel scales and zero points)."""
    _, result, path = exported
    size = result["size"]
    assert size["ratio"] >= 3.5, size
    assert size["ratio"] == pytest.approx(size["fp32Bytes"] / size["int8Bytes"])
    assert size["onnxFileBytes"] == path.stat().st_size


def test_onnx_runtime_matches_pytorch_int8(exported):
    _, result, path = exported
    verify = result["verify"]
    assert verify["samples"] == 540
    # The file's Q/DQ ops as written compute what PyTorch computes, in float32 with another summation
    # order: where a value lands on a rounding boundary an activation can round one step the other way,
    # so the logits agree to a small fraction of their range (not to one accumulator step).
    assert verify["unoptimized"]["maxRel"] <= 2e-3, verify
    # As deployed (fused int8 kernels round biases and requantize in integers): same predictions.
    assert verify["predictionsEqual"] >= 0.99, verify
    assert abs(verify["ortAccuracy"] - verify["torchAccuracy"]) <= 2 / 540, verify
    assert verify["stepKind"] == "accumulator" and verify["step"] > 0


def test_export_writes_a_checked_qdq_file_atomically(exported):
    _, result, path = exported
    assert result["path"] == str(path)
    model = onnx.load(str(path))
    onnx.checker.check_model(model)
    ops = [n.op_type for n in model.graph.node]
    assert result["qdq"] == {
        "quantizeLinear": ops.count("QuantizeLinear"),
        "dequantizeLinear": ops.count("DequantizeLinear"),
    }
    assert result["qdq"]["quantizeLinear"] >= 4
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]


def test_export_progress(exported, kernel, validate):
    request_id, _, _ = exported
    stages = [p["stage"] for p in kernel.progress(request_id)]
    assert "onnx" in stages and "verify" in stages
    assert "qat" not in stages  # reused, not retrained


def test_sensitivity_on_a_healthy_model(kernel, compare_run, validate):
    _, compared, config = compare_run
    result = kernel.request("analyze/sensitivity", {"config": str(config), "budget": 5})
    validate("SensitivityResult", result)
    assert result["reused"] is True
    assert [layer["rank"] for layer in result["layers"]] == [1, 2, 3, 4]
    assert {layer["module"] for layer in result["layers"]} == {"conv1", "conv2", "fc1", "fc2"}
    sqnrs = [layer["quantizedAlone"]["sqnr"] for layer in result["layers"]]
    assert sqnrs == sorted(sqnrs)
    # Every layer alone costs little; all together is the fake-quant model.
    assert result["accuracy"]["fakeQuant"] >= result["accuracy"]["fp32"] - 0.05
    assert result["suggestion"] == {**result["suggestion"], "overrides": [], "withinBudget": True}
    assert all(layer["source"]["line"] > 0 for layer in result["layers"])


def test_export_rejects_the_eager_flow(kernel, tmp_path):
    from conftest import copy_example

    config = copy_example(tmp_path / "digits").parent / "eager.qat.yaml"
    with pytest.raises(RpcError) as err:
        kernel.request("export/onnx", {"config": str(config)})
    assert err.value.data["kind"] == "configInvalid" and err.value.data["path"] == "flow"
