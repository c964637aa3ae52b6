"""compare/stages ("QAT: Find Where INT8 Diverges") on the digits CNN: every layer found in FP32, fake-quant,
PyTorch INT8, ONNX Runtime, the C runner and TVM, each pair compared per layer, and the bisect naming the layer and
the stage of a divergence planted in the exported ONNX model, or in the model TVM alone builds."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from conftest import copy_example
from onnx import numpy_helper
from rpc_client import RpcError

from qat_kernel.analysis import divergence

pytest.importorskip("torch")
pytest.importorskip("onnxruntime")


@pytest.fixture(scope="module")
def stages(kernel, tmp_path_factory):
    """(config, result) of one compare/stages run on a copy of the digits example."""
    config = copy_example(tmp_path_factory.mktemp("stages") / "digits")
    return config, kernel.request("compare/stages", {"config": str(config)}, timeout=900)


def test_every_layer_is_found_in_every_stage_and_validates(stages, validate):
    _, r = stages
    validate("CompareStagesResult", r)
    assert [s["id"] for s in r["stages"]] == ["fp32", "fakeQuant", "int8", "ort", "c", "tvm"] and "missing" not in r
    assert r["bisected"] == ["fakeQuant:int8", "int8:ort", "int8:c", "int8:tvm"]
    assert [row["module"] for row in r["layers"]] == ["conv1", "conv2", "fc1", "fc2"]
    for row in r["layers"]:
        assert all(row["stages"].values()) and len(row["stages"]) == 6, row
        assert set(row["pairs"]) == {"fp32:fakeQuant", "fakeQuant:int8", "int8:ort", "int8:c", "int8:tvm"}, row
        for key in ("fakeQuant:int8", "int8:ort", "int8:c", "int8:tvm"):
            assert "local" in row["pairs"][key] and "propagated" in row["pairs"][key], (key, row)
        assert row["onnx"]["nodes"], row
    # The last layer gives float logits (no output quantization): judged by SQNR, no steps.
    assert "outputScale" not in r["layers"][-1] and "localSteps" not in r["layers"][-1]["pairs"]["int8:ort"]
    assert r["layers"][0]["source"]["file"].endswith("model.py")


def test_the_stages_that_compute_the_same_numbers_agree_to_rounding(stages):
    """On the example, PyTorch INT8 and ONNX Runtime compute the same integer model: no layer diverges, and the
    quantization error itself (FP32 -> fake-quant) is far larger than any runtime difference."""
    _, r = stages
    assert r["divergence"] == {}, r["divergence"]
    for row in r["layers"]:
        for key in r["bisected"]:
            c = row["pairs"][key]
            if "localSteps" in c:
                assert c["localSteps"] <= divergence.ROUNDING_STEPS, (row["module"], key, c)
            else:
                assert c["local"]["sqnr"] >= divergence.FLOAT_SQNR_DB, (row["module"], key, c)
        quantization = row["pairs"]["fp32:fakeQuant"]["propagated"]["sqnr"]
        assert row["pairs"]["int8:ort"]["propagated"]["sqnr"] > quantization + 20, row
    assert r["outputs"]["int8:ort"]["top1Agreement"] >= 0.98
    assert r["outputs"]["int8:c"]["top1Agreement"] >= 0.98
    assert r["outputs"]["int8:tvm"]["top1Agreement"] >= 0.98
    a = r["accuracy"]
    assert abs(a["ort"] - a["int8"]) <= 0.02 and abs(a["c"] - a["int8"]) <= 0.02 and a["samples"] > 0
    assert abs(a["tvm"] - a["int8"]) <= 0.02


def test_the_report_is_written_and_summarised(stages):
    _, r = stages
    text = open(r["markdownPath"], encoding="utf-8").read()
    assert text.startswith("# Where INT8 diverges: digits.qat.yaml")
    assert "| 1 | `conv2` | conv2d |" in text
    assert any(line.startswith("PyTorch INT8 → ONNX Runtime: every layer agrees") for line in r["summary"])


def _plant_output_scale(source, dest, module: str, factor: float) -> str:
    """A copy of the QDQ model whose `module` layer quantizes its output with `factor` times its scale (its own
    initializer, so no other layer changes); returns the QuantizeLinear's name."""
    model = onnx.load(str(source))
    name = _planted_scale(model, module, factor)
    onnx.save(model, str(dest))
    return name


