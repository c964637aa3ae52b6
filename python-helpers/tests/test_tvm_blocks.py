"""build/tvm on the op families of public models, each as a small hand-built block: transformer encoders (ViT, BERT,
nn.TransformerEncoder: LayerNorm, GELU, softmax, a matmul of two activations, reshape/permute) with a one-token
attention as LeViT's and MobileViT's last stages have, EfficientNet/MobileNetV3 (SiLU, hardswish, sigmoid, the SE
multiply, depthwise convs), ShuffleNet (channel split, concat, channel shuffle, grouped and depthwise convs) and
ConvNeXt (7x7 depthwise, LayerNorm over channels through a permute, GELU, layer scale).

Each: PT2E QAT for two steps (torchao's x86 quantizer, as the kernel does), the QDQ export, the build for the x86-64
preset, and the library's outputs against PyTorch INT8's. Every block ends in a quantized tensor (a max pool of an
int8 conv), so its output step is the quantization step: TVM must stay within one step of PyTorch on every element.
The report's precision as executed says int8 for the convs and weight matmuls, fp32 (with a reason) for the float
islands the quantizer leaves. Then the parts that must not end a build: a schedule rule that raises on a kernel,
a failing compile, and a model TVM cannot import (a typed error naming the node, module and line)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("tvm")
pytest.importorskip("onnxruntime")

from torch import nn
from torch.nn import functional as F

from qat_kernel.pipeline import pt2e_flow
from qat_kernel.rpc.errors import InternalError, from_exception
from qat_kernel.runtimes import parity
from qat_kernel.runtimes.onnx import qdq_export
from qat_kernel.runtimes.tvm.build import build_tvm
from qat_kernel.runtimes.tvm.failures import BuildFailure
from qat_kernel.runtimes.tvm.run import run_tvm

STEP_SLACK = 1.0 + 1e-3  # one step of two dequantized float32 values reads as 1.000003


class Attention(nn.Module):
    def __init__(self, d: int, heads: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        b, n, d = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        a = ((q @ k.transpose(-2, -1)) * (d // self.heads) ** -0.5).softmax(-1)
        return self.proj((a @ v).transpose(1, 2).reshape(b, n, d))


class Encoder(nn.Module):
    """Patch embedding, one pre-norm encoder layer over 16 tokens, then attention over the pooled token (a single
    key: the attention x value matmul reduces over 1, the kernel TVM's CPU GEMV rule asserts on), back to NCHW."""

    def __init__(self, d: int = 32):
        super().__init__()
        self.embed = nn.Conv2d(3, d, 4, stride=4)
        self.norm1, self.attn = nn.LayerNorm(d), Attention(d, 4)
        self.norm2, self.fc1, self.act, self.fc2 = nn.LayerNorm(d), nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d)
        self.norm3, self.pool_attn = nn.LayerNorm(d), Attention(d, 4)
        self.head = nn.Conv2d(d, 8, 1)

    def forward(self, x):
        x = self.embed(x)
        b, d, h, w = x.shape
        x = x.flatten(2).transpose(1, 2)
        x = x + self.attn(self.norm1(x))
        x = x + self.fc2(self.act(self.fc1(self.norm2(x))))
        t = x.mean(1, keepdim=True)
        x = x + self.pool_attn(self.norm3(t))
        x = x.transpose(1, 2).reshape(b, d, h, w)
        return torch.flatten(F.max_pool2d(self.head(x), 2), 1)


class SqueezeExcite(nn.Module):
    """EfficientNet / MobileNetV3: conv-BN-SiLU, depthwise conv + hardswish, SE (mean, 1x1 convs, sigmoid, multiply)."""

    def __init__(self):
        super().__init__()
        self.stem, self.bn, self.act = nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.SiLU()
        self.dw, self.hs = nn.Conv2d(16, 16, 3, padding=1, groups=16), nn.Hardswish()
        self.se1, self.se2 = nn.Conv2d(16, 4, 1), nn.Conv2d(4, 16, 1)
        self.pw = nn.Conv2d(16, 8, 1)

    def forward(self, x):
        x = self.act(self.bn(self.stem(x)))
        x = self.hs(self.dw(x))
        x = x * torch.sigmoid(self.se2(F.relu(self.se1(x.mean((2, 3), keepdim=True)))))
        return torch.flatten(F.max_pool2d(self.pw(x), 2), 1)


