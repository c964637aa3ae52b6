"""aarch64 +dotprod builds (runtimes/tvm/dotprod.py): the int8 conv/matmul laid out so that LLVM emits sdot.

- The rewrite is exact: the digits model built for x86 with and without it gives the same outputs bit for bit
  (the same kernels, compiled for this machine, run natively).
- The aarch64 +dotprod library of the same model uses sdot (its disassembly, aarch64-linux-gnu-objdump); the
  plain +neon build does not (the control).
- The sdot kernel runs: conv2d_sdot, scheduled as in the build and compiled for aarch64 by TVM, linked into a
  small static C harness (aarch64-linux-gnu-gcc) and run under qemu-aarch64 (emulated, not a board) gives the
  exact int32 sums numpy computes. A whole library needs TVM's runtime built for aarch64, which this machine
  does not have; the board path is build/tvm with an `rpc` address.
scripts/setup.sh installs the cross compiler, binutils and qemu-user; the tests skip, saying so, only where they
are missing."""

from __future__ import annotations

import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import numpy as np
import pytest

from qat_kernel.runtimes.tvm import dotprod
from qat_kernel.runtimes.tvm.build import build_tvm
from qat_kernel.runtimes.tvm.run import run_tvm

DIGITS_QDQ = Path(__file__).resolve().parents[2] / "test/fixtures/digits/digits.qdq.onnx"
DOTPROD = {"kind": "llvm", "mtriple": "aarch64-linux-gnu", "mattr": ["+neon", "+dotprod"]}
NEON = {"kind": "llvm", "mtriple": "aarch64-linux-gnu", "mattr": ["+neon"]}
CROSS = ("aarch64-linux-gnu-gcc", "aarch64-linux-gnu-g++", "aarch64-linux-gnu-objdump")


def _need(*tools: str) -> None:
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not on PATH (scripts/setup.sh installs them)")


def _count(disassembly: str, mnemonic: str) -> int:
    return len(re.findall(rf"\t{mnemonic}\t", disassembly))


def _objdump(path) -> str:
    return subprocess.run(
        ["aarch64-linux-gnu-objdump", "-d", str(path)], capture_output=True, text=True, check=True
    ).stdout


@pytest.fixture(scope="module")
def digits_x() -> np.ndarray:
    from sklearn.datasets import load_digits

    return (load_digits().images / 16.0).astype(np.float32)[:64, None]


def test_the_target_decides():
    assert dotprod.wants_dotprod(DOTPROD)
    assert not dotprod.wants_dotprod(NEON)
    assert not dotprod.wants_dotprod({**DOTPROD, "mattr": ["+neon", "+dotprod", "+i8mm"]})
    assert not dotprod.wants_dotprod({"kind": "llvm"})


def test_the_rewrite_is_exact_on_this_machine(tmp_path, digits_x):
    plain = build_tvm(DIGITS_QDQ, "x86-64", tmp_path / "plain")
    laid_out = build_tvm(DIGITS_QDQ, "x86-64", tmp_path / "sdot", dotprod=True)
    assert plain["dotprod"] is None
    assert laid_out["dotprod"] == {"rewritten": 4, "instruction": "sdot"}  # 2 convs, 2 matmuls
    a, b = run_tvm(plain["artifact"], digits_x), run_tvm(laid_out["artifact"], digits_x)
    assert np.array_equal(a, b), float(np.abs(a - b).max())


def test_the_aarch64_dotprod_library_uses_sdot(tmp_path):
    _need(*CROSS)
    report = build_tvm(DIGITS_QDQ, DOTPROD, tmp_path / "dotprod")
    assert report["arch"] == "aarch64" and report["dotprod"]["rewritten"] == 4
    text = _objdump(report["artifact"])
    assert _count(text, "sdot") > 0
    control = build_tvm(DIGITS_QDQ, NEON, tmp_path / "neon")
    assert control["dotprod"] is None and _count(_objdump(control["artifact"]), "sdot") == 0


HARNESS = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dlpack/dlpack.h>
#include <tvm/ffi/c_api.h>

/* The TVM runtime calls a kernel makes, done here in one thread (the parallel loop runs as one task). */
typedef struct { void* sync_handle; int32_t num_task; } TVMParallelGroupEnv;
typedef int (*FTVMParallelLambda)(int task_id, TVMParallelGroupEnv* penv, void* cdata);
int TVMBackendParallelLaunch(FTVMParallelLambda f, void* cdata, int num_task) {
  TVMParallelGroupEnv env = {NULL, 1};
  return f(0, &env, cdata);
}
/* A TVM library reaches the runtime through these pointers, which its loader fills in. */
int (*__TVMBackendParallelLaunch)(FTVMParallelLambda, void*, int) = TVMBackendParallelLaunch;
int TVMBackendParallelBarrier(int task_id, TVMParallelGroupEnv* penv) { return 0; }
void* TVMBackendAllocWorkspace(int dt, int id, uint64_t n, int code, int bits) { return malloc(n); }
int TVMBackendFreeWorkspace(int dt, int id, void* p) { free(p); return 0; }
void TVMFFIErrorSetRaisedFromCStr(const char* kind, const char* msg) { fprintf(stderr, "%s: %s\n", kind, msg); }
void TVMFFIErrorSetRaisedFromCStrParts(const char* kind, const char** parts, int32_t n) {
  fprintf(stderr, "%s:", kind);
  for (int i = 0; i < n; i++) fprintf(stderr, " %s", parts[i]);
  fprintf(stderr, "\n");
}

