"""compare/layers: QAT the user's model (pt2e, eager or torchao flow, or reuse the model this kernel trained
for the same config), then compare every quantized layer's fused-group output, FP32 vs INT8, on real
validation samples (propagated and local, against the FP32 and the QAT-float reference; see
analysis/comparison; the torchao flow's nn.Linear / nn.Embedding modules with their group-wise weight error:
analysis/linear_compare); export the INT8 model to QDQ ONNX (pt2e). A language model's result also has the
FP32 and converted perplexities.

Stages (the `stage` of each $/progress): load, fp32, export, qat, convert, compare, onnx."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from qat_kernel import atomic, packages
from qat_kernel.jobs import opening
from qat_kernel.jobs.reports import analysis as report
from qat_kernel.pipeline.config import Config
from qat_kernel.pipeline.trained_model import Trained
from qat_kernel.rpc.context import RequestContext
from qat_kernel.runtimes.onnx import qdq_export

if TYPE_CHECKING:
    from collections.abc import Callable

    import torch

log = logging.getLogger("qat_kernel")

DEFAULT_SAMPLES = 32
DEFAULT_THRESHOLD = 0.99


def _write_fp32_graph(cfg: Config, trained: Trained) -> str | None:
    """The float model's graph beside the config (out/<name>.fp32.qatgraph.json): once the kernel has run,
    the language server knows the model's module names (override completion, QCFG015), and a torchao model's
    layers are shown on it. Its path, or None when it could not be written."""
    from qat_kernel.analysis import model_graph

    try:
        graph = model_graph.model_graph(trained.fp32_graph, trained.fp32, cfg, "fp32")
        path = model_graph.default_path(cfg, "fp32")
        atomic.write_json(path, graph)
        return str(path)
    except Exception as exc:  # noqa: BLE001 - the comparison is what was asked for
        log.warning("could not write the fp32 graph: %s: %s", type(exc).__name__, exc)
        return None


def _export_onnx(cfg: Config, trained: Trained, converted: torch.fx.GraphModule, ctx: RequestContext) -> dict[str, Any]:
    """{path} of the config's QDQ export, or {path: None, error} when the exporter failed: the comparison is
    still worth returning. A failed write is not reported here but raised, as every failed write is."""
    try:
        return {"path": str(qdq_export.export_for_config(cfg, trained, converted, ctx))}
    except atomic.WriteError:
        raise
    except Exception as exc:  # noqa: BLE001 - the comparison is what was asked for
        log.warning("ONNX export failed: %s: %s", type(exc).__name__, exc)
        error = f"{type(exc).__name__}: {exc}"
        if isinstance(exc, ModuleNotFoundError) and exc.name:  # e.g. onnxscript
            error += f" (install: {packages.install_command(exc.name.split('.')[0])})"
        return {"path": None, "error": error}


def _compare(trained: Trained) -> Callable[..., list[dict[str, Any]]]:
    """The per-layer comparison of the model's flow."""
    from qat_kernel.analysis import comparison, linear_compare

    if trained.flow == "torchao":
        return linear_compare.compare_torchao
    return comparison.compare_pt2e if trained.flow == "pt2e" else comparison.compare_eager


def compare_layers(ctx: RequestContext, *, config: str, samples: int | None, steps: int | None) -> dict[str, Any]:
    """Compare every quantized layer of the config's model, FP32 vs INT8."""
    started = time.monotonic()
    cfg = opening.load(ctx, config, torchao=True)
    count: int = samples or cfg.get("compare.samples", DEFAULT_SAMPLES)
    _, trained, reused, converted = opening.model(cfg, ctx, steps=steps, convert=True)

    from qat_kernel.analysis import comparison
    from qat_kernel.pipeline.training import first_inputs

    int8_accuracy = trained.accuracy("int8", ctx)
    ctx.progress("convert", f"INT8 accuracy {int8_accuracy:.4f}", 1.0)

    ctx.progress("compare", f"comparing layers on {count} validation samples")
    inputs = first_inputs(trained.val, count)
    compared = sum(len(x) for x in inputs)
    layers = _compare(trained)(trained, inputs, str(cfg.folder), ctx)
    ctx.check_cancelled()

    if trained.flow == "pt2e":
        onnx = _export_onnx(cfg, trained, converted, ctx)
    elif trained.flow == "torchao":
        onnx = {
            "path": None,
            "error": "flow: torchao models are not exported to QDQ ONNX (torchao's quantized weight tensors have "
            "no ONNX export); the layers were compared in PyTorch",
        }
    else:
        onnx = {
            "path": None,
            "error": "ONNX export of eager INT8 models is not supported (the dynamo "
            "exporter cannot flatten packed params); use flow: pt2e",
        }

    graph = _write_fp32_graph(cfg, trained)

    result = {
        "flow": trained.flow,
        "reference": "fp32",
        "mode": "propagated",
        "samples": compared,
        "threshold": cfg.get("compare.threshold.cosine", DEFAULT_THRESHOLD),
        "layers": layers,
        "accuracy": {"fp32": trained.fp32_accuracy, "int8": int8_accuracy, "samples": trained.val_samples},
        "onnx": onnx,
        **({"graph": graph} if graph else {}),
        "seconds": round(time.monotonic() - started, 2),
        "references": list(comparison.REFERENCES),
        "modes": list(comparison.MODES),
        "reused": reused,
        "model": trained.id,
    }
    perplexity = trained.perplexities(("fp32", "converted"), ctx)
    if perplexity is not None:
        result["perplexity"] = perplexity
    if cfg.get("compare.threshold.sqnr") is not None:
        result["sqnrThreshold"] = cfg.get("compare.threshold.sqnr")
    result.update(trained.report_fields())
    result["summary"] = report.compare(result)
    return result
