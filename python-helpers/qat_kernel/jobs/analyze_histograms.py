"""analyze/histograms: per quantized layer, the histogram of its weight and of its input activation as the
trained QAT model sees them on real samples, with the fake quantizer's observed min/max, the range its
scale and zero point can represent, and the fraction of values outside it (clipped by quantization).

Values are read with forward pre-hooks on the layer's fake-quant modules (what they are about to
quantize), in eval mode with observers frozen; activation histograms accumulate batch by batch over a
fixed range (the observed range widened to the data of the first batch and the representable range)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from qat_kernel.analysis.histograms import histogram
from qat_kernel.jobs import opening
from qat_kernel.jobs.reports import analysis as report
from qat_kernel.pipeline import trained_model
from qat_kernel.rpc.context import RequestContext

if TYPE_CHECKING:
    import torch

DEFAULT_BINS = 64
DEFAULT_SAMPLES = 256


def histograms(
    ctx: RequestContext, *, config: str, layers: list[str] | None, bins: int, samples: int, steps: int | None
) -> dict[str, Any]:
    """Weight and input-activation histograms per quantized layer."""
    import torch

    from qat_kernel.pipeline.training import first_inputs

    started = time.monotonic()
    _, trained, reused, _ = opening.load_model(ctx, config, steps=steps)
    bins = bins
    wanted = set(layers or [])
    inputs = first_inputs(trained.val, samples)
    fqs = trained.qat.fake_quants()
    picked = [(layer, found) for layer, found in trained.qat.layers() if not wanted or layer.module in wanted]
    seen: dict[tuple[str, str], list[torch.Tensor]] = {}
    hooks = []
    for layer, found in picked:
        for role, names in (("weight", found.weight), ("activation", found.input)):
            if names:
                m = fqs[names[0]]
                hooks.append(
                    m.register_forward_pre_hook(
                        lambda mod, args, key=(layer.module, role): (
                            seen.setdefault(key, []).append(args[0].detach().float().clone())
                            if key[1] == "activation" or key not in seen
                            else None
                        )
                    )
                )
    ctx.progress("histograms", f"{len(picked)} layers on {sum(len(x) for x in inputs)} samples")
    try:
        with torch.no_grad(), trained_model.evaluating(trained.qat, fake_quant=True) as model:
            for x in inputs:
                ctx.check_cancelled()
                model(*x)
    finally:
        for h in hooks:
            h.remove()
    rows = []
    for layer, found in picked:
        row: dict[str, Any] = {"module": layer.module}
        for role, names in (("weight", found.weight), ("activation", found.input)):
            values = seen.get((layer.module, role))
            if names and values:
                row[role] = histogram(
                    torch.cat([v.reshape(-1) for v in values]) if role == "activation" else values[0],
                    fqs[names[0]],
                    bins,
                    role,
                )
        rows.append(row)
    result = {
        "layers": rows,
        "samples": sum(len(x) for x in inputs),
        "bins": bins,
        "reused": reused,
        "seconds": round(time.monotonic() - started, 2),
    }
    result["summary"] = report.histograms(result)
    return result
