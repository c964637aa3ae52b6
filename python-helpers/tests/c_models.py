"""Small ResNet-18 (CIFAR layout) and MobileNetV2 (reduced width) for the C runner parity tests, with
torchvision's block structure written out (torchvision does not import beside the pinned torch build; see
benchmarks/vision_models). 32x32x3 inputs; weights random, BN statistics from real digits (parity, not
accuracy, is measured). Each ReLU use has its own module (X86InductorQuantizer refuses a shared one)."""

from __future__ import annotations

import torch
from torch import nn


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu1 = nn.ReLU()
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.relu2 = nn.ReLU()
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        idt = x if self.downsample is None else self.downsample(x)
        return self.relu2(self.bn2(self.conv2(self.relu1(self.bn1(self.conv1(x))))) + idt)


class ResNet18(nn.Module):
    def __init__(self, width=16, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU()
        cin = width
        for i in range(4):
            cout = width * 2**i
            setattr(
                self,
                f"layer{i + 1}",
                nn.Sequential(BasicBlock(cin, cout, 1 if i == 0 else 2), BasicBlock(cout, cout, 1)),
            )
            cin = cout
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cin, num_classes)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def cbr(cin, cout, k, s, g=1):
    return nn.Sequential(nn.Conv2d(cin, cout, k, s, k // 2, groups=g, bias=False), nn.BatchNorm2d(cout), nn.ReLU6())


class InvRes(nn.Module):
    def __init__(self, cin, cout, s, t):
        super().__init__()
        hid = cin * t
        layers = [] if t == 1 else [cbr(cin, hid, 1, 1)]
        layers += [cbr(hid, hid, 3, s, hid), nn.Conv2d(hid, cout, 1, bias=False), nn.BatchNorm2d(cout)]
        self.conv = nn.Sequential(*layers)
        self.use_res = s == 1 and cin == cout

    def forward(self, x):
        return x + self.conv(x) if self.use_res else self.conv(x)


class MobileNetV2(nn.Module):
    def __init__(self, width=0.25, num_classes=10):
        super().__init__()

        def ch(c):
            return max(8, int(c * width + 4) // 8 * 8)

        cfg = [
            (1, 16, 1, 1),
            (6, 24, 2, 1),
            (6, 32, 3, 2),
            (6, 64, 4, 2),
            (6, 96, 3, 1),
            (6, 160, 3, 2),
            (6, 320, 1, 1),
        ]
        cin = ch(32)
        feats = [cbr(3, cin, 3, 1)]
        for t, c, n, s in cfg:
            for i in range(n):
                feats.append(InvRes(cin, ch(c), s if i == 0 else 1, t))
                cin = ch(c)
        feats.append(cbr(cin, 128, 1, 1))
        self.features = nn.Sequential(*feats)
        self.classifier = nn.Linear(128, num_classes)

    def forward(self, x):
        x = self.features(x)
        return self.classifier(x.mean((2, 3)))


def digits_32(count: int | None = None) -> torch.Tensor:
    """scikit-learn's digits (real 8x8 images) resized to 32x32 and repeated to three channels, in [0, 1]."""
    from sklearn.datasets import load_digits

    x = torch.tensor(load_digits().images[:count] / 16.0, dtype=torch.float32)[:, None]
    return nn.functional.interpolate(x, size=32, mode="bilinear", align_corners=False).repeat(1, 3, 1, 1)


def with_bn_statistics(model: nn.Module, x: torch.Tensor, batches: int = 4) -> nn.Module:
    """BatchNorm running statistics from a few batches of `x` (train-mode forwards), then eval."""
    model.train()
    with torch.no_grad():
        for i in range(batches):
            model(x[i * 64 : (i + 1) * 64])
    return model.eval()
