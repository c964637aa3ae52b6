"""verify/parity (protocol/kernel-rpc.schema.json): the request's params to jobs.verify_parity.verify."""

from typing import Any

from qat_kernel.jobs import verify_parity
from qat_kernel.rpc.context import RequestContext


def run(ctx: RequestContext) -> dict[str, Any]:
    p = ctx.params
    return verify_parity.verify(
        ctx,
        config=p["config"],
        target=p["target"],
        artifacts=p.get("artifacts"),
        include_fp32=p["includeFp32"],
        samples=p["samples"],
        steps=p.get("steps"),
    )
