"""search/mixed-precision (protocol/kernel-rpc.schema.json): the request's params to analysis.mixed_precision.search."""

from qat_kernel.analysis import mixed_precision
from qat_kernel.rpc.context import RequestContext


def run(ctx: RequestContext) -> dict:
    p = ctx.params
    return mixed_precision.search(
        ctx,
        config=p["config"],
        budget=p["budget"],
        precisions=p["precisions"],
        samples=p.get("samples"),
        steps=p.get("steps"),
        batch=p["batch"],
    )
