# expect: QAT011@16 QAT011@22
"""Exporting with a dynamic batch: the batch-2 example works; a batch-1 example with Dim.AUTO silently pins
the batch to 1, and one with a named Dim fails."""
import torch
from torch.export import Dim

from model import make_model


def good(model):
    example = torch.randn(2, 3, 32, 32)
    return torch.export.export(model, (example,), dynamic_shapes={"x": {0: Dim("batch")}})


def pinned(model):
    example = torch.randn(1, 3, 32, 32)
    return torch.export.export(model, (example,), dynamic_shapes={"x": {0: Dim.AUTO}})


def fails(model):
    batch = Dim("batch", min=1, max=64)
    return torch.export.export(model, (torch.zeros(1, 3, 32, 32),), dynamic_shapes={"x": {0: batch}})


if __name__ == "__main__":
    print(good(make_model().eval()))
