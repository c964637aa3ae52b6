"""export/onnx (protocol/kernel-rpc.schema.json): the request's params to jobs.export_onnx.export."""

from typing import Any

from qat_kernel.jobs import export_onnx
from qat_kernel.rpc.context import RequestContext


def run(ctx: RequestContext) -> dict[str, Any]:
    p = ctx.params
    return export_onnx.export(
        ctx,
        config=p["config"],
        path=p.get("path"),
        opset=p.get("opset"),
        want_verify=p["verify"],
        samples=p.get("samples"),
        steps=p.get("steps"),
    )
