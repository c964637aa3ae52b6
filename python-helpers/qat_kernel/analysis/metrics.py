"""FP32-vs-INT8 metrics, defined exactly as torch.ao.ns.fx.utils (compute_sqnr,
compute_cosine_similarity, compute_normalized_l2_error) so numbers agree with PyTorch's Numeric Suite.
`x` is the FP32 signal."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


def _float(t: torch.Tensor) -> torch.Tensor:
    return (t.dequantize() if t.is_quantized else t).float()


def cosine(x: torch.Tensor, y: torch.Tensor) -> float:
    import torch.nn.functional as F

    return F.cosine_similarity(_float(x).reshape(1, -1), _float(y).reshape(1, -1)).item()


def sqnr(x: torch.Tensor, y: torch.Tensor) -> float:
    import torch

    x, y = _float(x), _float(y)
    return (20 * torch.log10(torch.norm(x) / torch.norm(x - y))).item()


def normalized_l2(x: torch.Tensor, y: torch.Tensor) -> float:
    import torch

    x, y = _float(x), _float(y)
    return torch.sqrt(((x - y) ** 2).sum() / (x**2).sum()).item()


def mse(x: torch.Tensor, y: torch.Tensor) -> float:
    return ((_float(x) - _float(y)) ** 2).mean().item()


def max_abs(x: torch.Tensor, y: torch.Tensor) -> float:
    return (_float(x) - _float(y)).abs().max().item()


def all_metrics(x: torch.Tensor, y: torch.Tensor) -> dict[str, float]:
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
    shapes differed (no comparison possible) or nothing was added.

    Each batch is summed in chunks of CHUNK elements: the difference, three dot products and the max run
    on a chunk while it is in cache, so a layer output is read from memory once instead of about ten
    times (the sums were most of compare/layers' cost beyond the forwards at 224x224), and each float32
    dot product covers 128k values only, so the float64 totals keep ~1e-7 relative error where one
    float32 dot over a 12M-value activation drifted by ~1e-4. The cosine comes from |x|^2 + |y|^2 - |x-y|^2
    = 2 x.y: near 1, where layers are told apart, 1 - cosine is then right to ~1e-5 of itself, where a
    float32 x.y put it off by half."""

    CHUNK = 1 << 17

    def __init__(self) -> None:
        self.xx = self.yy = self.dd = 0.0
        self.max_abs = 0.0
        self.n = 0
        self.valid = True

    def add(self, x: torch.Tensor | None, y: torch.Tensor | None) -> None:
        import torch

        if x is None or y is None or x.shape != y.shape:
            self.valid = False
            return
        x, y = _float(x).reshape(-1), _float(y).reshape(-1)
        n = x.numel()
        buffer = torch.empty(min(n, self.CHUNK))
        for start in range(0, n, self.CHUNK):
            xs, ys = x[start : start + self.CHUNK], y[start : start + self.CHUNK]
            d = torch.sub(xs, ys, out=buffer[: xs.numel()])
            self.xx += torch.dot(xs, xs).item()
            self.yy += torch.dot(ys, ys).item()
            self.dd += torch.dot(d, d).item()
            self.max_abs = max(self.max_abs, d.abs_().max().item())
        self.n += n

    def result(self) -> dict[str, float] | None:
        import math

        if not self.valid or self.n == 0:
            return None
        nx, ny, nd = math.sqrt(self.xx), math.sqrt(self.yy), math.sqrt(self.dd)
        return {
            "cosine": min(1.0, max(-1.0, (self.xx + self.yy - self.dd) / (2 * max(nx * ny, 1e-8)))),
            "sqnr": math.inf if nd == 0 else (-math.inf if nx == 0 else 20 * math.log10(nx / nd)),
            "mse": self.dd / self.n,
            "maxAbs": self.max_abs,
            "normalizedL2": nd / nx if nx else math.inf,
        }
