"""qat/train (protocol/kernel-rpc.schema.json): the request's params to jobs.qat_train.train."""

from typing import Any

from qat_kernel.jobs import qat_train
from qat_kernel.rpc.context import RequestContext


def run(ctx: RequestContext) -> dict[str, Any]:
    p = ctx.params
    return qat_train.train(
        ctx,
        config=p["config"],
        steps=p.get("steps"),
        epochs=p.get("epochs"),
        checkpoint=p["checkpoint"],
        processes=p.get("nprocPerNode"),
    )
