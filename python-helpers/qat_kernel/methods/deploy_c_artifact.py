"""deploy/c-artifact (protocol/kernel-rpc.schema.json): the request's params to jobs.deploy_c_artifact.deploy."""

from typing import Any

from qat_kernel.jobs import deploy_c_artifact
from qat_kernel.rpc.context import RequestContext


def run(ctx: RequestContext) -> dict[str, Any]:
    p = ctx.params
    return deploy_c_artifact.deploy(
        ctx,
        config=p["config"],
        target=p["target"],
        want_verify=p["verify"],
        want_tvm=p["tvm"],
        samples=p["samples"],
        steps=p.get("steps"),
    )