class Shuffle(nn.Module):
    """ShuffleNet: channel split, a branch with a depthwise conv, concat, channel shuffle, a grouped conv."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        self.b1, self.dw, self.b2 = nn.Conv2d(8, 8, 1), nn.Conv2d(8, 8, 3, padding=1, groups=8), nn.Conv2d(8, 8, 1)
        self.grouped = nn.Conv2d(16, 16, 3, padding=1, groups=4)

    def forward(self, x):
        x = F.relu(self.stem(x))
        a, b = x.chunk(2, dim=1)
        x = torch.cat([a, F.relu(self.b2(self.dw(F.relu(self.b1(b)))))], 1)
        n, c, h, w = x.shape
        x = x.reshape(n, 2, c // 2, h, w).transpose(1, 2).reshape(n, c, h, w)
        return torch.flatten(F.max_pool2d(self.grouped(x), 2), 1)


class ConvNeXtBlock(nn.Module):
    """ConvNeXt: stem, 7x7 depthwise conv, permute to NHWC, LayerNorm over channels, MLP with GELU, layer scale,
    permute back, residual."""

    def __init__(self, c: int = 16):
        super().__init__()
        self.stem = nn.Conv2d(3, c, 4, stride=4)
        self.dw = nn.Conv2d(c, c, 7, padding=3, groups=c)
        self.norm, self.fc1, self.act, self.fc2 = nn.LayerNorm(c), nn.Linear(c, 4 * c), nn.GELU(), nn.Linear(4 * c, c)
        self.gamma = nn.Parameter(torch.full((c,), 0.5))
        self.head = nn.Conv2d(c, 8, 1)

    def forward(self, x):
        x = self.stem(x)
        y = self.dw(x).permute(0, 2, 3, 1)
        y = self.fc2(self.act(self.fc1(self.norm(y)))) * self.gamma
        x = x + y.permute(0, 3, 1, 2)
        return torch.flatten(F.max_pool2d(self.head(x), 2), 1)


class ConvNeXtHead(nn.Module):
    """ConvNeXt's head on a feature map wider than 1x1: LayerNorm over channels through permutes, then the
    adaptive average pool, whose output the ONNX exporter writes as as_strided over the symbolic batch (Range,
    Gather and Where index arithmetic: TVM 0.27's FuseTIR fails on it), flatten and the classifier."""

    def __init__(self, c: int = 16):
        super().__init__()
        self.stem = nn.Conv2d(3, c, 3, padding=1)
        self.norm = nn.LayerNorm(c)
        self.fc = nn.Linear(c, 10)

    def forward(self, x):
        x = self.norm(self.stem(x).permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def _qat_build(tmp_path, model, shape, steps: int = 2, samples: int = 64):
    """(report, parity vs PyTorch INT8, output kind) of `model` after `steps` QAT steps, exported and built."""
    torch.manual_seed(0)
    example = torch.randn(*shape)
    prepared = pt2e_flow.prepare_qat(model, example)
    opt = torch.optim.SGD(prepared.parameters(), lr=1e-3)
    for _ in range(steps):
        loss = prepared(torch.randn(*shape)).square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    converted = pt2e_flow.convert(prepared)
    x = torch.randn(samples, *shape[1:])
    with torch.no_grad():
        ref = converted(x).numpy()
    onnx_file = qdq_export.export_qdq(
        converted, example, tmp_path / "block.qdq.onnx", qdq_export.DEFAULT_OPSET, pt2e_flow.dynamic_batch()
    )
    report = build_tvm(onnx_file, "x86-64", tmp_path / "tvm")
    step = parity.onnx_output_step(onnx_file)
    return report, parity.compare(run_tvm(report["artifact"], x.numpy()), ref, step["step"]), step["kind"]


def _precisions(report) -> dict:
    """{op type: set of precisions} of the report's ONNX nodes."""
    out: dict = {}
    for o in report["ops"]:
        out.setdefault(o["op_type"], set()).add(o["precision"])
    return out


def _within_one_step(vs: dict, kind: str) -> None:
    assert kind == "quantized"
    assert vs["maxDiffSteps"] <= STEP_SLACK and vs["withinOneStep"] == 1.0, vs


def _fp32_have_reasons(report) -> None:
    assert all(o["reason"] for o in report["ops"] if o["precision"] == "fp32")


def test_transformer_encoder_block(tmp_path):
    import tvm

    report, vs, kind = _qat_build(tmp_path, Encoder(), (2, 3, 16, 16))
    _within_one_step(vs, kind)
    prec = _precisions(report)
    assert prec["Conv"] == {"int8"}
    for op in ("LayerNormalization", "Softmax", "Erf"):
        assert prec[op] == {"fp32"}, op
    matmuls = [o for o in report["ops"] if o["op_type"] == "MatMul"]
    weights = [o for o in matmuls if o["precision"] == "int8"]
    activations = [o for o in matmuls if o["precision"] == "fp32"]
    assert len(weights) == 6  # qkv, proj, fc1, fc2, the pooled attention's qkv and proj
    assert len(activations) == 4 and all("not dequantized" in o["reason"] for o in activations)
    _fp32_have_reasons(report)
    # every kernel is listed, those with the symbolic batch as a scalar parameter too (transposes, reshapes)
    assert len(report["kernels"]) >= 20 and all(k["inputs"] or k["output"] for k in report["kernels"])
    if tvm.__version__.startswith("0.27"):
        # TVM's GEMV rule asserts on the one-key attention x value matmul: that kernel alone keeps TVM's code
        assert [(f["rule"], f["error"]) for f in report["schedule_fallbacks"]] == [("GEMV", "AssertionError")]
        assert any(n.startswith("schedule rule GEMV failed on kernel matmul") for n in report["notes"])


def test_squeeze_excite_block(tmp_path):
    report, vs, kind = _qat_build(tmp_path, SqueezeExcite(), (2, 3, 16, 16))
    _within_one_step(vs, kind)
    prec = _precisions(report)
    assert prec["Conv"] == {"int8"}  # stem (BN folded), depthwise, both SE convs, pointwise
    assert sum(o["op_type"] == "Conv" for o in report["ops"]) == 5
    assert prec["HardSwish"] == {"fp32"} and prec["Sigmoid"] == {"fp32"} and prec["Mul"] == {"fp32"}
    hardswish = next(o for o in report["ops"] if o["op_type"] == "HardSwish")
    assert hardswish["reason"].startswith("HardSwish: no integer pattern")
    _fp32_have_reasons(report)


def test_channel_split_concat_grouped_and_depthwise(tmp_path):
    report, vs, kind = _qat_build(tmp_path, Shuffle(), (2, 3, 16, 16))
    _within_one_step(vs, kind)
    prec = _precisions(report)
    assert prec["Conv"] == {"int8"} and sum(o["op_type"] == "Conv" for o in report["ops"]) == 5
    # the quantizer leaves the split and the concat float (their inputs are float): fp32, each with its reason
    assert prec["Split"] == {"fp32"} and prec["Concat"] == {"fp32"}
    _fp32_have_reasons(report)


def test_convnext_block(tmp_path):
    report, vs, kind = _qat_build(tmp_path, ConvNeXtBlock(), (2, 3, 32, 32))
    _within_one_step(vs, kind)
    prec = _precisions(report)
    assert prec["Conv"] == {"int8"} and prec["MatMul"] == {"int8"}  # 7x7 depthwise included; fc1, fc2
    assert prec["LayerNormalization"] == {"fp32"} and prec["Erf"] == {"fp32"}
    _fp32_have_reasons(report)


def test_convnext_head_pool_the_fusion_fails_on(tmp_path):
    import tvm

    report, vs, kind = _qat_build(tmp_path, ConvNeXtHead(), (2, 3, 8, 8))
    # float logits: the same predictions; an activation a rounding tie puts a step away (LayerNorm runs fp32 in
    # both) moves a logit by one input step x weight, well under 1 % of the largest
    assert kind == "accumulator"
    assert vs["top1Agreement"] == 1.0 and vs["maxRelDiff"] < 0.01 and vs["cosineMin"] > 0.9999, vs
    assert _precisions(report)["Gemm"] == {"int8"}
    if tvm.__version__.startswith("0.27"):
        # the pool's index arithmetic stays unfused, everything else is fused; the report says which
        assert len(report["unfused"]) == 1 and "VarRemapGet" in report["unfused"][0]["error"]
        assert any(n.startswith("TVM's FuseTIR failed on the fused kernel") for n in report["notes"])


def _concat_qdq(path: Path) -> Path:
    """Two uint8 tensors dequantized with one scale and zero point, concatenated and quantized again with the
    same (as the x86 quantizer's shared observer writes a cat), then a Conv."""
    import onnx
    from onnx import TensorProto as TP
    from onnx import helper as h
    from onnx import numpy_helper as nh

    rng = np.random.default_rng(0)
    inits = [
        nh.from_array(np.float32(0.05), "s"),
        nh.from_array(np.uint8(3), "z"),
        nh.from_array(rng.integers(-127, 128, (4, 6, 1, 1)).astype(np.int8), "w"),
        nh.from_array(np.full(4, 0.01, np.float32), "ws"),
        nh.from_array(np.zeros(4, np.int8), "wz"),
    ]
    nodes = [
        h.make_node("QuantizeLinear", ["a", "s", "z"], ["aq"]),
        h.make_node("DequantizeLinear", ["aq", "s", "z"], ["ad"]),
        h.make_node("QuantizeLinear", ["b", "s", "z"], ["bq"]),
        h.make_node("DequantizeLinear", ["bq", "s", "z"], ["bd"]),
        h.make_node("Concat", ["ad", "bd"], ["c"], axis=1, name="cat"),
        h.make_node("QuantizeLinear", ["c", "s", "z"], ["cq"]),
        h.make_node("DequantizeLinear", ["cq", "s", "z"], ["cd"]),
        h.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], axis=0),
        h.make_node("Conv", ["cd", "wd"], ["y"], kernel_shape=[1, 1], name="conv"),
    ]
    graph = h.make_graph(
        nodes,
        "cat",
        [h.make_tensor_value_info(n, TP.FLOAT, ["batch", 3, 4, 4]) for n in ("a", "b")],
        [h.make_tensor_value_info("y", TP.FLOAT, ["batch", 4, 4, 4])],
        inits,
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 18)])
    model.ir_version = 9
    onnx.save(model, str(path))
    return path


