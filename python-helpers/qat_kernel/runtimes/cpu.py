"""What this CPU offers int8 kernels, read at run time (machines differ: AMX, AVX512-VNNI, AVX2 only, Arm).

Without a dot-product instruction (VNNI on x86), x86 int8 kernels multiply u8 activations by s8 weights
with vpmaddubsw, whose int16 pair sums saturate at the full 8-bit ranges: ONNX Runtime's u8s8 kernels,
oneDNN (Inductor) and FBGEMM (eager) then lose accuracy unless weights or activations use 7 bits."""

from __future__ import annotations

import functools
import platform
from pathlib import Path
from typing import Any

# /proc/cpuinfo flag -> what it gives int8 code
X86_INT8 = (("amx_int8", "AMX"), ("avx512_vnni", "AVX512-VNNI"), ("avx_vnni", "AVX-VNNI"))
ARM_INT8 = (("i8mm", "I8MM"), ("asimddp", "dot product (sdot/udot)"))


@functools.cache
def flags() -> frozenset[str]:
    """The CPU's feature flags (Linux /proc/cpuinfo; empty where it cannot be read)."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    found: set[str] = set()
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name.strip() in ("flags", "Features"):
            found.update(value.split())
    return frozenset(found)


@functools.cache
def model_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            name, _, value = line.partition(":")
            if name.strip() in ("model name", "Model", "Hardware"):
                return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def int8_dot_products() -> list[str]:
    """The int8 dot-product instructions this CPU has, best first (empty: none)."""
    table = X86_INT8 if platform.machine().lower() in ("x86_64", "amd64") else ARM_INT8
    have = flags()
    return [label for flag, label in table if flag in have]


def saturating_int8() -> bool:
    """True on an x86 CPU without VNNI/AMX: full-range u8 x s8 products can saturate in int16."""
    return platform.machine().lower() in ("x86_64", "amd64") and not int8_dot_products()


def summary() -> dict[str, Any]:
    """The CPU facts reports carry: {model, int8DotProducts, saturatingInt8}."""
    return {"model": model_name(), "int8DotProducts": int8_dot_products(), "saturatingInt8": saturating_int8()}


SATURATION_NOTE = (
    "This CPU has no int8 dot-product instruction (VNNI or AMX): x86 int8 kernels sum u8 x s8 pairs in int16 "
    "(vpmaddubsw), which saturates at full 8-bit ranges"
)
# What the saturation means for each runtime's figures.
CONSEQUENCES = {
    "ort": "ONNX Runtime ran with session.x64quantprecision=1 (u8u8 products where weights leave [-64, 63]) "
    "wherever ORT could apply it; a deployment on such a CPU needs that session option too, and ORT 1.32 "
    "applies it only to graphs whose DequantizeLinear nodes do not share a zero-point initializer",
    "inductor": "oneDNN's int8 kernels (Inductor) can differ from the PyTorch INT8 reference; activations "
    "observed with quant_max: 127 avoid it",
    "bench": "the INT8 rows of ONNX Runtime (with session.x64quantprecision=1 where ORT could apply it) and "
    "Inductor compute more slowly or less exactly than on a CPU with VNNI",
}


def notes(runtime: str) -> list[str]:
    """The report note for `runtime` (a CONSEQUENCES key) on a saturating CPU; none elsewhere."""
    return [f"{SATURATION_NOTE}: {CONSEQUENCES[runtime]}"] if saturating_int8() else []
