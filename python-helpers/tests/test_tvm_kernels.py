"""The per-kernel roofline table of a TVM INT8 build (benchmarks/tvm_kernels.py).

- MACs from argument shapes, for each weight layout (vnni, avx2, packed incl. depthwise, plain OIHW, matmul),
  against hand counts; non-MAC kernels count 0.
- On the digits model, built with the default rule and with "packed": every Conv/Gemm of the ONNX model is
  one MAC row, the first conv's MACs equal a hand count, the rows sum to int8_peak.model_macs, GMAC/s is
  MACs over the median time and the peak share GMAC/s over the peak given, and the kind is what the target
  decides.
- A small PT2E export with a depthwise conv: its three convs listed with hand-counted MACs, the depthwise one
  a "dw" kernel (vnni.py leaves grouped convs alone, depthwise.py takes depthwise ones on x86). No timing is
  asserted."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from benchmarks import int8_peak, tvm_kernels

from qat_kernel.runtimes.targets import resolve_target
from qat_kernel.runtimes.tvm import schedule, vnni
from qat_kernel.runtimes.tvm.build import build_tvm

DIGITS_QDQ = Path(__file__).resolve().parents[2] / "test/fixtures/digits/digits.qdq.onnx"
PEAK = 100.0  # GMAC/s, a stand-in for int8_peak's measurement (the arithmetic is what is tested)


def test_macs_from_shapes():
    # vnni 3x3 conv, 3 input channels padded to 4, 20 outputs padded to 32: useful MACs only
    vnni_conv = [((2, 3, 10, 10), "uint8"), ((2, 1, 3, 3, 16, 4), "int8"), ((2, 20, 8, 8), "int32")]
    assert tvm_kernels.call_macs(vnni_conv) == 2 * 20 * 8 * 8 * 3 * 3 * 3
    # packed depthwise 3x3 (OIHW16o, one input channel per group), with epilogue arguments
    dw = [((1, 32, 8, 8), "uint8"), ((2, 1, 3, 3, 16), "int8"), ((1, 32, 1, 1), "int32"), ((1, 32, 8, 8), "uint8")]
    assert tvm_kernels.call_macs(dw) == 32 * 8 * 8 * 9
    assert tvm_kernels.kernel_kind("fused_conv2d5_add_cast", dw) == "packed"
    # a fused residual before the data: the data is the argument before the weight
    res = [((1, 64, 8, 8), "uint8"), ((1, 64, 8, 8), "uint8"), ((4, 16, 3, 3, 16, 4), "int8"), ((1, 64, 8, 8), "uint8")]
    assert tvm_kernels.call_macs(res) == 64 * 8 * 8 * 64 * 9
    # plain OIHW 1x1 and a matmul
    assert tvm_kernels.call_macs([((1, 8, 4, 4), "int16"), ((6, 8, 1, 1), "int8"), ((1, 6, 4, 4), "int32")]) == 768
    assert tvm_kernels.call_macs([((3, 64), "uint8"), ((64, 10), "int8"), ((3, 10), "float32")]) == 3 * 10 * 64
    # not MAC kernels
    assert tvm_kernels.call_macs([((1, 3, 8, 8), "float32"), ((1, 3, 8, 8), "uint8")]) == 0
    pool = [((1, 32, 8, 8), "uint8"), ((1, 32, 4, 4), "uint8")]
    assert tvm_kernels.call_macs(pool) == 0
    assert tvm_kernels.kernel_kind("max_pool2d", pool) == "other"
    assert tvm_kernels.kernel_kind("conv2d_vnni3", vnni_conv) == "vnni"
    # the AVX2 layout: int16 weights [O/8, C/2, kh, kw, 8, 2], 3 input channels padded to 4
    avx2_conv = [((2, 3, 10, 10), "uint8"), ((3, 2, 3, 3, 8, 2), "int16"), ((2, 20, 8, 8), "int32")]
    assert tvm_kernels.call_macs(avx2_conv) == 2 * 20 * 8 * 8 * 3 * 3 * 3
    assert tvm_kernels.kernel_kind("fused_conv2d_avx27_cast6_add6", avx2_conv) == "avx2"
    # a dense layer in that layout: [M, K] x [O/8, K/2, 1, 1, 8, 2] -> [M, O]
    avx2_dense = [((3, 64), "uint8"), ((2, 32, 1, 1, 8, 2), "int16"), ((3, 10), "int32")]
    assert tvm_kernels.call_macs(avx2_dense) == 3 * 10 * 64


def _kind(isa: vnni.Isa | None) -> str:
    """The table's kind of the conv / dense kernels a build on this Isa has."""
    return "packed" if isa is None else "vnni" if isa.instruction == "vpdpbusd" else "avx2"


