"""deploy/c-artifact (protocol/kernel-rpc.schema.json): the request's params to runtimes.c.job.deploy."""

from qat_kernel.rpc.context import RequestContext
from qat_kernel.runtimes.c import job as c_job


def run(ctx: RequestContext) -> dict:
    p = ctx.params
    return c_job.deploy(
        ctx,
        config=p["config"],
        target=p["target"],
        want_verify=p["verify"],
        want_tvm=p["tvm"],
        samples=p["samples"],
        steps=p.get("steps"),
    )
