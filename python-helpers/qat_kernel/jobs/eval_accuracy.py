"""eval/accuracy: top-1 accuracy on the whole validation set of the FP32 model, the QAT-trained model
with fake quantization off (qatFloat) and on (fakeQuant), and the converted INT8 model. Reuses the
model this kernel trained for the config, else trains it first. With `ptq: true` (pt2e, torchao), also the
post-training-quantized FP32 model (same recipe, no QAT; pt2e calibrates on 512 training samples). With `model`
(an id an earlier result gave), that model instead of the config's current one. A language model (next_token
loss) also gets each one's perplexity."""

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
    _, trained, reused, _ = opening.load_model(ctx, config, steps=steps, model_id=model, torchao=True)
    ctx.progress("eval", "FP32, QAT float and fake-quant accuracy")
    result = {"flow": trained.flow, "samples": trained.val_samples}
    for kind in ("fp32", "qatFloat", "fakeQuant"):
        result[kind] = trained.accuracy(kind, ctx)
    session.convert(trained, ctx)
    ctx.progress("eval", "INT8 accuracy")
    result["int8"] = trained.accuracy("int8", ctx)
    ptq = ptq and trained.flow in ("pt2e", "torchao")
    if ptq:
        ctx.progress("eval", "PTQ: the FP32 model quantized with the same recipe")
        result["ptq"] = trained.accuracy("ptq", ctx)
    kinds = ("fp32", *(("ptq",) if ptq else ()), "qatFloat", "fakeQuant", "converted")
    if trained.is_language_model:
        ctx.progress("eval", "perplexity")
    perplexity = trained.perplexities(kinds, ctx)
    if perplexity is not None:
        result["perplexity"] = perplexity
    result["reused"] = reused
    result["model"] = trained.id
    result["seconds"] = round(time.monotonic() - started, 2)
    result["summary"] = report.evaluate(result)
    return result
