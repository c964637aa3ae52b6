"""build/tvm (protocol/kernel-rpc.schema.json): the request's params to runtimes.tvm.job.build."""

from qat_kernel.rpc.context import RequestContext
from qat_kernel.runtimes.tvm import job as tvm_job


def run(ctx: RequestContext) -> dict:
    p = ctx.params
    return tvm_job.build(
        ctx,
        config=p["config"],
        target=p["target"],
        fold_int8=p["foldInt8"],
        want_verify=p["verify"],
        want_bench=p["bench"],
        samples=p["samples"],
        bench_runs=p["benchRuns"],
        steps=p.get("steps"),
    )
