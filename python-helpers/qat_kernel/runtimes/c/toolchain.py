"""Compiling the portable C runner for an architecture and running it, natively or under qemu-user.

A missing compiler or emulator is a ToolchainMissing (packageMissing, with the apt command), raised
before any work is done."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np

from qat_kernel.rpc.errors import ToolchainMissing, TvmBuildError
from qat_kernel.runtimes.c.cgen import FLAGS
from qat_kernel.runtimes.targets import host_arch

HOST_CC_INSTALL = "apt-get install -y gcc"
CROSS_CC = {"aarch64": "aarch64-linux-gnu-gcc", "x86_64": "x86_64-linux-gnu-gcc"}
CROSS_CC_INSTALL = {
    "aarch64": "apt-get install -y gcc-aarch64-linux-gnu",
    "x86_64": "apt-get install -y gcc-x86-64-linux-gnu",
}
QEMU = {"aarch64": ("qemu-aarch64", "qemu-aarch64-static"), "x86_64": ("qemu-x86_64", "qemu-x86_64-static")}
QEMU_INSTALL = "apt-get install -y qemu-user"
SIZE_TOOL = {"aarch64": "aarch64-linux-gnu-size", "x86_64": "x86_64-linux-gnu-size"}
RUN_TIMEOUT_S = 300


def c_compiler(arch: str) -> str:
    """The C compiler that builds for `arch` here."""
    if arch == host_arch():
        cc = os.environ.get("CC") or "gcc"
        if shutil.which(cc) is None:
            raise ToolchainMissing(
                f"Compiling the C runner needs a C compiler; {cc} is not on PATH. Install it with: {HOST_CC_INSTALL}",
                install=HOST_CC_INSTALL,
                package="gcc",
            )
        return cc
    cc = CROSS_CC.get(arch)
    if cc is None:
        raise TvmBuildError(f"No cross compiler known for {arch} (known: {', '.join(CROSS_CC)})")
    if shutil.which(cc) is None:
        install = CROSS_CC_INSTALL[arch]
        raise ToolchainMissing(
            f"Cross-compiling the C runner for {arch}: {cc} is not on PATH. Install it with: {install}",
            install=install,
            package=cc,
        )
    return cc


def emulator(arch: str) -> str | None:
    """None when `arch` runs natively here, else the qemu-user binary that runs it."""
    if arch == host_arch():
        return None
    for name in QEMU.get(arch, ()):
        if shutil.which(name):
            return name
    raise ToolchainMissing(
        f"Running the {arch} runner on this {host_arch()} machine needs qemu-user "
        f"({QEMU.get(arch, ('qemu-' + arch,))[0]} is not on PATH). Install it with: {QEMU_INSTALL}",
        install=QEMU_INSTALL,
        package="qemu-user",
    )


def compile_runner(source: Path, arch: str, out: Path, integer_bias: bool = False) -> dict[str, Any]:
    """Compile <stem>_runner.c (its header beside it) for `arch`; static when cross-compiled, so
    qemu-user or the board need no target sysroot."""
    cc = c_compiler(arch)
    flags = list(FLAGS) + (["-DQAT_INTEGER_BIAS"] if integer_bias else [])
    if arch != host_arch():
        flags.append("-static")
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = [cc, *flags, "-o", str(out), str(source), "-lm"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    if proc.returncode != 0:
        raise TvmBuildError(f"{cc} failed on {source.name}:\n{proc.stderr.strip()[:4000]}")
    return {
        "path": str(out),
        "compiler": cc,
        "flags": flags,
        "arch": arch,
        "warnings": [line for line in proc.stderr.splitlines() if "warning:" in line],
    }


def run_runner(
    binary: Path,
    inputs: np.ndarray,
    out_size: int,
    work: Path,
    arch: str | None = None,
    trace: bool = False,
    replay: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray | None, str | None]:
    """(logits [N, out_size], trace int32 [N, ...] or None, the emulator used or None). `replay`: the
    reference's quantized layer outputs laid out as the trace [N, ...]; each layer's output is replaced by
    them once traced, so each layer runs on the reference's inputs (a per-layer check, no drift)."""
    arch = arch or host_arch()
    qemu = emulator(arch)
    work.mkdir(parents=True, exist_ok=True)
    inp, outp, tracep = work / "input.f32", work / "output.f32", work / "trace.i32"
    np.ascontiguousarray(inputs, dtype=np.float32).tofile(inp)
    cmd = ([qemu] if qemu else []) + [str(binary), str(inp), str(outp)] + ([str(tracep)] if trace else [])
    if replay is not None:
        if not trace:
            raise ValueError("replay needs trace=True")
        np.ascontiguousarray(replay, dtype=np.int32).tofile(work / "replay.i32")
        cmd.append(str(work / "replay.i32"))
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    if proc.returncode != 0:
        raise TvmBuildError(f"{Path(binary).name} exited with {proc.returncode}: {proc.stderr.strip()[:2000]}")
    n = len(inputs)
    logits = np.fromfile(outp, dtype=np.float32).reshape(n, out_size)
    traced = np.fromfile(tracep, dtype=np.int32).reshape(n, -1) if trace else None
    return logits, traced, qemu


def footprint(source: Path, arch: str, work: Path) -> dict[str, Any]:
    """Code size and static RAM of the runner, from `size` (Berkeley format) on its object file compiled
    for `arch`: text (code and the const weights and tables, which stay in flash on a microcontroller),
    data and bss (static RAM: bss holds the activation arena). The C library is not counted."""
    cc = c_compiler(arch)
    work.mkdir(parents=True, exist_ok=True)
    obj = work / (Path(source).stem + ".o")
    proc = subprocess.run(
        [cc, *FLAGS, "-c", "-o", str(obj), str(source)], capture_output=True, text=True, timeout=RUN_TIMEOUT_S
    )
    if proc.returncode != 0:
        raise TvmBuildError(f"{cc} failed on {Path(source).name}:\n{proc.stderr.strip()[:4000]}")
    return object_size(obj, arch)


def object_size(obj: Path, arch: str) -> dict[str, Any]:
    """text, data, bss of an object file for `arch`, from binutils' size."""
    tool = "size" if arch == host_arch() else SIZE_TOOL.get(arch, "size")
    if shutil.which(tool) is None:
        package = "binutils" if tool == "size" else f"binutils-{arch.replace('_', '-')}-linux-gnu"
        raise ToolchainMissing(
            f"Measuring the runner's size needs {tool}. Install it with: apt-get install -y {package}",
            install=f"apt-get install -y {package}",
            package=package,
        )
    out = subprocess.run([tool, str(obj)], capture_output=True, text=True, timeout=60, check=True).stdout
    text, data, bss = (int(v) for v in out.splitlines()[1].split()[:3])
    return {"text": text, "data": data, "bss": bss, "staticRamBytes": data + bss, "tool": tool, "arch": arch}
