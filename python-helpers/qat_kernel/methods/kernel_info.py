"""kernel/info (protocol/kernel-rpc.schema.json): the interpreter and package versions, from jobs.kernel_info."""

from typing import Any

from qat_kernel.jobs import kernel_info
from qat_kernel.rpc.context import RequestContext


def run(ctx: RequestContext) -> dict[str, Any]:
    return kernel_info.environment(ctx.check_cancelled)
