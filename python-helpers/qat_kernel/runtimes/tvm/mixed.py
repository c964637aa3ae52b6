"""TVM's side of fp16 layers: the config's fp16 layers as a matcher for the build, the build report's fp16
section as a result's fp16Layers, and float32 accumulators for the float16 conv2d/matmul of the imported Relax
module (the ONNX rewrite itself: runtimes/onnx/fp16.py).

`widen_accumulators` gives each float16 conv2d/matmul a float32 accumulator (out_dtype float32, cast back
to float16), as relax.transform.ToMixedPrecision does for the ops it converts: the inputs, weights and
outputs are float16, the sums are not rounded to float16 at every step."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from qat_kernel.pipeline.config import Config

if TYPE_CHECKING:
    import tvm


def fp16_matcher(cfg: Config) -> Callable[[str], str | None] | None:
    """module path -> "overrides.<i> (match <regex>)" for the layers the config keeps in fp16 (the
    first override that matches a path or a parent path wins, as in training); None when no
    override asks for fp16."""
    from qat_kernel.pipeline import qconfig

    plan = qconfig.plan(cfg)
    if not any(layer.precision == "fp16" for _, _, layer in plan.overrides):
        return None
    overrides = cfg.get("overrides") or []

    def match(module: str) -> str | None:
        layer = plan.for_module(module)
        if layer.precision != "fp16" or layer.override is None:
            return None
        return f"overrides.{layer.override} (match {overrides[layer.override].get('match')!r})"

    return match


def fp16_layers(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The result's fp16Layers: per layer the config keeps fp16, its ONNX nodes run in float16 and
    the ones that could not be converted (with why)."""
    section = report.get("fp16") or {}
    out = []
    for layer in section.get("layers") or []:
        out.append(
            {
                "module": layer["module"],
                "override": layer["match"],
                "onnxNodes": list(layer["onnx_nodes"]),
                "converted": bool(layer["onnx_nodes"]),
                "skipped": [
                    {"onnxNode": s["onnx_node"], "opType": s["op_type"], "reason": s["reason"]}
                    for s in layer["skipped"]
                ],
            }
        )
    return out


def widen_accumulators(mod: tvm.IRModule) -> tuple[tvm.IRModule, int]:
    """(module, count): float16 conv2d/matmul ops of mod["main"] given a float32 accumulator and a
    cast of the result back to float16."""
    import tvm
    from tvm import relax

    from qat_kernel.runtimes.tvm.fold import op_name

    count = {"n": 0}

    @relax.expr_functor.mutator
    class _Widen(relax.PyExprMutator):
        def visit_call_(self, op: tvm.ir.Call):  # noqa: N802 - TVM's visitor naming
            call = super().visit_call_(op)
            name = op_name(call)
            if not isinstance(call, tvm.ir.Call) or name not in ("relax.nn.conv2d", "relax.matmul"):
                return call
            dtypes = {str(getattr(a.ty, "dtype", "")) for a in call.args[:2]}
            a: Any = call.attrs  # conv2d/matmul attrs: fields TVM declares on no class
            out_dtype = a.out_dtype
            if dtypes != {"float16"} or (out_dtype is not None and str(out_dtype) not in ("float16", "", "void")):
                return call
            count["n"] += 1
            if name == "relax.matmul":
                wide = relax.op.matmul(call.args[0], call.args[1], out_dtype="float32")
            else:
                wide = relax.op.nn.conv2d(
                    call.args[0],
                    call.args[1],
                    strides=[int(v) for v in a.strides],  # pyright: ignore[reportArgumentType] - TVM takes a list
                    padding=[int(v) for v in a.padding],  # pyright: ignore[reportArgumentType] - TVM takes a list
                    dilation=[int(v) for v in a.dilation],  # pyright: ignore[reportArgumentType] - TVM takes a list
                    groups=int(a.groups),
                    data_layout=str(a.data_layout),
                    kernel_layout=str(a.kernel_layout),
                    out_layout=str(a.out_layout),
                    out_dtype="float32",
                )
            return relax.op.astype(self.builder_.normalize(wide), "float16")

    out = mod.clone()
    out["main"] = _Widen().visit_expr(mod["main"])
    return out, count["n"]
