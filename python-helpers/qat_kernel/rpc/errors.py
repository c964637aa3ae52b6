"""Typed kernel errors: a JSON-RPC error code plus KernelErrorData (protocol/kernel-rpc.schema.json). Every
error type of the kernel is declared here, the runtimes' too (ToolchainMissing, TvmBuildError).

`from_exception` turns anything a method raised into one of them, so the extension can react by kind
(jump to the YAML path, open the user's file at the failing line, offer the pip command, ...)."""

from __future__ import annotations

import errno
import traceback
from typing import Any

from qat_kernel import atomic, packages, userpaths
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

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.code = protocol.error_codes()[cls.kind]

    def __init__(self, message: str, **data: Any):
        super().__init__(message)
        self.message = message
        self.data = {k: v for k, v in data.items() if v is not None}

    def to_rpc(self) -> dict[str, Any]:
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


class WriteFailed(KernelError):
    """Writing an output failed (atomic.WriteError, or an error only a write raises): `path` the file or folder,
    `stage` the request's stage then, `errno` why (ENOSPC, EACCES, ...). Nothing half-written is left and the
    kernel lives on with its trained models: the same request after the fix does not train again."""

    kind = "writeFailed"


# What the user can do about each errno of a failed write.
_WRITE_ADVICE = {
    errno.ENOSPC: "The disk is full: free space on it, or choose an output path on another disk",
    errno.EDQUOT: "Your disk quota is used up: free space in it, or choose an output path elsewhere",
    errno.EFBIG: "The file is larger than this file system or your limits allow: choose an output path elsewhere",
    errno.EROFS: "The file system is read-only: choose an output path on a writable one",
    errno.EACCES: "You may not write there: change the folder's permissions, or choose another output path",
    errno.EPERM: "You may not write there: change the folder's permissions, or choose another output path",
}
_IN_THE_WAY = "Something else is in the way at that path: move it, or choose another output path"


def write_failed(exc: OSError, method: str, stage: str | None) -> WriteFailed:
    """The typed error of a failed write (`exc.filename`: the destination, when known)."""
    code = exc.errno if exc.errno is not None else errno.EIO
    name = errno.errorcode.get(code, str(code))
    where = f"{method} ({stage})" if stage else method
    target = f" {exc.filename}" if exc.filename is not None else ""
    return WriteFailed(
        f"{where} could not write{target}: {exc.strerror or name}. {_WRITE_ADVICE.get(code, _IN_THE_WAY)}, then "
        "run it again. Nothing half-written was left, and the kernel keeps the models it trained.",
        path=str(exc.filename) if exc.filename is not None else None,
        stage=stage,
        errno=name,
    )


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

    def to_rpc(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message}


def format_traceback(exc: BaseException) -> str:
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


def _is_oom(exc: BaseException) -> bool:
    # torch.OutOfMemoryError (CUDA/MPS) derives from RuntimeError; torch's CPU allocator raises a
    # plain RuntimeError ("DefaultCPUAllocator: can't allocate memory"). No torch import needed.
    if isinstance(exc, MemoryError) or type(exc).__name__ == "OutOfMemoryError":
        return True
    return isinstance(exc, RuntimeError) and "can't allocate memory" in str(exc)


# Errors only a write raises: a library's own writer that is not atomic's (TensorBoard events, a cache).
_ONLY_WRITES = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS})


def from_exception(
    exc: BaseException, workspace: str | None, method: str = "", stage: str | None = None
) -> KernelError | ProtocolError:
    """Classify an exception raised while serving a request. `workspace`: the config's folder; `method`
    and `stage`: the request and the stage it was in (named by a failed write)."""
    if isinstance(exc, (KernelError, ProtocolError)):
        return exc
    if isinstance(exc, atomic.WriteError):
        return write_failed(exc, method, stage)
    text = format_traceback(exc)
    summary = f"{type(exc).__name__}: {exc}"
    if _is_oom(exc):
        return OutOfMemory(f"Out of memory: {exc}", traceback=text)
    location = userpaths.exception_location(exc, workspace) if workspace else None
    if isinstance(exc, OSError) and exc.errno in _ONLY_WRITES and location is None:
        return write_failed(exc, method, stage)
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
