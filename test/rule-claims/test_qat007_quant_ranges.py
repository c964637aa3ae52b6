"""QAT007: quant_min/quant_max outside the dtype, not including 0, or not ordered."""

import pytest
import torch
import torch.ao.quantization as tq


def test_fake_quantize_checks_the_dtype_bounds():
    with pytest.raises(AssertionError, match="quant_max out of bound"):
        tq.FakeQuantize(observer=tq.MovingAverageMinMaxObserver, quant_min=0, quant_max=300, dtype=torch.quint8)
    assert torch.iinfo(torch.uint8).max == 255 and torch.iinfo(torch.int8).min == -128


def test_range_must_include_zero():
    with pytest.raises(AssertionError, match="must include 0"):
        tq.MinMaxObserver(quant_min=1, quant_max=127, dtype=torch.qint8)


def test_range_must_be_ordered():
    with pytest.raises(AssertionError, match="qmin must be strictly less than qmax"):
        tq.MinMaxObserver(quant_min=0, quant_max=0, dtype=torch.qint8)
