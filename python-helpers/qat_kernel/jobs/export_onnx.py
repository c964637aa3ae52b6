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
from typing import TYPE_CHECKING, Any

from qat_kernel.analysis.model_size import model_bytes
from qat_kernel.jobs import opening
from qat_kernel.jobs.reports import analysis as report
from qat_kernel.rpc.context import RequestContext
from qat_kernel.runtimes import parity
from qat_kernel.runtimes.onnx import qdq_export

if TYPE_CHECKING:
    from collections.abc import Iterable

    import torch

    from qat_kernel.pipeline.losses import Loss
    from qat_kernel.pipeline.model_io import Inputs


def verify(
    path: Path,
    converted: torch.fx.GraphModule,
    val: Iterable[tuple[Inputs, Any]],
    ctx: RequestContext,
    samples: int | None,
    loss: Loss,
) -> dict[str, Any]:
    """ORT as deployed (default graph optimizations: QLinearConv/QGemm int8 kernels, integer
    rounding of biases and requantization) and ORT running the file's Q/DQ ops as written
    (optimizations off), each against the PyTorch INT8 graph."""
    import numpy as np
    import torch

    from qat_kernel.runtimes.ort.sessions import feed, session

    deployed = session(path)
    as_written = session(path, level="disabled")
    output = parity.torch_output_step(converted)
    ours, theirs, written, labels = [], [], [], []
    total = 0
    with torch.no_grad():
        for x, y in val:
            ctx.check_cancelled()
            if samples is not None:
                x, y = x[: samples - total], y[: samples - total]
            ours.append(converted(*x).float().numpy())
            theirs.append(np.asarray(deployed.run(None, feed(deployed, x))[0]))
            written.append(np.asarray(as_written.run(None, feed(as_written, x))[0]))
            labels.append(y.numpy())
            total += len(y)
            if samples is not None and total >= samples:
                break
    ours, theirs, written = (np.concatenate(v) for v in (ours, theirs, written))
    labels = np.concatenate(labels)
    deployed_diff = parity.compare(theirs, ours, output["step"])
    written_diff = parity.compare(written, ours, output["step"])

    def difference(c: dict[str, Any]) -> dict[str, Any]:
        d = {"maxAbs": c["maxAbsDiff"], "maxRel": c["maxRelDiff"]}
        if "maxDiffSteps" in c:
            d["maxSteps"] = c["maxDiffSteps"]
        return d

    result = {
        "samples": total,
        **difference(deployed_diff),
        "predictionsEqual": deployed_diff.get("top1Agreement", 1.0),
        "ortAccuracy": parity.accuracy(theirs, labels, loss) or 0.0,
        "torchAccuracy": parity.accuracy(ours, labels, loss) or 0.0,
        "unoptimized": difference(written_diff),
    }
    if output["step"] is not None:
        result["step"] = float(np.min(output["step"]))
        result["stepKind"] = "output" if output["kind"] == "quantized" else "accumulator"
    return result


def export(
    ctx: RequestContext,
    *,
    config: str,
    path: str | Path | None,
    opset: int | None,
    want_verify: bool,
    samples: int | None,
    steps: int | None,
) -> dict[str, Any]:
    """The INT8 model exported to QDQ ONNX, checked and verified in ONNX Runtime."""
    import onnx

    started = time.monotonic()
    cfg, trained, reused, converted = opening.load_model(
        ctx,
        config,
        steps=steps,
        pt2e="export/onnx supports the pt2e flow (an eager INT8 model's packed params do not pass the dynamo exporter)",
        convert=True,
    )
    path = Path(path) if path else None
    if path is not None and not path.is_absolute():
        path = cfg.resolve(str(path))
    opset = opset or cfg.get("export.onnx.opset", qdq_export.DEFAULT_OPSET)
    assert opset is not None  # the config schema makes export.onnx.opset an integer
    path = qdq_export.export_for_config(cfg, trained, converted, ctx, opset, path)
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
    if want_verify:
        ctx.progress("verify", "running the QDQ file in ONNX Runtime")
        result["verify"] = verify(path, converted, trained.val, ctx, samples, trained.loss)
    result["seconds"] = round(time.monotonic() - started, 2)
    result["summary"] = report.export(result)
    return result
