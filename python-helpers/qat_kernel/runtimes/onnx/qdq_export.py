"""QDQ ONNX export of a PT2E-converted INT8 graph with the dynamo exporter.

One self-contained file (external_data=False), written to a temp file in the target folder and
moved into place, so a viewer watching the path never reads a half-written model.

What links ONNX nodes back to modules (torch 2.13 dynamo exporter, onnxscript 0.7.2): node names
are `node_<fx name>` of the exporter's own re-export (node_conv2d, node_linear_1; not the kernel's FX
names), and each node's metadata_props hold `pkg.torch.onnx.name_scopes`, a Python-literal list of
the module nesting, one *full* path per level plus the FX node name last:
  "['', 'layer1', 'layer1.0', 'layer1.0.conv', 'conv2d_1']"  -> module path = entry [-2]
plus `namespace` (the same chain with classes), `pkg.torch.onnx.class_hierarchy`,
`pkg.torch.onnx.stack_trace` and `pkg.torch.onnx.fx_node`. Quantize/DequantizeLinear nodes carry no
module scope (name_scopes "['', 'quantize_per_tensor_1']"): attach them to their producer/consumer
through the graph edges. Weights are INT8 initializers `_frozen_paramN` feeding a DequantizeLinear.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qat_kernel import atomic
from qat_kernel.pipeline.model_io import as_args

if TYPE_CHECKING:
    import torch

    from qat_kernel.pipeline.config import Config
    from qat_kernel.pipeline.trained_model import Trained
    from qat_kernel.rpc.context import RequestContext

DEFAULT_OPSET = 18


def export_qdq(
    converted: torch.nn.Module,
    example: Any,
    path: Path,
    opset: int,
    dynamic_shapes: tuple[Any, ...] | dict[str, Any] | None = None,
    names: Sequence[str] | None = None,
    check_cancelled: Callable[[], None] | None = None,
) -> Path:
    """`example`: the model's inputs (a tuple of tensors, or one tensor); `names`: the ONNX inputs' names, in
    that order (pipeline.model_io's; default the exporter's own); `dynamic_shapes`: as torch.export takes them.
    `check_cancelled` is called once the file is written, before it replaces `path`: a cancel that came during
    the export (seconds, in calls a cancel does not interrupt) discards it."""
    import torch

    example = as_args(example)
    with atomic.replacing(path) as tmp:
        torch.onnx.export(
            converted,
            example,
            str(tmp),
            dynamo=True,
            opset_version=opset,
            external_data=False,
            dynamic_shapes=dynamic_shapes,
            input_names=list(names) if names else None,
        )
        if check_cancelled is not None:
            check_cancelled()
    return path


def export_trained(trained: Trained, converted: torch.nn.Module, path: Path, opset: int, ctx: RequestContext) -> Path:
    """The trained model's INT8 graph as QDQ ONNX: its example inputs, their names, one dynamic batch dim."""
    from qat_kernel.pipeline import pt2e_flow

    example = tuple(trained.example)
    dynamic = pt2e_flow.dynamic_batch(len(example))
    return export_qdq(converted, example, path, opset, dynamic, trained.io.names, ctx.check_cancelled)


def onnx_path(cfg: Config) -> tuple[str, Path]:
    """(as written in the config, absolute) path of the config's QDQ export."""
    relative = cfg.get("export.onnx.path") or f"out/{cfg.path.name.split('.')[0]}.qdq.onnx"
    return relative, cfg.resolve(relative)


def export_for_config(
    cfg: Config,
    trained: Trained,
    converted: torch.nn.Module,
    ctx: RequestContext,
    opset: int | None = None,
    path: Path | None = None,
) -> Path:
    """The config's QDQ export (`opset`, `path`: instead of the config's), written now and recorded as this
    model's export."""
    from qat_kernel.pipeline import session

    relative, default_path = onnx_path(cfg)
    path = path or default_path
    version: int = opset or cfg.get("export.onnx.opset", DEFAULT_OPSET)
    ctx.progress("onnx", f"exporting QDQ ONNX (opset {version}) to {relative if path == default_path else path}")
    export_trained(trained, converted, path, version, ctx)
    session.record_export(trained, path, version)
    return path


def qdq_onnx(cfg: Config, trained: Trained, converted: torch.nn.Module, ctx: RequestContext) -> tuple[Path, bool]:
    """(path, reused): the model's QDQ ONNX at export.onnx.path, exported now unless this very
    model was exported there (same opset) and the file is unchanged since."""
    from qat_kernel.pipeline import session

    relative, path = onnx_path(cfg)
    opset = cfg.get("export.onnx.opset", DEFAULT_OPSET)
    if session.exported(trained, path, opset):
        ctx.progress("onnx", f"reusing {relative}, exported from this model earlier", 1.0)
        return path, True
    return export_for_config(cfg, trained, converted, ctx), False
