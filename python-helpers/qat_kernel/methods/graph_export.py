"""graph/export (protocol/kernel-rpc.schema.json): the request's params to jobs.graph_export.export_graph."""

from typing import Any

from qat_kernel.jobs import graph_export
from qat_kernel.rpc.context import RequestContext


def run(ctx: RequestContext) -> dict[str, Any]:
    p = ctx.params
    return graph_export.export_graph(
        ctx, config=p["config"], stage=p["stage"], path=p.get("path"), steps=p.get("steps")
    )