def test_concat_of_equally_quantized_tensors_runs_on_int8(tmp_path):
    """The concat runs on the uint8 tensors (no dequantize, concat, quantize), and the result equals the QDQ
    graph as written (ORT without graph optimizations)."""
    import tvm
    from tvm import relax

    from qat_kernel.runtimes.ort.sessions import session

    src = _concat_qdq(tmp_path / "cat.onnx")
    report = build_tvm(src, "x86-64", tmp_path / "out")
    ops = {o["onnx_node"]: o for o in report["ops"]}
    assert ops["cat"]["precision"] == "int8" and "concat of 2 uint8 tensors" in ops["cat"]["detail"]
    assert ops["conv"]["precision"] == "int8"
    rng = np.random.default_rng(1)
    a, b = (rng.random((5, 3, 4, 4), dtype=np.float32) * 6 - 1 for _ in range(2))
    want = session(src, level="disabled").run(None, {"a": a, "b": b})[0]
    vm = relax.VirtualMachine(tvm.runtime.load_module(report["artifact"]), tvm.cpu())
    got = vm["main"](tvm.runtime.tensor(a), tvm.runtime.tensor(b)).numpy()
    assert np.allclose(got, want, atol=1e-5), float(np.abs(got - want).max())


# --------------------------------------------------------------------------- what must not end a build


