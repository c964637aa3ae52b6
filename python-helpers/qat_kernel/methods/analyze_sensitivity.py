"""analyze/sensitivity (protocol/kernel-rpc.schema.json): the request's params to jobs.analyze_sensitivity.analyze."""

from typing import Any

from qat_kernel.jobs import analyze_sensitivity
from qat_kernel.rpc.context import RequestContext


def run(ctx: RequestContext) -> dict[str, Any]:
    p = ctx.params
    return analyze_sensitivity.analyze(
        ctx,
        config=p["config"],
        budget=p["budget"],
        precision=p["precision"],
        samples=p.get("samples"),
        steps=p.get("steps"),
    )
