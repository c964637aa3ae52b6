"""graph/export: the model's graph as the graph view's JSON (protocol ModelGraph, *.qatgraph.json).

Stages: fp32 (the float model, exported with torch.export; no training needed), prepared (the QAT
model with its fake quantizers) and converted (INT8: quantize/dequantize around integer layers); and ort:
the graph ONNX Runtime runs for the model's QDQ export (runtimes/ort/executed_graph.py), an .onnx file
whose fused nodes name the modules they came from.
Nodes carry the module path from `nn_module_stack`, the user's source line from `stack_trace`, the
output shape/dtype, Q/DQ parameters and the precision a compute node runs in; `modules` lists the
model's named modules with the line that assigns each one. The eager flow's prepared and converted
models are traced with torch.fx (their quantized modules are leaves). The file is written atomically."""

from __future__ import annotations

import importlib
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qat_kernel import atomic
from qat_kernel.analysis.model_graph import default_path, model_graph, modules_of
from qat_kernel.jobs import opening
from qat_kernel.pipeline import runner, session
from qat_kernel.pipeline.config import Config
from qat_kernel.rpc.context import RequestContext
from qat_kernel.rpc.errors import ConfigInvalid

if TYPE_CHECKING:
    import torch


def export_graph(
    ctx: RequestContext, *, config: str, stage: str, path: str | Path | None, steps: int | None
) -> dict[str, Any]:
    """Write the model's graph at one stage as a *.qatgraph.json file."""
    started = time.monotonic()
    stage = stage
    if stage == "ort":
        return _ort(ctx, config=config, path=path, steps=steps, started=started)
    if stage == "fp32":
        cfg = opening.load(ctx, config, needs_data=False, torchao=True)
        gm, model = _fp32(cfg, ctx)
    else:
        cfg, trained, _, converted = opening.load_model(ctx, config, steps=steps, convert=stage == "converted")
        model = trained.fp32
        gm = trained.qat.model if stage == "prepared" else converted
        if not hasattr(gm, "graph"):
            gm = _trace(gm, stage)
    ctx.check_cancelled()
    ctx.progress("graph", f"writing the {stage} graph")
    graph = model_graph(gm, model, cfg, stage)
    path = Path(path) if path else default_path(cfg, stage)
    if not path.is_absolute():
        path = cfg.resolve(str(path))
    atomic.write_json(path, graph)
    ctx.progress("graph", f"{len(graph['nodes'])} nodes -> {path} in {time.monotonic() - started:.1f} s", 1.0)
    return {"path": str(path), "stage": stage, "nodes": len(graph["nodes"]), "modules": graph["modules"]}


def _ort(
    ctx: RequestContext, *, config: str, path: str | Path | None, steps: int | None, started: float
) -> dict[str, Any]:
    """ONNX Runtime's optimised graph of the config's QDQ export (reused when this model wrote it), annotated."""
    from qat_kernel.runtimes.onnx import qdq_export
    from qat_kernel.runtimes.ort.executed_graph import write_executed_graph

    cfg, trained, _, converted = opening.load_model(
        ctx, config, steps=steps, pt2e="the ort graph is ONNX Runtime's graph of the QDQ export", convert=True
    )
    qdq, _ = qdq_export.qdq_onnx(cfg, trained, converted, ctx)
    ctx.check_cancelled()
    ctx.progress("graph", "ONNX Runtime: optimising the QDQ export")
    out = Path(path) if path else default_path(cfg, "ort")
    if not out.is_absolute():
        out = cfg.resolve(str(out))
    nodes, _ = write_executed_graph(qdq, out)
    ctx.progress("graph", f"{nodes} nodes -> {out} in {time.monotonic() - started:.1f} s", 1.0)
    return {
        "path": str(out),
        "stage": "ort",
        "nodes": nodes,
        "modules": modules_of(trained.fp32, str(cfg.folder)),
    }


def _fp32(cfg: Config, ctx: RequestContext) -> tuple[torch.fx.GraphModule, torch.nn.Module]:
    """The float model and its exported graph: the trained one when this kernel has it, else built now."""
    trained = session.cached(session.cache_key(cfg, None, None))
    if trained is not None:
        return trained.fp32_graph, trained.fp32
    importlib.import_module("torch")  # a missing torch is reported before user code runs

    from qat_kernel.pipeline import pt2e_flow, usercode

    with usercode.workspace(cfg.folder):
        ctx.progress("load", "building the model")
        model, example = runner.model_and_example(cfg)
        model.eval()
        ctx.progress("export", "torch.export")
        return pt2e_flow.export(model, example), model


def _trace(module: torch.nn.Module, stage: str) -> torch.fx.GraphModule:
    """Eager prepared/converted models as module-level graphs: every torch module (fused QAT modules,
    quantized modules, fake quantizers) is one node; the user's modules are traced through."""
    import torch.fx

    class Tracer(torch.fx.Tracer):
        def is_leaf_module(self, m: torch.nn.Module, module_qualified_name: str) -> bool:
            return type(m).__module__.startswith("torch.") and type(m) is not torch.nn.Sequential

    tracer = Tracer()
    tracer.record_stack_traces = True  # node.meta["stack_trace"]: the line in the user's forward
    try:
        return torch.fx.GraphModule(module, tracer.trace(module))
    except Exception as exc:  # eager models with data-dependent control flow
        raise ConfigInvalid(
            f"the {stage} eager model cannot be traced into a graph ({type(exc).__name__}: {exc}); "
            "use flow: pt2e or the fp32 stage",
            path="flow",
        ) from exc
