"""Typed kernel errors: a JSON-RPC error code plus KernelErrorData (protocol/kernel-rpc.schema.json). Every
error type of the kernel is declared here, the runtimes' too (ToolchainMissing, TvmBuildError).

`from_exception` turns anything a method raised into one of them, so the extension can react by kind
(jump to the YAML path, open the user's file at the failing line, offer the pip command, ...)."""

from __future__ import annotations

import traceback
from typing import Any

from qat_kernel import packages, userpaths
from qat_kernel.rpc import protocol

# JSON-RPC 2.0's own codes (protocol errors, no KernelErrorData)
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602


class KernelError(Exception):
    """An error with a JSON-RPC code and KernelErrorData. A subclass names its `kind`; its code is the schema's
    (KernelErrorData.kind x-codes)."""

    kind = "internal"
    code = protocol.error_codes()["internal"]

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.code = protocol.error_codes()[cls.kind]

    def __init__(self, message: str, **data: Any):
        super().__init__(message)
        self.message = message
        self.data = {k: v for k, v in data.items() if v is not None}

    def to_rpc(self) -> dict:
        return {"code": self.code, "message": self.message, "data": {"kind": self.kind, **self.data}}


class Cancelled(KernelError):
    kind = "cancelled"


class ConfigInvalid(KernelError):
    kind = "configInvalid"

    def __init__(self, message: str, path: str = ""):
        super().__init__(message, path=path)


class ModelGone(KernelError):
    """A request named a trained model (params.model) this kernel no longer holds."""

    kind = "modelGone"


class ArtifactUnknown(KernelError):
    """A library or runner in an output folder that this kernel did not build, or that changed since it did
    (qat_kernel.provenance): not loaded, not compiled, not run. `path` names it."""

    kind = "artifactUnknown"


class UserCodeError(KernelError):
    kind = "userCode"


class PackageMissing(KernelError):
    kind = "packageMissing"


class OutOfMemory(KernelError):
    kind = "outOfMemory"


class NonFinite(KernelError):
    """A NaN or Inf in the model, its inputs or its loss: `module` where it first appears, `step` the
    training step (qat_kernel.pipeline.health)."""

    kind = "nonFinite"
    stack_trace: str | None = None  # torch.export's stack trace of the node that made the value, when known
    source_module: str | None = None  # the code that passed the value on, when it is not `module`


class Unsupported(KernelError):
    """The model has something the target cannot run (data.unsupported lists it, data.location points at the
    user's line when there is one)."""

    kind = "unsupported"


class InternalError(KernelError):
    kind = "internal"


class ToolchainMissing(PackageMissing):
    """A target's toolchain is missing (cross compiler, CUDA, a C or C++ compiler). `install`: the command that
    fixes it. Serialised as kind "packageMissing" with data.package (the tool) and data.install."""

    def __init__(self, message: str, install: str, package: str | None = None):
        super().__init__(message, install=install, package=package)
        self.install = install
        self.package = package


class TvmBuildError(KernelError):
    """A target or model the TVM build (or the C runner) cannot handle (not a bug: the message says what to
    change)."""

    kind = "internal"


class ProtocolError(Exception):
    """A JSON-RPC protocol-level error (-32600/-32601/-32602/-32700); carries no KernelErrorData."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code, self.message = code, message

    def to_rpc(self) -> dict:
        return {"code": self.code, "message": self.message}


def format_traceback(exc: BaseException) -> str:
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


def _is_oom(exc: BaseException) -> bool:
    # torch.OutOfMemoryError (CUDA/MPS) derives from RuntimeError; torch's CPU allocator raises a
    # plain RuntimeError ("DefaultCPUAllocator: can't allocate memory"). No torch import needed.
    if isinstance(exc, MemoryError) or type(exc).__name__ == "OutOfMemoryError":
        return True
    return isinstance(exc, RuntimeError) and "can't allocate memory" in str(exc)


def from_exception(exc: BaseException, workspace: str | None) -> KernelError | ProtocolError:
    """Classify an exception raised while serving a request. `workspace`: the config's folder."""
    if isinstance(exc, (KernelError, ProtocolError)):
        return exc
    text = format_traceback(exc)
    summary = f"{type(exc).__name__}: {exc}"
    if _is_oom(exc):
        return OutOfMemory(f"Out of memory: {exc}", traceback=text)
    location = userpaths.exception_location(exc, workspace) if workspace else None
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        top = exc.name.split(".")[0]
        # A missing module we pin (torch, sklearn, ...) is an install problem even when the user's
        # file imports it; an unknown one raised in the user's file is more likely a typo there.
        if packages.is_pinned(top) or location is None:
            return PackageMissing(
                f"Python package missing: {top}",
                package=packages.distribution(top),
                install=packages.install_command(top),
                traceback=text,
            )
    if location is not None:
        return UserCodeError(f"Your code raised {summary}", traceback=text, location=location)
    return InternalError(f"Internal error: {summary}", traceback=text)
