"""ResNet-50, MobileNetV2 and MobileNetV3-Large, quantized with PT2E (x86) and exported as QDQ ONNX: real model graphs
for the graph viewer benchmark; ResNet-18 and MobileNetV2 for the build and TVM INT8 benchmarks.

torchvision does not import beside the CPU build of torch 2.13 we pin (its wheel is built against
another torch), so the two networks are written out here with torchvision's layer structure and module
names (layer1.0.conv1, features.4.block.2.fc1, ...). One change: each ReLU use has its own module
(torchvision's Bottleneck and BasicBlock call one nn.ReLU several times, which X86InductorQuantizer rejects
with "Input partition has more than one output node"). Weights are random: the graph, not accuracy, is measured.

Run: python -m benchmarks.vision_models <resnet18|resnet50|mobilenet_v2|mobilenet_v3_large> <out.onnx>"""

from __future__ import annotations

import sys
from pathlib import Path


def _resnet(block, expansion: int, blocks: tuple, num_classes: int):
    """torchvision's ResNet around `block`: the 7x7 stem, four stages of `blocks` blocks (64, 128, 256 and 512
    planes, the first block of a stage downsampling where needed) and the classifier; module names as there."""
    from torch import nn

    class ResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.inplanes = 64
            self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.relu = nn.ReLU()
            self.maxpool = nn.MaxPool2d(3, 2, 1)
            for i, (planes, count) in enumerate(zip((64, 128, 256, 512), blocks)):
                setattr(self, f"layer{i + 1}", self._layer(planes, count, 1 if i == 0 else 2))
            self.avgpool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(512 * expansion, num_classes)

        def _layer(self, planes, count, stride):
            downsample = None
            if stride != 1 or self.inplanes != planes * expansion:
                downsample = nn.Sequential(
                    nn.Conv2d(self.inplanes, planes * expansion, 1, stride, bias=False),
                    nn.BatchNorm2d(planes * expansion),
                )
            layers = [block(self.inplanes, planes, stride, downsample)]
            self.inplanes = planes * expansion
            layers += [block(self.inplanes, planes) for _ in range(1, count)]
            return nn.Sequential(*layers)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(self.avgpool(x).flatten(1))

    return ResNet()


def resnet18(num_classes: int = 1000):
    """torchvision's resnet18 layout (BasicBlock x [2, 2, 2, 2], module names as there)."""
    from torch import nn

    class BasicBlock(nn.Module):
        def __init__(self, inplanes, planes, stride=1, downsample=None):
            super().__init__()
            self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.relu1 = nn.ReLU()
            self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.relu2 = nn.ReLU()
            self.downsample = downsample

        def forward(self, x):
            identity = x if self.downsample is None else self.downsample(x)
            out = self.relu1(self.bn1(self.conv1(x)))
            return self.relu2(self.bn2(self.conv2(out)) + identity)

    return _resnet(BasicBlock, 1, (2, 2, 2, 2), num_classes)


def resnet50(num_classes: int = 1000):
    from torch import nn

    class Bottleneck(nn.Module):
        def __init__(self, inplanes, planes, stride=1, downsample=None):
            super().__init__()
            self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.relu1 = nn.ReLU()
            self.conv2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.relu2 = nn.ReLU()
            self.conv3 = nn.Conv2d(planes, planes * 4, 1, bias=False)
            self.bn3 = nn.BatchNorm2d(planes * 4)
            self.relu3 = nn.ReLU()
            self.downsample = downsample

        def forward(self, x):
            identity = x if self.downsample is None else self.downsample(x)
            out = self.relu1(self.bn1(self.conv1(x)))
            out = self.relu2(self.bn2(self.conv2(out)))
            return self.relu3(self.bn3(self.conv3(out)) + identity)

    return _resnet(Bottleneck, 4, (3, 4, 6, 3), num_classes)


