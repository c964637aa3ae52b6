"""Which files are the user's: frames and stack traces are mapped back to the workspace (the config's
folder), skipping installed packages and this kernel even when they live inside that folder."""

from __future__ import annotations

import functools
import os
import re
import sysconfig
from pathlib import Path
from typing import TypedDict

from qat_kernel import PACKAGE_DIR

_KERNEL_DIR = os.path.realpath(PACKAGE_DIR)
_FRAME_RE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')


class SourceLocation(TypedDict):
    """Where in a source file: `file` as found (absolute), `line` 1-based."""

    file: str
    line: int


def _library_roots() -> list[str]:
    # Only the library folders themselves: a bare prefix can be as wide as "/usr" or even "/".
    roots = set()
    for key in ("stdlib", "purelib", "platlib"):
        try:
            roots.add(sysconfig.get_path(key))
        except KeyError:
            pass
    return [os.path.realpath(r) for r in roots if r]


_LIBRARY_ROOTS = _library_roots()


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def is_installed_file(file: str) -> bool:
    """A file of the standard library, an installed package or this kernel (not one the user wrote)."""
    real = os.path.realpath(file)
    if _inside(real, _KERNEL_DIR) or any(_inside(real, r) for r in _LIBRARY_ROOTS):
        return True
    return bool({"site-packages", "dist-packages"} & set(Path(real).parts))


@functools.lru_cache(maxsize=4096)  # compare/layers asks for every node of every run
def is_user_file(file: str, workspace: str) -> bool:
    if not file or file.startswith("<"):
        return False
    if not _inside(os.path.realpath(file), os.path.realpath(workspace)):
        return False
    return not is_installed_file(file)


def _chain(exc: BaseException | None):
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)


def exception_location(exc: BaseException, workspace: str) -> SourceLocation | None:
    """{file, line} of the innermost user frame, looking through chained exceptions too."""
    import traceback

    for err in _chain(exc):
        # A SyntaxError in the user's file has no frame there, only filename/lineno.
        if isinstance(err, SyntaxError) and err.filename and is_user_file(err.filename, workspace):
            return {"file": err.filename, "line": max(int(err.lineno or 1), 1)}
        frames = [f for f in traceback.extract_tb(err.__traceback__) if is_user_file(f.filename, workspace)]
        if frames:
            return {"file": frames[-1].filename, "line": max(int(frames[-1].lineno or 1), 1)}
    return None


def model_code_location(stack_trace: str | None) -> SourceLocation | None:
    """{file, line} of the innermost frame of a torch.export stack trace outside this kernel: where a model
    defined in a library (timm, transformers) made the node, when no frame is the user's."""
    found: SourceLocation | None = None
    for match in _FRAME_RE.finditer(stack_trace or ""):
        if not _inside(os.path.realpath(match.group("file")), _KERNEL_DIR):
            found = {"file": match.group("file"), "line": int(match.group("line"))}
    return found


def stack_trace_location(stack_trace: str | None, workspace: str) -> SourceLocation | None:
    """{file, line} of the last user frame in a torch.export `node.meta["stack_trace"]`."""
    if not stack_trace:
        return None
    found: SourceLocation | None = None
    for match in _FRAME_RE.finditer(stack_trace):
        if is_user_file(match.group("file"), workspace):
            found = {"file": match.group("file"), "line": int(match.group("line"))}
    return found
