"""The one place ONNX Runtime sessions are made, so every run of a model in ORT computes the same way.

`session.x64quantprecision`: on x86 CPUs without VNNI, ORT's u8s8 int8 kernels sum pairs in int16 and
saturate (digits: logits off by up to 1.45, 3 of 540 predictions changed); with the option ORT converts
those products to u8u8 where weights leave [-64, 63] (digits: 0.035, no prediction changed). It is set
only on such CPUs (it changes nothing elsewhere), on a copy of the graph that ORT 1.32's conversion
can take (see _for_precision); where it cannot, the session runs without it and the log says so."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from qat_kernel.runtimes import cpu

if TYPE_CHECKING:
    from pathlib import Path

    import numpy as np
    import onnxruntime as ort

    from qat_kernel.pipeline.model_io import Inputs

log = logging.getLogger("qat_kernel")

LEVELS = {
    "disabled": "ORT_DISABLE_ALL",
    "basic": "ORT_ENABLE_BASIC",
    "extended": "ORT_ENABLE_EXTENDED",
    "all": "ORT_ENABLE_ALL",
}
PRECISION_OPTION = ("session.x64quantprecision", "1")


def options(
    level: str = "all", threads: int | None = None, optimized_path: str | Path | None = None, precision: bool = False
) -> ort.SessionOptions:
    """SessionOptions: graph optimization `level` (a LEVELS key), intra-op `threads`, where ORT writes the
    graph it optimised (`optimized_path`), and the u8u8 conversion of saturating products (`precision`)."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.graph_optimization_level = getattr(ort.GraphOptimizationLevel, LEVELS[level])
    opts.log_severity_level = 3  # the "hardware specific optimizations" warning is reported as a note
    if precision:
        opts.add_session_config_entry(*PRECISION_OPTION)
    if threads:
        opts.intra_op_num_threads = threads
    if optimized_path is not None:
        opts.optimized_model_filepath = str(optimized_path)
    return opts


def session(
    model: str | Path | bytes, level: str = "all", threads: int | None = None, optimized_path: str | Path | None = None
) -> ort.InferenceSession:
    """An InferenceSession on the CPU EP of `model` (a path or the serialized model bytes)."""
    import onnxruntime as ort

    def make(source: str | bytes, precision: bool) -> ort.InferenceSession:
        opts = options(level, threads, optimized_path, precision)
        return ort.InferenceSession(source, opts, providers=["CPUExecutionProvider"])

    plain = model if isinstance(model, bytes) else str(model)
    if not cpu.saturating_int8():
        return make(plain, False)
    prepared = _for_precision(model)
    if prepared is None:
        return make(plain, False)
    try:
        return make(prepared, True)
    except Exception as exc:  # noqa: BLE001 - ORT raises its own Fail/RuntimeException types
        log.warning("ONNX Runtime cannot apply %s (%s); running without it", PRECISION_OPTION[0], str(exc)[:200])
        return make(plain, False)


def feed(sess: ort.InferenceSession, inputs: Inputs | np.ndarray) -> dict[str, Any]:
    """The session's feed for `inputs`: the model's Inputs (matched by name, pipeline.model_io) or one array."""
    from qat_kernel.pipeline.model_io import as_inputs

    names = [i.name for i in sess.get_inputs()]
    return as_inputs(inputs, names).feed(names)


def run_fn(sess: ort.InferenceSession) -> Callable[[Any], np.ndarray]:
    """A session as a function: the model's inputs (Inputs or one array) -> its first output (a tensor: the
    models run here output tensors, not the sequences or maps ORT's types allow for)."""
    return lambda a: cast("np.ndarray", sess.run(None, feed(sess, a))[0])


def run_ort(onnx_path_or_session: str | Path | bytes | ort.InferenceSession, inputs: Inputs | np.ndarray) -> np.ndarray:
    """A model file (or an open session) run on `inputs` (Inputs or one array): its first output."""
    import onnxruntime as ort

    if isinstance(onnx_path_or_session, ort.InferenceSession):
        sess = onnx_path_or_session
    else:
        sess = session(onnx_path_or_session)
    return run_fn(sess)(inputs)


def _for_precision(model: str | Path | bytes) -> str | bytes | None:
    """The model as ORT 1.32's u8u8 conversion can take it, or None where it cannot. The conversion
    rewrites each DequantizeLinear's zero point in place and fails on a zero-point initializer shared by
    several of them (the ONNX exporter shares equal constants): each gets its own copy. It breaks a
    per-axis DequantizeLinear (1-D scale) without a zero point at run time: then None."""
    import onnx

    proto = onnx.load_from_string(model) if isinstance(model, bytes) else onnx.load(str(model))
    inits = {t.name: t for t in proto.graph.initializer}
    seen: set[str] = set()
    copies = 0
    for node in proto.graph.node:
        if node.op_type != "DequantizeLinear":
            continue
        if len(node.input) < 3 or not node.input[2]:
            scale = inits.get(node.input[1])
            if scale is not None and len(scale.dims) == 1:
                return None
            continue
        zp = node.input[2]
        if zp in inits and zp in seen:
            copy = onnx.TensorProto()
            copy.CopyFrom(inits[zp])
            copy.name = f"{zp}__{node.name or copies}"
            proto.graph.initializer.append(copy)
            node.input[2] = copy.name
            copies += 1
        seen.add(zp)
    if not copies and not isinstance(model, bytes):
        return str(model)
    return proto.SerializeToString()
