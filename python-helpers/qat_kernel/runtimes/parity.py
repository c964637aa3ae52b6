"""Parity of a runtime's outputs with a reference, in one vocabulary for every runtime (TVM, ONNX Runtime,
Inductor, the C runner) and the RPC results (ArtifactParity and friends).

compare(out, ref, step) over all samples:
  maxAbsDiff, meanAbsDiff      |out - ref|
  maxRelDiff                   maxAbsDiff relative to the largest |ref|
  cosineMin, cosineMean        per-sample cosine similarity of the flattened outputs
  maxDiffSteps, withinOneStep  |out - ref| in quantization steps of the output, and the fraction of samples
                               whose every element is within one step (only where the step is known)
  top1Agreement, top1Mismatches  argmax over the last axis (classification logits)

The step of an output (onnx_output_step, torch_output_step) is its dequantize scale when the output is
quantized; for a float output straight from a Conv/Gemm/MatMul of dequantized inputs it is one unit of that
op's int32 accumulator, input scale x weight scale per output channel ("accumulator"). Two float32
computations of the same quantized graph can round an intermediate activation one step apart, so an
accumulator-step count is a detail; relative difference and top-1 agreement are what a user reads."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from qat_kernel.pipeline import fused_groups
from qat_kernel.rpc.errors import ConfigInvalid, KernelError

if TYPE_CHECKING:
    import torch

    from qat_kernel.pipeline.losses import Loss
    from qat_kernel.pipeline.trained_model import Trained
    from qat_kernel.rpc.context import RequestContext

# Ops an output passes through without changing its values.
PASS_THROUGH = ("Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze")


def compare(out: npt.ArrayLike, ref: npt.ArrayLike, step: npt.ArrayLike | None = None) -> dict[str, Any]:
    out = np.asarray(out, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if out.shape != ref.shape:
        raise KernelError(f"Output shapes differ: {out.shape} vs {ref.shape}")
    diff = np.abs(out - ref)
    n = out.shape[0] if out.ndim else 1
    a, b = out.reshape(n, -1), ref.reshape(n, -1)
    denom = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    cos = np.where(denom > 0, (a * b).sum(axis=1) / np.where(denom > 0, denom, 1), 1.0)
    peak = float(np.abs(ref).max()) if ref.size else 0.0
    max_abs = float(diff.max()) if diff.size else 0.0
    result = {
        "samples": int(n),
        "maxAbsDiff": max_abs,
        "meanAbsDiff": float(diff.mean()) if diff.size else 0.0,
        "maxRelDiff": max_abs / peak if peak else 0.0,
        "cosineMin": float(cos.min()),
        "cosineMean": float(cos.mean()),
    }
    if step is not None:
        s = np.asarray(step, dtype=np.float64)
        steps = diff / (s if s.ndim == 0 else s.reshape((1,) * (diff.ndim - 1) + (-1,)))
        result["maxDiffSteps"] = float(steps.max()) if steps.size else 0.0
        # 1e-3: a one-step difference of two dequantized float32 values reads as 1.000003 steps
        result["withinOneStep"] = float((steps.reshape(n, -1).max(axis=1) <= 1.0 + 1e-3).mean())
    if out.ndim >= 2 and out.shape[-1] > 1:
        agree = out.argmax(-1) == ref.argmax(-1)
        result["top1Agreement"] = float(agree.mean())
        result["top1Mismatches"] = int((~agree).sum())
    return result


def onnx_output_step(onnx_path: str | Path) -> dict[str, Any]:
    """{kind: quantized | accumulator | float | unknown, step: float, list of floats or None} of a QDQ
    model's (first) output."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(onnx_path))
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    producer = {o: n for n in model.graph.node for o in n.output}
    for n in model.graph.node:
        if n.op_type == "Constant" and n.attribute:
            inits[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
    node = producer.get(model.graph.output[0].name)
    while node is not None and node.op_type in PASS_THROUGH:
        node = producer.get(node.input[0])
    if node is None:
        return {"kind": "unknown", "step": None}
    if node.op_type == "DequantizeLinear" and node.input[1] in inits:
        s = inits[node.input[1]].astype(np.float64)
        return {"kind": "quantized", "step": s.reshape(-1).tolist() if s.size > 1 else float(s)}
    if node.op_type in ("Gemm", "MatMul", "Conv"):
        dq = [producer.get(i) for i in node.input[:2]]
        dq = [d for d in dq if d is not None and d.op_type == "DequantizeLinear" and d.input[1] in inits]
        if len(dq) == 2:
            s_x = inits[dq[0].input[1]].astype(np.float64).reshape(-1)
            s_w = inits[dq[1].input[1]].astype(np.float64).reshape(-1)
            if s_x.size == 1:
                step = s_x[0] * s_w
                return {"kind": "accumulator", "step": step.tolist() if step.size > 1 else float(step[0])}
    return {"kind": "float", "step": None}


def torch_output_step(gm: torch.fx.GraphModule) -> dict[str, Any]:
    """onnx_output_step's answer for a converted PT2E graph (step: a float or a per-channel float64 array)."""
    node: Any = fused_groups.graph_output(gm)  # walked back through its args below
    while fused_groups.op_name(node) in fused_groups.FOLLOW:
        node = node.args[0]
    name = fused_groups.op_name(node)
    if name.startswith("dequantize_per_tensor"):
        return {"kind": "quantized", "step": float(node.args[1])}
    if name not in fused_groups.ANCHORS:
        return {"kind": "unknown", "step": None}

    def scale(n: Any) -> np.ndarray | None:  # an FX argument, walked as `node` above
        if fused_groups.op_name(n).startswith("dequantize_per_tensor"):
            return np.asarray(float(n.args[1]), dtype=np.float64)
        if fused_groups.op_name(n).startswith("dequantize_per_channel"):
            s = n.args[1]
            value = fused_groups.attr(gm, s.target) if hasattr(s, "op") else s
            return np.asarray(value.detach().double().numpy() if hasattr(value, "detach") else value, np.float64)
        return None

    sx, sw = scale(node.args[0]), scale(node.args[1])
    if sx is None or sw is None:
        return {"kind": "unknown", "step": None}
    return {"kind": "accumulator", "step": sx * sw}


def reference_outputs(trained: Trained, limit: int, converted: torch.nn.Module, ctx: RequestContext):
    """(the model's Inputs as numpy arrays, labels [N, ...], PyTorch INT8 outputs [N, ...]) of the first `limit`
    validation samples: what every runtime's parity is measured against."""
    import torch

    from qat_kernel.pipeline.model_io import Inputs

    xs, ys, refs, have = [], [], [], 0
    with torch.no_grad():
        for x, y in trained.val:
            ctx.check_cancelled()
            x, y = x[: limit - have], y[: limit - have]
            xs.append(x)
            ys.append(y)
            refs.append(converted(*x).float())
            have += len(y)
            if have >= limit:
                break
    if not xs:
        raise ConfigInvalid(f"data: the validation batches are empty; {ctx.method} verifies on them", path="data")
    return Inputs.concat(xs).numpy(), torch.cat(ys).numpy(), torch.cat(refs).numpy()


def accuracy(outputs: npt.ArrayLike, labels: np.ndarray, loss: Loss) -> float | None:
    """Top-1 accuracy of `outputs` against `labels` as the model's loss counts it (pipeline.losses: classes,
    next tokens, ignored labels); None where they do not line up."""
    import torch

    return loss.accuracy(torch.as_tensor(np.asarray(outputs)), labels)


# A runtime's outputs against PyTorch INT8: "ok" at top-1 agreement >= okTop1 and, for a quantized output, at
# least okWithinOneStep of the samples within one output step; "fail" under failTop1; "check" between.
THRESHOLDS = {"okTop1": 0.99, "okWithinOneStep": 0.99, "failTop1": 0.90}


def verdict(m: dict[str, Any] | None, output_kind: str) -> str:
    """ok / check / fail of compare()'s metrics against the reference by THRESHOLDS ("n/a" without metrics or
    without a top-1 to judge by)."""
    if not m or m.get("top1Agreement") is None:
        return "n/a"
    top1 = m["top1Agreement"]
    if top1 < THRESHOLDS["failTop1"]:
        return "fail"
    within = m.get("withinOneStep") if output_kind == "quantized" else None
    if top1 >= THRESHOLDS["okTop1"] and (within is None or within >= THRESHOLDS["okWithinOneStep"]):
        return "ok"
    return "check"


def describe(m: dict[str, Any], output_kind: str) -> str:
    """compare()'s metrics in the units a user reads: for a quantized output its own quantization steps; for
    float outputs (logits) top-1 agreement and the absolute and relative difference, with the count of the
    last layer's int32-accumulator steps kept as a detail."""
    parts = []
    if "top1Agreement" in m:
        parts.append(f"top-1 agreement {m['top1Agreement'] * 100:.2f}% ({m['top1Mismatches']} differ)")
    if output_kind == "quantized" and "maxDiffSteps" in m:
        parts.append(
            f"max diff {m['maxDiffSteps']:.2f} output steps ({m['withinOneStep'] * 100:.1f}% of samples within one)"
        )
    rel = f" ({m['maxRelDiff'] * 100:.2f}% of the largest output)" if "maxRelDiff" in m else ""
    parts.append(f"max |diff| {m['maxAbsDiff']:.3g}{rel}")
    parts.append(f"cosine min {m['cosineMin']:.6f}")
    text = ", ".join(parts)
    if output_kind == "accumulator" and "maxDiffSteps" in m:
        text += (
            f"; detail: {m['maxDiffSteps']:.0f} steps of the last layer's int32 accumulator "
            "(input scale x weight scale, far finer than any rounding of the activations before it)"
        )
    return text
