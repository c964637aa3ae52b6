"""Small modules, one per op family of the portable C runner, for test_c_runner_ops.py. 3 x 32 x 32
inputs (digits resized, as c_models.digits_32), a few channels, random weights. Each ReLU use has its
own module (X86InductorQuantizer refuses a shared one)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class Activations(nn.Module):
    """Elementwise functions PyTorch keeps in float after a conv (the runner applies them to the conv's
    float output before quantizing), and a squeeze-excitation gate: mean -> conv -> relu -> conv ->
    hardsigmoid, multiplied into the feature map with broadcasting (MobileNetV3, EfficientNet)."""

    def __init__(self):
        super().__init__()
        self.c1, self.bn1, self.a1 = nn.Conv2d(3, 8, 3, 2, 1, bias=False), nn.BatchNorm2d(8), nn.Hardswish()
        self.se_reduce, self.se_act, self.se_expand = nn.Conv2d(8, 4, 1), nn.ReLU(), nn.Conv2d(4, 8, 1)
        self.gate = nn.Hardsigmoid()
        self.c2, self.a2 = nn.Conv2d(8, 8, 3, 1, 1, groups=8), nn.SiLU()
        self.c3, self.a3 = nn.Conv2d(8, 8, 1), nn.GELU()
        self.c4, self.a4 = nn.Conv2d(8, 8, 1), nn.GELU(approximate="tanh")
        self.c5, self.a5 = nn.Conv2d(8, 8, 1), nn.Sigmoid()
        self.c6, self.a6 = nn.Conv2d(8, 8, 1), nn.Tanh()
        self.c7, self.a7 = nn.Conv2d(8, 8, 1), nn.LeakyReLU(0.1)
        self.c8, self.a8 = nn.Conv2d(8, 8, 1), nn.Mish()
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        x = self.a1(self.bn1(self.c1(x)))
        x = x * self.gate(self.se_expand(self.se_act(self.se_reduce(x.mean((2, 3), keepdim=True)))))
        x = self.a3(self.c3(self.a2(self.c2(x))))
        x = self.a5(self.c5(self.a4(self.c4(x))))
        x = self.a8(self.c8(self.a7(self.c7(self.a6(self.c6(x)))))) * 0.5 + 0.25
        return self.fc(x.mean((2, 3)))


class Tables(nn.Module):
    """dequantize -> elementwise op(s) -> quantize islands on a max pool's quantized output (the quantizer
    keeps max_pool int8 in, int8 out): each is a 256-entry lookup table. The network input is read in
    float by a sigmoid before any conv: the runner takes it float and quantizes the sigmoid's output."""

    def __init__(self):
        super().__init__()
        self.stem, self.relu, self.pool = nn.Conv2d(3, 4, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2)
        self.gate = nn.Conv2d(3, 4, 3, 2, 1)
        self.convs = nn.ModuleList(nn.Conv2d(4, 4, 3, 1, 1) for _ in range(6))
        self.fc = nn.Linear(28 * 16 * 16, 10)

    def forward(self, x):
        g = self.gate(torch.sigmoid(x))
        p = self.pool(self.relu(self.stem(x)))
        islands = [
            torch.sigmoid(p),
            F.silu(p),
            F.gelu(p - 1.0),
            F.hardswish(p * 4.0 - 2.0),
            torch.tanh(p - 0.5),
            F.hardsigmoid(p * 6.0 - 3.0),
        ]
        return self.fc(torch.flatten(torch.cat([g] + [c(v) for c, v in zip(self.convs, islands)], 1), 1))


class Binary(nn.Module):
    """Two-tensor ops: a mul of two quantized same-shape tensors (X86InductorQuantizer quantizes its
    inputs), an add, sub and div of float branches, a broadcast multiply by a pooled tensor and an add of
    a constant parameter."""

    def __init__(self):
        super().__init__()
        self.a, self.ra = nn.Conv2d(3, 8, 3, 1, 1), nn.ReLU()
        self.b, self.rb = nn.Conv2d(3, 8, 3, 1, 1), nn.ReLU()
        self.c = nn.Conv2d(8, 8, 1)
        self.bias = nn.Parameter(torch.linspace(-0.5, 0.5, 8).reshape(8, 1, 1))
        self.fc = nn.Linear(8 * 4, 10)

    def forward(self, x):
        a, b = self.ra(self.a(x)), self.rb(self.b(x))
        m = self.c(a * b)
        y = (a + b) - m / (b + 1.0)
        y = y * a.mean((2, 3), keepdim=True) + self.bias
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(y, 2), 1))


