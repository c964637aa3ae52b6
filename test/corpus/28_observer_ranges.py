# expect: QAT007@8 QAT007@9
"""Hand-written observer ranges: a 7-bit activation range that fits quint8, and two that do not fit their
dtype or do not include zero."""
import torch
import torch.ao.quantization as tq

act7 = tq.FakeQuantize.with_args(observer=tq.MovingAverageMinMaxObserver, quant_min=0, quant_max=127, dtype=torch.quint8)
act_bad = tq.FakeQuantize.with_args(observer=tq.MovingAverageMinMaxObserver, quant_min=0, quant_max=511, dtype=torch.quint8)
w_bad = tq.MinMaxObserver.with_args(quant_min=1, quant_max=127, dtype=torch.qint8)
qconfig = tq.QConfig(activation=act7, weight=tq.default_per_channel_weight_fake_quant)
