# expect: QAT010@46
"""torchvision's float BasicBlock copied into a project that quantizes it with PT2E: self.relu after bn1 and
again after the residual add. Under non-strict export X86InductorQuantizer rejects this."""
import torch
import torch.nn as nn
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (
    X86InductorQuantizer,
    get_default_x86_inductor_quantization_config,
)


def conv3x3(in_planes, out_planes, stride=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=1, bias=False)


def conv1x1(in_planes, out_planes, stride=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x

        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)

        out = self.conv2(out)
        out = self.bn2(out)

        if self.downsample is not None:
            identity = self.downsample(x)

        out += identity
        out = self.relu(out)

        return out


class TinyResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.relu = nn.ReLU(inplace=True)
        down = nn.Sequential(conv1x1(16, 32, 2), nn.BatchNorm2d(32))
        self.layer1 = nn.Sequential(BasicBlock(16, 16), BasicBlock(16, 32, 2, down))
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer1(x)
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


def ptq(model, loader):
    example = (torch.randn(2, 3, 32, 32),)
    m = torch.export.export(model.eval(), example).module()
    m = prepare_pt2e(m, X86InductorQuantizer().set_global(get_default_x86_inductor_quantization_config()))
    for x, _ in loader:
        m(x)
    return convert_pt2e(m)
