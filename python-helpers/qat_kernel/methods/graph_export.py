"""graph/export (protocol/kernel-rpc.schema.json): the request's params to analysis.model_graph.export_graph."""

from qat_kernel.analysis import model_graph
from qat_kernel.rpc.context import RequestContext


def run(ctx: RequestContext) -> dict:
    p = ctx.params
    return model_graph.export_graph(ctx, config=p["config"], stage=p["stage"], path=p.get("path"), steps=p.get("steps"))
