"""A config's trained model for every method, and the kernel's cache of them (the pipeline itself: runner).

The kernel lives as long as the editor session, so a `Trained` is kept, keyed by the config file and
the .py files beside it (path + mtime + size) and the training overrides of the request:
compare/layers, analyze/sensitivity, eval/accuracy, export/onnx and build/tvm after a qat/train (or
after each other) reuse the trained model instead of training again. Editing the config or a .py file
next to it, or asking for other steps/epochs, trains anew. A `Trained` also remembers the QDQ ONNX
files exported from it (record_export/exported), so build/tvm compiles the file compare/layers wrote
instead of exporting again."""

from __future__ import annotations

import collections
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, cast

from qat_kernel.pipeline.config import Config, load_config
from qat_kernel.pipeline.runner import run_pipeline
from qat_kernel.pipeline.trained_model import Trained
from qat_kernel.rpc.context import RequestContext
from qat_kernel.rpc.errors import ConfigInvalid, ModelGone

if TYPE_CHECKING:
    import os

    from qat_kernel.pipeline.eager_flow import Layer
    from qat_kernel.pipeline.fused_groups import Group
    from qat_kernel.pipeline.torchao_flow import Choice
    from qat_kernel.userpaths import SourceLocation

log = logging.getLogger("qat_kernel")

# (path, mtime_ns, size) of a file, the times None when it cannot be read
FileStamp: TypeAlias = "tuple[str, int | None, int | None]"
# (the config's stamp, those of the workspace sources and weights, steps, epochs)
CacheKey: TypeAlias = "tuple[FileStamp, tuple[FileStamp, ...], int | None, int | None]"

CACHE_SIZE = 2
_CACHE: collections.OrderedDict[CacheKey, Trained] = collections.OrderedDict()


def _file_stamp(path: Path) -> FileStamp:
    try:
        st = path.stat()
        return (str(path), st.st_mtime_ns, st.st_size)
    except OSError:
        return (str(path), None, None)


def cache_key(cfg: Config, steps: int | None, epochs: int | None) -> CacheKey:
    sources = sorted(cfg.folder.glob("*.py"))
    weights = cfg.get("model.weights")
    extra = [cfg.resolve(weights)] if weights else []
    return (_file_stamp(cfg.path), tuple(_file_stamp(p) for p in sources + extra), steps, epochs)


def cached(key: CacheKey) -> Trained | None:
    trained = _CACHE.get(key)
    if trained is not None:
        _CACHE.move_to_end(key)
    return trained


def remember(key: CacheKey, trained: Trained) -> None:
    _CACHE[key] = trained
    _CACHE.move_to_end(key)
    while len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)


def clear_cache() -> None:
    _CACHE.clear()


def load(config: str, ctx: RequestContext, needs_data: bool = True) -> Config:
    """The config at path `config`, checked (data.entry present unless not `needs_data`), with ctx.workspace
    set to its folder."""
    ctx.progress("load", "reading config")
    cfg = load_config(config)
    ctx.workspace = str(cfg.folder)
    if needs_data and cfg.get("data.entry") is None:
        raise ConfigInvalid(f"data: {ctx.method} needs data.entry (train and validation batches)", path="data")
    return cfg


def adopt(
    cfg: Config, ctx: RequestContext, checkpoint: Path, steps: int | None = None, epochs: int | None = None
) -> Trained:
    """The model a torchrun run trained, rebuilt here from its checkpoint (the FP32 reference and the
    QAT state) and kept in the cache, so later methods on the config reuse it as after a qat/train."""
    import torch

    saved = torch.load(checkpoint, map_location="cpu", weights_only=True)
    trained = run_pipeline(cfg, ctx, steps, epochs, adopted=saved)
    remember(cache_key(cfg, steps, epochs), trained)
    return trained


def by_id(model: str) -> Trained:
    """The cached model with this id (a result's "model"), whatever its config file says now; ModelGone when
    this kernel no longer holds it (restarted, or pushed out of the cache)."""
    for key, trained in _CACHE.items():
        if trained.id == model:
            _CACHE.move_to_end(key)
            return trained
    raise ModelGone(f"model {model} is no longer held by this kernel (restarted, or other configs trained since)")


def get(
    cfg: Config,
    ctx: RequestContext,
    steps: int | None = None,
    epochs: int | None = None,
    retrain: bool = False,
    on_epoch_end: Callable[..., Any] | None = None,
    on_start: Callable[..., Any] | None = None,
    model: str | None = None,
) -> tuple[Trained, bool]:
    """(Trained, reused) for the config: the model `model` when given (see by_id), else from the cache unless
    `retrain`, else trained now."""
    if model is not None:
        ctx.progress("load", f"reusing model {model}")
        return by_id(model), True
    key = cache_key(cfg, steps, epochs)
    if not retrain:
        hit = cached(key)
        if hit is not None:
            ctx.progress("load", "reusing the model trained earlier in this session")
            hit.cfg = cfg
            return hit, True
    trained = run_pipeline(cfg, ctx, steps, epochs, on_epoch_end, on_start)
    remember(key, trained)
    return trained, False


def convert(trained: Trained, ctx: RequestContext):
    """The INT8 model, converting on first use (with progress)."""
    if not trained.is_converted:
        how = {"pt2e": "convert_pt2e", "torchao": 'quantize_(model, QATConfig(base_config, step="convert"))'}
        ctx.progress("convert", how.get(trained.flow, "convert (eager)"))
        trained.converted  # noqa: B018
        ctx.check_cancelled()
    return trained.converted


def record_export(trained: Trained, path: str | os.PathLike[str], opset: int) -> None:
    """Remember that `path` holds this model's QDQ ONNX export (opset), as the file is now."""
    st = Path(path).stat()
    trained.exports[str(Path(path))] = (st.st_mtime_ns, st.st_size, opset)


def exported(trained: Trained, path: str | os.PathLike[str], opset: int) -> bool:
    """True when `path` still is the file this model was exported to with `opset` (not rewritten
    or replaced since)."""
    try:
        st = Path(path).stat()
    except OSError:
        return False
    return trained.exports.get(str(Path(path))) == (st.st_mtime_ns, st.st_size, opset)


def out_path(cfg: Config, name: str) -> Path:
    path = cfg.out(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def layer_source(trained: Trained, layer: Group | Layer | Choice) -> SourceLocation | None:
    """{file, line} where the user's forward calls the layer (a Group in pt2e, a Layer in eager, a Choice in
    torchao)."""
    from qat_kernel import userpaths

    folder = str(trained.cfg.folder)
    if trained.flow == "pt2e":
        anchor = cast("Group", layer).anchor  # pt2e layers are Groups
        return userpaths.stack_trace_location(anchor.meta.get("stack_trace"), folder)
    from qat_kernel.pipeline.eager_flow import source_of

    return source_of(trained.fp32, layer.module, lambda f: userpaths.is_user_file(f, folder))
