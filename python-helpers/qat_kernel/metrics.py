"""FP32-vs-INT8 metrics, defined exactly as torch.ao.ns.fx.utils (compute_sqnr,
compute_cosine_similarity, compute_normalized_l2_error) so numbers agree with PyTorch's Numeric Suite. `x` is the FP32 signal."""
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
    return torch.sqrt(((x - y) ** 2).sum() / (x ** 2).sum()).item()


def mse(x, y) -> float:
    return ((_float(x) - _float(y)) ** 2).mean().item()


def max_abs(x, y) -> float:
    return (_float(x) - _float(y)).abs().max().item()


def all_metrics(x, y) -> dict:
    return {"cosine": cosine(x, y), "sqnr": sqnr(x, y), "mse": mse(x, y), "maxAbs": max_abs(x, y),
            "normalizedL2": normalized_l2(x, y)}
