"""build/tvm (protocol/kernel-rpc.schema.json): the request's params to jobs.build_tvm.build."""

from typing import Any

from qat_kernel.jobs import build_tvm
from qat_kernel.rpc.context import RequestContext


def run(ctx: RequestContext) -> dict[str, Any]:
    p = ctx.params
    return build_tvm.build(
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
