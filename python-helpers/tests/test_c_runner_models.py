"""The portable C runner (deploy/c-artifact's header + runner.c) on real model graphs: a CIFAR-layout
ResNet-18 (residual adds fused into convs, 1x1 downsample convs, global average pooling) and a reduced
MobileNetV2 (depthwise convs, ReLU6 clamps, inverted residuals, a conv pooled by mean), plus a small
graph with grouped conv, hardtanh, concat and avg_pool2d. Each is quantized by the kernel's own PT2E path
(X86InductorQuantizer: prepare, calibrate on real digits, convert), compiled with gcc -pedantic -Werror
and cross-compiled with aarch64-linux-gnu-gcc (static, run under qemu-aarch64: emulated, not a board),
and compared with the converted model run in PyTorch on real digits resized to 32x32x3.

Why "within one step" and not bit-exact: PyTorch's reference computes each conv/linear in float32 on
dequantized values (oneDNN's summation order, a rounding per product and sum); the runner accumulates the
same integers exactly in int32 and scales once. Both round y * (1/scale) half to even, so they agree
except where y lies within a float ulp of a .5 tie: there one value lands one step away. Fed PyTorch's
own layer inputs (the runner's replay mode), every layer is within one step and almost all values are
bit-exact; end to end such a one-step difference propagates, so later layers drift by a few steps."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
from c_models import MobileNetV2, ResNet18, digits_32, with_bn_statistics
from torch import nn

STRICT = ["-std=c99", "-pedantic", "-O2", "-ffp-contract=off", "-Wall", "-Wextra", "-Werror"]
SAMPLES = slice(1000, 1004)  # real digits the calibration (the first 128) did not see


class _Ctx:
    def check_cancelled(self) -> None:
        pass


class Branches(nn.Module):
    """Grouped conv + ReLU6, hardtanh(-1, 2), concat, avg_pool2d, depthwise conv, a residual from another
    branch, adaptive average pooling."""

    def __init__(self):
        super().__init__()
        self.a, self.ra = nn.Conv2d(3, 16, 3, 1, 1), nn.ReLU()
        self.b, self.rb = nn.Conv2d(16, 16, 3, 1, 1, groups=4), nn.ReLU6()
        self.c, self.rc = nn.Conv2d(16, 8, 1), nn.Hardtanh(-1.0, 2.0)
        self.pool = nn.AvgPool2d(2)
        self.d, self.rd = nn.Conv2d(24, 24, 3, 1, 1, groups=24), nn.ReLU()
        self.e, self.re = nn.Conv2d(24, 24, 1), nn.ReLU()
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(24, 10)

    def forward(self, x):
        b = self.rb(self.b(self.ra(self.a(x))))
        y = self.pool(torch.cat([b, self.rc(self.c(b))], 1))
        z = self.re(self.e(y) + self.rd(self.d(y)))
        return self.fc(torch.flatten(self.gap(z), 1))


def _int8(model: nn.Module):
    from qat_kernel.pipeline import pt2e_flow

    x = digits_32()
    model = with_bn_statistics(model, x)
    converted = pt2e_flow.ptq(model, x[:2], None, [x[:64], x[64:128]], _Ctx())
    return converted, x


class Built:
    def __init__(self, make, work: Path, quantize=None):
        from qat_kernel.runtimes.c import cgen, layers

        torch.manual_seed(0)  # the random weights, so the figures repeat
        self.converted, x = (quantize or _int8)(make())
        self.input_q, self.layers = layers.extract(self.converted, x[:2])
        self.x = x[SAMPLES].numpy()
        with torch.no_grad():
            self.reference = self.converted(torch.from_numpy(self.x)).numpy()
        self.header = work / "net_qparams.h"
        self.header.write_text(cgen.header("net", "test", self.input_q, (3, 32, 32), self.layers), encoding="utf-8")
        self.source = work / "net_runner.c"
        self.source.write_text(cgen.runner("net"), encoding="utf-8")
        self.work = work
        self.arena = cgen.arena((3, 32, 32), self.layers)[1]

    def reference_trace(self) -> np.ndarray:
        """PyTorch's quantized output of every layer, laid out as the runner's trace."""
        from qat_kernel.pipeline import fused_groups
        from qat_kernel.runtimes.c.layers import traced

        quantized = traced(self.layers)
        nodes = {n.name: n for n in self.converted.graph.nodes}
        values = fused_groups.capture(self.converted, [torch.from_numpy(self.x)], [nodes[la.node] for la in quantized])
        return np.concatenate([values[la.node].reshape(len(self.x), -1).numpy() for la in quantized], 1)

    def per_layer(self, trace: np.ndarray, reference: np.ndarray) -> dict:
        from qat_kernel.runtimes.c.layers import traced

        rows, offset = {}, 0
        for la in traced(self.layers):
            size = int(np.prod(la.out_shape))
            diff = np.abs(trace[:, offset : offset + size].astype(np.int64) - reference[:, offset : offset + size])
            offset += size
            rows[la.name] = (int(diff.max()), int((diff > 0).sum()), diff.size)
        return rows


def _compile(built: Built, cc: str, name: str, *extra: str) -> Path:
    """The runner's object file (kept for `size`) linked into a binary; reused by later tests."""
    binary = built.work / name
    if binary.exists():
        return binary
    obj = binary.with_suffix(".o")
    subprocess.run([cc, *STRICT, "-c", "-o", str(obj), str(built.source)], check=True, timeout=600)
    subprocess.run([cc, *extra, "-o", str(binary), str(obj), "-lm"], check=True, timeout=600)
    return binary


