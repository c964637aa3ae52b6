"""qat/convert (protocol/kernel-rpc.schema.json): the request's params to pipeline.convert.save_int8."""

from qat_kernel.pipeline import convert
from qat_kernel.rpc.context import RequestContext


def run(ctx: RequestContext) -> dict:
    p = ctx.params
    return convert.save_int8(ctx, config=p["config"], path=p.get("path"), steps=p.get("steps"), model=p.get("model"))
