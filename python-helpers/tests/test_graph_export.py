"""graph/export writes the graph view's JSON (ModelGraph) for the FP32, prepared and INT8 models."""

import json
from pathlib import Path

import pytest
from conftest import copy_example


def test_compare_layers_leaves_the_fp32_graph_for_the_language_server(compare_run, validate):
    _, _, config = compare_run
    path = config.parent / "out" / "digits.fp32.qatgraph.json"
    graph = json.loads(path.read_text(encoding="utf-8"))
    validate("ModelGraph", graph)
    assert {"conv1", "conv2", "fc1", "fc2"} <= {m["path"] for m in graph["modules"]}
    # Runs before the `graphs` fixture below writes that file itself (tests run in file order).


@pytest.fixture(scope="module")
def graphs(kernel, compare_run, validate):
    """{stage: (result, written graph)} for the config compare/layers trained (prepared/converted reuse it)."""
    _, _, config = compare_run
    out = {}
    for stage in ("fp32", "prepared", "converted"):
        result = kernel.request("graph/export", {"config": str(config), "stage": stage})
        validate("GraphExportResult", result)
        graph = json.loads(Path(result["path"]).read_text(encoding="utf-8"))
        validate("ModelGraph", graph)
        out[stage] = (result, graph)
    return out


def _ops(graph, word):
    return [n for n in graph["nodes"] if word in n["op"]]


def test_files_land_at_the_default_place_and_name_their_config(graphs, compare_run):
    _, _, config = compare_run
    for stage, (result, graph) in graphs.items():
        assert Path(result["path"]) == config.parent / "out" / f"digits.{stage}.qatgraph.json"
        assert graph["config"] == str(config) and graph["stage"] == stage and graph["flow"] == "pt2e"
        assert result["nodes"] == len(graph["nodes"])
        assert not list((config.parent / "out").glob(".*.tmp")), "temp files left behind"


def test_int8_graph_has_qdq_with_parameters_and_int8_layers(graphs):
    _, graph = graphs["converted"]
    quant, dequant = _ops(graph, "quantize_per_tensor"), _ops(graph, "dequantize_per_channel")
    assert quant and dequant
    q = [n for n in quant if "dequantize" not in n["op"]][0]
    assert q["qparams"]["dtype"] == "uint8" and q["qparams"]["scale"] > 0 and 0 <= q["qparams"]["zero_point"] <= 255
    per_channel = dequant[0]["qparams"]
    assert isinstance(per_channel["scale"], list) and per_channel["axis"] == 0 and per_channel["dtype"] == "int8"
    convs = _ops(graph, "conv2d")
    assert [c["module"] for c in convs] == ["conv1", "conv2"]
    assert all(c["precision"] == "int8" for c in convs)
    assert {n["module"] for n in _ops(graph, "linear")} == {"fc1", "fc2"}


def test_fp32_graph_has_no_quantization_and_points_at_the_source(graphs, compare_run):
    _, graph = graphs["fp32"]
    assert not _ops(graph, "quantize"), "FP32 graph with Q/DQ nodes"
    assert {n.get("precision") for n in graph["nodes"] if n["kind"] == "op"} == {"fp32"}
    _, _, config = compare_run
    model_py = (config.parent / "model.py").read_text(encoding="utf-8").splitlines()
    conv1 = _ops(graph, "conv2d")[0]
    assert conv1["source"]["file"] == str(config.parent / "model.py")
    assert "self.conv1(" in model_py[conv1["source"]["line"] - 1]
    modules = {m["path"]: m for m in graph["modules"]}
    assert {"conv1", "bn1", "fc1", "fc2"} <= set(modules) and modules["fc2"]["type"] == "Linear"
    assert model_py[modules["fc2"]["source"]["line"] - 1].strip().startswith("self.fc2 = nn.Linear(")
    # a Linear's in_features, what the language server checks a torchao group size against (QCFG017)
    assert (modules["fc1"]["inFeatures"], modules["fc2"]["inFeatures"]) == (512, 64)
    assert "inFeatures" not in modules["conv1"]
    assert graph["tensors"][conv1["outputs"][0]]["dims"][1:] == [16, 8, 8]


def test_prepared_graph_marks_fake_quantized_layers(graphs):
    _, graph = graphs["prepared"]
    convs = _ops(graph, "conv2d")
    assert convs and all(c["precision"] == "int8" for c in convs), [c.get("precision") for c in convs]


def test_ort_stage_is_the_graph_onnx_runtime_runs_with_modules(kernel, compare_run, validate):
    """The `ort` pane: ONNX Runtime's optimised graph of the QDQ export (reused: compare/layers wrote it for
    this model), its fused nodes naming the modules they came from."""
    onnx = pytest.importorskip("onnx")
    _, _, config = compare_run
    result = kernel.request("graph/export", {"config": str(config), "stage": "ort"})
    validate("GraphExportResult", result)
    assert Path(result["path"]) == config.parent / "out" / "digits.ort.onnx" and result["stage"] == "ort"
    model = onnx.load(result["path"])
    assert result["nodes"] == len(model.graph.node)
    props = [{p.key: p.value for p in n.metadata_props} for n in model.graph.node if n.op_type == "QLinearConv"]
    assert [json.loads(p["qat_studio.modules"]) for p in props] == [["conv1", "relu1"], ["conv2", "relu2"]]
    assert {"conv1", "fc2"} <= {m["path"] for m in result["modules"]}


def test_fp32_stage_needs_no_training(kernel, tmp_path, validate):
    """A fresh config: the float graph comes straight from model.entry (no data, no QAT)."""
    config = copy_example(tmp_path / "digits")
    result = kernel.request("graph/export", {"config": str(config), "stage": "fp32", "path": "graphs/float.json"})
    assert result["path"] == str(config.parent / "graphs" / "float.json")
    graph = json.loads(Path(result["path"]).read_text(encoding="utf-8"))
    validate("ModelGraph", graph)
    assert len(_ops(graph, "conv2d")) == 2


def test_eager_int8_model_as_a_module_graph(kernel, eager_run, validate):
    _, _, config = eager_run
    result = kernel.request("graph/export", {"config": str(config), "stage": "converted"})
    graph = json.loads(Path(result["path"]).read_text(encoding="utf-8"))
    validate("ModelGraph", graph)
    by_module = {n.get("module"): n for n in graph["nodes"]}
    assert by_module["conv1"]["op"] == "ConvReLU2d" and by_module["conv1"]["precision"] == "int8"
    assert by_module["fc2"]["op"] == "Linear" and by_module["fc2"]["precision"] == "int8"
    assert by_module["conv1"]["source"]["line"] > 0, "forward's line of self.conv1(...)"
    assert by_module["bn1"]["op"] == "Identity", "fusion leaves Identity slots; they stay visible"
