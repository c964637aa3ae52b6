"""QAT015: .train() / .eval() on a torch.export graph module (exported, prepared or converted) raise
NotImplementedError; move_exported_model_to_eval/train work, and allow_exported_model_train_eval re-enables
the methods."""

import pytest
import torch
from conftest import pt2e_quantize
from torch import nn


def _net():
    return nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU())


X = torch.randn(2, 3, 8, 8)


def test_exported_module_refuses_train_and_eval():
    from torchao.quantization.pt2e import move_exported_model_to_eval, move_exported_model_to_train

    graph = torch.export.export(_net(), (X,)).module()
    for call in (graph.eval, graph.train):
        with pytest.raises(NotImplementedError):
            call()
    move_exported_model_to_eval(graph)
    move_exported_model_to_train(graph)


def test_converted_module_refuses_eval_until_allowed():
    from torchao.quantization.pt2e import allow_exported_model_train_eval

    converted = pt2e_quantize(_net(), X)
    with pytest.raises(NotImplementedError):
        converted.eval()
    allow_exported_model_train_eval(converted)
    converted.eval()
