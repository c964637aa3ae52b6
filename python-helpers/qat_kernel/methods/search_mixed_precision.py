"""search/mixed-precision (protocol/kernel-rpc.schema.json): the request's params to jobs.search_mixed_precision."""

from typing import Any

from qat_kernel.jobs import search_mixed_precision
from qat_kernel.rpc.context import RequestContext


def run(ctx: RequestContext) -> dict[str, Any]:
    p = ctx.params
    return search_mixed_precision.search(
        ctx,
        config=p["config"],
        budget=p["budget"],
        precisions=p.get("precisions"),
        samples=p.get("samples"),
        steps=p.get("steps"),
        batch=p["batch"],
        perplexity_budget=p["perplexityBudget"],
    )
