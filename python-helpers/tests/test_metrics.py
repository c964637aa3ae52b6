"""Our metrics must equal torch.ao.ns.fx.utils (PyTorch's Numeric Suite) on the same tensors."""

import pytest
import torch
import torch.nn.functional as F
from torch.ao.ns.fx.utils import compute_cosine_similarity, compute_normalized_l2_error, compute_sqnr

from qat_kernel.analysis import metrics


def _pairs():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(32, 16, 8, 8, generator=gen)
    yield x, x + 0.05 * torch.randn(x.shape, generator=gen)
    relu = torch.relu(x)  # post-ReLU values, as at a conv-bn-relu group output
    scale = relu.max() / 255
    yield relu, torch.round(relu / scale).clamp(0, 255) * scale
    logits = torch.randn(64, 10, generator=gen)
    yield logits, logits * 0.9 + 0.1


@pytest.mark.parametrize("x,y", list(_pairs()))
def test_metrics_match_numeric_suite(x, y):
    assert metrics.cosine(x, y) == pytest.approx(compute_cosine_similarity(x, y).item(), abs=1e-6)
    assert metrics.sqnr(x, y) == pytest.approx(compute_sqnr(x, y).item(), abs=1e-6)
    assert metrics.mse(x, y) == pytest.approx(F.mse_loss(y, x).item(), abs=1e-6)
    assert metrics.max_abs(x, y) == pytest.approx((x - y).abs().max().item(), abs=1e-6)
    assert metrics.normalized_l2(x, y) == pytest.approx(compute_normalized_l2_error(x, y).item(), abs=1e-6)
    # all_metrics (what compare/layers reports) shares one difference tensor; same values to 1e-6.
    both = metrics.all_metrics(x, y)
    assert both["cosine"] == pytest.approx(compute_cosine_similarity(x, y).item(), abs=1e-6)
    assert both["sqnr"] == pytest.approx(compute_sqnr(x, y).item(), abs=1e-6)
    assert both["mse"] == pytest.approx(F.mse_loss(y, x).item(), abs=1e-6)
    assert both["maxAbs"] == pytest.approx((x - y).abs().max().item(), abs=1e-6)
    assert both["normalizedL2"] == pytest.approx(compute_normalized_l2_error(x, y).item(), abs=1e-6)


def test_quantized_tensors_are_dequantized_first():
    """Eager INT8 modules return quantized tensors; the Numeric Suite dequantizes them too."""
    gen = torch.Generator().manual_seed(1)
    x = torch.relu(torch.randn(8, 4, 5, 5, generator=gen))
    q = torch.quantize_per_tensor(x, x.max().item() / 255, 0, torch.quint8)
    ours = metrics.all_metrics(x, q)
    assert ours["sqnr"] == pytest.approx(compute_sqnr(x, q).item(), abs=1e-6)
    assert ours["cosine"] == pytest.approx(compute_cosine_similarity(x, q).item(), abs=1e-6)
    assert ours["normalizedL2"] == pytest.approx(compute_normalized_l2_error(x, q).item(), abs=1e-6)


@pytest.mark.parametrize("x,y", list(_pairs()))
def test_batched_accumulation_equals_the_concatenation(x, y):
    acc = metrics.Accumulator()
    for xs, ys in zip(x.split(5), y.split(5)):
        acc.add(xs, ys)
    got = acc.result()
    assert got["cosine"] == pytest.approx(compute_cosine_similarity(x, y).item(), abs=1e-6)
    assert got["sqnr"] == pytest.approx(compute_sqnr(x, y).item(), abs=1e-6)
    assert got["mse"] == pytest.approx(F.mse_loss(y, x).item(), abs=1e-6)
    assert got["maxAbs"] == (x - y).abs().max().item()
    assert got["normalizedL2"] == pytest.approx(compute_normalized_l2_error(x, y).item(), abs=1e-6)
    acc.add(x[:1], y[:1, :1])
    assert acc.result() is None, "a batch whose shapes differ makes the layer incomparable"


def test_accumulated_sums_stay_exact_on_a_large_activation():
    """A 12M-value layer output (ResNet-18's first conv at 224x224, batch 16): the chunked float32 sums
    agree with float64 to 1e-6, where a single float32 dot product over all of it is off by ~1e-4, and
    1 - cosine (1e-4 here) to 1e-4 of itself, where x.y in float32 put it off by half."""
    gen = torch.Generator().manual_seed(2)
    x = torch.relu(torch.randn(16, 64, 112, 112, generator=gen))
    y = x + 0.01 * torch.randn(x.shape, generator=gen)
    acc = metrics.Accumulator()
    acc.add(x, y)
    got = acc.result()
    x64, y64 = x.double().reshape(-1), y.double().reshape(-1)
    d = x64 - y64
    assert got["mse"] == pytest.approx((d @ d).item() / d.numel(), rel=1e-6)
    cosine = (x64 @ y64 / (x64.norm() * y64.norm())).item()
    assert 1 - got["cosine"] == pytest.approx(1 - cosine, rel=1e-4)
    assert got["sqnr"] == pytest.approx((20 * torch.log10(x64.norm() / d.norm())).item(), rel=1e-6)
    assert got["maxAbs"] == (x - y).abs().max().item()
