"""build/inductor (protocol/kernel-rpc.schema.json): the request's params to jobs.build_inductor.build."""

from typing import Any

from qat_kernel.jobs import build_inductor
from qat_kernel.rpc.context import RequestContext


def run(ctx: RequestContext) -> dict[str, Any]:
    p = ctx.params
    return build_inductor.build(
        ctx,
        config=p["config"],
        want_bench=p["bench"],
        bench_runs=p["benchRuns"],
        samples=p["samples"],
        steps=p.get("steps"),
    )
