"""kernel/info: interpreter and versions of the packages the kernel uses (KernelInfoResult)."""

from __future__ import annotations

import importlib
import platform
import sys

from qat_kernel.pipeline import packages
from qat_kernel.rpc.context import RequestContext

# Key in the result -> import name.
PACKAGES = {"torch": "torch", "torchao": "torchao", "onnx": "onnx", "onnxruntime": "onnxruntime", "tvm": "tvm"}


def _package_info(module_name: str) -> dict:
    # A real import, not just metadata: an installed but broken package must show up here.
    try:
        module = importlib.import_module(module_name)
        version = getattr(module, "__version__", None)
        if version is None:
            from importlib.metadata import version as dist_version

            version = dist_version(packages.distribution(module_name))
        return {"version": str(version)}
    except Exception as exc:  # noqa: BLE001 - a broken package is reported, not raised
        error = str(exc) if isinstance(exc, ImportError) else f"{type(exc).__name__}: {exc}"
        return {"version": None, "error": error, "install": packages.install_command(module_name)}


def run(ctx: RequestContext) -> dict:
    result = {
        "python": platform.python_version(),
        "executable": sys.executable,
        "platform": platform.platform(),
        "packages": {},
    }
    for key, module_name in PACKAGES.items():
        ctx.check_cancelled()
        result["packages"][key] = _package_info(module_name)
    return result