def _planted_scale(model: onnx.ModelProto, module: str, factor: float) -> str:
    """`model` edited as _plant_output_scale says; returns the QuantizeLinear's name."""
    from qat_kernel.runtimes.onnx import layers

    layer = layers.layers(model)[module][0]
    inits = {t.name: t for t in model.graph.initializer}
    q = next(n for n in model.graph.node if n.output and n.output[0] == layer.output)
    dq = [n for n in model.graph.node if n.op_type == "DequantizeLinear" and n.input[0] == q.output[0]]
    scale = numpy_helper.to_array(inits[q.input[1]]) * np.float32(factor)
    planted = numpy_helper.from_array(scale.astype(np.float32), name=f"{q.input[1]}__planted")
    model.graph.initializer.append(planted)
    for node in [q, *dq]:
        node.input[1] = planted.name
    return q.name


def test_a_scale_planted_in_one_layer_of_the_onnx_model_is_found_there(kernel, stages):
    """conv2's output quantization given a quarter of its scale in the ONNX file: the bisect of PyTorch INT8 vs
    ONNX Runtime names conv2 (not conv1 before it, nor what comes after), says the output scales differ, and
    fake-quant vs PyTorch INT8 still agree."""
    config, r = stages
    planted = config.parent / "out" / "planted.qdq.onnx"
    node = _plant_output_scale(r["onnx"], planted, "conv2", 0.25)
    p = kernel.request("compare/stages", {"config": str(config), "onnx": "out/planted.qdq.onnx"}, timeout=900)
    found = p["divergence"]["int8:ort"]
    assert (found["module"], found["index"]) == ("conv2", 1), found
    assert found["localSteps"] > 10 and "output quantization differs" in found["cause"], found
    assert node in p["layers"][1]["onnx"]["nodes"]
    assert "fakeQuant:int8" not in p["divergence"] and "int8:c" not in p["divergence"]
    assert (p["divergence"]["int8:tvm"]["module"], p["divergence"]["int8:tvm"]["index"]) == ("conv2", 1)  # same file
    assert p["layers"][0]["pairs"]["int8:ort"]["localSteps"] <= divergence.ROUNDING_STEPS
    assert p["onnx"] == str(planted.resolve())
    assert any(line.startswith("PyTorch INT8 → ONNX Runtime: first diverges at conv2") for line in p["summary"])


def test_an_onnx_param_that_is_no_onnx_model_is_a_config_error(kernel, stages):
    config, _ = stages
    (config.parent / "out" / "notes.onnx").write_text("not a model", encoding="utf-8")
    with pytest.raises(RpcError) as err:
        kernel.request("compare/stages", {"config": str(config), "onnx": "out/notes.onnx"}, timeout=900)
    assert err.value.data["kind"] == "configInvalid"
    assert "cannot be read as an ONNX model" in err.value.message


def test_an_eager_config_is_told_the_pt2e_flow_is_needed(kernel, tmp_path):
    config = copy_example(tmp_path / "eager").parent / "eager.qat.yaml"
    with pytest.raises(RpcError) as err:
        kernel.request("compare/stages", {"config": str(config)}, timeout=300)
    assert err.value.data["kind"] == "configInvalid" and err.value.data.get("path") == "flow"


# --- TVM given a model of its own: compare/stages run in this process, its TVM stage fed an edited model -----


@pytest.fixture(scope="module")
def in_process(tmp_path_factory):
    """compare/stages on a copy of the digits example, run in this process (the first call trains, the next ones
    reuse that model), so that a test can give the TVM stage alone another model."""
    from qat_kernel.jobs import compare_stages as job
    from qat_kernel.rpc.context import RequestContext

    config = str(copy_example(tmp_path_factory.mktemp("stages-here") / "digits"))

    def run() -> dict:
        ctx = RequestContext(0, "compare/stages", {"config": config}, lambda method, params: None)
        return job.compare_stages(ctx, config=config, samples=32, steps=None, onnx_path=None)

    return run


