"""kernel/info (protocol/kernel-rpc.schema.json): the interpreter and package versions, from packages.py."""

from qat_kernel import packages
from qat_kernel.rpc.context import RequestContext


def run(ctx: RequestContext) -> dict:
    return packages.environment(ctx.check_cancelled)