int __tvm_ffi_conv2d_sdot(void*, const TVMFFIAny*, int32_t, TVMFFIAny*);

static void* slurp(const char* path, size_t n) {
  void* buf = malloc(n);
  FILE* f = fopen(path, "rb");
  if (!f || fread(buf, 1, n, f) != n) { fprintf(stderr, "cannot read %s\n", path); exit(2); }
  fclose(f);
  return buf;
}

int main(int argc, char** argv) {
  int64_t xs[4] = {N, H, W, C}, ws[4] = {O, KH, KW, C}, ys[4] = {N, O, OH, OW};
  int8_t* x = slurp(argv[1], N * H * W * C);
  int8_t* w = slurp(argv[2], O * KH * KW * C);
  int32_t* y = calloc(N * O * OH * OW, 4);
  DLDevice cpu = {kDLCPU, 0};
  DLTensor tx = {x, cpu, 4, {kDLInt, 8, 1}, xs, NULL, 0};
  DLTensor tw = {w, cpu, 4, {kDLInt, 8, 1}, ws, NULL, 0};
  DLTensor ty = {y, cpu, 4, {kDLInt, 32, 1}, ys, NULL, 0};
  TVMFFIAny args[3];
  DLTensor* ts[3] = {&tx, &tw, &ty};
  for (int i = 0; i < 3; i++) {
    memset(&args[i], 0, sizeof(TVMFFIAny));
    args[i].type_index = kTVMFFIDLTensorPtr;
    args[i].v_ptr = ts[i];
  }
  TVMFFIAny ret;
  memset(&ret, 0, sizeof(ret));
  int rc = __tvm_ffi_conv2d_sdot(NULL, args, 3, &ret);
  if (rc != 0) return 3;
  FILE* f = fopen(argv[3], "wb");
  fwrite(y, 4, N * O * OH * OW, f);
  fclose(f);
  return 0;
}
"""


def test_the_sdot_kernel_runs_under_qemu_with_exact_sums(tmp_path):
    _need(*CROSS, "qemu-aarch64")
    import tvm
    from tvm import te
    from tvm.s_tir import dlight as dl

    n, h, w, c, o, k = 1, 10, 10, 32, 16, 3
    x = te.placeholder((n, h, w, c), "int8", name="x")
    wt = te.placeholder((o, k, k, c), "int8", name="w")
    y = dotprod.conv_nhwc_s8(x, wt, (1, 1), (1, 1))
    mod = tvm.IRModule({"conv2d_sdot": te.create_prim_func([x, wt, y]).with_attr("global_symbol", "conv2d_sdot")})
    target = tvm.target.Target(DOTPROD)
    with target:
        mod = dl.ApplyDefaultSchedule(dotprod.schedule_rule())(mod)
    assert "T.parallel" in mod.script()  # scheduled as in a build, not left as TVM's default code
    lib = tvm.compile(mod, target=target)
    lib.export_library(str(tmp_path / "kernel.tar"))
    with tarfile.open(tmp_path / "kernel.tar") as tar:
        tar.extractall(tmp_path / "objs", filter="data")
    objs = sorted(str(p) for p in (tmp_path / "objs").glob("*.o"))
    assert objs and any(_count(_objdump(p), "sdot") for p in objs)

    import tvm_ffi

    include = Path(tvm_ffi.__file__).parent / "include"
    oh = ow = h - k + 1
    dims = {"N": n, "H": h, "W": w, "C": c, "O": o, "KH": k, "KW": k, "OH": oh, "OW": ow}
    (tmp_path / "harness.c").write_text(HARNESS, encoding="utf-8")
    exe = tmp_path / "harness"
    subprocess.run(
        ["aarch64-linux-gnu-gcc", "-O2", "-static", f"-I{include}", *[f"-D{k_}={v}" for k_, v in dims.items()]]
        + [str(tmp_path / "harness.c"), *objs, "-o", str(exe), "-lm"],
        check=True,
        capture_output=True,
        text=True,
    )
    rng = np.random.default_rng(0)
    xv = rng.integers(-128, 128, (n, h, w, c), dtype=np.int8)
    wv = rng.integers(-128, 128, (o, k, k, c), dtype=np.int8)
    xv.tofile(tmp_path / "x.bin")
    wv.tofile(tmp_path / "w.bin")
    run = subprocess.run(
        ["qemu-aarch64", str(exe), str(tmp_path / "x.bin"), str(tmp_path / "w.bin"), str(tmp_path / "y.bin")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    got = np.fromfile(tmp_path / "y.bin", dtype=np.int32).reshape(n, o, oh, ow)
    xi, wi = xv.astype(np.int64), wv.astype(np.int64)
    want = np.zeros((n, o, oh, ow), np.int64)
    for ky in range(k):
        for kx in range(k):
            want += np.einsum("nyxc,oc->noyx", xi[:, ky : ky + oh, kx : kx + ow, :], wi[:, ky, kx, :])
    assert np.array_equal(got, want)