DIGITS_QDQ = Path(__file__).resolve().parents[2] / "test/fixtures/digits/digits.qdq.onnx"


def test_a_schedule_rule_that_raises_falls_back_for_its_kernel(tmp_path, monkeypatch):
    """TVM's GEMV rule asserting on a kernel (as it does on LeViT's and MobileViT's one-key attention): that
    kernel keeps TVM's default code, the others are scheduled, the report says which; outputs unchanged."""
    from tvm.s_tir import dlight as dl

    x = np.random.default_rng(0).random((8, 1, 8, 8), dtype=np.float32)
    plain = build_tvm(DIGITS_QDQ, "x86-64", tmp_path / "plain")

    def raising(self, func, target, tunable):
        raise AssertionError()

    monkeypatch.setattr(dl.cpu.GEMV, "apply", raising)
    report = build_tvm(DIGITS_QDQ, "x86-64", tmp_path / "guarded")
    fallbacks = report["schedule_fallbacks"]
    assert fallbacks and all(f["rule"] == "GEMV" and f["error"] == "AssertionError" for f in fallbacks)
    assert {f["kept"] for f in fallbacks} <= {"Reduction", "TVM's default code"}
    assert any("schedule rule GEMV failed on kernel" in n for n in report["notes"])
    assert np.array_equal(run_tvm(plain["artifact"], x), run_tvm(report["artifact"], x))