def _tvm_builds(monkeypatch, edit) -> None:
    """The TVM stage of compare/stages builds `edit(model)` (a copy) where ORT runs the model itself."""
    from qat_kernel.runtimes.tvm import stage as tvm_stage

    real = tvm_stage.tvm_stage

    def edited(model, *args, **kwargs):
        copy = onnx.ModelProto()
        copy.CopyFrom(model)
        edit(copy)
        return real(copy, *args, **kwargs)

    monkeypatch.setattr(tvm_stage, "tvm_stage", edited)


def test_a_scale_planted_in_the_model_only_tvm_builds_is_found_there(in_process, monkeypatch, validate):
    """conv2's output scale quartered in TVM's model alone: the PyTorch INT8 → TVM bisect names conv2 (conv1 before
    it agrees), says TVM's output scale differs, and ONNX Runtime on the file as exported still agrees."""
    _tvm_builds(monkeypatch, lambda model: _planted_scale(model, "conv2", 0.25))
    p = in_process()
    validate("CompareStagesResult", p)
    found = p["divergence"]["int8:tvm"]
    assert (found["module"], found["index"]) == ("conv2", 1), found
    assert found["localSteps"] > 10 and "output quantization differs: TVM uses scale" in found["cause"], found
    assert "int8:ort" not in p["divergence"] and "fakeQuant:int8" not in p["divergence"], p["divergence"]
    assert p["layers"][0]["pairs"]["int8:tvm"]["localSteps"] <= divergence.ROUNDING_STEPS
    assert p["layers"][2]["pairs"]["int8:tvm"]["localSteps"] <= divergence.ROUNDING_STEPS  # fc1 alone: fed INT8's
    assert any(line.startswith("PyTorch INT8 → TVM: first diverges at conv2") for line in p["summary"])


def _with_det(model: onnx.ModelProto) -> None:
    """A Det of the input (an op TVM 0.27's importer has no converter for) as one more graph output."""
    from onnx import helper

    x = model.graph.input[0].name
    model.graph.node.append(helper.make_node("Det", [x], ["planted_det"], name="node_planted_det"))
    model.graph.output.append(onnx.ValueInfoProto(name="planted_det"))


def test_a_model_tvm_cannot_build_leaves_its_stage_out_with_the_reason(in_process, monkeypatch, validate):
    _tvm_builds(monkeypatch, _with_det)
    p = in_process()
    validate("CompareStagesResult", p)
    why = p["missing"]["tvm"]
    assert why.startswith("TVM cannot build or load this model: build/tvm failed in TVM's ONNX importer on Det node")
    assert "\n" not in why and set(p["missing"]) == {"tvm"}
    assert [s["id"] for s in p["stages"]] == ["fp32", "fakeQuant", "int8", "ort", "c"]
    assert p["accuracy"]["tvm"] is None and "int8:tvm" not in p["pairs"] + p["bisected"] + list(p["outputs"])
    assert all(not row["stages"]["tvm"] and "int8:tvm" not in row["pairs"] for row in p["layers"])
    assert f"TVM not compared: {why}" in p["summary"]
    assert f"- TVM not compared: {why}" in open(p["markdownPath"], encoding="utf-8").read()


# --- the bisect and its causes, on rows as compare/stages makes them ------------------------------------


def _row(module: str, steps: float, sqnr: float = 40.0) -> dict:
    local = {"cosine": 1.0, "sqnr": sqnr, "mse": 0.0, "maxAbs": steps, "normalizedL2": 0.0}
    return {"module": module, "op": "conv2d", "pairs": {"int8:ort": {"local": local, "localSteps": steps}}}


def _facts(**kw) -> divergence.LayerFacts:
    base = {
        "input_scale": {},
        "output_scale": {},
        "weight_scale": {},
        "activation_levels": 256,
        "weight_levels": 255,
        "saturating_cpu": False,
    }
    return divergence.LayerFacts(**{**base, **kw})


def test_bisect_names_the_first_layer_past_rounding_not_the_worst():
    rows = [_row("a", 1.0), _row("b", 4.0), _row("c", 30.0)]
    facts = {m: _facts() for m in "abc"}
    found = divergence.bisect(rows, facts, ("int8", "ort"))
    assert found is not None and (found["module"], found["index"]) == ("b", 1)
    assert divergence.worst(rows, ("int8", "ort")) == {"module": "c", "localSteps": 30.0, "localSqnr": 40.0}
    assert divergence.bisect([_row("a", 1.0)], facts, ("int8", "ort")) is None


