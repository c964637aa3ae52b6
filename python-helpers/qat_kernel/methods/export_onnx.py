"""export/onnx (protocol/kernel-rpc.schema.json): the request's params to runtimes.onnx.export.export."""

from qat_kernel.rpc.context import RequestContext
from qat_kernel.runtimes.onnx import export as onnx_export


def run(ctx: RequestContext) -> dict:
    p = ctx.params
    return onnx_export.export(
        ctx,
        config=p["config"],
        path=p.get("path"),
        opset=p.get("opset"),
        want_verify=p["verify"],
        samples=p.get("samples"),
        steps=p.get("steps"),
    )
