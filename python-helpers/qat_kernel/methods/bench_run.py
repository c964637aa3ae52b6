"""bench/run (protocol/kernel-rpc.schema.json): the request's params to jobs.bench_run.bench."""

from typing import Any

from qat_kernel.jobs import bench_run
from qat_kernel.rpc.context import RequestContext


def run(ctx: RequestContext) -> dict[str, Any]:
    p = ctx.params
    return bench_run.bench(
        ctx,
        config=p["config"],
        target=p["target"],
        want_qs=p["quantizeStatic"],
        want_inductor=p["inductor"],
        want_replace=p["replaceQdq"],
        want_tvm_fp32=p["tvmFp32"],
        runs=p["runs"],
        samples=p["samples"],
        steps=p.get("steps"),
    )
