"""compare/layers (protocol/kernel-rpc.schema.json): the request's params to jobs.compare_layers.compare_layers."""

from typing import Any

from qat_kernel.jobs import compare_layers
from qat_kernel.rpc.context import RequestContext


def run(ctx: RequestContext) -> dict[str, Any]:
    p = ctx.params
    return compare_layers.compare_layers(ctx, config=p["config"], samples=p.get("samples"), steps=p.get("steps"))
