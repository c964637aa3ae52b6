"""Q/DQ re-placement (qdq_replace) of a trained QDQ export: through build/ort on a small residual CNN
trained by the kernel (a conv feeding a residual Add, a mean pool, a Linear head), where ONNX Runtime
leaves the conv, the Add and the Gemm in fp32 before and fuses them after; plus the pass on small
graphs built here, where the expected change is known by construction."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import numpy as np
import pytest
import yaml

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from conftest import EXAMPLE
from onnx import TensorProto, helper, numpy_helper

from qat_kernel.runtimes.ort import as_executed, qdq_replace
from qat_kernel.runtimes.ort.sessions import session as ort_session

RESIDUAL_MODEL = textwrap.dedent('''\
    """A small residual CNN for the 8x8 digits: stem, one basic block (the second conv feeds the Add),
    mean pool, Linear."""
    import torch
    from torch import nn


    class ResidualNet(nn.Module):
        def __init__(self, num_classes: int = 10):
            super().__init__()
            self.stem = nn.Conv2d(1, 16, 3, padding=1)
            self.bn0 = nn.BatchNorm2d(16)
            self.relu0 = nn.ReLU()
            self.conv1 = nn.Conv2d(16, 16, 3, padding=1)
            self.bn1 = nn.BatchNorm2d(16)
            self.relu1 = nn.ReLU()
            self.conv2 = nn.Conv2d(16, 16, 3, padding=1)
            self.bn2 = nn.BatchNorm2d(16)
            self.relu2 = nn.ReLU()
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(16, num_classes)

        def forward(self, x):
            x = self.relu0(self.bn0(self.stem(x)))
            y = self.relu1(self.bn1(self.conv1(x)))
            y = self.bn2(self.conv2(y))
            x = self.relu2(y + x)
            return self.fc(torch.flatten(self.pool(x), 1))


    def make_model():
        torch.manual_seed(0)
        return ResidualNet()
    ''')


@pytest.fixture(scope="module")
def residual_run(kernel, tmp_path_factory, validate):
    ws = tmp_path_factory.mktemp("residual") / "res"
    ws.mkdir()
    shutil.copy(EXAMPLE / "data.py", ws / "data.py")
    (ws / "model.py").write_text(RESIDUAL_MODEL, encoding="utf-8")
    cfg = yaml.safe_load((EXAMPLE / "digits.qat.yaml").read_text(encoding="utf-8"))
    cfg["train"].update(lr=0.01, steps=40)
    cfg["export"]["onnx"]["path"] = "out/res.qdq.onnx"
    config = ws / "res.qat.yaml"
    config.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    result = kernel.request("build/ort", {"config": str(config), "benchRuns": 10, "quantizeStatic": False}, timeout=600)
    validate("BuildOrtResult", result)
    print("\n".join(result["summary"]))
    return result, config


def test_residual_convs_add_and_gemm_move_from_fp32_to_int8(residual_run):
    result, _ = residual_run
    rq = result["qdqReplacement"]
    before, after = rq["before"], rq["after"]
    assert after["convMatmulPerPrecision"]["int8"] > before["convMatmulPerPrecision"]["int8"]
    assert after["convMatmulPerPrecision"]["fp32"] < before["convMatmulPerPrecision"]["fp32"]
    assert after["computePerPrecision"]["int8"] > before["computePerPrecision"]["int8"]
    assert after["computePerPrecision"]["fp32"] < before["computePerPrecision"]["fp32"]
    assert after["convMatmulPerPrecision"] == {"int8": 4, "fp32": 0} and after["fp32Ops"] == []
    ours, replaced = result["variants"]
    assert ours["name"] == "ours" and replaced["name"] == "replaced"
    assert "QLinearAdd" not in ours["opTypes"] and "Gemm" in ours["opTypes"]
    for op in ("QLinearAdd", "QGemm", "QLinearGlobalAveragePool"):
        assert replaced["opTypes"].get(op) == 1, op
    assert replaced["opTypes"]["QLinearConv"] == 3


def test_residual_keeps_trained_scales_and_calibrates_only_the_conv_output(residual_run):
    result, config = residual_run
    rq = result["qdqReplacement"]
    kinds = sorted((i["kind"], i["opType"], i.get("source", "")) for i in rq["inserted"])
    assert kinds == [("activation", "Conv", "calibration"), ("bias", "Gemm", ""), ("op", "ReduceMean", "")]
    act = next(i for i in rq["inserted"] if i["kind"] == "activation")
    lo, hi = act["range"]
    assert lo < 0 < hi and act["dtype"] == "uint8" and 0 < act["zeroPoint"] < 255
    assert act["scale"] == pytest.approx((hi - lo) / 255, rel=1e-5)
    assert rq["calibrationSamples"] == 512
    # every scale of the export is still there, unchanged, on the same tensors
    export = onnx.load(result["onnx"])
    replaced = onnx.load(rq["onnx"])
    inits = {t.name: numpy_helper.to_array(t) for t in replaced.graph.initializer}
    for t in export.graph.initializer:
        if t.name in inits and t.name != "fc.bias":
            assert np.array_equal(inits[t.name], numpy_helper.to_array(t)), t.name
    assert Path(rq["onnx"]) == config.parent / "out" / "res.qdq.replaced.onnx"


def test_residual_parity_holds(residual_run):
    result, _ = residual_run
    rq = result["qdqReplacement"]
    before, after = rq["before"], rq["after"]
    assert rq["outputKind"] == "accumulator"
    assert after["top1AgreementVsTorchInt8"] >= before["top1AgreementVsTorchInt8"]
    assert after["accuracy"] >= before["accuracy"] - 0.01
    assert after["maxDiffSteps"] is not None and after["maxAbsDiff"] < 0.5
    for side in (before, after):
        assert side["latencyMs"]["b1"] > 0 and side["latencyMs"]["b16"] > 0


# ------------------------------------------------------------------------------ on built graphs


def _init(name, value):
    return numpy_helper.from_array(np.asarray(value), name)


def _graph(nodes, inits, out_shape, in_shape=("N", 2, 4, 4)):
    out_shape = ("N", *out_shape[1:])
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(in_shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(out_shape))],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_layout_op_of_dequantized_data_is_requantized_at_the_neighbours_scale(tmp_path):
    """x -> Q/DQ -> Flatten -> Gemm(int8 weight) -> Q/DQ -> y: the Flatten output reaches the Gemm
    as float; the pair added there takes the scale of the DequantizeLinear before the Flatten."""
    rng = np.random.default_rng(0)
    model = _graph(
        [
            helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"], name="q_in"),
            helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"], name="dq_in"),
            helper.make_node("Flatten", ["xd"], ["f"], name="flatten"),
            helper.make_node("DequantizeLinear", ["w_q", "w_s"], ["w"], name="dq_w", axis=0),
            helper.make_node("Gemm", ["f", "w", "b"], ["g"], name="gemm", transB=1),
            helper.make_node("QuantizeLinear", ["g", "s_out", "z"], ["gq"], name="q_out"),
            helper.make_node("DequantizeLinear", ["gq", "s_out", "z"], ["y"], name="dq_out"),
        ],
        [
            _init("s", np.float32(0.01)),
            _init("z", np.uint8(0)),
            _init("s_out", np.float32(0.05)),
            _init("w_q", rng.integers(-100, 100, (3, 32)).astype(np.int8)),
            _init("w_s", np.full(3, 0.01, np.float32)),
            _init("b", np.zeros(3, np.float32)),
        ],
        (1, 3),
    )
    src = tmp_path / "flat.onnx"
    onnx.save(model, str(src))
    record = qdq_replace.replace(src, tmp_path / "flat.replaced.onnx")
    assert record["calibrationSamples"] == 0
    (item,) = record["inserted"]
    assert item["kind"] == "activation" and item["tensor"] == "f" and item["source"] == "neighbour"
    assert item["neighbour"] == "dq_in" and item["scale"] == pytest.approx(0.01) and item["zeroPoint"] == 0
    x = rng.uniform(0, 2, (5, 2, 4, 4)).astype(np.float32)
    outs = [
        as_executed.optimized_session(p, tmp_path / f"{p.stem}.opt.onnx").run(None, {"x": x})[0]
        for p in (src, tmp_path / "flat.replaced.onnx")
    ]
    # values on the DequantizeLinear's grid requantize to themselves: the output does not move
    np.testing.assert_array_equal(outs[0], outs[1])


def test_float_layers_and_graph_outputs_are_left_alone(tmp_path):
    """A Conv with a float weight (a layer kept fp32) and an Add whose output is the graph output."""
    rng = np.random.default_rng(1)
    model = _graph(
        [
            helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"], name="q_in"),
            helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"], name="dq_in"),
            helper.make_node("Conv", ["xd", "w_f"], ["c"], name="float_conv", pads=[1, 1, 1, 1]),
            helper.make_node("Add", ["c", "xd"], ["y"], name="add"),
        ],
        [
            _init("s", np.float32(0.01)),
            _init("z", np.uint8(0)),
            _init("w_f", rng.normal(size=(2, 2, 3, 3)).astype(np.float32)),
        ],
        (1, 2, 4, 4),
    )
    assert qdq_replace.plan(model) == []


def test_add_of_quantized_convs_gets_a_calibrated_output_when_nothing_quantizes_it(tmp_path):
    """Two int8 convs feed an Add that feeds a Relu (no QuantizeLinear anywhere after the convs):
    both conv outputs and the Add output get calibrated pairs; the graph output stays float."""
    rng = np.random.default_rng(2)
    w = [_init(f"w{i}_q", rng.integers(-60, 60, (2, 2, 3, 3)).astype(np.int8)) for i in (1, 2)]
    model = _graph(
        [
            helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"], name="q_in"),
            helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"], name="dq_in"),
            helper.make_node("DequantizeLinear", ["w1_q", "ws"], ["w1"], name="dq_w1", axis=0),
            helper.make_node("DequantizeLinear", ["w2_q", "ws"], ["w2"], name="dq_w2", axis=0),
            helper.make_node("Conv", ["xd", "w1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
            helper.make_node("Conv", ["xd", "w2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
            helper.make_node("Add", ["c1", "c2"], ["a"], name="add"),
            helper.make_node("Sigmoid", ["a"], ["y"], name="sigmoid"),
        ],
        [_init("s", np.float32(0.01)), _init("z", np.uint8(0)), _init("ws", np.full(2, 0.02, np.float32)), *w],
        (1, 2, 4, 4),
    )
    src = tmp_path / "add.onnx"
    onnx.save(model, str(src))
    calibration = [rng.uniform(0, 2, (8, 2, 4, 4)).astype(np.float32) for _ in range(2)]
    record = qdq_replace.replace(src, tmp_path / "add.replaced.onnx", calibration)
    assert [(i["tensor"], i["source"]) for i in record["inserted"]] == [
        ("c1", "calibration"),
        ("c2", "calibration"),
        ("a", "calibration"),
    ]
    assert record["calibrationSamples"] == 16
    as_executed.optimized_session(src, tmp_path / "before.opt.onnx")
    as_executed.optimized_session(tmp_path / "add.replaced.onnx", tmp_path / "after.opt.onnx")
    before = as_executed.precision_as_executed(tmp_path / "before.opt.onnx", src)
    after = as_executed.precision_as_executed(tmp_path / "after.opt.onnx", tmp_path / "add.replaced.onnx")
    assert before["convMatmulPerPrecision"] == {"int8": 0, "fp32": 2}
    assert after["convMatmulPerPrecision"] == {"int8": 2, "fp32": 0}
    assert after["opTypes"].get("QLinearAdd") == 1
    x = calibration[0]
    ref = ort_session(src).run(None, {"x": x})[0]
    out = ort_session(tmp_path / "add.replaced.onnx").run(None, {"x": x})[0]
    assert np.abs(out - ref).max() < 0.05


def test_calibration_is_required_when_a_tensor_has_no_neighbour(tmp_path):
    rng = np.random.default_rng(3)
    model = _graph(
        [
            helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"], name="q_in"),
            helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"], name="dq_in"),
            helper.make_node("DequantizeLinear", ["w_q", "ws"], ["w"], name="dq_w", axis=0),
            helper.make_node("Conv", ["xd", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c"], ["y"], name="relu_out"),
        ],
        [
            _init("s", np.float32(0.01)),
            _init("z", np.uint8(0)),
            _init("ws", np.full(2, 0.02, np.float32)),
            _init("w_q", rng.integers(-60, 60, (2, 2, 3, 3)).astype(np.int8)),
        ],
        (1, 2, 4, 4),
    )
    src = tmp_path / "conv.onnx"
    onnx.save(model, str(src))
    with pytest.raises(ValueError, match="calibration inputs are needed"):
        qdq_replace.replace(src, tmp_path / "conv.replaced.onnx")
    assert not list(tmp_path.glob("*.replaced.onnx")) and not list(tmp_path.glob(".*tmp"))
