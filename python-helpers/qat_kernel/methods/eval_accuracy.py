"""eval/accuracy (protocol/kernel-rpc.schema.json): the request's params to pipeline.evaluate.accuracies."""

from qat_kernel.pipeline import evaluate
from qat_kernel.rpc.context import RequestContext


def run(ctx: RequestContext) -> dict:
    p = ctx.params
    return evaluate.accuracies(ctx, config=p["config"], steps=p.get("steps"), ptq=p["ptq"], model=p.get("model"))
