"""The RPC table: one handler module per method of protocol/kernel-rpc.schema.json, named after it
(`analyze/sensitivity` -> methods/analyze_sensitivity.py). A handler maps the request's params (schema
defaults filled in) to one service call; handlers import services, never each other.

Handlers load on a method's first call, so the kernel starts fast and answers kernel/info on an
interpreter without torch or numpy; a package a method needs is then reported missing, typed."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from qat_kernel.rpc import protocol

if TYPE_CHECKING:
    from qat_kernel.rpc.context import RequestContext

Handler = Callable[["RequestContext"], Any]


def module_name(method: str) -> str:
    return "qat_kernel.methods." + method.replace("/", "_").replace("-", "_")


def _lazy(method: str) -> Handler:
    def run(ctx: RequestContext) -> Any:
        return importlib.import_module(module_name(method)).run(ctx)

    run.__qualname__ = f"run[{method}]"
    return run


def table() -> dict[str, Handler]:
    """method name -> handler(ctx), for every method the schema declares (kernel/info alone when the schema
    cannot be read, so the kernel still says what it is)."""
    try:
        names = protocol.method_names()
    except OSError:
        names = ["kernel/info"]
    return {method: _lazy(method) for method in names}


def call(method: str, params: dict[str, Any], notify: Callable[[str, dict[str, Any]], None] = lambda *_: None) -> Any:
    """Run one method in this process as the server would (params checked, defaults filled): for benchmarks
    and tests that time a method without the RPC round trip."""
    from qat_kernel.rpc import params as rpc_params
    from qat_kernel.rpc.context import RequestContext

    rpc_params.validate(method, params)
    ctx = RequestContext(0, method, rpc_params.with_defaults(method, params), notify)
    return importlib.import_module(module_name(method)).run(ctx)
