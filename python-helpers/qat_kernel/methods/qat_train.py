"""qat/train (protocol/kernel-rpc.schema.json): the request's params to pipeline.train_job.train."""

from qat_kernel.pipeline import train_job
from qat_kernel.rpc.context import RequestContext


def run(ctx: RequestContext) -> dict:
    p = ctx.params
    return train_job.train(
        ctx,
        config=p["config"],
        steps=p.get("steps"),
        epochs=p.get("epochs"),
        checkpoint=p["checkpoint"],
        processes=p.get("nprocPerNode"),
    )
