"""FP32-vs-INT8 metrics, defined exactly as torch.ao.ns.fx.utils (compute_sqnr,
compute_cosine_similarity, compute_normalized_l2_error) so numbers agree with PyTorch's Numeric Suite.
`x` is the FP32 signal."""

from __future__ import annotations


def _float(t):
    return (t.dequantize() if t.is_quantized else t).float()


def cosine(x, y) -> float:
    import torch.nn.functional as F

    return F.cosine_similarity(_float(x).reshape(1, -1), _float(y).reshape(1, -1)).item()


def sqnr(x, y) -> float:
    import torch

    x, y = _float(x), _float(y)
    return (20 * torch.log10(torch.norm(x) / torch.norm(x - y))).item()


def normalized_l2(x, y) -> float:
    import torch

    x, y = _float(x), _float(y)
    return torch.sqrt(((x - y) ** 2).sum() / (x**2).sum()).item()


def mse(x, y) -> float:
    return ((_float(x) - _float(y)) ** 2).mean().item()


def max_abs(x, y) -> float:
    return (_float(x) - _float(y)).abs().max().item()


def all_metrics(x, y) -> dict:
    """The five metrics above from one difference tensor (the same formulas; compare/layers calls this
    for every layer, where computing x - y five times was most of its cost beyond the forwards)."""
    import torch

    x, y = _float(x), _float(y)
    d = x - y
    nx, nd = torch.norm(x), torch.norm(d)  # as compute_sqnr computes them
    # F.cosine_similarity's formula (eps 1e-8 on the norm product) from the dot product: 4x faster here.
    cos = (torch.dot(x.reshape(-1), y.reshape(-1)) / torch.clamp_min(nx * torch.norm(y), 1e-8)).item()
    n = max(d.numel(), 1)
    return {
        "cosine": cos,
        "sqnr": (20 * torch.log10(nx / nd)).item(),
        "mse": nd.item() ** 2 / n,
        "maxAbs": d.abs().max().item() if d.numel() else 0.0,
        "normalizedL2": (nd / nx).item(),
    }


class Accumulator:
    """all_metrics of the concatenated batches, from per-batch sums (float64 in Python), so no batch
    has to be kept: what compare/layers uses over N samples. `result()` is None when any batch's
    shapes differed (no comparison possible) or nothing was added."""

    def __init__(self):
        self.xy = self.xx = self.yy = self.dd = 0.0
        self.max_abs = 0.0
        self.n = 0
        self.valid = True

    def add(self, x, y) -> None:
        import torch

        if x is None or y is None or x.shape != y.shape:
            self.valid = False
            return
        x, y = _float(x).reshape(-1), _float(y).reshape(-1)
        d = x - y
        self.xy += torch.dot(x, y).item()
        self.xx += torch.dot(x, x).item()
        self.yy += torch.dot(y, y).item()
        self.dd += torch.dot(d, d).item()
        if d.numel():
            self.max_abs = max(self.max_abs, d.abs().max().item())
        self.n += d.numel()

    def result(self) -> dict | None:
        import math

        if not self.valid or self.n == 0:
            return None
        nx, ny, nd = math.sqrt(self.xx), math.sqrt(self.yy), math.sqrt(self.dd)
        return {
            "cosine": self.xy / max(nx * ny, 1e-8),
            "sqnr": math.inf if nd == 0 else (-math.inf if nx == 0 else 20 * math.log10(nx / nd)),
            "mse": self.dd / self.n,
            "maxAbs": self.max_abs,
            "normalizedL2": nd / nx if nx else math.inf,
        }
