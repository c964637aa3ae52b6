"""Nothing the kernel writes is left half-written: a file is written beside its destination and renamed
over it, a folder is built beside its destination and swapped in. A cancel, an error or a kill in between
leaves the old file or folder (or none), never a part of the new one. What a killed process was writing (a
hidden sibling named with its pid) is removed by the next write of the same destination.

A write that fails (the disk or a quota full, no permission, a read-only file system, a folder in the way)
raises WriteError naming the destination, whatever library was writing, so the kernel can say what to do."""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import re
import shutil
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

# What an OSError says when the write itself failed, not the request.
WRITE_ERRNOS = frozenset(
    {
        errno.ENOSPC,
        errno.EDQUOT,
        errno.EFBIG,
        errno.EROFS,
        errno.EACCES,
        errno.EPERM,
        errno.EISDIR,
        errno.ENOTDIR,
        errno.EEXIST,
        errno.ENOTEMPTY,
    }
)
# Left free on the disk after a library's own writer failed there, the disk counts as full: its error names
# no errno (ONNX Runtime: "Protobuf serialization failed"; a compiler: its exit code).
FULL_BELOW = 1 << 20


class WriteError(OSError):
    """Writing `filename` (a file, or a folder being built) failed; `errno` and `strerror` say why."""


def free_bytes(path: Path) -> int | None:
    """Bytes an unprivileged writer may still use on the file system holding `path` (its nearest existing
    folder), or None when that cannot be told."""
    for folder in (path, *path.parents):
        try:
            st = os.statvfs(folder)
        except OSError:
            continue
        return st.f_bavail * st.f_frsize
    return None


def _write_errno(exc: BaseException, path: Path) -> int | None:
    if isinstance(exc, OSError) and exc.errno in WRITE_ERRNOS:
        name = exc.filename
        # An error about another file (a read in the same block) is not this write's; a write() names none.
        if not isinstance(name, (str, bytes)) or Path(os.fsdecode(name)).is_relative_to(path.parent):
            return exc.errno
    free = free_bytes(path)
    return errno.ENOSPC if free is not None and free < FULL_BELOW else None


@contextlib.contextmanager
def writing(path: str | os.PathLike[str]) -> Iterator[None]:
    """Turns a failure to write `path` in the block into WriteError (see WRITE_ERRNOS and FULL_BELOW)."""
    path = Path(path)
    try:
        yield
    except WriteError:
        raise
    except Exception as exc:
        code = _write_errno(exc, path)
        if code is None:
            raise
        raise WriteError(code, os.strerror(code), str(path)) from exc


def sibling(path: Path, suffix: str) -> Path:
    """A fresh hidden name beside `path` (`.name.<pid>.<random>.<suffix>`)."""
    return path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.{suffix}")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove(path: Path) -> None:
    """A folder with its content, a file, or a symlink itself (never what it points to)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def sweep(path: Path, suffix: str) -> None:
    """Removes the siblings of `path` (see `sibling`) that a process no longer running left behind."""
    prefix = f".{path.name}."
    rest = re.compile(rf"(\d+)\.[0-9a-f]{{8}}\.{re.escape(suffix)}")
    try:
        names = os.listdir(path.parent)
    except FileNotFoundError:
        return
    for name in names:
        found = rest.fullmatch(name[len(prefix) :]) if name.startswith(prefix) else None
        if found and not _alive(int(found[1])):
            _remove(path.parent / name)


@contextlib.contextmanager
def replacing(path: str | os.PathLike[str]) -> Iterator[Path]:
    """A temporary path beside `path` to write to; renamed over `path` when the block ends without error,
    removed otherwise. The parent folder is created."""
    path = Path(path)
    tmp = sibling(path, "tmp")
    try:
        with writing(path):
            path.parent.mkdir(parents=True, exist_ok=True)
            sweep(path, "tmp")
            yield tmp
            os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def write_bytes(path: str | os.PathLike[str], data: bytes | bytearray | memoryview) -> None:
    with replacing(path) as tmp:
        tmp.write_bytes(data)


def write_text(path: str | os.PathLike[str], text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


def write_json(path: str | os.PathLike[str], data: Any, indent: int | None = None) -> None:
    separators = None if indent else (",", ":")
    write_text(path, json.dumps(data, indent=indent, separators=separators, allow_nan=False))


def copy_file(src: str | os.PathLike[str], path: str | os.PathLike[str]) -> None:
    with replacing(path) as tmp:
        shutil.copyfile(src, tmp)


def write_serialized(path: str | os.PathLike[str], serialize: Callable[[io.BytesIO], None]) -> None:
    """`serialize(buffer)` writes into memory, then the bytes go to `path`: torch's zip writer aborts the whole
    process when the disk fills under it (torch 2.13, torch.export.save), and a Python write raises instead."""
    buffer = io.BytesIO()
    serialize(buffer)
    write_bytes(path, buffer.getbuffer())


def torch_save(obj: object, path: str | os.PathLike[str]) -> None:
    import torch

    write_serialized(path, lambda buffer: torch.save(obj, buffer))


@contextlib.contextmanager
def staging(folder: str | os.PathLike[str]) -> Iterator[Path]:
    """An empty folder beside `folder` to build in; it replaces `folder` (see replace_dir) when the block ends
    without error, and is removed otherwise."""
    folder = Path(folder)
    stage = sibling(folder, "staging")
    try:
        with writing(folder):
            folder.parent.mkdir(parents=True, exist_ok=True)
            sweep(folder, "staging")
            stage.mkdir()
            yield stage
            replace_dir(stage, folder)
    finally:
        _remove(stage)


def replace_dir(src: Path, folder: Path) -> None:
    """Move `src` into place as `folder`. What was there is swapped out first, then removed: a folder, a file,
    or a symlink, which is replaced itself: what it points to is never written to or removed."""
    folder = Path(folder)
    with writing(folder):
        old = None
        if os.path.lexists(folder):
            sweep(folder, "old")
            old = sibling(folder, "old")
            os.replace(folder, old)
        try:
            os.replace(src, folder)
        except BaseException:
            if old is not None:
                os.replace(old, folder)
            raise
    if old is not None:
        _remove(old)


def rebase(obj: Any, old: str, new: str) -> Any:
    """Every string under obj that is a path inside `old`, moved to `new`: a result written while its folder
    was staged, as it reads once the folder is in place."""
    if isinstance(obj, str):
        return new + obj[len(old) :] if obj == old or obj.startswith(old + os.sep) else obj
    if isinstance(obj, dict):
        return {k: rebase(v, old, new) for k, v in obj.items()}
    if isinstance(obj, list):
        return [rebase(v, old, new) for v in obj]
    return obj
