"""build/ort (protocol/kernel-rpc.schema.json): the request's params to runtimes.ort.job.build."""

from qat_kernel.rpc.context import RequestContext
from qat_kernel.runtimes.ort import job as ort_job


def run(ctx: RequestContext) -> dict:
    p = ctx.params
    return ort_job.build(
        ctx,
        config=p["config"],
        optimization=p["optimization"],
        want_qs=p["quantizeStatic"],
        want_bench=p["bench"],
        want_replace=p["replaceQdq"],
        bench_runs=p["benchRuns"],
        samples=p["samples"],
        steps=p.get("steps"),
    )
