# expect:
"""torchao PT2E QAT with the x86 Inductor quantizer (torch 2.13, torchao 0.18)."""
import torch
from torch import nn
from torch.export import Dim
from torchao.quantization.pt2e import move_exported_model_to_eval, move_exported_model_to_train
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_qat_pt2e
from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (
    X86InductorQuantizer,
    get_default_x86_inductor_quantization_config,
)


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(c)
        self.relu1 = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(c)
        self.relu2 = nn.ReLU(inplace=True)

    def forward(self, x):
        out = self.relu1(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu2(out + x)


def qat(model: nn.Module, loader, steps: int = 100):
    example = torch.randn(2, 3, 32, 32)
    model.train()
    exported = torch.export.export(model, (example,), dynamic_shapes=({0: Dim("batch")},)).module()
    quantizer = X86InductorQuantizer().set_global(get_default_x86_inductor_quantization_config(is_qat=True))
    prepared = prepare_qat_pt2e(exported, quantizer)
    move_exported_model_to_train(prepared)
    opt = torch.optim.SGD(prepared.parameters(), lr=1e-3, momentum=0.9)
    for step, (x, y) in enumerate(loader):
        if step == steps:
            break
        opt.zero_grad()
        nn.functional.cross_entropy(prepared(x), y).backward()
        opt.step()
    move_exported_model_to_eval(prepared)
    int8 = convert_pt2e(prepared)
    torch.export.save(torch.export.export(int8, (example,)), "int8.pt2")
    return int8
