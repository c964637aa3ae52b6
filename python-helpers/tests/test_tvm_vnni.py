"""x86 dot-product builds (runtimes/tvm/vnni.py): the int8 conv2d / matmul run on vpdpbusd where the target has
VNNI, on vpmaddwd where it has AVX2 only.

- The target decides (its LLVM features, never the host's name): AVX512-VNNI CPUs get 16-lane vpdpbusd kernels,
  AVX-VNNI-only CPUs 8-lane ones, AVX2 CPUs 8-lane vpmaddwd ones, others none.
- A build for an explicit cpu (cascadelake, alderlake, haswell) has that instruction in its disassembly; the
  same build under the "packed" rule reports none (and has no vpdpbusd). LLVM cross-compiles these on any x86-64 host.
- Exactness: integer sums do not depend on their order, so each path's outputs equal the packed build's bit
  for bit, on the digits model (real samples) and on small convs covering padding, strides, dilation, 1x1,
  input channels that are not a multiple of the word, s8 activations and the fold's int16 (x - zero point)
  ones, with u8 x s8 products whose pairs would saturate vpmaddubsw's int16 sums. Each path's libraries run
  where this CPU has its instruction (AVX2 on every x86-64 machine the project runs on); a path this CPU lacks
  is checked in its disassembly.
- Each step broadcasts its word of activations from memory where the batch is symbolic (as a build without a batch
  size makes it): a word held in a variable was stored to memory and reloaded through a general register at every
  step, a third of the kernel's speed."""

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


HASWELL = {"kind": "llvm", "mcpu": "haswell"}  # AVX2, no VNNI
ISA_TARGETS = {"avx512vnni": CASCADELAKE, "avxvnni": ALDERLAKE, "avx2": HASWELL}
ISA_FLAGS = {"avx512vnni": {"avx512_vnni", "avx512f"}, "avxvnni": {"avx_vnni"}, "avx2": {"avx2"}}


def _host_lanes() -> int:
    return vnni.vnni_lanes(resolve_target("x86-64").target)


def _host_runs(isa: vnni.Isa) -> bool:
    """Whether this CPU executes the Isa's instruction (its /proc/cpuinfo flags)."""
    return ISA_FLAGS[isa.name] <= _cpu_flags()


def _cpu_flags() -> set:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    line = next((ln for ln in text.splitlines() if ln.startswith("flags")), "")
    return set(line.split(":", 1)[-1].split())


def _disassembly(path) -> str:
    return subprocess.run(["objdump", "-d", str(path)], capture_output=True, text=True, check=True).stdout


def _ops(path, instruction: str) -> list:
    """The destination registers of every `instruction` in the library's disassembly."""
    return [ops.split(",")[-1] for ops in re.findall(rf"[\t }}]{instruction}\s+(\S+)", _disassembly(path))]


def _compile(mod, target, path: Path) -> Path:
    """The Relax module built for a resolved target with the project's pipeline, exported to path."""
    import tvm

    from qat_kernel.runtimes.tvm.build import relax_pipeline_for

    t = target.tvm_target()
    tvm.compile(mod, t, relax_pipeline=relax_pipeline_for(t, target, {}, True)).export_library(str(path))
    return path


def _vpdpbusd(path) -> list:
    return _ops(path, "vpdpbusd")  # accumulators


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
    # the path: VNNI first, AVX2 where there is no VNNI, none without AVX2 or off x86
    assert vnni.isa_for({"kind": "llvm", "mcpu": "znver4"}) is vnni.AVX512VNNI
    assert vnni.isa_for(ALDERLAKE) is vnni.AVXVNNI
    assert vnni.isa_for(HASWELL) is vnni.AVX2
    assert vnni.isa_for({"kind": "llvm", "mcpu": "skylake-avx512"}) is vnni.AVX2  # AVX512 but no VNNI
    assert vnni.isa_for({"kind": "llvm", "mcpu": "znver2"}) is vnni.AVX2
    assert vnni.isa_for({"kind": "llvm", "mcpu": "sandybridge"}) is None  # AVX, no AVX2
    assert vnni.isa_for({"kind": "llvm"}) is None  # baseline x86-64
    assert vnni.isa_for({"kind": "llvm", "mtriple": "aarch64-linux-gnu", "mattr": ["+neon"]}) is None
    assert vnni.isa_for({"kind": "c"}) is None
    # this host: what LLVM says of its cpu agrees with /proc/cpuinfo
    flags = _cpu_flags()
    if flags:
        expect = 16 if "avx512_vnni" in flags else 8 if "avx_vnni" in flags else 0
        assert _host_lanes() == expect
        host = vnni.isa_for(resolve_target("x86-64").target)
        assert host is next((i for i in vnni.ISAS if _host_runs(i)), None)


