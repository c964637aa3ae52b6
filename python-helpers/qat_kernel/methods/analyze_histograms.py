"""analyze/histograms (protocol/kernel-rpc.schema.json): the request's params to jobs.analyze_histograms.histograms."""

from typing import Any

from qat_kernel.jobs import analyze_histograms
from qat_kernel.rpc.context import RequestContext


def run(ctx: RequestContext) -> dict[str, Any]:
    p = ctx.params
    return analyze_histograms.histograms(
        ctx, config=p["config"], layers=p.get("layers"), bins=p["bins"], samples=p["samples"], steps=p.get("steps")
    )