def _run(built: Built, binary: Path, arch: str, replay: np.ndarray | None = None):
    from qat_kernel.runtimes.c import toolchain

    logits, trace, _ = toolchain.run_runner(
        binary, built.x, built.reference.shape[-1], built.work / f"run-{arch}", arch, trace=True, replay=replay
    )
    return logits, trace


def _check(built: Built, binary: Path, arch: str) -> dict:
    """Replay: each layer within one step of PyTorch on PyTorch's inputs, the logits within one
    accumulator step. End to end: the same class for every sample, logits close."""
    from qat_kernel.runtimes import parity

    reference = built.reference_trace()
    logits, trace = _run(built, binary, arch, replay=reference)
    rows = built.per_layer(trace, reference)
    total = sum(r[2] for r in rows.values())
    differing = sum(r[1] for r in rows.values())
    assert all(r[0] <= 1 for r in rows.values()), rows
    assert differing <= total * 1e-4, (differing, total)
    step = parity.torch_output_step(built.converted)["step"]
    m = parity.compare(logits, built.reference, step)
    assert m["withinOneStep"] == 1.0 and m["top1Agreement"] == 1.0, m

    e2e_logits, e2e_trace = _run(built, binary, arch)
    e2e = parity.compare(e2e_logits, built.reference, step)
    assert e2e["top1Agreement"] == 1.0 and e2e["cosineMin"] > 0.9999, e2e
    drift = max(r[0] for r in built.per_layer(e2e_trace, reference).values())
    assert drift <= 4
    print(
        f"{arch}: replay {differing} of {total:,} values one step off, logits {m['maxDiffSteps']:.3f} steps; "
        f"end to end max {drift} step(s) on a layer, logits cosine {e2e['cosineMin']:.6f}"
    )
    return {"trace": trace, "logits": logits, "e2e": e2e_trace}


@pytest.fixture(scope="module")
def resnet(tmp_path_factory):
    return Built(lambda: ResNet18(width=16), tmp_path_factory.mktemp("resnet18"))


@pytest.fixture(scope="module")
def mobilenet(tmp_path_factory):
    return Built(lambda: MobileNetV2(width=0.25), tmp_path_factory.mktemp("mobilenetv2"))


