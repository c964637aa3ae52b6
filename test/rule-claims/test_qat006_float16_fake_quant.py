"""QAT006: FakeQuantize and the integer observers refuse dtype=torch.float16, and a +-65504 range is out of
bound; fp16 is PlaceholderObserver(dtype=torch.float16), as torch's float16_static_qconfig uses."""

import pytest
import torch
import torch.ao.quantization as tq


@pytest.mark.parametrize("cls", [tq.FakeQuantize, tq.MinMaxObserver, tq.MovingAverageMinMaxObserver])
def test_float16_dtype_is_refused(cls):
    with pytest.raises(AssertionError, match="Default Observer only works for"):
        cls(dtype=torch.float16)


def test_float16_range_is_out_of_bound():
    with pytest.raises(AssertionError, match="quant_min out of bound"):
        tq.FakeQuantize(quant_min=-65504, quant_max=65504)


def test_placeholder_observer_is_the_float16_way():
    assert isinstance(tq.float16_static_qconfig.activation(), tq.PlaceholderObserver)
    assert tq.PlaceholderObserver.with_args(dtype=torch.float16)().dtype == torch.float16
