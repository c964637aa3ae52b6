"""verify/parity (protocol/kernel-rpc.schema.json): the request's params to runtimes.verify.verify."""

from qat_kernel.rpc.context import RequestContext
from qat_kernel.runtimes import verify


def run(ctx: RequestContext) -> dict:
    p = ctx.params
    return verify.verify(
        ctx,
        config=p["config"],
        target=p["target"],
        artifacts=p.get("artifacts"),
        include_fp32=p["includeFp32"],
        samples=p["samples"],
        steps=p.get("steps"),
    )
