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

import logging
from pathlib import Path

from qat_kernel import atomic, packages
from qat_kernel.pipeline.model_io import as_args

log = logging.getLogger("qat_kernel")

DEFAULT_OPSET = 18


def export_qdq(converted, example, path: Path, opset: int, dynamic_shapes=None, names=None) -> Path:
    """`example`: the model's inputs (a tuple of tensors, or one tensor); `names`: the ONNX inputs' names, in
    that order (pipeline.model_io's; default the exporter's own); `dynamic_shapes`: as torch.export takes them."""
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
    return path


def export_trained(trained, converted, path: Path, opset: int) -> Path:
    """The trained model's INT8 graph as QDQ ONNX: its example inputs, their names, one dynamic batch dim."""
    from qat_kernel.pipeline import pt2e_flow

    example = tuple(trained.example)
    return export_qdq(converted, example, path, opset, pt2e_flow.dynamic_batch(len(example)), trained.io.names)


def onnx_path(cfg):
    """(as written in the config, absolute) path of the config's QDQ export."""
    relative = cfg.get("export.onnx.path") or f"out/{cfg.path.name.split('.')[0]}.qdq.onnx"
    return relative, cfg.resolve(relative)


def export_for_config(cfg, trained, converted, ctx, opset: int | None = None, path=None) -> dict:
    """The config's QDQ export ({path} or {path: None, error}: a failed export is reported, not raised)."""
    relative, default_path = onnx_path(cfg)
    path = path or default_path
    opset = opset or cfg.get("export.onnx.opset", DEFAULT_OPSET)
    ctx.progress("onnx", f"exporting QDQ ONNX (opset {opset}) to {relative}")
    try:
        export_trained(trained, converted, path, opset)
    except Exception as exc:  # noqa: BLE001 - the comparison is still worth returning
        log.warning("ONNX export failed: %s: %s", type(exc).__name__, exc)
        error = f"{type(exc).__name__}: {exc}"
        if isinstance(exc, ModuleNotFoundError) and exc.name:  # e.g. onnxscript
            error += f" (install: {packages.install_command(exc.name.split('.')[0])})"
        return {"path": None, "error": error}
    return {"path": str(path)}


def qdq_onnx(cfg, trained, converted, ctx) -> tuple[Path, bool]:
    """(path, reused): the model's QDQ ONNX at export.onnx.path, exported now unless this very
    model was exported there (same opset) and the file is unchanged since."""
    from qat_kernel.pipeline import session

    relative, path = onnx_path(cfg)
    opset = cfg.get("export.onnx.opset", DEFAULT_OPSET)
    if session.exported(trained, path, opset):
        ctx.progress("onnx", f"reusing {relative}, exported from this model earlier", 1.0)
        return path, True
    ctx.progress("onnx", f"exporting QDQ ONNX (opset {opset}) to {relative}")
    export_trained(trained, converted, path, opset)
    session.record_export(trained, path, opset)
    ctx.check_cancelled()
    return path, False
