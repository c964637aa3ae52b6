"""The portable C runner on each op family beyond conv/linear/pool (c_op_models.py): float elementwise
epilogues and a squeeze-excitation gate, lookup-table islands, two-tensor ops with broadcasting, data
movement, normalisations, attention, pooling and resampling; and the typed error for ops it cannot
compute. Each module is quantized by the kernel's PT2E path (X86InductorQuantizer: prepare, calibrate
on real digits, convert), compiled with gcc -pedantic -Werror and compared with the converted model in
PyTorch: fed PyTorch's own inputs (replay), every quantized output within one step (a value within a
float ulp of a rounding tie may land one step away: at most 1e-3 of the values) and the logits within
one step of their int32 accumulator; end to end the same class for every sample."""

from __future__ import annotations

from pathlib import Path

import c_op_models as ops
import numpy as np
import pytest
from test_c_runner_models import Built, _compile, _int8, _run


def _quantize(model):
    """The kernel's PTQ path, skipping the conv+BN fold patterns of conv kinds the graph lacks as its QAT
    path does (a BatchNorm no conv absorbs would otherwise cost 96 pattern exports, minutes on 2 cores)."""
    from qat_kernel.pipeline import pt2e_flow

    with pt2e_flow._skip_absent_conv_patterns():
        return _int8(model)


def _built(make, tmp_path) -> Built:
    return Built(make, tmp_path, _quantize)


def _check(built: Built) -> dict:
    from qat_kernel.runtimes import parity

    binary = _compile(built, "gcc", "runner-x86")
    reference = built.reference_trace()
    logits, trace = _run(built, binary, "x86_64", replay=reference)
    rows = built.per_layer(trace, reference)
    total = sum(r[2] for r in rows.values())
    differing = sum(r[1] for r in rows.values())
    assert all(r[0] <= 1 for r in rows.values()), rows
    assert differing <= max(1, total * 1e-3), (differing, total)
    step = parity.torch_output_step(built.converted)["step"]
    m = parity.compare(logits, built.reference, step)
    assert m["top1Agreement"] == 1.0 and m["cosineMin"] > 0.99999, m
    if step is not None:
        assert m["withinOneStep"] == 1.0, m
    e2e_logits, _ = _run(built, binary, "x86_64")
    e2e = parity.compare(e2e_logits, built.reference, step)
    assert e2e["top1Agreement"] == 1.0 and e2e["cosineMin"] > 0.999, e2e
    print(
        f"{len(built.layers)} layers; replay {differing} of {total:,} values one step off, logits "
        f"{m.get('maxDiffSteps', float('nan')):.3f} steps; end to end cosine {e2e['cosineMin']:.6f}"
    )
    return m


def _kinds(built: Built) -> dict:
    found: dict = {}
    for la in built.layers:
        found[la.kind] = found.get(la.kind, 0) + 1
        for fn in la.epilogue:
            found["fn:" + fn[0]] = found.get("fn:" + fn[0], 0) + 1
        if la.kind == "matmul" and all(q is not None for _n, q, _s in la.inputs):
            found["integer matmul"] = 1
        if la.kind == "layernorm" and la.input is not None:
            found["integer layernorm"] = 1
    return found


def test_float_epilogues_and_squeeze_excitation(tmp_path):
    built = _built(ops.Activations, tmp_path)
    kinds = _kinds(built)
    for fn in ("hardswish", "hardsigmoid", "silu", "gelu", "gelu_tanh", "sigmoid", "tanh", "leaky_relu", "mish"):
        assert f"fn:{fn}" in kinds, (fn, kinds)
    assert {"mul", "globalavgpool", "fn:mul_scalar", "fn:add_scalar"} <= set(kinds)
    gate = next(la for la in built.layers if la.kind == "mul")
    assert gate.inputs[1][2] == (8, 1, 1)  # the gate broadcast over H x W
    _check(built)


def test_lookup_tables_from_quantized_input(tmp_path):
    built = _built(ops.Tables, tmp_path)
    tables = [la for la in built.layers if la.kind == "lut"]
    assert len(tables) == 6 and all(la.table.shape == (256,) for la in tables)
    assert all(la.input is not None and la.output is not None for la in tables)
    assert built.layers.tensors["input"].kind == "f"  # the sigmoid reads the input in float
    _check(built)


