"""export/onnx: the PT2E INT8 model as a QDQ ONNX file, checked in ONNX Runtime.

Verification runs the file in ONNX Runtime twice (as deployed, with its int8 kernel fusions, and
with graph optimizations off, i.e. the file's Q/DQ ops as written) and the PyTorch INT8 graph on the
same validation batches, and reports the largest output difference in absolute terms and in
quantization steps. The model output is
usually not quantized itself (the x86 recipe leaves the last linear's output float); its step is
then one unit of that layer's int32 accumulator, input scale x weight scale of each output channel
(an error of one step = one rounding of the integer result). Sizes: bytes of the tensors each model
holds (FP32 state_dict vs INT8 graph constants: int8 weights, float biases, scales, zero points)
and the ONNX file's own size."""

from __future__ import annotations

import time
from pathlib import Path

from qat_kernel.methods import compare_layers
from qat_kernel.pipeline import session
from qat_kernel.rpc.context import RequestContext


def _tensor_bytes(obj, seen: set) -> int:
    import torch

    if isinstance(obj, torch.Tensor):
        key = (
            (obj.untyped_storage().data_ptr(), obj.untyped_storage().nbytes()) if not obj.is_quantized else (id(obj), 0)
        )
        if key in seen:
            return 0
        seen.add(key)
        return obj.numel() * obj.element_size()
    if isinstance(obj, (tuple, list)):
        return sum(_tensor_bytes(o, seen) for o in obj)
    return 0


def model_bytes(model) -> int:
    """Bytes of the tensors a model computes with: for an FX graph those its get_attr nodes read
    (a converted graph keeps the unused FP32 parameters as attributes), else its state_dict."""
    seen: set = set()
    graph = getattr(model, "graph", None)
    if graph is None:
        return sum(_tensor_bytes(v, seen) for v in model.state_dict().values())
    total = 0
    for node in graph.nodes:
        if node.op == "get_attr":
            total += _tensor_bytes(_attr(model, node), seen)
    return total


def _attr(gm, node):
    value = gm
    for part in node.target.split("."):
        value = getattr(value, part)
    return value


def output_step(gm):
    """Quantization step of the graph's (first) output, a float or a per-channel tensor; None if unknown."""
    import torch

    from qat_kernel.analysis import fused_groups

    out = next(n for n in gm.graph.nodes if n.op == "output").args[0]
    node = out[0] if isinstance(out, (tuple, list)) else out
    while fused_groups.op_name(node) in fused_groups.FOLLOW:
        node = node.args[0]
    name = fused_groups.op_name(node)
    if name.startswith("dequantize_per_tensor"):
        return float(node.args[1])
    if name not in fused_groups.ANCHORS:
        return None
    x, w = node.args[0], node.args[1]

    def scale(n):
        if fused_groups.op_name(n).startswith("dequantize_per_tensor"):
            return torch.tensor(float(n.args[1]))
        if fused_groups.op_name(n).startswith("dequantize_per_channel"):
            s = n.args[1]
            return _attr(gm, s).float() if hasattr(s, "op") else torch.as_tensor(s).float()
        return None

    sx, sw = scale(x), scale(w)
    return None if sx is None or sw is None else sx * sw


def _diff(ours, theirs, step, into: dict, peak: float) -> None:
    """Folds one batch into `into`; `peak`: the largest |PyTorch INT8 output| over all batches so far."""
    diff = (ours - theirs).abs()
    into["maxAbs"] = max(into.get("maxAbs", 0.0), diff.max().item())
    into["maxRel"] = into["maxAbs"] / peak if peak else 0.0
    if step is not None:
        s = step if isinstance(step, float) else step.reshape([1, -1] + [1] * (diff.dim() - 2))
        into["maxSteps"] = max(into.get("maxSteps", 0.0), (diff / s).max().item())