def mobilenet_v3_large():
    from torch import nn

    def divisible(v, d=8):
        new = max(d, int(v + d / 2) // d * d)
        return new + d if new < 0.9 * v else new

    class ConvBNAct(nn.Sequential):
        def __init__(self, cin, cout, k, stride=1, groups=1, act=None):
            layers = [nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
            if act is not None:
                layers.append(act())
            super().__init__(*layers)

    class SqueezeExcitation(nn.Module):
        def __init__(self, channels, squeeze):
            super().__init__()
            self.avgpool = nn.AdaptiveAvgPool2d(1)
            self.fc1 = nn.Conv2d(channels, squeeze, 1)
            self.fc2 = nn.Conv2d(squeeze, channels, 1)
            self.activation = nn.ReLU()
            self.scale_activation = nn.Hardsigmoid()

        def forward(self, x):
            s = self.scale_activation(self.fc2(self.activation(self.fc1(self.avgpool(x)))))
            return s * x

    class InvertedResidual(nn.Module):
        def __init__(self, cin, k, expanded, cout, se, act, stride):
            super().__init__()
            self.use_res = stride == 1 and cin == cout
            layers = []
            if expanded != cin:
                layers.append(ConvBNAct(cin, expanded, 1, act=act))
            layers.append(ConvBNAct(expanded, expanded, k, stride, groups=expanded, act=act))
            if se:
                layers.append(SqueezeExcitation(expanded, divisible(expanded // 4)))
            layers.append(ConvBNAct(expanded, cout, 1))
            self.block = nn.Sequential(*layers)

        def forward(self, x):
            y = self.block(x)
            return y + x if self.use_res else y

    relu, hswish = nn.ReLU, nn.Hardswish
    # (in, kernel, expanded, out, SE, activation, stride): torchvision's mobilenet_v3_large settings
    settings = [
        (16, 3, 16, 16, False, relu, 1),
        (16, 3, 64, 24, False, relu, 2),
        (24, 3, 72, 24, False, relu, 1),
        (24, 5, 72, 40, True, relu, 2),
        (40, 5, 120, 40, True, relu, 1),
        (40, 5, 120, 40, True, relu, 1),
        (40, 3, 240, 80, False, hswish, 2),
        (80, 3, 200, 80, False, hswish, 1),
        (80, 3, 184, 80, False, hswish, 1),
        (80, 3, 184, 80, False, hswish, 1),
        (80, 3, 480, 112, True, hswish, 1),
        (112, 3, 672, 112, True, hswish, 1),
        (112, 5, 672, 160, True, hswish, 2),
        (160, 5, 960, 160, True, hswish, 1),
        (160, 5, 960, 160, True, hswish, 1),
    ]

    class MobileNetV3(nn.Module):
        def __init__(self, num_classes=1000):
            super().__init__()
            layers = [ConvBNAct(3, 16, 3, 2, act=hswish)]
            layers += [InvertedResidual(*s) for s in settings]
            layers.append(ConvBNAct(160, 960, 1, act=hswish))
            self.features = nn.Sequential(*layers)
            self.avgpool = nn.AdaptiveAvgPool2d(1)
            self.classifier = nn.Sequential(
                nn.Linear(960, 1280), nn.Hardswish(), nn.Dropout(0.2), nn.Linear(1280, num_classes)
            )

        def forward(self, x):
            return self.classifier(self.avgpool(self.features(x)).flatten(1))

    return MobileNetV3()


def mobilenet_v2(num_classes: int = 1000):
    """torchvision's MobileNetV2 (width 1.0): 3x3 stem, 17 inverted residuals (1x1 expand, 3x3 depthwise,
    1x1 project; ReLU6), the 1x1 to 1280 channels and the classifier; module names as there."""
    from torch import nn

    class ConvBNReLU(nn.Sequential):
        def __init__(self, cin, cout, k, stride=1, groups=1, act=True):
            layers = [nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
            if act:
                layers.append(nn.ReLU6())
            super().__init__(*layers)

    class InvertedResidual(nn.Module):
        def __init__(self, cin, cout, stride, expand):
            super().__init__()
            hidden = cin * expand
            self.use_res = stride == 1 and cin == cout
            layers = [ConvBNReLU(cin, hidden, 1)] if expand != 1 else []
            layers += [ConvBNReLU(hidden, hidden, 3, stride, groups=hidden), ConvBNReLU(hidden, cout, 1, act=False)]
            self.conv = nn.Sequential(*layers)

        def forward(self, x):
            y = self.conv(x)
            return y + x if self.use_res else y

    # (expand, out channels, repeats, first stride): torchvision's inverted_residual_setting
    settings = [
        (1, 16, 1, 1),
        (6, 24, 2, 2),
        (6, 32, 3, 2),
        (6, 64, 4, 2),
        (6, 96, 3, 1),
        (6, 160, 3, 2),
        (6, 320, 1, 1),
    ]

    class MobileNetV2(nn.Module):
        def __init__(self):
            super().__init__()
            layers, cin = [ConvBNReLU(3, 32, 3, 2)], 32
            for t, c, n, s in settings:
                for i in range(n):
                    layers.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
                    cin = c
            layers.append(ConvBNReLU(cin, 1280, 1))
            self.features = nn.Sequential(*layers)
            self.avgpool = nn.AdaptiveAvgPool2d(1)
            self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(1280, num_classes))

        def forward(self, x):
            return self.classifier(self.avgpool(self.features(x)).flatten(1))

    return MobileNetV2()


MODELS = {
    "resnet18": resnet18,
    "resnet50": resnet50,
    "mobilenet_v2": mobilenet_v2,
    "mobilenet_v3_large": mobilenet_v3_large,
}


def export(name: str, out: str) -> dict:
    """PT2E: export, prepare with X86InductorQuantizer, calibrate on two random batches, convert, and
    write the QDQ ONNX (the same export the kernel's export/onnx uses)."""
    import torch
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (
        X86InductorQuantizer,
        get_default_x86_inductor_quantization_config,
    )

    from qat_kernel.runtimes.onnx import qdq_export

    torch.manual_seed(0)
    model = MODELS[name]().eval()
    example = torch.randn(2, 3, 224, 224)
    graph = torch.export.export(model, (example,)).module()
    prepared = prepare_pt2e(graph, X86InductorQuantizer().set_global(get_default_x86_inductor_quantization_config()))
    with torch.no_grad():
        for _ in range(2):
            prepared(torch.randn(2, 3, 224, 224))
    converted = convert_pt2e(prepared)
    qdq_export.export_qdq(converted, example, Path(out), 18, None)
    return {"model": name, "path": out}


if __name__ == "__main__":
    print(export(sys.argv[1], sys.argv[2]))
