"""QAT011: a batch-1 example with a dynamic batch dimension: Dim and Dim.DYNAMIC fail, Dim.AUTO specialises the
batch to 1 silently; a batch of 2 works."""

import pytest
import torch
from torch import nn
from torch.export import Dim


class Lin(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


def test_named_dim_with_batch_one_fails():
    with pytest.raises(Exception, match="Constraints violated"):
        torch.export.export(Lin(), (torch.randn(1, 4),), dynamic_shapes={"x": {0: Dim("batch")}})


def test_dim_dynamic_with_batch_one_fails():
    with pytest.raises(ValueError, match="conflicts between user-specified ranges and inferred ranges"):
        torch.export.export(Lin(), (torch.randn(1, 4),), dynamic_shapes={"x": {0: Dim.DYNAMIC}})


def test_dim_auto_with_batch_one_specialises_silently():
    program = torch.export.export(Lin(), (torch.randn(1, 4),), dynamic_shapes={"x": {0: Dim.AUTO}})
    with pytest.raises(AssertionError, match=r"Guard failed: x.size\(\)\[0\] == 1"):
        program.module()(torch.randn(2, 4))


def test_batch_two_works():
    program = torch.export.export(Lin(), (torch.randn(2, 4),), dynamic_shapes={"x": {0: Dim("batch")}})
    assert program.module()(torch.randn(5, 4)).shape == (5, 2)
