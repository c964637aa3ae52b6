"""analyze/sensitivity (protocol/kernel-rpc.schema.json): the request's params to analysis.sensitivity.analyze."""

from qat_kernel.analysis import sensitivity
from qat_kernel.rpc.context import RequestContext


def run(ctx: RequestContext) -> dict:
    p = ctx.params
    return sensitivity.analyze(
        ctx,
        config=p["config"],
        budget=p["budget"],
        precision=p["precision"],
        samples=p.get("samples"),
        steps=p.get("steps"),
    )