def verify(path: Path, converted, val, ctx: RequestContext, samples: int | None) -> dict:
    """ORT as deployed (default graph optimizations: QLinearConv/QGemm int8 kernels, integer
    rounding of biases and requantization) and ORT running the file's Q/DQ ops as written
    (optimizations off), each against the PyTorch INT8 graph."""
    import numpy as np
    import torch

    from qat_kernel.runtimes.ort.session import session

    deployed = session(path)
    as_written = session(path, level="disabled")
    name = deployed.get_inputs()[0].name
    step = output_step(converted)
    opt: dict = {}
    ref: dict = {}
    same = correct_ort = correct_torch = total = 0
    peak = 0.0
    with torch.no_grad():
        for x, y in val:
            ctx.check_cancelled()
            if samples is not None:
                x, y = x[: samples - total], y[: samples - total]
            ours = converted(x).float()
            theirs = torch.from_numpy(np.asarray(deployed.run(None, {name: x.numpy()})[0])).float()
            written = torch.from_numpy(np.asarray(as_written.run(None, {name: x.numpy()})[0])).float()
            peak = max(peak, ours.abs().max().item())
            _diff(ours, theirs, step, opt, peak)
            _diff(ours, written, step, ref, peak)
            same += int((ours.argmax(1) == theirs.argmax(1)).sum())
            correct_ort += int((theirs.argmax(1) == y).sum())
            correct_torch += int((ours.argmax(1) == y).sum())
            total += len(y)
            if samples is not None and total >= samples:
                break
    result = {
        "samples": total,
        **opt,
        "predictionsEqual": same / total if total else 0.0,
        "ortAccuracy": correct_ort / total if total else 0.0,
        "torchAccuracy": correct_torch / total if total else 0.0,
        "unoptimized": ref,
    }
    if step is not None:
        result["step"] = step if isinstance(step, float) else float(step.min())
        result["stepKind"] = "output" if isinstance(step, float) else "accumulator"
    return result


def run(ctx: RequestContext) -> dict:
    import onnx

    started = time.monotonic()
    params = ctx.params
    cfg = session.load(params, ctx)
    session.require_pt2e(
        cfg, "export/onnx supports the pt2e flow (an eager INT8 model's packed params do not pass the dynamo exporter)"
    )
    trained, reused = session.get(cfg, ctx, steps=params.get("steps"))
    converted = session.convert(trained, ctx)
    path = Path(params["path"]) if params.get("path") else None
    if path is not None and not path.is_absolute():
        path = cfg.resolve(str(path))
    opset = params.get("opset") or cfg.get("export.onnx.opset", compare_layers.DEFAULT_OPSET)
    exported = compare_layers.export_onnx(cfg, converted, trained.example, ctx, opset, path)
    if exported["path"] is None:
        return {
            "path": None,
            "error": exported["error"],
            "opset": opset,
            "reused": reused,
            "seconds": round(time.monotonic() - started, 2),
        }
    path = Path(exported["path"])
    session.record_export(trained, path, opset)
    model = onnx.load(str(path))
    ops = [n.op_type for n in model.graph.node]
    fp32_bytes, int8_bytes = model_bytes(trained.fp32), model_bytes(converted)
    result = {
        "path": str(path),
        "opset": opset,
        "reused": reused,
        "qdq": {"quantizeLinear": ops.count("QuantizeLinear"), "dequantizeLinear": ops.count("DequantizeLinear")},
        "size": {
            "fp32Bytes": fp32_bytes,
            "int8Bytes": int8_bytes,
            "ratio": fp32_bytes / int8_bytes if int8_bytes else 0.0,
            "onnxFileBytes": path.stat().st_size,
        },
    }
    if params.get("verify", True):
        ctx.progress("verify", "running the QDQ file in ONNX Runtime")
        result["verify"] = verify(path, converted, trained.val, ctx, params.get("samples"))
    result["seconds"] = round(time.monotonic() - started, 2)
    return result
