"""eval/accuracy: top-1 accuracy on the whole validation set of the FP32 model, the QAT-trained model
with fake quantization off (qatFloat) and on (fakeQuant), and the converted INT8 model. Reuses the
model this kernel trained for the config, else trains it first. With `ptq: true` (pt2e), also the
post-training-quantized FP32 model (same qconfig, calibrated on 512 training samples, no QAT). With `model`
(an id an earlier result gave), that model instead of the config's current one."""

from __future__ import annotations

import time
from typing import Any

from qat_kernel.jobs import opening
from qat_kernel.jobs.reports import analysis as report
from qat_kernel.pipeline import session
from qat_kernel.rpc.context import RequestContext


def accuracies(
    ctx: RequestContext, *, config: str, steps: int | None, ptq: bool, model: str | None = None
) -> dict[str, Any]:
    started = time.monotonic()
    _, trained, reused, _ = opening.load_model(ctx, config, steps=steps, model_id=model)
    ctx.progress("eval", "FP32, QAT float and fake-quant accuracy")
    result = {"flow": trained.flow, "samples": trained.val_samples}
    for kind in ("fp32", "qatFloat", "fakeQuant"):
        result[kind] = trained.accuracy(kind, ctx)
    session.convert(trained, ctx)
    ctx.progress("eval", "INT8 accuracy")
    result["int8"] = trained.accuracy("int8", ctx)
    if ptq and trained.flow == "pt2e":
        ctx.progress("eval", "PTQ: prepare_pt2e, calibrate, convert_pt2e")
        result["ptq"] = trained.accuracy("ptq", ctx)
    result["reused"] = reused
    result["model"] = trained.id
    result["seconds"] = round(time.monotonic() - started, 2)
    result["summary"] = report.evaluate(result)
    return result
