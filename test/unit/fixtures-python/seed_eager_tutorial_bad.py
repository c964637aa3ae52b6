# expect: QAT003 QAT003 QAT004 QAT009 QAT013 QAT008 QAT012 QAT006
"""A QAT script in the style of old tutorials, with the bugs they spread."""
import torch
import torch.quantization
from torch.quantization import FakeQuantize, MovingAverageMinMaxObserver
from model import Net

model = Net()
model.train()
torch.ao.quantization.fuse_modules(model, [["conv1", "bn1", "relu1"]], inplace=True)
model = torch.ao.quantization.prepare_qat(model)
model.qconfig = torch.ao.quantization.get_default_qat_qconfig("fbgemm")
fp16_fake_quant = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=-65504, quant_max=65504, dtype=torch.float16)
train(model)
quantized = torch.ao.quantization.convert(model)
torch.onnx.export(quantized, torch.randn(1, 3, 32, 32), "model.onnx", opset_version=11)
torch.save(quantized, "model_int8.pth")
