"""compare/layers on a copy of examples/digits: result shape, metrics, accuracy, progress, ONNX."""

import ast
from pathlib import Path

import onnx


def test_result_matches_schema(compare_run, validate):
    _, result, _ = compare_run
    validate("CompareLayersResult", result)
    assert (result["flow"], result["reference"], result["mode"]) == ("pt2e", "fp32", "propagated")
    assert result["samples"] == 64  # compare.samples in digits.qat.yaml
    assert result["threshold"] == 0.99


def test_one_entry_per_quantized_layer(compare_run):
    _, result, config = compare_run
    layers = {layer["module"]: layer for layer in result["layers"]}
    assert list(layers) == ["conv1", "conv2", "fc1", "fc2"]
    assert layers["conv1"]["op"] == "conv2d" and layers["fc1"]["op"] == "linear"
    assert layers["conv1"]["group"] == ["conv2d", "batch_norm", "relu"]
    assert layers["fc1"]["group"] == ["linear", "relu"]
    assert layers["fc2"]["group"] == ["linear"]
    model_py = str(config.parent / "model.py")
    assert layers["conv1"]["source"] == {"file": model_py, "line": 21}
    assert layers["fc2"]["source"] == {"file": model_py, "line": 25}


def test_metrics_are_sane(compare_run):
    _, result, _ = compare_run
    for layer in result["layers"]:
        assert 0.5 < layer["cosine"] <= 1.0, layer
        assert layer["sqnr"] > 0 and layer["mse"] >= 0 and layer["maxAbs"] >= 0, layer


def test_int8_accuracy_close_to_fp32(compare_run):
    _, result, _ = compare_run
    accuracy = result["accuracy"]
    assert accuracy["samples"] == 540
    assert accuracy["fp32"] > 0.9
    assert abs(accuracy["int8"] - accuracy["fp32"]) <= 0.03, accuracy


def test_progress_notifications(compare_run, kernel, validate):
    request_id, _, _ = compare_run
    progress = kernel.progress(request_id)
    assert progress
    for params in progress:
        validate("ProgressParams", params)
    qat = [p for p in progress if p["stage"] == "qat"]
    assert len(qat) == 20  # train.steps: one notification per step
    assert qat[-1]["fraction"] == 1.0
    stages = [p["stage"] for p in progress]
    assert {"load", "fp32", "export", "qat", "convert", "compare", "onnx"} <= set(stages)


def test_onnx_export_has_qdq_nodes(compare_run):
    _, result, config = compare_run
    path = Path(result["onnx"]["path"])
    assert path == config.parent / "out" / "digits.qdq.onnx"
    model = onnx.load(str(path))
    onnx.checker.check_model(model)
    ops = {node.op_type for node in model.graph.node}
    assert {"QuantizeLinear", "DequantizeLinear", "Conv", "Gemm"} <= ops
    # One self-contained file: no external-data sidecar, no temp file left behind.
    # (Other outputs share out/: the FP32 graph JSON compare/layers leaves, later builds' folders.)
    names = [p.name for p in path.parent.iterdir()]
    assert "digits.qdq.onnx" in names
    assert not [n for n in names if n.startswith("digits.qdq.onnx.") or n.startswith(".") or n.endswith(".tmp")], names


def test_onnx_nodes_carry_module_paths(compare_run):
    """What the graph viewer relies on: name_scopes[-2] of a Conv/Gemm is its module path."""
    _, result, _ = compare_run
    model = onnx.load(result["onnx"]["path"])
    modules = {}
    for node in model.graph.node:
        meta = {p.key: p.value for p in node.metadata_props}
        if node.op_type in ("Conv", "Gemm"):
            modules[node.name] = ast.literal_eval(meta["pkg.torch.onnx.name_scopes"])[-2]
    assert modules == {"node_conv2d": "conv1", "node_conv2d_1": "conv2", "node_linear": "fc1", "node_linear_1": "fc2"}
    assert set(modules.values()) == {layer["module"] for layer in result["layers"]}


def test_onnx_runs_in_onnxruntime_like_torch_int8(compare_run):
    """The QDQ file takes real batches (dynamic batch dim) and predicts like the PyTorch INT8 graph."""
    import importlib.util

    from qat_kernel.runtimes.ort.sessions import session as ort_session

    _, result, config = compare_run
    spec = importlib.util.spec_from_file_location("digits_data_for_ort", config.parent / "data.py")
    data = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(data)
    _, val = data.loaders()
    session = ort_session(result["onnx"]["path"])
    input_name = session.get_inputs()[0].name
    correct = total = 0
    for x, y in val:
        logits = session.run(None, {input_name: x.numpy()})[0]
        correct += int((logits.argmax(1) == y.numpy()).sum())
        total += len(y)
    assert total == result["accuracy"]["samples"]
    assert abs(correct / total - result["accuracy"]["int8"]) <= 2 / total


def test_reports_local_and_qat_float_references(compare_run):
    _, result, _ = compare_run
    assert result["references"] == ["fp32", "qatFloat"] and result["modes"] == ["propagated", "local"]
    assert result["reused"] is False
    first = result["layers"][0]
    # The first layer's input is the model input, the same for every model: local == propagated.
    for key in ("cosine", "sqnr", "mse", "maxAbs", "normalizedL2"):
        assert first["local"][key] == first[key]
        assert first["vsQatFloatLocal"][key] == first["vsQatFloat"][key]
    for layer in result["layers"]:
        # Quantization alone (vs the QAT-trained float model) is a smaller error than quantization
        # plus QAT drift (vs the original FP32), on this model by a wide margin.
        assert layer["vsQatFloat"]["sqnr"] > layer["sqnr"] + 5, layer
        assert layer["vsQatFloatLocal"]["sqnr"] > 25, layer
        # A layer fed exact inputs is never much worse than the same layer behind quantized ones.
        assert layer["local"]["sqnr"] > layer["sqnr"] - 1, layer


def test_layers_carry_int8_graph_node_ids(compare_run):
    _, result, _ = compare_run
    nodes = {layer["module"]: layer["nodes"] for layer in result["layers"]}
    assert any(n.startswith("conv2d") for n in nodes["conv1"])
    assert any(n.startswith("linear") for n in nodes["fc2"])
    for names in nodes.values():
        assert any(n.startswith("dequantize_per_channel") for n in names), names  # INT8 weight
        assert any(n.startswith("quantize_per_tensor") for n in names), names  # input Q/DQ
    all_names = [n for names in nodes.values() for n in names]
    weight_dq = [n for n in all_names if n.startswith("dequantize_per_channel")]
    assert len(weight_dq) == len(set(weight_dq)) == 4
