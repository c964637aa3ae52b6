"""flow: eager (legacy torch.ao) on examples/digits/eager.qat.yaml: a QuantStub'd DigitsNet, fused,
prepared, trained and converted by the kernel, compared at fused-group outputs through hooks."""


def test_result_matches_schema(eager_run, validate):
    _, result, _ = eager_run
    validate("CompareLayersResult", result)
    assert result["flow"] == "eager"
    assert result["onnx"]["path"] is None and "pt2e" in result["onnx"]["error"]


def test_layers_are_fused_groups_not_identity_slots(eager_run):
    _, result, config = eager_run
    layers = {layer["module"]: layer for layer in result["layers"]}
    # bn1/relu1 became Identity in the converted model: they must not show up as layers.
    assert list(layers) == ["conv1", "conv2", "fc1", "fc2"]
    assert layers["conv1"]["group"] == ["conv2d", "batch_norm", "relu"]
    assert layers["fc1"]["group"] == ["linear", "relu"]
    assert layers["fc2"]["group"] == ["linear"]
    # Healthy layers: comparing at group outputs gives high cosine (name matching gave 0.18).
    for layer in result["layers"]:
        assert layer["cosine"] > 0.98 and layer["sqnr"] > 8, layer
        assert layer["local"]["sqnr"] > 14, layer
        assert layer["vsQatFloatLocal"]["sqnr"] > 20, layer
    model_py = str(config.parent / "model.py")
    assert layers["conv1"]["source"] == {"file": model_py, "line": 21}
    assert layers["fc2"]["source"] == {"file": model_py, "line": 25}


def test_accuracy(eager_run):
    _, result, _ = eager_run
    accuracy = result["accuracy"]
    assert accuracy["samples"] == 540
    assert accuracy["int8"] >= accuracy["fp32"] - 0.01, accuracy


def test_deprecation_warnings_surface_once(eager_run):
    _, result, _ = eager_run
    warnings = result["warnings"]
    assert len(warnings) == len(set(warnings))
    assert any("torch.ao.quantization is deprecated" in w for w in warnings), warnings
    assert len(warnings) <= 6, warnings


def test_fusion_is_detected_from_the_forward_pass():
    import sys

    import torch
    from conftest import EXAMPLE

    from qat_kernel.pipeline.eager_flow import detect_fusion

    sys.path.insert(0, str(EXAMPLE))
    try:
        from model_eager import make_model
    finally:
        sys.path.remove(str(EXAMPLE))
    groups = detect_fusion(make_model(), torch.randn(2, 1, 8, 8))
    assert groups == [["conv1", "bn1", "relu1"], ["conv2", "bn2", "relu2"], ["fc1", "relu3"]]


def test_a_module_the_forward_never_calls_is_left_out(kernel, tmp_path, validate):
    """A conv the model defines but never calls has no output to compare: the other layers are compared, that one
    is left out (as the pt2e export leaves it out); it failed compare/layers with an AttributeError."""
    from conftest import copy_example

    config = copy_example(tmp_path / "digits").parent / "eager.qat.yaml"
    model_py = config.parent / "model_eager.py"
    source = model_py.read_text()
    stubs = "        self.dequant = DeQuantStub()\n"
    assert stubs in source
    model_py.write_text(source.replace(stubs, stubs + "        self.spare = nn.Conv2d(1, 1, 1)  # never called\n"))
    result = kernel.request("compare/layers", {"config": str(config), "samples": 16, "steps": 5})
    validate("CompareLayersResult", result)
    assert [layer["module"] for layer in result["layers"]] == ["conv1", "conv2", "fc1", "fc2"]
