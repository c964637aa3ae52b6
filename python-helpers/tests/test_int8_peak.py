"""The int8 peak microbenchmark (benchmarks/int8_peak.py) on this machine's CPU, whatever it is.

- The AVX2 row is always measured (every x86 machine we run on has AVX2).
- The VNNI row has a figure exactly when /proc/cpuinfo lists avx512_vnni, else a note saying why not.
- The AMX row is there exactly when the CPU lists amx_tile and amx_int8: a figure when Linux grants the tile
  state (then above the VNNI peak: one tdpbusd is 16,384 products where vpdpbusd is 64), else a note.
  No speed is asserted beyond that ordering of instructions whose widths differ 256×.
- Each sequence's loop does the products its row counts: the multiply instructions in the compiled loop (every
  sequence, built for a CPU with all of them: only disassembled) times their products equal the MACs per
  iteration that int8_peak.c's run() is given (a product written twice is computed once by the compiler)."""

from __future__ import annotations

import platform
import re
import shutil
import subprocess

import pytest
from benchmarks import int8_peak

from qat_kernel.runtimes import cpu

pytestmark = pytest.mark.skipif(
    platform.machine().lower() not in ("x86_64", "amd64"), reason="the microbenchmark is x86 code"
)


def test_peak_rows_follow_the_cpu_flags():
    out = int8_peak.peak()
    rows = {r["name"]: r for r in out["rows"]}
    flags = cpu.flags()
    assert rows["avx2"]["gmacs"] > 0 and rows["avx2"]["threads"] >= 1
    if "avx512_vnni" in flags and "avx512f" in flags:
        assert rows["vnni"]["gmacs"] > 0
    else:
        assert rows["vnni"]["gmacs"] is None and "VNNI" in rows["vnni"]["note"]
    if "amx_tile" in flags and "amx_int8" in flags:
        amx = rows["amx"]
        if amx["gmacs"] is None:
            assert "refused" in amx["note"]
        else:
            assert amx["gmacs"] > rows["vnni"]["gmacs"], rows
    else:
        assert "amx" not in rows
    for r in out["rows"]:
        assert r["label"] == int8_peak.LABELS[r["name"]]


# sequence -> (its multiply instruction, products per instruction)
MULTIPLIES = {
    "avx2": ("vpmaddubsw", 32),
    "avx2_wd": ("vpmaddwd", 16),
    "vnni": ("vpdpbusd", 64),
    "amx": ("tdpbusd", 16384),
}


@pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("objdump") is None, reason="needs gcc and objdump")
def test_each_loop_does_the_products_it_counts(tmp_path):
    obj = tmp_path / "peak.o"
    flags = int8_peak.gcc_flags(vnni512=True, amx=True)
    subprocess.run(["gcc", *flags, "-c", str(int8_peak.SOURCE), "-o", str(obj)], check=True, capture_output=True)
    asm = subprocess.run(["objdump", "-d", str(obj)], check=True, capture_output=True, text=True).stdout
    bodies = dict(re.findall(r"^[0-9a-f]+ <(\w+)>:\n(.*?)(?=^[0-9a-f]+ <|\Z)", asm, re.M | re.S))
    source = int8_peak.SOURCE.read_text()
    counted = {name: eval(macs, {}) for name, macs in re.findall(r'run\("(\w+)", \w+, ([\d *]+),', source)}  # noqa: S307 - literal products
    assert set(counted) == set(MULTIPLIES), counted
    for name, (instruction, products) in MULTIPLIES.items():
        done = len(re.findall(rf"\s{instruction}\s", bodies[name])) * products
        assert done == counted[name], (name, instruction, done, counted[name])
