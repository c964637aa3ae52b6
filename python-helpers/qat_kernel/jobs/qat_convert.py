"""qat/convert: the trained model converted to INT8 and saved as a deployable artifact, atomically.

PT2E: the converted graph re-exported and written with torch.export.save (`out/<name>.int8.pt2`; load it
with torch.export.load(path).module(), no pickled code, after `import torch.ao.quantization.fx._decomposed`,
which registers the quantize/dequantize ops the graph calls). Eager: the converted model's state_dict
(`out/<name>.int8.pt`): torch.save of the whole module loads but fails in forward, and a state_dict loads
with torch.load(weights_only=True) into the same prepare + convert of the model. torchao: the converted model's
state_dict (`out/<name>.<scheme>.pt`), its quantized weights torchao tensor subclasses (IntxUnpackedToInt8Tensor),
which torch.load(weights_only=True) reads once torchao.quantization is imported (it registers them as safe
globals); load it into the model after quantize_ with the same base configs (load_state_dict(..., assign=True)).
A language model's result also has its perplexities: FP32, PTQ (the same recipe without QAT), QAT float (the
QAT-trained weights, fake quantization off), QAT fake-quant and converted."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qat_kernel import atomic
from qat_kernel.analysis.model_size import model_bytes
from qat_kernel.jobs import opening
from qat_kernel.jobs.reports import analysis as report
from qat_kernel.pipeline.config import Config
from qat_kernel.pipeline.torchao_flow import TorchaoQat
from qat_kernel.rpc.context import RequestContext

if TYPE_CHECKING:
    import torch


def default_path(cfg: Config, flow: str) -> Path:
    tag = cfg.get("torchao.scheme", "8da4w") if flow == "torchao" else "int8"
    return cfg.resolve(f"out/{cfg.path.name.split('.')[0]}.{tag}.{'pt2' if flow == 'pt2e' else 'pt'}")


def save_int8(
    ctx: RequestContext, *, config: str, path: str | Path | None, steps: int | None, model: str | None = None
) -> dict[str, Any]:
    """The trained model (`model`: that one, by id) converted to INT8 and saved, atomically."""
    import torch

    started = time.monotonic()
    cfg, trained, reused, converted = opening.load_model(
        ctx, config, steps=steps, convert=True, model_id=model, torchao=True
    )
    path = Path(path) if path else default_path(cfg, trained.flow)
    if not path.is_absolute():
        path = cfg.resolve(str(path))
    ctx.progress("save", f"writing {path.name}")
    if trained.flow == "pt2e":
        from qat_kernel.pipeline import pt2e_flow

        program = torch.export.export(
            _without_unused_tensors(converted),
            tuple(trained.example),
            dynamic_shapes=pt2e_flow.dynamic_batch(len(trained.example)),
        )
        ctx.check_cancelled()
        atomic.write_serialized(path, lambda buffer: torch.export.save(program, buffer))
        kind = "exported-program"
    else:
        atomic.torch_save(converted.state_dict(), path)
        kind = "state-dict"
    int8_accuracy = trained.accuracy("int8", ctx)
    fp32_bytes, int8_bytes = model_bytes(trained.fp32), model_bytes(converted)
    result = {
        "path": str(path),
        "flow": trained.flow,
        "format": kind,
        "reused": reused,
        "model": trained.id,
        "accuracy": {"fp32": trained.fp32_accuracy, "int8": int8_accuracy, "samples": trained.val_samples},
        "size": {
            "fp32Bytes": fp32_bytes,
            "int8Bytes": int8_bytes,
            "ratio": fp32_bytes / int8_bytes if int8_bytes else 0.0,
            "fileBytes": path.stat().st_size,
        },
        "seconds": round(time.monotonic() - started, 2),
    }
    if isinstance(trained.qat, TorchaoQat):
        result["recipe"] = trained.qat.summary()
    perplexity = trained.perplexities(("fp32", "ptq", "qatFloat", "fakeQuant", "converted"), ctx)
    if perplexity is not None:
        result["perplexity"] = perplexity
    result["summary"] = report.convert(result)
    return result


def _without_unused_tensors(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """A copy of the converted graph without the FP32 parameters convert_pt2e leaves behind (the graph
    reads frozen int8 weights instead); exporting the original would store both."""
    import copy

    gm = copy.deepcopy(gm)
    used = {n.target for n in gm.graph.nodes if n.op == "get_attr"}
    for name, _ in list(gm.named_parameters()) + list(gm.named_buffers()):
        if name in used:
            continue
        owner_path, _, attr = name.rpartition(".")
        owner = gm.get_submodule(owner_path) if owner_path else gm
        delattr(owner, attr)
    return gm