def _kinds(built: Built) -> set:
    out = set()
    for la in built.layers:
        out.add(la.kind)
        if la.kind == "conv2d":
            if len(la.inputs) > 1:
                out.add("conv2d+residual")
            if la.attrs["groups"] > 1:
                out.add("depthwise" if la.attrs["groups"] == la.in_shape[0] == la.weight.shape[0] else "grouped")
        if la.act is not None and not la.relu:
            out.add(f"clamp{la.act}")
        if la.kind == "globalavgpool" and la.input is None:
            out.add("globalavgpool of a float tensor")
    return out


def test_resnet18_graph_and_x86_runner(resnet):
    kinds = _kinds(resnet)
    assert {"conv2d", "conv2d+residual", "globalavgpool", "linear"} <= kinds
    assert sum(len(la.inputs) > 1 for la in resnet.layers) == 8  # one residual add per BasicBlock
    _check(resnet, _compile(resnet, "gcc", "runner-x86"), "x86_64")


def test_mobilenetv2_graph_and_x86_runner(mobilenet):
    kinds = _kinds(mobilenet)
    # the last conv's output stays float (conv -> relu6 -> mean -> quantize): pooled from a float tensor
    assert {"depthwise", "conv2d+residual", "globalavgpool of a float tensor", "clamp(0.0, 6.0)", "linear"} <= kinds
    _check(mobilenet, _compile(mobilenet, "gcc", "runner-x86"), "x86_64")


def test_branches_grouped_concat_avgpool(tmp_path):
    built = Built(Branches, tmp_path)
    kinds = _kinds(built)
    assert {"grouped", "depthwise", "concat", "avgpool2d", "clamp(-1.0, 2.0)", "conv2d+residual"} <= kinds
    assert "globalavgpool" in kinds
    _check(built, _compile(built, "gcc", "runner-x86"), "x86_64")


@pytest.mark.parametrize("which", ["resnet", "mobilenet"])
def test_aarch64_under_qemu_matches_x86(which, request):
    """Cross-compiled (static) and run under qemu-aarch64: the same checks, and the same integers as the
    x86 build (IEEE float32, no fused multiply-add: the runner's arithmetic does not depend on the CPU)."""
    from qat_kernel.runtimes.c import toolchain

    if shutil.which("aarch64-linux-gnu-gcc") is None or toolchain.emulator("aarch64") is None:
        pytest.fail("scripts/setup.sh installs gcc-aarch64-linux-gnu and qemu-user; one is missing")
    built = request.getfixturevalue(which)
    arm = _check(built, _compile(built, "aarch64-linux-gnu-gcc", "runner-arm", "-static"), "aarch64")
    x86 = _run(built, _compile(built, "gcc", "runner-x86"), "x86_64")
    assert np.array_equal(arm["e2e"], x86[1]) and np.array_equal(arm["logits"].shape, x86[0].shape)


@pytest.mark.parametrize("which", ["resnet", "mobilenet"])
def test_code_size_and_static_ram(which, request):
    """`size` on the object files the tests above ran (deploy/c-artifact reports the same figures)."""
    from qat_kernel.runtimes.c import toolchain

    built = request.getfixturevalue(which)
    weights = sum(la.weight.size for la in built.layers if la.weight is not None)
    for arch, cc, name, extra in (
        ("x86_64", "gcc", "runner-x86", ()),
        ("aarch64", "aarch64-linux-gnu-gcc", "runner-arm", ("-static",)),
    ):
        f = toolchain.object_size(_compile(built, cc, name, *extra).with_suffix(".o"), arch)
        # const weights (int8) and per-channel tables sit in text; the arena (int32 values) in bss
        assert f["text"] > weights and f["bss"] >= built.arena * 4
        assert f["staticRamBytes"] == f["data"] + f["bss"]
        print(
            f"{which} {arch}: text {f['text']:,} B, data {f['data']:,} B, bss {f['bss']:,} B "
            f"(arena {built.arena * 4:,} B)"
        )


