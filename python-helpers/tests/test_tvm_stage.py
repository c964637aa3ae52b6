"""TVM as a stage of compare/stages (runtimes/tvm/stage.py) on the digits QDQ model and small blocks: taps that keep
the kernels and outputs build/tvm deploys, every layer alone in one library, a layer whose float output lives only
inside a fused kernel compared alone but not tapped, a model TVM cannot build left out with a one-line reason, and
TVM's int8 kernels exact where ONNX Runtime's saturate in int16 (why the saturation cause is not TVM's).

Each stage builds two libraries (~2 s each on 2 cores, plus TVM's first import)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
pytest.importorskip("tvm")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, numpy_helper
from onnx import helper as h

from qat_kernel.runtimes import cpu
from qat_kernel.runtimes.onnx import layers as onnx_layers
from qat_kernel.runtimes.ort import intermediates
from qat_kernel.runtimes.tvm import stage as tvm_stage
from qat_kernel.runtimes.tvm.build import build_tvm
from qat_kernel.runtimes.tvm.run import run_tvm

DIGITS_QDQ = Path(__file__).resolve().parents[2] / "test/fixtures/digits/digits.qdq.onnx"
STEP_SLACK = 1.0 + 1e-3  # one step of two dequantized float32 values reads as 1.000003


def _every_layer(model) -> list[onnx_layers.OnnxLayer]:
    return [layer for found in onnx_layers.layers(model).values() for layer in found]


def _kernels(report: dict) -> list[tuple]:
    return [(k["name"], tuple(k["inputs"]), k["output"]) for k in report["kernels"]]


@pytest.fixture(scope="module")
def digits():
    """(model, its layers, the stage built from it, real digits [64, 1, 8, 8])."""
    from sklearn.datasets import load_digits

    model = onnx.load(str(DIGITS_QDQ))
    wanted = _every_layer(model)
    stage = tvm_stage.tvm_stage(model, wanted, ".")
    x = torch.from_numpy((load_digits().images[:64] / 16.0).astype(np.float32)[:, None])
    yield model, wanted, stage, x
    stage.close()


def test_the_taps_keep_the_kernels_and_the_output_build_tvm_deploys(digits, tmp_path):
    """Every layer's output QuantizeLinear also a graph output: the same int8 kernels (names, dtypes), the same
    precision per ONNX node, and the model's output bit for bit, against build/tvm's build of the file as it is."""
    _, wanted, stage, x = digits
    assert stage.missing is None and stage.local_missing is None, (stage.missing, stage.local_missing)
    assert list(stage.layers) == [layer.output for layer in wanted]  # three uint8 outputs and the logits
    plain = build_tvm(DIGITS_QDQ, "x86-64", tmp_path / "plain")
    assert _kernels(stage.report) == _kernels(plain)
    assert [(o["onnx_node"], o["precision"]) for o in stage.report["ops"]] == [
        (o["onnx_node"], o["precision"]) for o in plain["ops"]
    ]
    assert stage.report["ops_after"]["anchors_per_precision"]["int8"] == 4
    assert stage.notes == [] and stage.kept_float == {}
    assert np.array_equal(stage.forward(x).numpy(), run_tvm(plain["artifact"], x.numpy()))


def test_the_layers_agree_with_onnx_runtime_whole_and_alone(digits):
    """The taps against ORT's on real digits, and each layer alone (one library for all four) against ORT's layer
    alone on inputs that are not on any grid: within one output step (a rounding tie: ORT adds the bias as int32,
    TVM's fold the float bias), the float logits to float precision."""
    model, wanted, stage, x = digits
    final, taps = stage.run(x)
    ort_final, ort = intermediates.Taps(model, wanted).run(x)
    assert (final - ort_final).abs().max() <= 0.05 and torch.equal(final.argmax(1), ort_final.argmax(1))
    for layer in wanted[:-1]:
        assert (taps[layer.output] - ort[layer.output]).abs().max() <= (layer.scale or 0) * STEP_SLACK, layer.module
    rng = np.random.default_rng(0)
    shapes = onnx_layers.shapes(model)
    entries = {
        la.output: torch.from_numpy(rng.uniform(0, 2, [8 if isinstance(d, str) else d for d in shapes[la.entry]]))
        for la in wanted
    }
    alone = stage.local(entries)
    assert [la.output for la in stage.local_layers] == list(alone) == [la.output for la in wanted]
    local_ort = intermediates.LocalRun(model)
    for la in wanted:
        ref = local_ort(la, entries[la.output].float())
        slack = (la.scale or 0) * STEP_SLACK if la.quantized else 1e-5 * ref.abs().max().item()
        assert (alone[la.output] - ref).abs().max() <= slack, la.module


class Residual(torch.nn.Module):
    """A conv whose output is added to its input before it is quantized: its float output exists only inside the
    kernel that adds (conv + add + requantize, fused)."""

    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.conv = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.head = torch.nn.Conv2d(8, 4, 1)

    def forward(self, x):
        y = torch.relu(self.stem(x))
        y = torch.relu(self.conv(y) + y)
        return torch.flatten(torch.nn.functional.max_pool2d(self.head(y), 2), 1)


def test_a_float_output_inside_a_fused_kernel_is_compared_alone_not_tapped(tmp_path):
    from qat_kernel.pipeline import pt2e_flow
    from qat_kernel.runtimes.onnx import qdq_export

    torch.manual_seed(0)
    example = torch.randn(2, 3, 8, 8)
    prepared = pt2e_flow.prepare_qat(Residual(), example)
    for _ in range(2):
        prepared(torch.randn(8, 3, 8, 8))
    path = qdq_export.export_qdq(
        pt2e_flow.convert(prepared), example, tmp_path / "res.onnx", qdq_export.DEFAULT_OPSET, pt2e_flow.dynamic_batch()
    )
    model = onnx.load(str(path))
    wanted = _every_layer(model)
    inner = next(la for la in wanted if la.module == "conv")
    assert not inner.quantized and inner.output not in {o.name for o in model.graph.output}
    stage = tvm_stage.tvm_stage(model, wanted, str(tmp_path))
    try:
        assert stage.missing is None and stage.local_missing is None, (stage.missing, stage.local_missing)
        assert inner.output not in stage.layers and inner.output in stage.every
        assert {la.module for la in stage.layers.values()} == {"stem", "head"}
        assert inner.output in [la.output for la in stage.local_layers]
        plain = build_tvm(path, "x86-64", tmp_path / "plain")
        x = torch.randn(16, 3, 8, 8)
        assert np.array_equal(stage.forward(x).numpy(), run_tvm(plain["artifact"], x.numpy()))
        shapes = onnx_layers.shapes(model)
        entries = {la.output: torch.rand(16, *shapes[la.entry][1:]) for la in wanted}
        entry = entries[inner.output]
        got = stage.local(entries)[inner.output]
        ref = intermediates.LocalRun(model)(inner, entry)
        assert (got - ref).abs().max() <= 1e-5 * ref.abs().max()
    finally:
        stage.close()


def test_a_model_tvm_cannot_build_leaves_the_stage_out_with_one_line(tmp_path):
    """An op TVM 0.27's importer has no converter for (Det): no stage, the reason in one line naming the node."""
    det = h.make_node("Det", ["x"], ["y"], name="node_linalg_det")
    graph = h.make_graph(
        [det],
        "det",
        [h.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 3])],
        [h.make_tensor_value_info("y", TensorProto.FLOAT, ["batch"])],
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 18)])
    model.ir_version = 9
    stage = tvm_stage.tvm_stage(model, [], str(tmp_path))
    assert stage.missing is not None and stage.whole is None and stage.work is None
    assert stage.missing.startswith("TVM cannot build or load this model: build/tvm failed in TVM's ONNX importer")
    assert "Det node node_linalg_det" in stage.missing and "\n" not in stage.missing
    assert stage.batch(torch.zeros(1, 3, 3), {}) == (None, {}, {})


