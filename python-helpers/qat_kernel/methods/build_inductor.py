"""build/inductor (protocol/kernel-rpc.schema.json): the request's params to runtimes.inductor.job.build."""

from qat_kernel.rpc.context import RequestContext
from qat_kernel.runtimes.inductor import job as inductor_job


def run(ctx: RequestContext) -> dict:
    p = ctx.params
    return inductor_job.build(
        ctx,
        config=p["config"],
        want_bench=p["bench"],
        bench_runs=p["benchRuns"],
        samples=p["samples"],
        steps=p.get("steps"),
    )
