"""build/ort (protocol/kernel-rpc.schema.json): the request's params to jobs.build_ort.build."""

from typing import Any

from qat_kernel.jobs import build_ort
from qat_kernel.rpc.context import RequestContext


def run(ctx: RequestContext) -> dict[str, Any]:
    p = ctx.params
    return build_ort.build(
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
