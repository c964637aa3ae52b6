"""TVM's C backend for the deploy folder: the same Relax module build/tvm compiles (import, int8
fold, fused and scheduled kernels), compiled for target {"kind": "c"}.

What it gives (TVM 0.27): export_library(".tar") writes lib0.c, the fused kernels as C against TVM's
C backend API headers, and devc.c, the Relax VM executable (bytecode and constants) as a C array.
Those still run inside TVM's runtime (libtvm_runtime and its Relax VM): they are not a standalone
program, which is why the deploy folder also has the portable runner. export_library(".so") compiles
them with the target's C compiler; cross-compiling needs the target triple passed to the packer,
or the constant blob (devc.o) is emitted for the host."""

from __future__ import annotations

import tarfile
from pathlib import Path
from typing import Any

from qat_kernel.runtimes.targets import ResolvedTarget, host_arch


def build_c_source(onnx_path: str | Path, out_dir: Path, arch: str, cross_cxx: str | None) -> dict[str, Any]:
    """out_dir/model_c.tar (C source) and out_dir/model_c.so compiled from it for `arch`."""
    import tvm
    from tvm.support import cc

    from qat_kernel.runtimes.tvm.build import import_onnx, lowered_kernels, relax_pipeline_for
    from qat_kernel.runtimes.tvm.fold import fold_qdq

    out_dir.mkdir(parents=True, exist_ok=True)
    mod, provenance, _ = import_onnx(onnx_path)
    mod = fold_qdq(mod, provenance).mod
    target = tvm.target.Target({"kind": "c"})
    capture: dict[str, Any] = {}
    resolved = ResolvedTarget(None, {"kind": "c"}, "cpu", arch, cross_cxx, arch == host_arch())
    executable = tvm.compile(mod, target, relax_pipeline=relax_pipeline_for(target, resolved, capture, True))
    tar = out_dir / "model_c.tar"
    executable.export_library(str(tar))
    with tarfile.open(tar) as t:
        files = [{"name": m.name, "bytes": m.size} for m in t.getmembers()]
    _, kernels = lowered_kernels(capture.get("mod"))
    result = {"source": str(tar), "files": files, "kernelsPerPrecision": kernels}
    so = out_dir / "model_c.so"
    try:
        if cross_cxx:
            triple = {"aarch64": "aarch64-linux-gnu"}.get(arch, f"{arch}-linux-gnu")
            executable.export_library(str(so), fcompile=cc.cross_compiler(cross_cxx, get_target_triple=lambda: triple))
        else:
            executable.export_library(str(so))
        result["library"] = str(so)
        result["libraryBytes"] = so.stat().st_size
    except Exception as exc:  # noqa: BLE001 - the source is still worth shipping; say why it did not link
        result["libraryError"] = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:500]
    return result