class Movement(nn.Module):
    """Data movement: ShuffleNet's channel split and shuffle (chunk, cat, view/transpose/reshape),
    GhostNet's cat then slice, a permute round trip, a strided slice, select, stack, expand, dropout."""

    def __init__(self):
        super().__init__()
        self.stem, self.r0 = nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU()
        self.branch, self.r1 = nn.Conv2d(4, 4, 3, 1, 1), nn.ReLU()
        self.primary, self.r2 = nn.Conv2d(8, 6, 1), nn.ReLU()
        self.cheap, self.r3 = nn.Conv2d(6, 6, 3, 1, 1, groups=6), nn.ReLU()
        self.mix = nn.Conv2d(8, 8, 1)
        self.drop = nn.Dropout(0.2)
        self.fc = nn.Linear(8 * 8 * 8 + 16 + 16, 10)

    def forward(self, x):
        x = self.r0(self.stem(x))
        left, right = x.chunk(2, dim=1)
        x = torch.cat([left, self.r1(self.branch(right))], 1)
        n, c, h, w = x.shape
        x = x.view(n, 2, c // 2, h, w).transpose(1, 2).reshape(n, c, h, w)
        g = self.r2(self.primary(x))
        x = torch.cat([g, self.r3(self.cheap(g))], 1)[:, :8]
        x = self.mix(x.permute(0, 2, 3, 1).permute(0, 3, 1, 2))
        pair = torch.stack([x[:, 0], x[:, 1]], 1)[:, :, ::2, 0]
        row = x[:, 2:3, 0].expand(-1, 2, -1)[:, 1]
        return self.fc(torch.cat([torch.flatten(self.drop(x[:, :, ::2, ::2]), 1), pair.flatten(1), row], 1))


class Norms(nn.Module):
    """Normalisations: DenseNet's pre-activation (cat -> BatchNorm -> ReLU -> conv: a BatchNorm no conv
    absorbs), ConvNeXt's block (7x7 depthwise conv, permute, LayerNorm, linear, GELU, linear, layer
    scale, permute, residual add) and a LayerNorm of a quantized tensor (a max pool's output: integer
    statistics)."""

    def __init__(self):
        super().__init__()
        self.c0, self.r0, self.pool = nn.Conv2d(3, 3, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2)
        self.ln_in = nn.LayerNorm(16)
        self.stem = nn.Conv2d(3, 8, 2, 2)
        self.grow, self.rg = nn.Conv2d(8, 8, 3, 1, 1), nn.ReLU()
        self.norm, self.act = nn.BatchNorm2d(16), nn.ReLU()
        self.squeeze = nn.Conv2d(16, 16, 1)
        self.dw = nn.Conv2d(16, 16, 7, 1, 3, groups=16)
        self.ln = nn.LayerNorm(16)
        self.fc1, self.gelu, self.fc2 = nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 16)
        self.gamma = nn.Parameter(torch.full((16,), 0.5))
        self.head = nn.Linear(16, 10)

    def forward(self, x):
        x = self.stem(self.ln_in(self.pool(self.r0(self.c0(x)))))
        x = torch.cat([x, self.rg(self.grow(x))], 1)
        x = self.squeeze(self.act(self.norm(x)))
        y = self.dw(x).permute(0, 2, 3, 1)
        y = self.fc2(self.gelu(self.fc1(self.ln(y)))) * self.gamma
        x = x + y.permute(0, 3, 1, 2)
        return self.head(x.mean((2, 3)))


