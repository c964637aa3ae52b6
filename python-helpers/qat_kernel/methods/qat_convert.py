"""qat/convert (protocol/kernel-rpc.schema.json): the request's params to jobs.qat_convert.save_int8."""

from typing import Any

from qat_kernel.jobs import qat_convert
from qat_kernel.rpc.context import RequestContext


def run(ctx: RequestContext) -> dict[str, Any]:
    p = ctx.params
    return qat_convert.save_int8(
        ctx, config=p["config"], path=p.get("path"), steps=p.get("steps"), model=p.get("model")
    )
