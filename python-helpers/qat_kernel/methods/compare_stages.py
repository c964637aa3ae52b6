"""compare/stages (protocol/kernel-rpc.schema.json): the request's params to jobs.compare_stages.compare_stages."""

from typing import Any

from qat_kernel.jobs import compare_stages
from qat_kernel.rpc.context import RequestContext


def run(ctx: RequestContext) -> dict[str, Any]:
    p = ctx.params
    return compare_stages.compare_stages(
        ctx, config=p["config"], samples=p.get("samples"), steps=p.get("steps"), onnx_path=p.get("onnx")
    )