class Attention(nn.Module):
    """A transformer block ([B, T, D] and [B, heads, T, T] tensors): patch conv, LayerNorm, qkv linear,
    reshape/permute/unbind, q @ k^T x scale, softmax, @ v, projection, residual adds, GELU MLP; a second
    attention through scaled_dot_product_attention; a matmul of two quantized tensors (a max pool's output
    and its transpose, accumulated in int32) and a softmax of that quantized tensor."""

    def __init__(self, dim=16, heads=2):
        super().__init__()
        self.heads = heads
        self.patch = nn.Conv2d(3, dim, 8, 8)
        self.pos = nn.Parameter(torch.linspace(-0.2, 0.2, 16 * dim).reshape(1, 16, dim))
        self.ln1, self.qkv, self.proj = nn.LayerNorm(dim), nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.ln2, self.qkv2, self.proj2 = nn.LayerNorm(dim), nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.ln3, self.fc1, self.act, self.fc2 = (
            nn.LayerNorm(dim),
            nn.Linear(dim, 2 * dim),
            nn.GELU(),
            nn.Linear(2 * dim, dim),
        )
        self.c0, self.r0, self.pool = nn.Conv2d(3, 3, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2)
        self.gram = nn.Conv2d(3, 4, 2, 2)
        self.head = nn.Linear(dim + 4 * 8 * 8, 10)

    def split(self, qkv):
        b, t, d3 = qkv.shape
        return qkv.reshape(b, t, 3, self.heads, d3 // 3 // self.heads).permute(2, 0, 3, 1, 4).unbind(0)

    def forward(self, x):
        p = self.pool(self.r0(self.c0(x)))
        gram = self.gram(torch.softmax(p, dim=1) + p @ p.transpose(-1, -2))
        t = self.patch(x).flatten(2).transpose(1, 2) + self.pos
        b, n, d = t.shape
        q, k, v = self.split(self.qkv(self.ln1(t)))
        a = ((q @ k.transpose(-2, -1)) * (q.shape[-1] ** -0.5)).softmax(-1)
        t = t + self.proj((a @ v).transpose(1, 2).reshape(b, n, d))
        q, k, v = self.split(self.qkv2(self.ln2(t)))
        t = t + self.proj2(F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, n, d))
        t = t + self.fc2(self.act(self.fc1(self.ln3(t))))
        return self.head(torch.cat([t.mean(1), torch.flatten(gram, 1)], 1))


class Pools(nn.Module):
    """Pooling and resampling: a max pool of a ReLU the quantizer does not fuse into the conv (Inception),
    avg_pool2d with ceil_mode, adaptive average pooling to 2x2, amax, nearest and bilinear upsampling."""

    def __init__(self):
        super().__init__()
        self.c1, self.r1 = nn.Conv2d(3, 8, 3, 1, 1), nn.ReLU()
        self.pool = nn.MaxPool2d(3, 2, 1)
        self.c2 = nn.Conv2d(8, 8, 3, 1, 1)
        self.avg = nn.AvgPool2d(3, 2, ceil_mode=True)
        self.c3 = nn.Conv2d(8, 8, 1)
        self.fc = nn.Linear(8 * 4 + 2 * 8 * 16 * 16 + 8, 10)

    def forward(self, x):
        y = self.pool(self.r1(self.c1(x) * 2.0))
        z = self.avg(self.c2(y))
        up = F.interpolate(z, scale_factor=2, mode="nearest")
        bil = F.interpolate(self.c3(up), size=(16, 16), mode="bilinear", align_corners=False)
        parts = [F.adaptive_avg_pool2d(z, 2), up, bil, z.amax((2, 3))]
        return self.fc(torch.cat([torch.flatten(p, 1) for p in parts], 1))


class Unsupported(nn.Module):
    """Three ops the runner does not implement, on separate lines of this file."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, 1, 1)
        self.fc = nn.Linear(4 * 32 * 32, 10)

    def forward(self, x):
        x = self.conv(x)
        x = torch.roll(x, 1, dims=2)
        x = torch.flip(x, dims=[3])
        x = torch.cumsum(x, dim=1)
        return self.fc(torch.flatten(x, 1))