def test_binary_ops_with_broadcasting(tmp_path):
    built = _built(ops.Binary, tmp_path)
    kinds = _kinds(built)
    assert {"add", "sub", "mul", "div", "adaptiveavgpool2d"} <= set(kinds), kinds
    products = [la for la in built.layers if la.kind == "mul"]
    assert any(all(q is not None for _n, q, _s in la.inputs) for la in products)  # two quantized tensors
    assert any(name.startswith("c_") for la in built.layers for name, _q, _s in la.inputs)  # the parameter
    _check(built)


def test_data_movement(tmp_path):
    built = _built(ops.Movement, tmp_path)
    kinds = _kinds(built)
    assert {"concat", "permute", "slice", "expand"} <= set(kinds), kinds
    _check(built)


def test_normalisations(tmp_path):
    built = _built(ops.Norms, tmp_path)
    kinds = _kinds(built)
    assert {"batchnorm", "layernorm", "integer layernorm", "concat", "fn:gelu"} <= set(kinds), kinds
    _check(built)


def test_attention(tmp_path):
    built = _built(ops.Attention, tmp_path)
    kinds = _kinds(built)
    assert {"matmul", "integer matmul", "softmax", "attention", "layernorm", "permute", "slice"} <= set(kinds)
    shapes = {built.layers.tensors[la.output_name].shape for la in built.layers}
    assert (1, 2, 16, 16) in shapes and (1, 16, 16) in shapes  # [batch, heads, T, T] and [batch, T, D]
    _check(built)


def test_pooling_and_resampling(tmp_path):
    built = _built(ops.Pools, tmp_path)
    kinds = _kinds(built)
    assert {"maxpool2d", "avgpool2d", "adaptiveavgpool2d", "upsample", "amax"} <= set(kinds), kinds
    pool = next(la for la in built.layers if la.kind == "maxpool2d")
    assert pool.input is None  # the max of a float ReLU output
    _check(built)


def test_unsupported_ops_are_listed_with_module_and_line(validate):
    """Every op the runner cannot compute, each with its module and this file's line, in one typed error
    (kind unsupported, not internal), with the part of the graph that would stay on the host."""
    import torch

    from qat_kernel.rpc.errors import from_exception
    from qat_kernel.runtimes.c import layers

    torch.manual_seed(0)
    converted, x = _quantize(ops.Unsupported())
    with pytest.raises(layers.UnsupportedForC) as err:
        layers.extract(converted, x[:2], str(Path(ops.__file__).parent))
    rows = err.value.ops
    assert [r["op"] for r in rows] == ["roll", "flip", "cumsum"]
    source = Path(ops.__file__).read_text(encoding="utf-8").splitlines()
    for r, text in zip(rows, ("torch.roll", "torch.flip", "torch.cumsum")):
        assert r["file"] == ops.__file__ and text in source[r["line"] - 1], r
        assert r["reason"] and r["op"] in err.value.message
    rpc = from_exception(err.value, None).to_rpc()
    assert rpc["code"] == -32006 and rpc["data"]["kind"] == "unsupported"
    assert rpc["data"]["location"] == {"file": ops.__file__, "line": rows[0]["line"]}
    host = rpc["data"]["hostPart"]
    assert host["ops"] < host["totalOps"] and "fc" in host["modules"]  # the conv runs in C, the rest on the host
    validate("KernelErrorData", rpc["data"])
    print(err.value.message)


def test_lookup_table_is_pytorch_exact():
    """A table entry is PyTorch's dequantize -> op -> quantize of that stored value, for every value."""
    import torch

    from qat_kernel.runtimes.c.layers import QParams, lookup_table

    qin, qout = QParams(0.05, 128, 0, 255, "uint8"), QParams(0.01, 10, 0, 255, "uint8")

    class N:
        target = torch.ops.aten.silu.default
        args, kwargs = (None,), {}

    table = lookup_table(qin, qout, [N()])
    q = torch.arange(256)
    expected = torch.clamp(torch.round(torch.nn.functional.silu((q - 128) * 0.05) / 0.01) + 10, 0, 255)
    assert np.abs(table - expected.numpy()).max() <= 1 and table.dtype == np.int32
