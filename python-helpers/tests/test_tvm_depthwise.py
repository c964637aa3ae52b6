"""x86 int8 depthwise convs (runtimes/tvm/depthwise.py): channel-blocked kernels in every x86 CPU build.

- Exactness: integer sums do not depend on their order, so the rewritten kernels' outputs equal the previous
  build's (depthwise=False) bit for bit: on small depthwise convs with stride 1 and 2, padding, dilation, a
  5x5 kernel, channel counts that are not a multiple of 16, u8, s8 and the fold's int16 (x - zero point)
  activations, a fused epilogue; and on a small PT2E export with a depthwise conv between two regular ones.
- On AVX512 targets, stride-1 convs with output rows wider than depthwise.WIDE keep schedule.py's kernels
  (faster there); without AVX512 every depthwise conv takes the kernel (faster at every width measured).
- The build says so: the report counts the rewritten convs, the per-kernel table lists them as "dw" kernels;
  only x86 targets get them (not aarch64), and grouped (not depthwise) convs are left alone."""

from __future__ import annotations

import numpy as np
import pytest
from benchmarks import tvm_kernels
from test_tvm_kernels import _depthwise_qdq

from qat_kernel.runtimes.targets import resolve_target
from qat_kernel.runtimes.tvm import depthwise
from qat_kernel.runtimes.tvm.build import build_tvm, relax_pipeline_for
from qat_kernel.runtimes.tvm.run import run_tvm


