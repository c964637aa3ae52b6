"""Errors of the TVM build, as kernel errors so the extension shows them without a traceback."""

from __future__ import annotations

from qat_kernel.rpc.errors import Cancelled, KernelError, PackageMissing

__all__ = ["Cancelled", "ToolchainMissing", "TvmBuildError"]


class ToolchainMissing(PackageMissing):
    """A target's toolchain is missing (cross compiler, CUDA). `install`: the command that fixes it.
    Serialised as kind "packageMissing" with data.package (the tool) and data.install."""

    def __init__(self, message: str, install: str, package: str | None = None):
        super().__init__(message, install=install, package=package)
        self.install = install
        self.package = package


class TvmBuildError(KernelError):
    """A target or model the TVM build cannot handle (not a bug: the message says what to change)."""

    kind = "internal"