def test_the_register_tile_fits():
    # VNNI: at most 2 channel blocks x 8 columns (16 of 32 zmm); AVX2: at most 8 accumulators, and with them
    # the tile's weight vectors and the broadcast word within the 16 ymm registers
    assert vnni.tile(vnni.AVX512VNNI, 56, 4) == (2, 8)
    assert vnni.tile(vnni.AVX512VNNI, 7, 3) == (1, 7)
    for width in (1, 4, 7, 14, 28, 56, 112):
        for tiles in (1, 2, 3, 8, 64):
            f, x = vnni.tile(vnni.AVX2, width, tiles)
            assert width % x == 0 and tiles % f == 0
            assert f * x <= vnni.AVX2_TILE and f * x + f + 1 <= 16
    assert vnni.tile(vnni.AVX2, 28, 8)[0] * vnni.tile(vnni.AVX2, 28, 8)[1] == 8
    assert vnni.tile(vnni.AVX2, 7, 64) == (1, 7)


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
    avx2 = build_tvm(DIGITS_QDQ, HASWELL, tmp_path / "avx2")
    assert avx2["vnni"] == {"rewritten": 4, "instruction": "vpmaddwd", "lanes": 8}
    ops = _ops(avx2["artifact"], "vpmaddwd")
    assert ops and all(o.startswith("%ymm") for o in ops) and not _vpdpbusd(avx2["artifact"])
    with schedule.use_rule("packed"):
        control = build_tvm(DIGITS_QDQ, HASWELL, tmp_path / "avx2-packed")
    assert control["vnni"] is None  # (LLVM may vectorize the packed kernels' int16 products with vpmaddwd too)


def test_the_host_build_is_exact_on_digits(tmp_path, digits_x):
    host = build_tvm(DIGITS_QDQ, "x86-64", tmp_path / "host")
    with schedule.use_rule("packed"):
        packed = build_tvm(DIGITS_QDQ, "x86-64", tmp_path / "packed")
    a, b = run_tvm(host["artifact"], digits_x), run_tvm(packed["artifact"], digits_x)
    assert np.array_equal(a, b), float(np.abs(a - b).max())
    isa = vnni.isa_for(resolve_target("x86-64").target)
    if isa is None:  # an x86-64 CPU without AVX2: the default build is the packed one
        assert host["vnni"] is None and not _vpdpbusd(host["artifact"])
    else:
        assert host["vnni"] == {"rewritten": 4, "instruction": isa.instruction, "lanes": isa.lanes}
        assert _ops(host["artifact"], isa.instruction)


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


ISA_IDS = [i.name for i in vnni.ISAS]


def _isa_target(isa: vnni.Isa):
    """(target to build for, whether this CPU runs the library): the host where it has the instruction, else a
    CPU that has it (cross-compiled, checked in its disassembly only)."""
    if _host_runs(isa):
        return resolve_target("x86-64"), True
    return resolve_target(ISA_TARGETS[isa.name]), False


@pytest.mark.parametrize("isa", vnni.ISAS, ids=ISA_IDS)
@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-c{c[2]}-k{c[4]}s{c[5]}p{c[6]}d{c[7]}" for c in CASES])
def test_vnni_kernels_are_exact(tmp_path, case, isa):
    import tvm
    from tvm import relax

    mod = _conv_module(*case)
    target, runs = _isa_target(isa)
    rewritten, count = vnni.rewrite(mod, isa)
    assert count == 1

    fast = _compile(rewritten, target, tmp_path / f"{isa.name}.so")
    assert _ops(fast, isa.instruction)
    if not runs:
        return  # this CPU cannot run the library: the disassembly above is what can be checked here
    ref = _compile(mod, target, tmp_path / "packed.so")
    rng = np.random.default_rng(7)
    shape = [5] + [int(d) for d in list(mod["main"].params[0].ty.shape.values)[1:]]
    dtype = str(mod["main"].params[0].ty.dtype)
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max + 1, shape).astype(dtype)
    x[0] = info.max  # every tap at the top of the range: u8 x s8 pairs that would saturate int16 sums
    outs = []
    for path in (fast, ref):
        vm = relax.VirtualMachine(tvm.runtime.load_module(str(path)), tvm.cpu())
        outs.append(vm["main"](tvm.runtime.tensor(x)).numpy())
    assert np.array_equal(outs[0], outs[1])


