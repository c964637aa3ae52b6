"""compare/layers (protocol/kernel-rpc.schema.json): the request's params to analysis.compare_job.compare_layers."""

from qat_kernel.analysis import compare_job
from qat_kernel.rpc.context import RequestContext


def run(ctx: RequestContext) -> dict:
    p = ctx.params
    return compare_job.compare_layers(ctx, config=p["config"], samples=p.get("samples"), steps=p.get("steps"))