def _full_range_conv(channels: int = 64):
    """x -> Q(u8, 1/255) -> DQ -> Conv(1x1, int8 weights all 127, scale 1/127) -> Q -> DQ: an input of ones makes
    u8 255 x s8 127 products, whose pair sums (64770) overflow int16."""
    inits = [
        numpy_helper.from_array(np.array(1 / 255, np.float32), "sx"),
        numpy_helper.from_array(np.array(0, np.uint8), "zx"),
        numpy_helper.from_array(np.full((8, channels, 1, 1), 127, np.int8), "wq"),
        numpy_helper.from_array(np.full((8,), 1 / 127, np.float32), "sw"),
        numpy_helper.from_array(np.zeros((8,), np.int8), "zw"),
        numpy_helper.from_array(np.array(channels / 127, np.float32), "sy"),
        numpy_helper.from_array(np.array(0, np.uint8), "zy"),
    ]
    nodes = [
        h.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"], name="qx"),
        h.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"], name="dqx"),
        h.make_node("DequantizeLinear", ["wq", "sw", "zw"], ["wd"], name="dqw", axis=0),
        h.make_node("Conv", ["xd", "wd"], ["y"], name="conv"),
        h.make_node("QuantizeLinear", ["y", "sy", "zy"], ["yq"], name="qy"),
        h.make_node("DequantizeLinear", ["yq", "sy", "zy"], ["out"], name="dqy"),
    ]
    graph = h.make_graph(
        nodes,
        "full_range",
        [h.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", channels, 2, 2])],
        [h.make_tensor_value_info("out", TensorProto.FLOAT, ["batch", 8, 2, 2])],
        inits,
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 18)])
    model.ir_version = 9
    return model


def test_tvm_int8_kernels_do_not_saturate_where_onnx_runtime_does(tmp_path):
    """A full-range u8 x s8 conv: TVM's fold computes it in int32 on this CPU (64, within an output step), where ONNX
    Runtime's u8s8 kernel without the x64quantprecision option loses half of it to int16 saturation on an x86 CPU
    without VNNI or AMX (vpmaddubsw). So saturation is no cause for PyTorch INT8 → TVM (divergence.SATURATING)."""
    import onnxruntime as ort

    from qat_kernel.analysis import divergence

    model = _full_range_conv()
    onnx.save(model, str(tmp_path / "full.onnx"))
    report = build_tvm(tmp_path / "full.onnx", "x86-64", tmp_path / "out")
    assert [o["precision"] for o in report["ops"] if o["op_type"] == "Conv"] == ["int8"]
    x = np.ones((1, 64, 2, 2), np.float32)
    assert np.abs(run_tvm(report["artifact"], x) - 64.0).max() <= 64 / 127
    plain = ort.InferenceSession(str(tmp_path / "full.onnx"), providers=["CPUExecutionProvider"])
    saturated = np.asarray(plain.run(None, {"x": x})[0])
    if cpu.saturating_int8():
        assert saturated.max() < 40.0  # 32 pair sums clipped to 32767: about half
    assert "tvm" not in divergence.SATURATING and "ort" in divergence.SATURATING