@pytest.mark.parametrize("isa", vnni.ISAS, ids=ISA_IDS)
@pytest.mark.parametrize("x_dtype,n", [("uint8", 32), ("int8", 32), ("uint8", 10)])
def test_vnni_matmul_is_exact(tmp_path, x_dtype, n, isa):
    import tvm
    from tvm import relax

    mod = _matmul_module(x_dtype, n)
    target, runs = _isa_target(isa)
    rewritten, count = vnni.rewrite(mod, isa)
    assert count == 1
    paths = [_compile(m, target, tmp_path / f"{name}.so") for name, m in ((isa.name, rewritten), ("packed", mod))]
    assert _ops(paths[0], isa.instruction)
    assert not _vpdpbusd(paths[1])  # (LLVM may vectorize the packed kernel's products with vpmaddwd itself)
    if not runs:
        return
    info = np.iinfo(x_dtype)
    x = np.random.default_rng(3).integers(info.min, info.max + 1, (3, 40)).astype(x_dtype)
    x[0] = info.max
    outs = [
        relax.VirtualMachine(tvm.runtime.load_module(str(p)), tvm.cpu())["main"](tvm.runtime.tensor(x)).numpy()
        for p in paths
    ]
    expect = x.astype(np.int64) @ np.random.default_rng(1).integers(-128, 128, (40, n)).astype(np.int64)
    assert np.array_equal(outs[0], outs[1]) and np.array_equal(outs[0], expect)


@pytest.mark.parametrize("isa", vnni.ISAS, ids=ISA_IDS)
def test_steps_broadcast_their_word_from_memory_with_a_symbolic_batch(tmp_path, isa):
    import tvm

    mod = _conv_module("uint8", 0, 16, 48, 3, 1, 1, 1)  # a symbolic batch
    assert not isinstance(mod["main"].params[0].ty.shape.values[0], tvm.tirx.IntImm)
    rewritten, _ = vnni.rewrite(mod, isa)
    path = _compile(rewritten, resolve_target(ISA_TARGETS[isa.name]), tmp_path / "conv.so")
    text = _disassembly(path)
    from_memory = re.findall(r"\svpbroadcastd\s+[-0-9a-fx]*\(", text)
    from_registers = re.findall(r"\svpbroadcastd\s+%", text)
    assert _ops(path, isa.instruction)
    # (a register broadcast or two elsewhere in the library, e.g. the layout pass's, is no step's)
    assert from_memory and len(from_memory) >= 4 * len(from_registers), (len(from_memory), len(from_registers))


def test_u8_s8_pairs_past_int16_stay_exact_on_avx2(tmp_path):
    """255 x 127 twice is 64,770: vpmaddubsw would saturate that pair at 32,767; the vpmaddwd path sums it."""
    import tvm
    from tvm import relax

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType([2, 64], "uint8"))
    w = np.full((64, 16), 127, dtype=np.int8)
    w[:, 8:] = -128
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(bb.emit(relax.op.matmul(x, relax.const(w), out_dtype="int32")))
        bb.emit_func_output(out)
    rewritten, _ = vnni.rewrite(bb.get(), vnni.AVX2)
    target, runs = _isa_target(vnni.AVX2)
    path = _compile(rewritten, target, tmp_path / "avx2.so")
    assert _ops(path, "vpmaddwd")
    if not runs:
        return
    a = np.full((2, 64), 255, dtype=np.uint8)
    got = relax.VirtualMachine(tvm.runtime.load_module(str(path)), tvm.cpu())["main"](tvm.runtime.tensor(a)).numpy()
    assert got[0, 0] == 255 * 127 * 64 and got[0, 15] == -255 * 128 * 64
    assert np.array_equal(got, a.astype(np.int64) @ w.astype(np.int64))
