"""x86 VNNI builds (runtimes/tvm/vnni.py): the int8 conv2d / matmul run on vpdpbusd where the target has it.

- The target decides: AVX512-VNNI CPUs get 16-lane kernels, AVX-VNNI-only CPUs 8-lane ones, others none.
- A build for an explicit VNNI cpu (cascadelake, alderlake) has vpdpbusd in its disassembly; the same build
  under the "packed" rule (today's kernels) has none. LLVM cross-compiles these on any x86-64 host.
- Exactness: integer sums do not depend on their order, so a VNNI build's outputs equal the packed build's bit
  for bit, on the digits model (real samples) and on small convs covering padding, strides, dilation, 1x1,
  input channels that are not a multiple of 4, s8 activations and the fold's int16 (x - zero point) ones.
  Those libraries run only where this CPU has VNNI; elsewhere the tests check that the host build keeps the
  packed kernels (no vpdpbusd) and that the VNNI code is there for a VNNI target."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from qat_kernel.runtimes.targets import resolve_target
from qat_kernel.runtimes.tvm import schedule, vnni
from qat_kernel.runtimes.tvm.build import build_tvm
from qat_kernel.runtimes.tvm.run import run_tvm

DIGITS_QDQ = Path(__file__).resolve().parents[2] / "test/fixtures/digits/digits.qdq.onnx"
CASCADELAKE = {"kind": "llvm", "mcpu": "cascadelake"}  # AVX512-VNNI
ALDERLAKE = {"kind": "llvm", "mcpu": "alderlake"}  # AVX-VNNI, no AVX512


def _host_lanes() -> int:
    return vnni.vnni_lanes(resolve_target("x86-64").target)


def _cpu_flags() -> set:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    line = next((ln for ln in text.splitlines() if ln.startswith("flags")), "")
    return set(line.split(":", 1)[-1].split())


def _vpdpbusd(path) -> list:
    text = subprocess.run(["objdump", "-d", str(path)], capture_output=True, text=True, check=True).stdout
    return [ops.split(",")[-1] for ops in re.findall(r"[\t }]vpdpbusd\s+(\S+)", text)]  # accumulators


@pytest.fixture(scope="module")
def digits_x() -> np.ndarray:
    from sklearn.datasets import load_digits

    return (load_digits().images / 16.0).astype(np.float32)[:64, None]


def test_the_target_decides():
    assert vnni.vnni_lanes({"kind": "llvm", "mcpu": "znver4"}) == 16
    assert vnni.vnni_lanes(CASCADELAKE) == 16
    assert vnni.vnni_lanes({"kind": "llvm", "mcpu": "sapphirerapids"}) == 16
    assert vnni.vnni_lanes(ALDERLAKE) == 8
    assert vnni.vnni_lanes({"kind": "llvm", "mcpu": "haswell", "mattr": ["+avx512f", "+avx512vnni"]}) == 16
    assert vnni.vnni_lanes({"kind": "llvm", "mcpu": "haswell"}) == 0
    assert vnni.vnni_lanes({"kind": "llvm", "mcpu": "skylake-avx512"}) == 0
    assert vnni.vnni_lanes({"kind": "llvm"}) == 0
    assert vnni.vnni_lanes({"kind": "llvm", "mtriple": "aarch64-linux-gnu", "mattr": ["+neon"]}) == 0
    # this host: what LLVM says of its cpu agrees with /proc/cpuinfo
    flags = _cpu_flags()
    if flags:
        expect = 16 if "avx512_vnni" in flags else 8 if "avx_vnni" in flags else 0
        assert _host_lanes() == expect


def test_a_vnni_target_builds_vpdpbusd_kernels(tmp_path):
    report = build_tvm(DIGITS_QDQ, CASCADELAKE, tmp_path / "vnni")
    # 2 convs and 2 matmuls (the 64 -> 10 classifier's outputs padded to 16)
    assert report["vnni"] == {"rewritten": 4, "instruction": "vpdpbusd", "lanes": 16}
    ops = _vpdpbusd(report["artifact"])
    assert ops and all(o.startswith("%zmm") for o in ops)
    with schedule.use_rule("packed"):
        control = build_tvm(DIGITS_QDQ, CASCADELAKE, tmp_path / "packed")
    assert control["vnni"] is None and not _vpdpbusd(control["artifact"])
    small = build_tvm(DIGITS_QDQ, ALDERLAKE, tmp_path / "avxvnni")
    assert small["vnni"] == {"rewritten": 4, "instruction": "vpdpbusd", "lanes": 8}
    ops = _vpdpbusd(small["artifact"])
    assert ops and all(o.startswith("%ymm") for o in ops)  # the VEX encoding ("{vex} vpdpbusd")


def test_the_host_build_is_exact_on_digits(tmp_path, digits_x):
    host = build_tvm(DIGITS_QDQ, "x86-64", tmp_path / "host")
    with schedule.use_rule("packed"):
        packed = build_tvm(DIGITS_QDQ, "x86-64", tmp_path / "packed")
    a, b = run_tvm(host["artifact"], digits_x), run_tvm(packed["artifact"], digits_x)
    assert np.array_equal(a, b), float(np.abs(a - b).max())
    if _host_lanes():
        assert host["vnni"]["rewritten"] == 4 and _vpdpbusd(host["artifact"])
    else:
        # no VNNI here: the default build is the packed one
        assert host["vnni"] is None and not _vpdpbusd(host["artifact"])


def _conv_module(x_dtype: str, zp: int, c: int, o: int, k: int, stride: int, pad: int, dilation: int):
    """A Relax module: x (uint8 | int8 | uint8 read as int16(x) - zp, the fold's form) -> int8 conv2d, int32 out;
    the batch is dynamic."""
    import tvm
    from tvm import relax

    bb = relax.BlockBuilder()
    batch = tvm.tirx.Var("n", "int64")  # dynamic, as in a build without a batch size
    x = relax.Var("x", relax.TensorType([batch, c, 9, 9], "uint8" if x_dtype == "int16" else x_dtype))
    rng = np.random.default_rng(c * 100 + o + k)
    w = rng.integers(-128, 128, (o, c, k, k)).astype(np.int8)
    with bb.function("main", [x]):
        with bb.dataflow():
            a = x
            if x_dtype == "int16":
                a = bb.emit(relax.op.subtract(relax.op.astype(x, "int16"), relax.const(zp, "int16")))
            y = bb.emit(
                relax.op.nn.conv2d(a, relax.const(w), strides=stride, padding=pad, dilation=dilation, out_dtype="int32")
            )
            out = bb.emit_output(y)
        bb.emit_func_output(out)
    return bb.get()


def _matmul_module(x_dtype: str, n: int):
    from tvm import relax

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType([3, 40], x_dtype))
    w = np.random.default_rng(1).integers(-128, 128, (40, n)).astype(np.int8)
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(bb.emit(relax.op.matmul(x, relax.const(w), out_dtype="int32")))
        bb.emit_func_output(out)
    return bb.get()


CASES = [
    # x dtype, zp, in channels, out channels, kernel, stride, padding, dilation
    ("uint8", 0, 3, 32, 3, 1, 1, 1),
    ("uint8", 0, 16, 48, 3, 2, 1, 1),
    ("uint8", 0, 30, 16, 1, 2, 0, 1),
    ("uint8", 0, 8, 16, 3, 1, 2, 2),
    ("int8", 0, 12, 32, 3, 1, 1, 1),
    ("int16", 37, 5, 16, 3, 2, 1, 1),
    ("uint8", 0, 16, 24, 1, 1, 0, 1),  # output channels not a multiple of 16 (MobileNetV2's 24)
    ("int8", 0, 8, 10, 3, 1, 1, 1),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-c{c[2]}-k{c[4]}s{c[5]}p{c[6]}d{c[7]}" for c in CASES])
def test_vnni_kernels_are_exact(tmp_path, case):
    import tvm
    from tvm import relax

    from qat_kernel.runtimes.tvm.build import relax_pipeline_for

    mod = _conv_module(*case)
    lanes = _host_lanes()
    target = resolve_target("x86-64") if lanes else resolve_target(CASCADELAKE)
    rewritten, count = vnni.rewrite(mod, lanes or 16)
    assert count == 1

    def build(m, name):
        t = target.tvm_target()
        ex = tvm.compile(m, t, relax_pipeline=relax_pipeline_for(t, target, {}, True))
        path = tmp_path / f"{name}.so"
        ex.export_library(str(path))
        return path

    fast = build(rewritten, "vnni")
    assert _vpdpbusd(fast)
    if not lanes:
        return  # this CPU cannot run the VNNI library: the disassembly above is what can be checked here
    ref = build(mod, "packed")
    rng = np.random.default_rng(7)
    shape = [5] + [int(d) for d in list(mod["main"].params[0].ty.shape.values)[1:]]
    dtype = str(mod["main"].params[0].ty.dtype)
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max + 1, shape).astype(dtype)
    outs = []
    for path in (fast, ref):
        vm = relax.VirtualMachine(tvm.runtime.load_module(str(path)), tvm.cpu())
        outs.append(vm["main"](tvm.runtime.tensor(x)).numpy())
    assert np.array_equal(outs[0], outs[1])


@pytest.mark.parametrize("x_dtype,n", [("uint8", 32), ("int8", 32), ("uint8", 10)])
def test_vnni_matmul_is_exact(tmp_path, x_dtype, n):
    import tvm
    from tvm import relax

    from qat_kernel.runtimes.tvm.build import relax_pipeline_for

    mod = _matmul_module(x_dtype, n)
    lanes = _host_lanes()
    target = resolve_target("x86-64") if lanes else resolve_target(CASCADELAKE)
    rewritten, count = vnni.rewrite(mod, lanes or 16)
    assert count == 1
    t = target.tvm_target()
    paths = []
    for name, m in (("vnni", rewritten), ("packed", mod)):
        ex = tvm.compile(m, t, relax_pipeline=relax_pipeline_for(t, target, {}, True))
        paths.append(tmp_path / f"{name}.so")
        ex.export_library(str(paths[-1]))
    assert _vpdpbusd(paths[0]) and not _vpdpbusd(paths[1])
    if not lanes:
        return
    info = np.iinfo(x_dtype)
    x = np.random.default_rng(3).integers(info.min, info.max + 1, (3, 40)).astype(x_dtype)
    outs = [
        relax.VirtualMachine(tvm.runtime.load_module(str(p)), tvm.cpu())["main"](tvm.runtime.tensor(x)).numpy()
        for p in paths
    ]
    expect = x.astype(np.int64) @ np.random.default_rng(1).integers(-128, 128, (40, n)).astype(np.int64)
    assert np.array_equal(outs[0], outs[1]) and np.array_equal(outs[0], expect)