def test_causes_are_told_from_what_is_known():
    saturating = _facts(saturating_cpu=True)
    assert "vpmaddubsw" in divergence.cause(("fakeQuant", "int8"), saturating, 6.0)
    seven_bit = _facts(saturating_cpu=True, activation_levels=128)
    assert "no known cause" in divergence.cause(("fakeQuant", "int8"), seven_bit, 6.0)
    assert "rounding" in divergence.cause(("fakeQuant", "int8"), _facts(), 2.0)
    scales = _facts(output_scale={"int8": 0.1, "ort": 0.025})
    assert "output quantization differs" in divergence.cause(("int8", "ort"), scales, 40.0)
    assert "vpmaddubsw" in divergence.cause(("int8", "ort"), saturating, 6.0)
    assert "vpmaddubsw" not in divergence.cause(("int8", "tvm"), saturating, 6.0)  # test_tvm_stage: no saturation
    kept = _facts(kept_float={"tvm": "conv2d: the weight is not a constant"})
    told = divergence.cause(("int8", "tvm"), kept, 4.0)
    assert told.startswith("TVM computes this layer in float32, not in int8: conv2d: the weight is not a constant")
    weights = _facts(weight_scale={"fakeQuant": [0.15437, 0.1], "int8": [0.14408, 0.1]}, saturating_cpu=True)
    told = divergence.cause(("fakeQuant", "int8"), weights, 66.0)
    assert "weight quantization differs" in told and "6.7 %" in told, told


def test_a_bias_rounded_at_a_coarse_accumulator_step_is_told_for_onnx_runtime_only():
    # cifar MobileNetV2's features.16.conv.3, channel 81: 4-bit weights with scale 12 make the accumulator step
    # 11 output steps, and ONNX Runtime's int32 bias is up to 4.8 steps off the float one
    found = divergence.bias_rounding([0.01, 0.108038], 0.0160163, [0.2, 11.994184], 0.0174383)
    assert found is not None and found.channel == 1
    assert found.accumulator_steps == pytest.approx(11.016, abs=1e-3) and found.steps == pytest.approx(4.82, abs=0.01)
    facts = _facts(bias=found, activation_levels=256, weight_levels=15)
    told = divergence.cause(("int8", "ort"), facts, 5.0)
    assert "int32 at the accumulator's scale" in told and "channel 1" in told and "4.8 steps" in told, told
    # more than the bias explains, or a runtime that adds the float bias: not this cause
    assert "int32" not in divergence.cause(("int8", "ort"), facts, 9.0)
    assert "int32" not in divergence.cause(("int8", "c"), facts, 5.0)
    assert divergence.bias_rounding([], 0.1, [0.1], 0.1) is None
    assert divergence.bias_rounding([0.1, 0.2], 0.1, [0.1, 0.1, 0.1], 0.1) is None


