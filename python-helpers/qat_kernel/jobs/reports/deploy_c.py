"""deploy/c-artifact's summary lines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from qat_kernel.runtimes import parity


def summary(result: dict[str, Any]) -> list[str]:
    lines = [
        f"Deployment folder for {result['target']} ({result['arch']}): {result['outDir']}",
        f"Header {Path(result['header']).name}: {len(result['layers'])} layers, "
        f"{result['weightBytes']:,} bytes of int8 weights; runner {Path(result['runner']).name} (C99, no TVM)",
    ]
    f = result.get("footprint")
    if f:
        lines.append(
            f"Code size ({f['arch']}, {f['tool']} on the runner's object): text {f['text']:,} B (code + int8 "
            f"weights), data {f['data']:,} B; static RAM {f['staticRamBytes']:,} B (data + bss, of which the "
            f"activation arena {f['arenaBytes']:,} B)"
        )
    if result.get("binary"):
        b = result["binary"]
        lines.append(f"Runner built with {b['compiler']} {' '.join(b['flags'])}: {b['path']}")
    v = result.get("verify")
    if v:
        m = v["vsTorchInt8"]
        where = f"emulated ({v['runner']})" if v["emulated"] else "native"
        lines.append(
            f"Runner vs PyTorch INT8 on {v['samples']} validation samples, {where}: "
            + parity.describe(m, v["outputKind"])
        )
        from qat_kernel.runtimes.c import check

        lines.append("Per layer (quantized outputs): " + check.describe(v["layers"]))
    tvm = result.get("tvm")
    if tvm:
        if tvm.get("library"):
            lines.append(f"TVM library (llvm): {tvm['library']} ({tvm['libraryBytes']:,} bytes)")
        c = tvm.get("cSource")
        if c:
            files = ", ".join(f"{f['name']} {f['bytes']:,} B" for f in c["files"])
            lines.append(
                f"TVM C backend: {c['source']} ({files})"
                + (f"; compiled to {c['library']}" if c.get("library") else f"; did not link: {c.get('libraryError')}")
            )
            if "maxAbsDiffVsLlvm" in c:
                lines.append(f"  the compiled C library vs the llvm one: max |diff| {c['maxAbsDiffVsLlvm']:.3g}")
    for note in result.get("notes", []):
        lines.append(f"Note: {note}")
    return lines