def test_a_compile_error_falls_back_to_tvms_pipeline(tmp_path, monkeypatch):
    """Our schedule making something TVM cannot compile: the build retries with TVM's own pipeline on the same
    int8 module, says so, and the int8 rows stay int8."""
    import tvm

    from qat_kernel.runtimes.tvm import schedule

    @tvm.transform.module_pass(opt_level=0, name="Broken")
    def broken(mod, _ctx):
        raise tvm.error.InternalError("Check failed: (VarRemapGet(source) == nullptr) is false")

    monkeypatch.setattr(schedule, "cpu_schedule_pass", lambda rule=None, fallbacks=None: broken)
    report = build_tvm(DIGITS_QDQ, "x86-64", tmp_path / "out")
    assert report["scheduled"] is False
    assert any("with our CPU schedule" in n and "VarRemapGet" in n for n in report["notes"])
    assert {o["precision"] for o in report["ops"] if o["op_type"] in ("Conv", "Gemm")} == {"int8"}
    assert run_tvm(report["artifact"], np.zeros((2, 1, 8, 8), np.float32)).shape == (2, 10)


def test_a_model_tvm_cannot_import_is_a_typed_error(tmp_path):
    """An ONNX op TVM 0.27 has no converter for (Det here, as torch.linalg.det exports): BuildFailure names the
    stage, the op, the node, its module and the user's line from the export's metadata, and what to do; the RPC
    layer sends it as it is (no "Internal error: <exception>")."""
    import onnx
    from onnx import TensorProto as TP
    from onnx import helper as h

    user_file = tmp_path / "model.py"
    user_file.write_text("\n" * 40, encoding="utf-8")
    det = h.make_node("Det", ["x"], ["y"], name="node_linalg_det")
    for key, value in (
        ("pkg.torch.onnx.name_scopes", "['', 'head', 'linalg_det']"),
        ("pkg.torch.onnx.class_hierarchy", "['model.Net', 'model.Head', 'aten.linalg_det.default']"),
        ("pkg.torch.onnx.stack_trace", f'File "{user_file}", line 31, in forward\n    return torch.linalg.det(x)'),
    ):
        det.metadata_props.add(key=key, value=value)
    graph = h.make_graph(
        [det],
        "det",
        [h.make_tensor_value_info("x", TP.FLOAT, ["batch", 3, 3])],
        [h.make_tensor_value_info("y", TP.FLOAT, ["batch"])],
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 18)])
    model.ir_version = 9
    onnx.save(model, str(tmp_path / "det.onnx"))
    with pytest.raises(BuildFailure) as info:
        build_tvm(tmp_path / "det.onnx", "x86-64", tmp_path / "out", workspace=tmp_path)
    err = info.value
    assert "build/tvm failed in TVM's ONNX importer on Det node node_linalg_det of module head (Head)" in err.message
    assert f"({user_file}:31)" in err.message and "What to do:" in err.message
    assert err.data["location"] == {"file": str(user_file), "line": 31}
    assert not (tmp_path / "out").exists()
    rpc = from_exception(err, str(tmp_path)).to_rpc()
    assert not rpc["message"].startswith("Internal error:") and rpc["data"]["location"]["line"] == 31
    assert not isinstance(err, InternalError) and rpc["data"]["kind"] == "unsupported"
