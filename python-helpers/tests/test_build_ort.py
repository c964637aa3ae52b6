"""build/ort through the real kernel on the compare_run config: ONNX Runtime's optimised graph of the
digits QDQ export, precision as executed, quantize_static next to it, accuracy and latency; plus the
precision analysis on small QDQ graphs built here (a float consumer after a Conv, an Add whose
output is not quantized), where the expected answer is known by construction."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from rpc_client import RpcError

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper

from qat_kernel.runtimes.ort import as_executed


@pytest.fixture(scope="module")
def ort_build_run(kernel, compare_run, validate):
    _, _, config = compare_run
    request_id = kernel.request_async("build/ort", {"config": str(config), "benchRuns": 20})
    result = kernel.result(request_id)
    validate("BuildOrtResult", result)
    return request_id, result, config


def test_ours_runs_conv_and_fc1_int8_fc2_fp32_with_reason(ort_build_run):
    _, result, _ = ort_build_run
    ours = result["variants"][0]
    assert ours["name"] == "ours"
    assert ours["opTypes"].get("QLinearConv") == 2 and ours["opTypes"].get("QGemm") == 1
    assert ours["convMatmulPerPrecision"] == {"int8": 3, "fp32": 1}
    fp32 = [o for o in ours["ops"] if o["precision"] == "fp32"]
    assert [(o["opType"], o["sourceNode"]) for o in fp32] == [("Gemm", "node_linear_1")]
    # the last linear's output is the float logits: no QuantizeLinear follows, its bias stays float
    assert "DequantizeLinear and a float consumer (the graph output)" in fp32[0]["reason"]
    assert "bias stays float" in fp32[0]["reason"]
    by_type = {o["opType"]: o for o in ours["ops"]}
    assert by_type["QLinearConv"]["dtypes"] == "uint8 -> uint8" and by_type["QLinearConv"]["role"] == "compute"
    assert by_type["Transpose"]["precision"] == "int8" and by_type["Transpose"]["role"] == "layout"
    assert ours["perPrecision"]["conversion"] == ours["opTypes"].get("QuantizeLinear", 0) + ours["opTypes"].get(
        "DequantizeLinear", 0
    )


def test_quantize_static_fuses_every_layer(ort_build_run):
    _, result, _ = ort_build_run
    qs = next(v for v in result["variants"] if v["name"] == "quantize_static")
    # ORT's own placement quantizes the logits too, so fc2 becomes a QGemm as well
    assert qs["convMatmulPerPrecision"] == {"int8": 4, "fp32": 0}
    assert not [o for o in qs["ops"] if o["precision"] == "fp32"]
    assert qs["accuracy"] > 0.9 and qs["top1AgreementVsTorchInt8"] > 0.95


def test_files_report_and_markdown(ort_build_run):
    _, result, config = ort_build_run
    out = config.parent / "out" / "ort-cpu"
    assert result["outDir"] == str(out)
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [
            "build-report.json",
            "build-report.md",
            "fp32.onnx",
            "model.optimized.onnx",
            "model.qdq.onnx",
            "model.qdq.replaced.onnx",
            "model.replaced.optimized.onnx",
            "model.qs.onnx",
            "model.qs.optimized.onnx",
        ]
    )
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".ort-cpu")]
    optimized = onnx.load(str(out / "model.optimized.onnx"))
    assert sum(n.op_type == "QLinearConv" for n in optimized.graph.node) == 2
    for v in result["variants"]:
        assert Path(v["optimized"]).stat().st_size == v["bytes"]["optimized"] > 0
    report = json.loads((out / "build-report.json").read_text(encoding="utf-8"))
    assert report["variants"] == result["variants"] and report["request"]["config"] == str(config)
    md = (out / "build-report.md").read_text(encoding="utf-8")
    assert "| node_linear_1 | Gemm | fp32 | compute |" in md
    # the copied QDQ file is the one exported, byte for byte
    assert (out / "model.qdq.onnx").read_bytes() == Path(result["onnx"]).read_bytes()


def test_accuracy_and_latency(ort_build_run):
    _, result, _ = ort_build_run
    ours = result["variants"][0]
    assert result["samples"] == 540
    assert ours["top1AgreementVsTorchInt8"] >= 0.99 and ours["accuracy"] > 0.9
    rows = {r["name"]: r for r in result["bench"]["rows"]}
    assert set(rows) == {"torch-fp32", "torch-int8", "ort-fp32", "ort-int8", "ort-replaced-int8", "ort-qs-int8"}
    assert rows["torch-fp32"]["speedupVsTorchFp32"] == {"b1": 1.0, "b16": 1.0}
    for row in rows.values():
        assert row["latency"]["b1"]["medianMs"] > 0 and row["latency"]["b16"]["runs"] == 20
    assert rows["ort-int8"]["bytes"] < rows["ort-fp32"]["bytes"]
    text = "\n".join(result["summary"])
    print(text)
    assert "ONNX Runtime INT8 (quantize_static)" in text and "ratio to PyTorch FP32" in text


def test_replaced_digits_runs_fc2_as_qgemm_with_float_logits(ort_build_run):
    _, result, config = ort_build_run
    names = [v["name"] for v in result["variants"]]
    assert names == ["ours", "replaced", "quantize_static"]
    replaced = result["variants"][1]
    # the only change digits needs: fc2's float bias made int32, so ORT runs it as a QGemm writing float logits
    rq = result["qdqReplacement"]
    assert [(i["kind"], i["tensor"], i["node"]) for i in rq["inserted"]] == [("bias", "fc2.bias", "node_linear_1")]
    assert rq["inserted"][0]["maxRoundingError"] <= rq["inserted"][0]["scale"] / 2 + 1e-9
    assert rq["calibrationSamples"] == 0 and rq["outputKind"] == "accumulator"
    assert replaced["convMatmulPerPrecision"] == {"int8": 4, "fp32": 0} and replaced["opTypes"]["QGemm"] == 2
    assert rq["before"]["fp32Ops"] == ["node_linear_1"] and rq["after"]["fp32Ops"] == []
    assert rq["after"]["top1AgreementVsTorchInt8"] >= rq["before"]["top1AgreementVsTorchInt8"]
    # one int32 rounding of the bias moves the logits by at most a step or so more than before
    assert rq["after"]["maxDiffSteps"] <= rq["before"]["maxDiffSteps"] + 2
    assert rq["before"]["latencyMs"]["b1"] > 0 and rq["after"]["latencyMs"]["b16"] > 0
    beside = config.parent / "out" / "digits.qdq.replaced.onnx"
    assert rq["onnx"] == str(beside) and rq["artifact"] == replaced["onnx"]
    assert beside.read_bytes() == Path(replaced["onnx"]).read_bytes()
    assert not [p for p in beside.parent.iterdir() if p.name.startswith(".digits.qdq.replaced")]
    text = "\n".join(result["summary"])
    assert "Q/DQ re-placement of our export (1 int32 bias" in text and "conv/matmul ops fp32: 1 -> 0" in text
    md = Path(result["markdownPath"]).read_text(encoding="utf-8")
    assert "## Q/DQ re-placement" in md and "| conv/matmul ops int8 | 3 | 4 |" in md


def test_eager_flow_is_config_invalid(kernel, compare_run):
    config = compare_run[2].parent / "eager.qat.yaml"
    with pytest.raises(RpcError) as err:
        kernel.request("build/ort", {"config": str(config)}, timeout=60)
    assert err.value.code == -32001 and err.value.data["path"] == "flow"


# ------------------------------------------------------------------------ analysis on built graphs


def _qdq_model(tmp_path: Path, tail: str) -> Path:
    """x -> Q/DQ -> Conv(DQ int8 weight) -> then `tail`: "q" (Relu -> Q -> DQ -> output), "float"
    (Relu -> output: nothing quantizes the conv's output), "add" (Q/DQ, then Add of it with itself
    -> output)."""
    rng = np.random.default_rng(0)
    inits = [
        numpy_helper.from_array(np.array(0.02, np.float32), "s"),
        numpy_helper.from_array(np.array(0, np.uint8), "z"),
        numpy_helper.from_array(rng.integers(-100, 100, (4, 1, 3, 3)).astype(np.int8), "w_q"),
        numpy_helper.from_array(np.full(4, 0.01, np.float32), "w_s"),
        numpy_helper.from_array(np.zeros(4, np.int8), "w_z"),
        numpy_helper.from_array(rng.normal(size=4).astype(np.float32), "b"),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"], name="q_in"),
        helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"], name="dq_in"),
        helper.make_node("DequantizeLinear", ["w_q", "w_s", "w_z"], ["w"], name="dq_w", axis=0),
        helper.make_node("Conv", ["xd", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
    ]
    if tail == "q":
        nodes += [
            helper.make_node("QuantizeLinear", ["r", "s", "z"], ["rq"], name="q_out"),
            helper.make_node("DequantizeLinear", ["rq", "s", "z"], ["y"], name="dq_out"),
        ]
    elif tail == "float":
        nodes += [helper.make_node("Identity", ["r"], ["y"], name="out")]
    else:
        nodes += [
            helper.make_node("QuantizeLinear", ["r", "s", "z"], ["rq"], name="q_out"),
            helper.make_node("DequantizeLinear", ["rq", "s", "z"], ["rd"], name="dq_out"),
            helper.make_node("Add", ["rd", "rd"], ["y"], name="add"),
        ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 6, 6])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    path = tmp_path / f"{tail}.onnx"
    onnx.save(model, str(path))
    return path


@pytest.mark.parametrize("tail", ["q", "float", "add"])
def test_precision_on_built_graphs(tmp_path, tail):
    src = _qdq_model(tmp_path, tail)
    as_executed.optimized_session(src, tmp_path / "opt.onnx")
    result = as_executed.precision_as_executed(tmp_path / "opt.onnx", src)
    by_source = {o.get("sourceNode"): o for o in result["ops"]}
    if tail == "float":
        conv = by_source["conv"]
        assert conv["precision"] == "fp32" and "no QuantizeLinear on its output" in conv["reason"]
        assert result["convMatmulPerPrecision"] == {"int8": 0, "fp32": 1}
    else:
        assert result["opTypes"].get("QLinearConv") == 1
        assert result["convMatmulPerPrecision"] == {"int8": 1, "fp32": 0}
    if tail == "add":
        add = by_source["add"]
        assert add["precision"] == "fp32" and "float consumer (the graph output)" in add["reason"]
        assert "QLinearAdd" in add["reason"]


def test_dtype_inference_follows_zero_points(tmp_path):
    src = _qdq_model(tmp_path, "q")
    types = as_executed.infer_dtypes(onnx.load(str(src)))
    assert types["xq"] == "uint8" and types["xd"] == "float32" and types["w"] == "float32"
    assert types["c"] == "float32" and types["rq"] == "uint8"
