"""Nothing the kernel writes is left half-written: a file is written beside its destination and renamed
over it, a folder is built beside its destination and swapped in. A cancel, an error or a kill in between
leaves the old file or folder (or none), never a part of the new one. What a killed process was writing (a
hidden sibling named with its pid) is removed by the next write of the same destination."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path


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
        if not found or _alive(int(found[1])):
            continue
        stale = path.parent / name
        if stale.is_dir() and not stale.is_symlink():
            shutil.rmtree(stale, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                stale.unlink()


@contextlib.contextmanager
def replacing(path) -> Iterator[Path]:
    """A temporary path beside `path` to write to; renamed over `path` when the block ends without error,
    removed otherwise. The parent folder is created."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    sweep(path, "tmp")
    tmp = sibling(path, "tmp")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def write_text(path, text: str) -> None:
    with replacing(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json(path, data, indent: int | None = None) -> None:
    separators = None if indent else (",", ":")
    write_text(path, json.dumps(data, indent=indent, separators=separators, allow_nan=False))


def copy_file(src, path) -> None:
    with replacing(path) as tmp:
        shutil.copyfile(src, tmp)


def torch_save(obj, path) -> None:
    import torch

    with replacing(path) as tmp:
        torch.save(obj, tmp)


@contextlib.contextmanager
def staging(folder) -> Iterator[Path]:
    """An empty folder beside `folder` to build in; it replaces `folder` (whose old content is removed)
    when the block ends without error, and is removed otherwise."""
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    sweep(folder, "staging")
    stage = sibling(folder, "staging")
    stage.mkdir()
    try:
        yield stage
        replace_dir(stage, folder)
    finally:
        if stage.exists():
            shutil.rmtree(stage, ignore_errors=True)


def replace_dir(src: Path, folder: Path) -> None:
    """Move `src` into place as `folder`; an existing `folder` is swapped out first, then removed."""
    old = None
    if folder.exists():
        old = folder.with_name(f".{folder.name}.old.{uuid.uuid4().hex[:8]}")
        os.replace(folder, old)
    try:
        os.replace(src, folder)
    except BaseException:
        if old is not None:
            os.replace(old, folder)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def rebase(obj, old: str, new: str):
    """Every string under obj that is a path inside `old`, moved to `new`: a result written while its folder
    was staged, as it reads once the folder is in place."""
    if isinstance(obj, str):
        return new + obj[len(old) :] if obj == old or obj.startswith(old + os.sep) else obj
    if isinstance(obj, dict):
        return {k: rebase(v, old, new) for k, v in obj.items()}
    if isinstance(obj, list):
        return [rebase(v, old, new) for v in obj]
    return obj
