# expect: QAT006@31
"""Custom observers and fake quantizers: a reduced-range per-channel weight, a symmetric 4-bit activation
stored in qint8, an fp16 placeholder for one layer, and one float16 "fake quantize" that torch refuses."""
import torch
from torch.ao.quantization import (
    FakeQuantize,
    MovingAverageMinMaxObserver,
    MovingAveragePerChannelMinMaxObserver,
    PlaceholderObserver,
    QConfig,
)

weight_fq = FakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver,
    quant_min=-64,
    quant_max=63,
    dtype=torch.qint8,
    qscheme=torch.per_channel_symmetric,
    ch_axis=0,
)
act_4bit = FakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver,
    quant_min=-8,
    quant_max=7,
    dtype=torch.qint8,
    qscheme=torch.per_tensor_symmetric,
)
fp16 = PlaceholderObserver.with_args(dtype=torch.float16)
qconfig_4bit = QConfig(activation=act_4bit, weight=weight_fq)
qconfig_fp16 = QConfig(activation=fp16, weight=fp16)
broken_fp16 = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, dtype=torch.float16)
