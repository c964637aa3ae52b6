"""What the kernel built: the content hash of every library and runner it writes (build/tvm's model.so,
deploy/c-artifact's runner source and header), kept outside the workspace, so that it loads, compiles or runs
only what it built itself (in this session or an earlier one on this machine) and never a file planted in an
output folder: loading a shared library runs its constructors, and a runner is compiled and run.

Recorded by content, not by path (a build is staged, then moved into place): a file is trusted while its bytes
are those of something the kernel built. The record lives in $QAT_STUDIO_STATE_DIR (default
~/.cache/qat-studio)/built-artifacts.json, the newest KEEP entries."""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from pathlib import Path

from qat_kernel import atomic
from qat_kernel.rpc.errors import ArtifactUnknown

ENV_VAR = "QAT_STUDIO_STATE_DIR"
KEEP = 4096
_LOCK = threading.Lock()


def _ledger() -> Path:
    root = os.environ.get(ENV_VAR) or os.path.join(os.path.expanduser("~"), ".cache", "qat-studio")
    return Path(root) / "built-artifacts.json"


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _read() -> dict[str, float]:
    try:
        data = json.loads(_ledger().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, (int, float))} if isinstance(data, dict) else {}


def record(*paths: str | os.PathLike[str]) -> None:
    """Notes each file's content as built by this kernel (called once the file is written)."""
    now = time.time()
    entries = {_digest(Path(p)): now for p in paths}
    with _LOCK:
        data = _read()  # read again: another kernel (another window) may have written since
        data.update(entries)
        if len(data) > KEEP:
            data = dict(sorted(data.items(), key=lambda kv: kv[1])[-KEEP:])
        ledger = _ledger()
        ledger.parent.mkdir(parents=True, exist_ok=True)
        atomic.write_json(ledger, data)


def built_here(path: str | os.PathLike[str]) -> bool:
    """Whether `path` is a regular file whose content this kernel recorded."""
    try:
        real = Path(path).resolve(strict=True)
    except OSError:
        return False
    if not real.is_file():
        return False
    return _digest(real) in _read()


def require(path: str | os.PathLike[str], how: str) -> None:
    """Raises ArtifactUnknown unless `path` is one the kernel built (`how`: the request that builds it)."""
    if not built_here(path):
        raise ArtifactUnknown(
            f"{path} was not built by QAT Studio on this machine, or changed since it was: it is not loaded or "
            f"run. Run {how} to build it."
        )