class _FloatAdd(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b, self.ra, self.rb = nn.Conv2d(3, 4, 1), nn.Conv2d(3, 4, 3, 1, 1), nn.ReLU(), nn.ReLU()
        self.fc = nn.Linear(4 * 32 * 32, 10)

    def forward(self, x):
        return self.fc(torch.flatten(self.ra(self.a(x)) + self.rb(self.b(x)), 1))


def test_float_add_of_two_branches(tmp_path):
    """An add X86InductorQuantizer leaves in float (two relu outputs, no conv before it): the runner adds
    the two float tensors, as PyTorch does, and quantizes the sum for the linear after it."""
    built = Built(_FloatAdd, tmp_path)
    adds = [la for la in built.layers if la.kind == "add"]
    assert len(adds) == 1 and [q for _n, q, _s in adds[0].inputs] == [None, None] and adds[0].output is not None
    _check(built, _compile(built, "gcc", "runner-x86"), "x86_64")


@pytest.mark.filterwarnings("ignore:XNNPACKQuantizer is deprecated")
def test_xnnpack_style_quantizer_standalone_add(tmp_path):
    """The XNNPACK-style quantizer (symmetric int8 activations) quantizes both inputs of an add: the runner's
    add kind requantizes two tensors with their own scales to the output's."""
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    from torchao.testing.pt2e._xnnpack_quantizer import XNNPACKQuantizer, get_symmetric_quantization_config

    from qat_kernel.pipeline import pt2e_flow

    def int8(model):
        x = digits_32()
        quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))
        prepared = prepare_pt2e(pt2e_flow.export(model.eval(), x[:2]), quantizer)
        with torch.no_grad():
            prepared(x[:64])
        return convert_pt2e(prepared), x

    built = Built(_FloatAdd, tmp_path, int8)
    adds = [la for la in built.layers if la.kind == "add"]
    assert len(adds) == 1 and len(adds[0].inputs) == 2
    assert adds[0].inputs[0][1].scale != adds[0].inputs[1][1].scale and adds[0].output.dtype == "int8"
    _check(built, _compile(built, "gcc", "runner-x86"), "x86_64")


@pytest.mark.filterwarnings("ignore:XNNPACKQuantizer is deprecated")
def test_weights_quantized_per_tensor(tmp_path):
    """Weights quantized per tensor (convert_pt2e stores them as int8 attributes behind a dequantize_per_tensor):
    the runner reads them as one scale for every channel and matches PyTorch INT8."""
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    from torchao.testing.pt2e._xnnpack_quantizer import XNNPACKQuantizer, get_symmetric_quantization_config

    from qat_kernel.pipeline import pt2e_flow

    def int8(model):
        x = digits_32()
        model = with_bn_statistics(model, x)
        quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=False))
        prepared = prepare_pt2e(pt2e_flow.export(model.eval(), x[:2]), quantizer)
        with torch.no_grad():
            prepared(x[:64])
        return convert_pt2e(prepared), x

    built = Built(Branches, tmp_path, int8)
    weighted = [la for la in built.layers if la.weight is not None]
    assert weighted and all(la.weight.dtype == np.int8 for la in weighted)
    assert all(len(set(la.weight_scale.tolist())) == 1 for la in weighted)  # one scale, every channel
    _check(built, _compile(built, "gcc", "runner-x86"), "x86_64")


def test_arena_shares_space_between_tensors_that_are_not_live_together(resnet):
    from qat_kernel.runtimes.c import cgen

    offsets, size = cgen.arena((3, 32, 32), resnet.layers)
    sizes = [int(np.prod(la.out_shape)) for la in resnet.layers if la.output is not None]
    # a BasicBlock needs its input (the residual), the middle tensor and its output live together
    assert size <= 3 * max(sizes) < (3 * 32 * 32 + sum(sizes)) / 3
    # a residual's source stays untouched until the conv that adds it has run
    for la in resnet.layers:
        for name, _q, shape in la.inputs:
            lo, hi = offsets[name], offsets[name] + int(np.prod(shape))
            if la.output is not None:
                o_lo, o_hi = offsets[la.output_name], offsets[la.output_name] + int(np.prod(la.out_shape))
                assert hi <= o_lo or o_hi <= lo, (la.name, name)
