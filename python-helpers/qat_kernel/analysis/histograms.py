"""The histogram of the values a fake quantizer receives (a layer's weight or input activation), next to the
range its scale and zero point can represent, and the fraction of values quantization clips."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    import torch
    import torch.ao.quantization
    import torchao.quantization.pt2e

# A layer's fake quantizer: torchao's in the pt2e flow, torch.ao's in the eager flow.
FakeQuantizer: TypeAlias = "torchao.quantization.pt2e.FakeQuantize | torch.ao.quantization.FakeQuantize"


def histogram(values: torch.Tensor, fq: FakeQuantizer, bins: int, role: str) -> dict[str, Any]:
    """Counts over [min(data, representable), max(data, representable)], and the clipped fraction."""
    import torch

    scale, zero_point = fq.scale.detach().float(), fq.zero_point.detach().float()
    qmin, qmax = int(fq.quant_min), int(fq.quant_max)
    low, high = (qmin - zero_point) * scale, (qmax - zero_point) * scale
    per_channel = scale.numel() > 1
    if per_channel:  # weights: one range per output channel (ch_axis of the fake quantizer)
        axis = int(getattr(fq, "ch_axis", 0))
        shape = [1] * values.dim()
        shape[axis] = -1
        lo_b, hi_b = low.reshape(shape), high.reshape(shape)
    else:
        lo_b, hi_b = low.reshape(()), high.reshape(())
    # Clipped: beyond the range by more than half a step (closer values round to the end value anyway).
    half = (scale.reshape(lo_b.shape) if per_channel else scale.reshape(())) / 2
    clipped = ((values < lo_b - half) | (values > hi_b + half)).float().mean().item()
    flat = values.reshape(-1)
    lo = min(flat.min().item(), low.min().item())
    hi = max(flat.max().item(), high.max().item())
    counts = torch.histc(flat, bins=bins, min=lo, max=hi if hi > lo else lo + 1e-12)
    observer = getattr(fq, "activation_post_process", None)
    obs_min = getattr(observer, "min_val", None)
    obs_max = getattr(observer, "max_val", None)
    out = {
        "min": flat.min().item(),
        "max": flat.max().item(),
        "count": flat.numel(),
        "range": [lo, hi],
        "counts": [int(c) for c in counts.tolist()],
        "representable": [low.min().item(), high.max().item()],
        "perChannel": per_channel,
        "clippedFraction": clipped,
    }
    if obs_min is not None and obs_max is not None and obs_min.numel() and obs_max.numel():
        observed = [obs_min.min().item(), obs_max.max().item()]
        if all(abs(v) != float("inf") for v in observed):  # an observer that never ran keeps +-inf
            out["observed"] = observed
    return out
