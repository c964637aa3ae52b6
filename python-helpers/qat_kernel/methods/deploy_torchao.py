"""deploy/torchao (protocol/kernel-rpc.schema.json): the request's params to jobs.deploy_torchao.deploy."""

from typing import Any

from qat_kernel.jobs import deploy_torchao
from qat_kernel.rpc.context import RequestContext


def run(ctx: RequestContext) -> dict[str, Any]:
    p = ctx.params
    return deploy_torchao.deploy(
        ctx,
        config=p["config"],
        fmt=p.get("format"),
        new_tokens=p["newTokens"],
        prompt_tokens=p["promptTokens"],
        runs=p["runs"],
        steps=p.get("steps"),
        model=p.get("model"),
    )
