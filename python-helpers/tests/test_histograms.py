"""analyze/histograms: weight and activation histograms with the observer's range and what is clipped."""

import pytest


@pytest.fixture(scope="module")
def healthy(kernel, compare_run, validate):
    _, _, config = compare_run
    result = kernel.request("analyze/histograms", {"config": str(config), "bins": 32, "samples": 128})
    validate("HistogramsResult", result)
    return result


def test_every_quantized_layer_has_both_histograms(healthy):
    assert [r["module"] for r in healthy["layers"]] == ["conv1", "conv2", "fc1", "fc2"]
    assert healthy["samples"] == 128
    for row in healthy["layers"]:
        for role in ("weight", "activation"):
            h = row[role]
            assert len(h["counts"]) == 32 and sum(h["counts"]) == h["count"]
            assert h["range"][0] <= h["min"] <= h["max"] <= h["range"][1]
            assert h["range"][0] <= h["representable"][0] < h["representable"][1] <= h["range"][1]
        assert row["weight"]["perChannel"] is True and row["activation"]["perChannel"] is False
    # The first layer's input is the image: 128 samples of 1x8x8.
    assert healthy["layers"][0]["activation"]["count"] == 128 * 64


def test_healthy_layers_clip_little(healthy):
    # A few weights move past the last observed range in the final QAT steps (conv1: 3 of 144 here).
    for row in healthy["layers"]:
        assert row["weight"]["clippedFraction"] < 0.05, (row["module"], row["weight"]["clippedFraction"])
        assert row["activation"]["clippedFraction"] < 0.05, (row["module"], row["activation"]["clippedFraction"])


def test_clipped_fraction_counts_values_beyond_half_a_step():
    """A real fake quantizer whose range is narrower than the data: exactly the values past it count."""
    import torch
    from torch.ao.quantization import FakeQuantize, MinMaxObserver

    from qat_kernel.analysis.histograms import histogram

    fq = FakeQuantize(observer=MinMaxObserver, quant_min=0, quant_max=255, dtype=torch.quint8)
    fq(torch.linspace(0, 2.55, 100))  # observes [0, 2.55]: scale 0.01, zero point 0
    fq.disable_observer()
    values = torch.tensor([-0.5, -0.004, 0.0, 1.0, 2.55, 2.554, 2.6, 3.0])
    h = histogram(values, fq, 8, "activation")
    assert h["representable"] == pytest.approx([0.0, 2.55])
    assert h["clippedFraction"] == pytest.approx(3 / 8)  # -0.5, 2.6, 3.0; -0.004 and 2.554 round inside
    assert h["observed"] == pytest.approx([0.0, 2.55])
    assert sum(h["counts"]) == 8 and h["range"] == pytest.approx([-0.5, 3.0])
