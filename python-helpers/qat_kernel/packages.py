"""Pinned requirements (python-helpers/requirements.txt) and the pip command that installs one."""

from __future__ import annotations

import functools
import re
import sys

from qat_kernel import HELPERS_DIR

# Import name -> distribution name, where they differ.
_DISTRIBUTIONS = {"sklearn": "scikit-learn", "tvm": "apache-tvm", "yaml": "PyYAML"}


def distribution(module: str) -> str:
    return _DISTRIBUTIONS.get(module, module)


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@functools.lru_cache(maxsize=1)
def _pins() -> dict[str, str]:
    path = HELPERS_DIR / "requirements.txt"
    pins: dict[str, str] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return pins
    for line in lines:
        line = line.split("#", 1)[0].strip()
        match = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:[=<>!~].*)?$", line)
        if match:
            pins[_norm(match.group(1))] = line.replace(" ", "")
    return pins


def is_pinned(module: str) -> bool:
    return _norm(distribution(module)) in _pins()


def requirement(module: str) -> str:
    """`torch==2.13.0` for a pinned package, else the bare distribution name."""
    dist = distribution(module)
    return _pins().get(_norm(dist), dist)


def install_command(module: str) -> str:
    return f"{sys.executable} -m pip install {requirement(module)}"
