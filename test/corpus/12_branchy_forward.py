# expect: none
"""A multi-head model whose forward picks one path per call (if/elif/else, early returns, a try for an
optional feature): one ReLU module, but never twice on one path."""
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


class MultiHead(nn.Module):
    def __init__(self, head: str, channels: int = 16):
        super().__init__()
        self.head = head
        self.stem = nn.Conv2d(3, channels, 3, padding=1)
        self.cls = nn.Conv2d(channels, 10, 1)
        self.seg = nn.Conv2d(channels, 4, 1)
        self.det = nn.Conv2d(channels, 6, 1)
        self.relu = nn.ReLU()

    def forward(self, x):
        feats = self.stem(x)
        if self.head == "cls":
            return self.relu(self.cls(feats)).mean((2, 3))
        elif self.head == "seg":
            out = self.relu(self.seg(feats))
        elif self.head == "det":
            try:
                out = self.relu(self.det(feats))
            except RuntimeError:
                out = torch.zeros_like(feats)
        else:
            raise ValueError(self.head)
        return out


def quantize(model, example, quantizer):
    exported = torch.export.export(model.eval(), (example,)).module()
    return prepare_pt2e(exported, quantizer)
