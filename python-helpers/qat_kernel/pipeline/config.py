"""Loads a .qat.yaml file, validates it against protocol/qat-config.schema.json, then checks what a
schema cannot say (quant_min/quant_max fit the dtype, entry files exist).

Every failure is ConfigInvalid with `path`, the dotted YAML path of the bad value, so the extension
can put the diagnostic on it."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qat_kernel.reads import CONFIG_BYTES, read_regular_text
from qat_kernel.rpc.errors import ConfigInvalid

if TYPE_CHECKING:
    from collections.abc import Iterable

# Integer range of each quantized dtype (float16 has none to check).
DTYPE_RANGES = {
    "quint8": (0, 255),
    "qint8": (-128, 127),
    "qint32": (-(2**31), 2**31 - 1),
    "quint4x2": (0, 15),
}
# What torch assumes when an observer spec gives no dtype.
DEFAULT_DTYPES = {"activation": "quint8", "weight": "qint8"}


@dataclass
class Config:
    path: Path  # the .qat.yaml file, absolute
    folder: Path  # its folder: entries and outputs resolve relative to it
    data: dict[str, Any]

    def get(self, dotted: str, default: Any = None) -> Any:
        node: Any = self.data
        for key in dotted.split("."):
            if not isinstance(node, dict) or key not in node:
                return default
            node = node[key]
        return node

    def resolve(self, relative: str, key: str = "") -> Path:
        """`relative` (to the config's folder) as an absolute path, symlinks resolved; inside the workspace
        (workspace_roots) or ConfigInvalid, since the kernel imports, loads and writes only there."""
        path = (self.folder / relative).resolve()
        check_inside(path, key or relative)
        return path

    def out(self, name: str) -> Path:
        """<config folder>/out/<name>, an output the kernel writes: `out` is held to the workspace like any path,
        `name` is not resolved (a folder the kernel builds there replaces a symlink, never writes through it)."""
        return self.resolve("out") / name


# The folders the extension opened (a JSON list), set by the extension when it starts the kernel: user code is
# imported, weights loaded and outputs written only inside them. Unset (the kernel run by hand, the tests), or when
# the machine setting qatStudio.kernel.allowPathsOutsideWorkspace is on: no limit.
WORKSPACE_ENV = "QAT_STUDIO_WORKSPACE"


def workspace_roots() -> list[Path] | None:
    raw = os.environ.get(WORKSPACE_ENV)
    if not raw:
        return None
    try:
        folders = json.loads(raw)
    except ValueError:
        folders = [raw]
    return [Path(f).resolve() for f in folders if isinstance(f, str) and f]


def check_inside(path: Path, key: str) -> None:
    roots = workspace_roots()
    if roots is None or any(path == r or path.is_relative_to(r) for r in roots):
        return
    raise ConfigInvalid(
        f"{key}: {path} is outside the workspace ({', '.join(str(r) for r in roots)}): QAT Studio imports, loads "
        "and writes files only inside the folders it opened. Move it inside, or turn on the machine setting "
        "qatStudio.kernel.allowPathsOutsideWorkspace.",
        path=key if "." in key and "/" not in key else "",
    )


def _dotted(parts: Iterable[object]) -> str:
    return ".".join(str(p) for p in parts)


def _schema_errors(data: Any) -> None:
    import jsonschema
    from jsonschema.exceptions import best_match

    from qat_kernel.rpc.protocol import config_schema

    validator = jsonschema.Draft7Validator(config_schema())
    error = best_match(validator.iter_errors(data))
    if error is not None:
        path = _dotted(error.absolute_path)
        where = path or "(top level)"
        raise ConfigInvalid(f"{where}: {error.message}", path=path)


def _observer_specs(data: dict[str, Any]):
    """(dotted path, role, spec) of every observer spec in the config."""
    qconfig = data.get("qconfig") or {}
    for role in ("activation", "weight"):
        if isinstance(qconfig.get(role), dict):
            yield f"qconfig.{role}", role, qconfig[role]
    for i, override in enumerate(data.get("overrides") or []):
        for role in ("activation", "weight"):
            if isinstance(override.get(role), dict):
                yield f"overrides.{i}.{role}", role, override[role]


def _check_ranges(data: dict[str, Any]) -> None:
    for base, role, spec in _observer_specs(data):
        dtype = spec.get("dtype", DEFAULT_DTYPES[role])
        lo_hi = DTYPE_RANGES.get(dtype)
        qmin, qmax = spec.get("quant_min"), spec.get("quant_max")
        if lo_hi is not None:
            lo, hi = lo_hi
            for key, value in (("quant_min", qmin), ("quant_max", qmax)):
                if value is not None and not lo <= value <= hi:
                    raise ConfigInvalid(
                        f"{base}.{key}: {value} does not fit {dtype} ({lo}..{hi})", path=f"{base}.{key}"
                    )
        if qmin is not None and qmax is not None and qmin >= qmax:
            raise ConfigInvalid(
                f"{base}.quant_max: quant_min ({qmin}) must be below quant_max ({qmax})", path=f"{base}.quant_max"
            )


def _check_files(cfg: Config) -> None:
    for key in ("model.entry", "data.entry", "train.loss"):
        entry = cfg.get(key)
        if entry is not None and ".py:" in entry and not cfg.resolve(entry.rsplit(":", 1)[0], key).is_file():
            raise ConfigInvalid(f"{key}: file not found next to {cfg.path.name}: {entry}", path=key)
    weights = cfg.get("model.weights")
    if weights is not None and not cfg.resolve(weights, "model.weights").is_file():
        raise ConfigInvalid(f"model.weights: file not found: {weights}", path="model.weights")


def load_config(path: str) -> Config:
    import yaml

    file = Path(path).expanduser().resolve()
    try:
        text = read_regular_text(file, CONFIG_BYTES)
    except OSError as exc:
        raise ConfigInvalid(f"Cannot read {file}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigInvalid(f"{file.name} is not UTF-8 text: {exc.reason} at byte {exc.start}") from exc
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigInvalid(f"{file.name} is not valid YAML: {exc}") from exc
    _schema_errors(data)
    cfg = Config(path=file, folder=file.parent, data=data)
    check_inside(file, file.name)
    _check_ranges(data)
    _check_files(cfg)
    return cfg
