"""kernel/info: the interpreter and the version (or the import error and install command) of each package the
kernel uses."""

from __future__ import annotations

import importlib
import platform
import sys
from collections.abc import Callable
from typing import Any

from qat_kernel import packages
from qat_kernel.jobs.reports import analysis as report

# Key in the result -> import name.
PACKAGES = {"torch": "torch", "torchao": "torchao", "onnx": "onnx", "onnxruntime": "onnxruntime", "tvm": "tvm"}


def _package_info(module_name: str) -> dict[str, Any]:
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


def environment(check_cancelled: Callable[[], None]) -> dict[str, Any]:
    """The interpreter and the version (or the import error and install command) of each package the kernel
    uses (KernelInfoResult)."""
    result = {
        "python": platform.python_version(),
        "executable": sys.executable,
        "platform": platform.platform(),
        "packages": {},
    }
    for key, module_name in PACKAGES.items():
        check_cancelled()
        result["packages"][key] = _package_info(module_name)
    result["summary"] = report.kernel_info(result)
    return result
