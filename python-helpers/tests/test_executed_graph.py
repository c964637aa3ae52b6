"""ONNX Runtime's graph of the digits QDQ export as the graph view's `ort` pane (runtimes/ort/executed_graph.py):
the nodes ORT runs, each fused one naming the export nodes and the modules it came from, and the file still a
model ORT runs as the export does. graph/export's `ort` stage through the kernel is in test_graph_export.py."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from qat_kernel.runtimes.ort.executed_graph import MODULES_KEY, NODES_KEY, PRECISION_KEY, write_executed_graph
from qat_kernel.runtimes.ort.sessions import run_ort

DIGITS_QDQ = Path(__file__).resolve().parents[2] / "test/fixtures/digits/digits.qdq.onnx"


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> tuple[Path, int, list[str]]:
    dest = tmp_path_factory.mktemp("ort") / "digits.ort.onnx"
    count, modules = write_executed_graph(DIGITS_QDQ, dest)
    return dest, count, modules


def _props(node) -> dict[str, str]:
    return {p.key: p.value for p in node.metadata_props}


def test_fused_nodes_name_their_modules_and_export_nodes(written):
    dest, count, modules = written
    model = onnx.load(str(dest))
    assert count == len(model.graph.node)
    by_op: dict[str, list] = {}
    for n in model.graph.node:
        by_op.setdefault(n.op_type, []).append(n)
    convs = by_op["QLinearConv"]
    # conv + its ReLU and the Q/DQ around them are one QLinearConv: it covers both modules
    assert [json.loads(_props(c)[MODULES_KEY]) for c in convs] == [["conv1", "relu1"], ["conv2", "relu2"]]
    first = json.loads(_props(convs[0])[NODES_KEY])
    assert {"node_conv2d", "node_relu", "node_quantize_per_tensor_1"} <= set(first)
    assert any(n.startswith("node_dequantize_per_channel") for n in first), "the weight's DequantizeLinear"
    # the view reads a node's module from the exporter's name scopes: the conv's own
    assert _props(convs[0])["pkg.torch.onnx.name_scopes"] == "['', 'conv1', 'conv2d']"
    (gemm,) = by_op["QGemm"]
    assert json.loads(_props(gemm)[MODULES_KEY]) == ["fc1", "relu3"]
    # fc2 stays a float Gemm (its output is the float logits): still fc2's
    assert json.loads(_props(by_op["Gemm"][0])[MODULES_KEY]) == ["fc2"]
    # the layout Transposes ORT inserted come from no export node
    assert all(MODULES_KEY not in _props(t) and NODES_KEY not in _props(t) for t in by_op["Transpose"])
    # every module of the export is covered by some node ORT runs, in graph order
    assert modules == ["conv1", "relu1", "conv2", "relu2", "pool", "fc1", "relu3", "fc2"]
    assert {p.key: p.value for p in model.metadata_props}["qat_studio.stage"] == "ort"
    # what each node runs in, as ORT executes it: the fused ops int8, fc2's Gemm fp32, Q/DQ none
    assert {_props(n).get(PRECISION_KEY) for n in convs + [gemm]} == {"int8"}
    assert _props(by_op["Gemm"][0])[PRECISION_KEY] == "fp32"
    assert all(PRECISION_KEY not in _props(n) for n in by_op["QuantizeLinear"] + by_op["DequantizeLinear"])


def test_a_float_model_in_orts_blocked_layout_and_fused_gemm(tmp_path):
    """The FP32 twin (Q/DQ stripped): ORT names its NCHWc convs after the ReLU output they write (relu_nchwc) and
    a Gemm fused with its ReLU "fused node_linear"; each still names the modules it came from."""
    from qat_kernel.runtimes.onnx.fp32_twin import strip_qdq

    fp32 = strip_qdq(DIGITS_QDQ, tmp_path / "fp32.onnx")
    write_executed_graph(Path(fp32), tmp_path / "fp32.ort.onnx")
    model = onnx.load(str(tmp_path / "fp32.ort.onnx"))
    modules = [(n.op_type, json.loads(_props(n).get(MODULES_KEY, "[]"))) for n in model.graph.node]
    convs = [m for op, m in modules if op == "Conv"]
    assert convs == [["conv1", "relu1"], ["conv2", "relu2"]], modules
    assert ("FusedGemm", ["fc1", "relu3"]) in modules and ("Gemm", ["fc2"]) in modules
    assert all(not m for op, m in modules if op.startswith("Reorder")), "ORT's layout reorders come from no node"


def test_every_export_node_is_accounted_for_once(written):
    dest, _, _ = written
    model = onnx.load(str(dest))
    export = [n.name for n in onnx.load(str(DIGITS_QDQ)).graph.node]
    covered = [s for n in model.graph.node for s in json.loads(_props(n).get(NODES_KEY, "[]"))]
    assert sorted(covered) == sorted(export)


def test_the_annotated_graph_runs_as_the_export_does(written):
    dest, _, _ = written
    x = np.random.default_rng(0).random((4, 1, 8, 8), dtype=np.float32)
    np.testing.assert_array_equal(run_ort(dest, x), run_ort(DIGITS_QDQ, x))