@pytest.mark.parametrize("rule", [schedule.DEFAULT_RULE, "packed"])
def test_digits_table(tmp_path, rule):
    with schedule.use_rule(rule):
        report = build_tvm(DIGITS_QDQ, "x86-64", tmp_path / "lib", fold_int8=True)
    rng = np.random.default_rng(0)
    inputs = {b: rng.random((b, 1, 8, 8), dtype=np.float32) for b in (1, 3)}
    timed = tvm_kernels.roofline(tvm_kernels.time_kernels(report["artifact"], inputs, runs=3, warmup=1), PEAK)

    model = onnx.load(str(DIGITS_QDQ))
    anchors = [n for n in model.graph.node if n.op_type in ("Conv", "Gemm", "MatMul")]
    isa = vnni.isa_for(resolve_target("x86-64").target) if rule == "vnni" else None
    assert bool(report["vnni"]) == (isa is not None)
    for b, entry in timed.items():
        mac_rows = [c for c in entry["calls"] if c["macs"]]
        assert len(mac_rows) == len(anchors)  # every conv / dense kernel listed, once per layer
        assert {c["kind"] for c in mac_rows} == {_kind(isa)}
        assert all(c["kind"] == "other" for c in entry["calls"] if not c["macs"])
        # first conv: 1 -> 16 channels, 3x3, padding 1 on 8x8
        assert mac_rows[0]["macs"] == b * 16 * 8 * 8 * 1 * 3 * 3
        assert entry["macs"] == sum(c["macs"] for c in mac_rows) == int8_peak.model_macs(DIGITS_QDQ, b)
        for c in mac_rows:
            assert c["ms"] > 0
            assert c["gmacs"] == pytest.approx(c["macs"] / (c["ms"] / 1e3) / 1e9)
            assert c["peakShare"] == pytest.approx(c["gmacs"] / PEAK)
        assert entry["kernel_ms"] == pytest.approx(sum(c["ms"] for c in entry["calls"]))
        kinds = entry["byKind"]
        assert sum(k["calls"] for k in kinds.values()) == len(entry["calls"])
        assert sum(k["macs"] for k in kinds.values()) == entry["macs"]
    text = tvm_kernels.format_table(timed, PEAK)
    for entry in timed.values():
        for c in entry["calls"]:
            if c["macs"]:
                assert c["name"] in text
    assert "batch 1:" in text and "batch 3:" in text


def test_peak_choice():
    rows = {"rows": [{"name": "avx2", "gmacs": 50.0}, {"name": "vnni", "gmacs": 200.0}]}
    assert tvm_kernels.peak_gmacs(rows) == (200.0, "vnni")
    no_vnni = {"rows": [{"name": "avx2", "gmacs": 50.0}, {"name": "vnni", "gmacs": None, "note": "no VNNI"}]}
    assert tvm_kernels.peak_gmacs(no_vnni) == (50.0, "avx2")
    assert tvm_kernels.peak_gmacs({"rows": []}) == (None, None)


def _depthwise_qdq(path: Path) -> Path:
    """A small QDQ ONNX model (PT2E, X86InductorQuantizer): 3x3 conv 3 -> 16, depthwise 3x3 (16 groups), 1x1
    16 -> 8, on 3 x 16 x 16 inputs."""
    import torch
    from torch import nn
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (
        X86InductorQuantizer,
        get_default_x86_inductor_quantization_config,
    )

    from qat_kernel.runtimes.onnx import qdq_export

    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(16, 16, 3, padding=1, groups=16),
        nn.ReLU(),
        nn.Conv2d(16, 8, 1),
    ).eval()
    example = torch.randn(2, 3, 16, 16)
    graph = torch.export.export(model, (example,)).module()
    prepared = prepare_pt2e(graph, X86InductorQuantizer().set_global(get_default_x86_inductor_quantization_config()))
    with torch.no_grad():
        prepared(example)
    qdq_export.export_qdq(convert_pt2e(prepared), example, path, 18, None)
    return path


def test_depthwise_convs_are_listed(tmp_path):
    onnx_file = _depthwise_qdq(tmp_path / "dw.qdq.onnx")
    report = build_tvm(onnx_file, "x86-64", tmp_path / "lib", fold_int8=True)
    x = np.random.default_rng(0).random((2, 3, 16, 16), dtype=np.float32)
    timed = tvm_kernels.roofline(tvm_kernels.time_kernels(report["artifact"], {2: x}, runs=2, warmup=1), PEAK)
    convs = [n for n in onnx.load(str(onnx_file)).graph.node if n.op_type == "Conv"]
    rows = [c for c in timed[2]["calls"] if c["macs"]]
    assert len(rows) == len(convs) == 3
    assert [c["macs"] for c in rows] == [2 * 16 * 16 * 16 * 3 * 9, 2 * 16 * 16 * 16 * 9, 2 * 8 * 16 * 16 * 16]
    assert timed[2]["macs"] == int8_peak.model_macs(onnx_file, 2)
    assert rows[1]["kind"] == "dw"  # depthwise: never a vnni kernel, but depthwise.py's on x86
    isa = vnni.isa_for(resolve_target("x86-64").target)
    assert [rows[0]["kind"], rows[2]["kind"]] == [_kind(isa)] * 2
