"""Imports the user's `file.py:function` entries from the workspace (the config's folder)."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from qat_kernel import userpaths
from qat_kernel.rpc.errors import ConfigInvalid

_PREFIX = "qat_user_"
_WORKSPACES: set[str] = set()  # every workspace this kernel has imported user code from (real paths)


def _forget_workspace_modules(folder: str) -> None:
    """Drop modules loaded from this workspace or another one by an earlier request, so edited files are
    re-read (the kernel lives as long as the editor session) and a plain `from model import Net` finds this
    workspace's model.py, not another workspace's left in sys.modules."""
    _WORKSPACES.add(os.path.realpath(folder))
    roots = [w.rstrip(os.sep) + os.sep for w in _WORKSPACES]
    shadowed = _top_level_names(folder)
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if name.startswith(_PREFIX) or (file and _in_workspace(file, roots)):
            del sys.modules[name]
        elif name.split(".")[0] in shadowed and file and not userpaths.is_installed_file(file):
            del sys.modules[name]  # a same-named module of the user's from elsewhere: this workspace's wins


def _top_level_names(folder: str) -> set[str]:
    """The module names the workspace's own files and packages give `import` (model.py, utils/)."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return set()
    names = {e.name[:-3] for e in entries if e.name.endswith(".py") and e.is_file()}
    return names | {e.name for e in entries if e.is_dir() and os.path.isfile(os.path.join(e.path, "__init__.py"))}


def _in_workspace(file: str, roots: list[str]) -> bool:
    real = _realpath(file)
    return any(real.startswith(root) and userpaths.is_user_file(file, root) for root in roots)


@functools.lru_cache(maxsize=8192)  # once per module file, not once per module and workspace
def _realpath(file: str) -> str:
    return os.path.realpath(file)


@contextlib.contextmanager
def workspace(folder: Path):
    """The workspace on sys.path (so `from model import Net` works in user files), fresh imports."""
    path = str(folder)
    _forget_workspace_modules(path)
    importlib.invalidate_caches()
    sys.path.insert(0, path)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(path)


def load_entry(folder: Path, entry: str, key: str) -> Callable[..., Any]:
    """The function named by `entry` ("model.py:make_model"); `key` is its YAML path for errors."""
    file_part, func_name = entry.rsplit(":", 1)
    file = (folder / file_part).resolve()
    # A unique module name per file: two workspaces' model.py must not collide in sys.modules.
    digest = hashlib.sha1(os.fsencode(file)).hexdigest()[:10]
    name = f"{_PREFIX}{file.stem}_{digest}"
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise ConfigInvalid(f"{key}: cannot import {file}", path=key)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses, pickling and torch.export look modules up here
    spec.loader.exec_module(module)
    func = getattr(module, func_name, None)
    if not callable(func):
        raise ConfigInvalid(f"{key}: {file.name} defines no function {func_name}", path=key)
    return func
