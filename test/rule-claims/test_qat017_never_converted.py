"""QAT017: a QAT prepare that is never converted leaves FakeQuantizedLinear modules with float weights; the
convert step makes the quantized model."""

import torch
from torch import nn
from torchao.quantization import Int8DynamicActivationIntxWeightConfig, quantize_
from torchao.quantization.granularity import PerGroup
from torchao.quantization.qat import FakeQuantizedLinear, QATConfig


def test_prepared_model_stays_fake_quantized_until_convert():
    base = Int8DynamicActivationIntxWeightConfig(weight_dtype=torch.int4, weight_granularity=PerGroup(32))
    model = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 8))
    quantize_(model, QATConfig(base, step="prepare"))
    assert all(isinstance(model[i], FakeQuantizedLinear) for i in (0, 2))
    assert type(model[0].weight) is nn.Parameter and model[0].weight.dtype == torch.float32
    fake_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    assert fake_bytes == (64 * 32 + 32 + 32 * 8 + 8) * 4  # still every weight in float32

    quantize_(model, QATConfig(base, step="convert"))
    assert not any(isinstance(m, FakeQuantizedLinear) for m in model.modules())
    assert type(model[0]) is nn.Linear
    assert type(model[0].weight).__name__ == "IntxUnpackedToInt8Tensor"
    assert model[0].weight.qdata.dtype == torch.int8