def test_onnx_runtime_rounds_a_qdq_convs_float_bias_to_the_accumulator_scale():
    # The claim behind INTEGER_BIAS, on the pinned onnxruntime: a DQ -> Conv(float bias) -> Q model runs as
    # QLinearConv with round(bias / (s_x * s_w)), so its outputs sit where bias_rounding says, not at the float bias.
    import onnxruntime as ort
    from onnx import TensorProto, helper

    rng = np.random.default_rng(0)
    channels, s_x, s_y = 8, 0.02, 0.015
    weight = rng.integers(-7, 8, size=(channels, 1, 3, 3)).astype(np.int8)
    s_w = np.linspace(0.3, 12.0, channels).astype(np.float32)
    bias = rng.uniform(-1, 1, channels).astype(np.float32)
    init = [
        numpy_helper.from_array(np.array(s_x, np.float32), "s_x"),
        numpy_helper.from_array(np.array(0, np.uint8), "z_x"),
        numpy_helper.from_array(weight, "w_q"),
        numpy_helper.from_array(s_w, "s_w"),
        numpy_helper.from_array(np.zeros(channels, np.int8), "z_w"),
        numpy_helper.from_array(bias, "b"),
        numpy_helper.from_array(np.array(s_y, np.float32), "s_y"),
        numpy_helper.from_array(np.array(0, np.uint8), "z_y"),
    ]
    nodes = [
        helper.make_node("DequantizeLinear", ["x", "s_x", "z_x"], ["x_f"]),
        helper.make_node("DequantizeLinear", ["w_q", "s_w", "z_w"], ["w_f"], axis=0),
        helper.make_node("Conv", ["x_f", "w_f", "b"], ["y_f"], group=channels, pads=[1, 1, 1, 1]),
        helper.make_node("QuantizeLinear", ["y_f", "s_y", "z_y"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "bias",
        [helper.make_tensor_value_info("x", TensorProto.UINT8, [4, channels, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, [4, channels, 6, 6])],
        init,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = rng.integers(0, 256, size=(4, channels, 6, 6)).astype(np.uint8)
    got = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]

    import torch

    acc = torch.nn.functional.conv2d(
        torch.from_numpy(x.astype(np.float64)), torch.from_numpy(weight.astype(np.float64)), padding=1, groups=channels
    ).numpy()
    scale = (s_x * s_w.astype(np.float64))[None, :, None, None]
    float_bias = np.clip(np.rint((acc * scale + bias[None, :, None, None]) / s_y), 0, 255)
    int_bias = np.rint(bias.astype(np.float64) / (s_x * s_w))[None, :, None, None]
    int32_bias = np.clip(np.rint((acc + int_bias) * scale / s_y), 0, 255)
    off = np.abs(got.astype(np.float64) - float_bias).max()
    predicted = divergence.bias_rounding(bias.tolist(), s_x, s_w.tolist(), s_y)
    assert predicted is not None and predicted.steps > 2
    assert off > divergence.ROUNDING_STEPS and off <= predicted.steps + 1
    assert np.abs(got.astype(np.float64) - int32_bias).max() <= 1


# --- the C runner as a stage, on a converted model made here -----------------------------------------


@pytest.fixture(scope="module")
def activations_int8():
    """(converted model, inputs) of c_op_models.Activations (float epilogues, a squeeze-excitation gate)."""
    import c_op_models
    from test_c_runner_models import _int8

    return _int8(c_op_models.Activations())


def test_the_c_stage_reads_every_traced_layer_and_agrees_with_pytorch_int8_locally(activations_int8):
    """Built once (generated and compiled), then traced on the samples, and again on others."""
    import torch

    from qat_kernel.runtimes.c import stage

    converted, x = activations_int8
    samples = x[:16].numpy()
    out_size = int(converted(x[:1]).shape[-1])
    c = stage.build(converted, x[:2], ".")
    try:
        assert c.missing is None and c.binary is not None and c.logits is None and c.seconds > 0
        c.trace(converted, samples, out_size)
        assert c.missing is None and c.logits is not None and c.logits.shape == (16, out_size)
        assert c.layers, "no traced layer"
        nodes = {n.name for n in converted.graph.nodes}
        for node, run in c.layers.items():
            assert node in nodes and node.startswith("quantize_per_tensor"), node
            local = (run.local - run.reference).abs().max().item() / run.scale
            assert local <= 1.0 + 1e-3, (node, local)  # each layer alone: within one output step
            assert run.propagated.shape == run.reference.shape
        with torch.no_grad():
            reference = converted(torch.from_numpy(samples)).numpy()
        assert (c.run(samples, out_size).argmax(-1) == reference.argmax(-1)).all()
        first = c.logits
        c.trace(converted, samples[:4], out_size)  # built once, run again on other samples
        assert c.logits is not None and c.logits.shape == (4, out_size) and np.array_equal(c.logits, first[:4])
        assert all(run.reference.shape[0] == 4 for run in c.layers.values())
    finally:
        c.close()


def test_the_c_stage_is_left_out_with_its_reason(activations_int8, monkeypatch):
    import c_op_models
    from test_c_runner_models import _int8

    from qat_kernel.runtimes.c import stage

    converted, x = activations_int8
    monkeypatch.setattr(stage, "WEIGHT_BYTES", 16)
    big = stage.build(converted, x[:2], ".")
    assert big.missing is not None and "MB of int8 weights" in big.missing and big.binary is None
    big.trace(converted, x[:4].numpy(), 10)  # a missing stage runs nothing
    assert big.logits is None and big.layers == {}
    unsupported, ux = _int8(c_op_models.Unsupported())
    refused = stage.build(unsupported, ux[:2], ".")
    assert refused.missing is not None and refused.missing.startswith("the C runner cannot run this model: ")
    assert "\n" not in refused.missing
