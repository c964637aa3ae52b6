"""The kernel's report renderers (jobs/reports) without a kernel: every job's summary in the protocol fixtures is
what the renderer makes of that result, parity verdicts by the stated thresholds, and build/tvm's per-op
precision taken from the conv/matmul itself, as the summary's counts are."""

from __future__ import annotations

import json

import pytest
from conftest import PROTOCOL

from qat_kernel.jobs.reports import analysis, tables, tvm
from qat_kernel.runtimes import parity

FIXTURES = PROTOCOL / "fixtures" / "rpc"


def _fixture(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("name", "render"),
    [
        ("QatTrainResult", analysis.train),
        ("EvalAccuracyResult", analysis.evaluate),
        ("QatConvertResult", analysis.convert),
        ("HistogramsResult", analysis.histograms),
        ("ExportOnnxResult", analysis.export),
        ("CompareLayersResult", analysis.compare),
        ("SensitivityResult", analysis.sensitivity),
        ("MixedPrecisionSearchResult.torchao", analysis.torchao_search),
        ("KernelInfoResult", analysis.kernel_info),
        ("BuildTvmResult", tvm.summary),
    ],
)
def test_the_fixtures_carry_the_rendered_summary(name, render):
    result = _fixture(name)
    assert result["summary"] == render(result)


def test_train_summary_names_the_layers_that_drifted_most():
    train = _fixture("QatTrainResult")
    lines = analysis.drift_lines(train["drift"])
    assert lines[0].startswith(f"observer drift over steps 1-{train['drift']['steps'][-1]}") and len(lines) == 4
    moved = [abs(float(line.rsplit("(", 1)[1].split(" %")[0])) for line in lines[1:]]
    assert moved == sorted(moved, reverse=True) and moved[0] > 0
    assert analysis.drift_lines(None) == []
    assert lines[1] in analysis.train(train)


def test_parity_verdicts_follow_the_stated_thresholds():
    t = parity.THRESHOLDS
    assert t == {"okTop1": 0.99, "okWithinOneStep": 0.99, "failTop1": 0.90}
    assert parity.verdict({"top1Agreement": 1.0}, "accumulator") == "ok"
    # the user's case: 95 % top-1 agreement is not ok
    assert parity.verdict({"top1Agreement": 0.95}, "accumulator") == "check"
    assert parity.verdict({"top1Agreement": 0.80}, "accumulator") == "fail"
    # a quantized output also needs its samples within one output step
    assert parity.verdict({"top1Agreement": 1.0, "withinOneStep": 0.97}, "quantized") == "check"
    assert parity.verdict({"top1Agreement": 0.995, "withinOneStep": 0.995}, "quantized") == "ok"
    assert parity.verdict({}, "quantized") == "n/a"
    md = "\n".join(
        tables.parity_markdown(
            "Parity with PyTorch INT8 (100 validation samples)",
            [("TVM INT8", {"top1Agreement": 0.95, "maxAbsDiff": 0.5, "maxRelDiff": 0.1}, 0.9)],
            "accumulator",
        )
    )
    assert "**ok** where top-1 agreement ≥ 99 %; **fail** where top-1 agreement is under 90 %" in md
    assert "| TVM INT8 | check | 95.0 % |" in md
    quantized = tables.parity_thresholds("quantized")
    assert "≥ 99 % of samples within one output quantization step" in quantized


def test_the_build_tvm_fixture_report_counts_what_its_summary_counts():
    result = _fixture("BuildTvmResult")
    assert result["markdown"] == tvm.markdown(result)
    per = tvm.node_counts(result["ops"])
    assert per["anchors"].get("int8", 0) == result["anchorsPerPrecision"]["after"]["int8"]
    assert f"(Conv/Gemm/MatMul nodes: {tables.counts(per['anchors'])})" in "\n".join(result["summary"])
    assert all(o.get("module") for o in result["ops"] if o["opType"] in tvm.ANCHOR_NODES)


def test_a_conv_takes_the_precision_of_its_conv2d_not_of_a_helper_binding():
    """MobileNetV2's report listed int8 convs as fp32 for an `isnan` the importer made for a Clip bound and
    attributed to the Conv: the per-op table must agree with the conv/matmul counts."""
    onnx = pytest.importorskip("onnx")
    from onnx import helper

    from qat_kernel.runtimes.tvm.build import _onnx_ops

    conv = helper.make_node("Conv", ["x", "w"], ["y"], name="node_conv2d_2")
    conv.metadata_props.add(key="pkg.torch.onnx.name_scopes", value="['', 'features.3.conv.0', 'conv2d']")
    clip = helper.make_node("Clip", ["y"], ["z"], name="node_hardtanh")
    graph = helper.make_graph([conv, clip], "g", [], [])
    model = helper.make_model(graph)
    assert isinstance(model, onnx.ModelProto)

    def row(var, op, node, precision, reason=None):
        return {"var": var, "op": op, "onnx_node": node, "precision": precision, "detail": None, "reason": reason}

    rows = [
        row("lv2", "isnan", "node_conv2d_2", "fp32", "isnan: no integer pattern for this op"),
        row("lv3", "nn.conv2d", "node_conv2d_2", "int8"),
        row("lv4", "maximum", "node_hardtanh", "fp32", "maximum: no integer pattern for this op"),
    ]
    ops = {o["onnx_node"]: o for o in _onnx_ops(model, rows)}
    assert ops["node_conv2d_2"]["precision"] == "int8" and ops["node_conv2d_2"]["reason"] is None
    assert ops["node_conv2d_2"]["module"] == "features.3.conv.0"
    assert ops["node_hardtanh"]["precision"] == "fp32"
    rows[1]["precision"] = "fp32"
    rows[1]["reason"] = "conv2d: weights not quantized"
    ops = {o["onnx_node"]: o for o in _onnx_ops(model, rows)}
    assert ops["node_conv2d_2"]["precision"] == "fp32"
    assert ops["node_conv2d_2"]["reason"] == "conv2d: weights not quantized"
