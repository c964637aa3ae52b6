"""eval/accuracy (protocol/kernel-rpc.schema.json): the request's params to jobs.eval_accuracy.accuracies."""

from typing import Any

from qat_kernel.jobs import eval_accuracy
from qat_kernel.rpc.context import RequestContext


def run(ctx: RequestContext) -> dict[str, Any]:
    p = ctx.params
    return eval_accuracy.accuracies(ctx, config=p["config"], steps=p.get("steps"), ptq=p["ptq"], model=p.get("model"))