def _dw_module(x_dtype, zp, c, k, stride, pad, dilation, groups=None, side=(11, 10)):
    """A Relax module: x (uint8 | int8 | uint8 read as int16(x) - zp, the fold's form) -> int8 depthwise conv2d
    (groups == c unless given), int32 out, + a per-channel bias (an epilogue to fuse); the batch is dynamic."""
    import tvm
    from tvm import relax

    groups = groups or c
    bb = relax.BlockBuilder()
    batch = tvm.tirx.Var("n", "int64")
    x = relax.Var("x", relax.TensorType([batch, c, *side], "uint8" if x_dtype == "int16" else x_dtype))
    rng = np.random.default_rng(c * 10 + k)
    w = rng.integers(-128, 128, (c, c // groups, k, k)).astype(np.int8)
    bias = rng.integers(-1000, 1000, (1, c, 1, 1)).astype(np.int32)
    with bb.function("main", [x]):
        with bb.dataflow():
            a = x
            if x_dtype == "int16":
                a = bb.emit(relax.op.subtract(relax.op.astype(x, "int16"), relax.const(zp, "int16")))
            y = bb.emit(
                relax.op.nn.conv2d(
                    a,
                    relax.const(w),
                    strides=stride,
                    padding=pad,
                    dilation=dilation,
                    groups=groups,
                    out_dtype="int32",
                )
            )
            out = bb.emit_output(bb.emit(relax.op.add(y, relax.const(bias))))
        bb.emit_func_output(out)
    return bb.get()


CASES = [
    # x dtype, zp, channels, kernel, stride, padding, dilation
    ("uint8", 0, 32, 3, 1, 1, 1),
    ("uint8", 0, 24, 3, 2, 1, 1),  # MobileNetV2's stride-2 shape, channels not a multiple of 16
    ("int8", 0, 20, 3, 1, 1, 1),
    ("int8", 0, 16, 3, 2, 0, 1),
    ("int16", 37, 5, 3, 2, 1, 1),
    ("uint8", 0, 16, 5, 1, 2, 2),
]


def _run(tmp_path, mod, name, x):
    import tvm
    from tvm import relax

    target = resolve_target("x86-64")
    t = target.tvm_target()
    ex = tvm.compile(mod, t, relax_pipeline=relax_pipeline_for(t, target, {}, True))
    path = tmp_path / f"{name}.so"
    ex.export_library(str(path))
    vm = relax.VirtualMachine(tvm.runtime.load_module(str(path)), tvm.cpu())
    return vm["main"](tvm.runtime.tensor(x)).numpy()


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-c{c[2]}-k{c[3]}s{c[4]}p{c[5]}d{c[6]}" for c in CASES])
def test_depthwise_kernels_are_exact(tmp_path, case):
    mod = _dw_module(*case)
    rewritten, count = depthwise.rewrite(mod)
    assert count == 1
    param = mod["main"].params[0].ty
    dtype = str(param.dtype)
    info = np.iinfo(dtype)
    shape = [3] + [int(d) for d in list(param.shape.values)[1:]]
    x = np.random.default_rng(7).integers(info.min, info.max + 1, shape).astype(dtype)
    fast, ref = _run(tmp_path, rewritten, "dw", x), _run(tmp_path, mod, "ref", x)
    assert fast.shape == ref.shape and np.array_equal(fast, ref)


def test_grouped_convs_are_left_alone():
    _, count = depthwise.rewrite(_dw_module("uint8", 0, 16, 3, 1, 1, 1, groups=4))
    assert count == 0


def test_wide_stride_1_convs_keep_the_row_kernels_with_avx512_only():
    # output rows wider than WIDE: schedule.py's row-vectorized kernels were faster there with AVX512's 16 lanes
    wide = depthwise.widest({"kind": "llvm", "mcpu": "znver4"})
    assert wide == depthwise.WIDE == depthwise.widest({"kind": "llvm", "mcpu": "cascadelake"})
    assert depthwise.rewrite(_dw_module("uint8", 0, 16, 3, 1, 1, 1, side=(20, 17)), wide)[1] == 0
    assert depthwise.rewrite(_dw_module("uint8", 0, 16, 3, 1, 1, 1, side=(20, 16)), wide)[1] == 1
    assert depthwise.rewrite(_dw_module("uint8", 0, 16, 3, 2, 1, 1, side=(40, 40)), wide)[1] == 1
    # AVX2 without AVX512 (8-lane rows): every width
    for mcpu in ("haswell", "znver3", "alderlake"):
        assert depthwise.widest({"kind": "llvm", "mcpu": mcpu}) is None, mcpu
    assert depthwise.rewrite(_dw_module("uint8", 0, 16, 3, 1, 1, 1, side=(20, 17)), None)[1] == 1


def test_only_x86_targets():
    assert depthwise.is_x86({"kind": "llvm", "mcpu": "haswell"})
    assert depthwise.is_x86({"kind": "llvm", "mtriple": "x86_64-linux-gnu"})
    assert depthwise.is_x86(resolve_target("x86-64").target)
    assert not depthwise.is_x86({"kind": "llvm", "mtriple": "aarch64-linux-gnu", "mattr": ["+neon"]})
    assert not depthwise.is_x86({"kind": "cuda"})


def test_pack_weight():
    w = np.arange(20 * 9, dtype=np.int64).reshape(20, 1, 3, 3).astype(np.int8)
    p = depthwise.pack_weight(w)
    assert p.shape == (2, 1, 3, 3, 16)
    assert p[1, 0, 2, 1, 3] == w[19, 0, 2, 1] and not p[1, 0, :, :, 4:].any()


def test_a_small_model_is_exact_and_reports_its_depthwise_kernels(tmp_path):
    onnx_file = _depthwise_qdq(tmp_path / "dw.qdq.onnx")
    new = build_tvm(onnx_file, "x86-64", tmp_path / "new", fold_int8=True)
    old = build_tvm(onnx_file, "x86-64", tmp_path / "old", fold_int8=True, depthwise=False)
    assert new["depthwise"] == {"rewritten": 1, "lanes": 16} and old["depthwise"] is None
    x = np.random.default_rng(0).random((2, 3, 16, 16), dtype=np.float32) * 4 - 2
    a, b = run_tvm(new["artifact"], x), run_tvm(old["artifact"], x)
    assert np.array_equal(a, b), float(np.abs(a - b).max())
    timed = tvm_kernels.time_kernels(new["artifact"], {2: x}, runs=1, warmup=1)
    rows = [c for c in timed[2]["calls"] if c["macs"]]
    assert [c["kind"] for c in rows][1] == "dw" and rows[1]["macs"] == 2 * 16 * 16 * 16 * 9
