"""ResNet-18 in its CIFAR layout (3x3 stem, no max pool, four stages of two basic blocks, global average
pool) and a reduced-width MobileNetV2 (inverted residuals with depthwise 3x3 convs and ReLU6), both for
3x32x32 inputs.

make_resnet18 / make_mobilenetv2 return the FP32 model trained on data.py's images: trained once by
pretrain(), which caches the weights under out/, then loaded from there (torch.load(weights_only=True)),
so QAT runs start from a trained FP32 model instead of pre-training every time."""

from pathlib import Path

import torch
from torch import nn

OUT = Path(__file__).resolve().parent / "out"


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu1 = nn.ReLU()
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
        self.relu2 = nn.ReLU()

    def forward(self, x):
        out = self.relu1(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu2(out + self.shortcut(x))


class ResNet18(nn.Module):
    """CIFAR ResNet-18; `width` is the first stage's channels (64 in the paper)."""

    def __init__(self, num_classes: int = 10, width: int = 64):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU()
        stages, cin = [], width
        for i, stride in enumerate((1, 2, 2, 2)):
            cout = width * 2**i
            stages.append(nn.Sequential(BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)))
            cin = cout
        self.layer1, self.layer2, self.layer3, self.layer4 = stages
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cin, num_classes)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.pool(x), 1))


class InvertedResidual(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int, expand: int):
        super().__init__()
        hidden = cin * expand
        self.use_res = stride == 1 and cin == cout
        layers = []
        if expand != 1:
            layers += [nn.Conv2d(cin, hidden, 1, bias=False), nn.BatchNorm2d(hidden), nn.ReLU6()]
        layers += [
            nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False),  # depthwise
            nn.BatchNorm2d(hidden),
            nn.ReLU6(),
            nn.Conv2d(hidden, cout, 1, bias=False),  # pointwise projection, linear
            nn.BatchNorm2d(cout),
        ]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        return x + self.conv(x) if self.use_res else self.conv(x)


class MobileNetV2(nn.Module):
    """MobileNetV2 for 32x32 inputs at `width_mult` of the paper's channels (stride 2 stem: 16x16 after it)."""

    # (expansion t, channels c, repeats n, first stride s): the paper's table.
    SETTINGS = (
        (1, 16, 1, 1),
        (6, 24, 2, 2),
        (6, 32, 3, 2),
        (6, 64, 4, 2),
        (6, 96, 3, 1),
        (6, 160, 3, 2),
        (6, 320, 1, 1),
    )

    def __init__(self, num_classes: int = 10, width_mult: float = 0.35, last: int = 256):
        super().__init__()

        def ch(c):
            return max(8, int(c * width_mult + 4) // 8 * 8)

        cin = ch(32)
        features = [nn.Sequential(nn.Conv2d(3, cin, 3, 2, 1, bias=False), nn.BatchNorm2d(cin), nn.ReLU6())]
        for t, c, n, s in self.SETTINGS:
            for i in range(n):
                features.append(InvertedResidual(cin, ch(c), s if i == 0 else 1, t))
                cin = ch(c)
        features.append(nn.Sequential(nn.Conv2d(cin, last, 1, bias=False), nn.BatchNorm2d(last), nn.ReLU6()))
        self.features = nn.Sequential(*features)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(last, num_classes)

    def forward(self, x):
        return self.classifier(torch.flatten(self.pool(self.features(x)), 1))


BUILDERS = {"resnet18": lambda: ResNet18(width=16), "mobilenetv2": lambda: MobileNetV2()}
FP32_EPOCHS = {"resnet18": 4, "mobilenetv2": 6}


def checkpoint(name: str) -> Path:
    return OUT / f"{name}.fp32.pt"


def pretrain(name: str, epochs: int | None = None) -> nn.Module:
    """Train the FP32 model on data.py's training images and cache its weights in out/<name>.fp32.pt."""
    from data import loaders

    torch.manual_seed(0)
    model = BUILDERS[name]()
    train, _ = loaders()
    epochs = FP32_EPOCHS[name] if epochs is None else epochs
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=4e-3, total_steps=epochs * len(train))
    model.train()
    for _ in range(epochs):
        for x, y in train:
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
            sched.step()
    OUT.mkdir(exist_ok=True)
    tmp = checkpoint(name).with_suffix(".tmp")
    torch.save(model.state_dict(), tmp)
    tmp.replace(checkpoint(name))
    return model.eval()


def _trained(name: str) -> nn.Module:
    path = checkpoint(name)
    if not path.exists():
        return pretrain(name)
    torch.manual_seed(0)
    model = BUILDERS[name]()
    model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
    return model


def make_resnet18() -> nn.Module:
    return _trained("resnet18")


def make_mobilenetv2() -> nn.Module:
    return _trained("mobilenetv2")


if __name__ == "__main__":
    import sys

    for name in sys.argv[1:] or list(BUILDERS):
        pretrain(name)
        print("wrote", checkpoint(name))
