"""QAT014: the PT2E APIs torch 2.13 no longer has raise, and what the rule offers instead exists and works."""

import importlib

import pytest
import torch
from conftest import knowledge
from torch import nn

MOVES = knowledge("pt2e-moves.json")
REMOVED_MODULES = [old for old, _ in MOVES["modules"]] + [
    "torch.ao.quantization.quantizer.x86_inductor_quantizer",
    "torch.ao.quantization.pt2e.export_utils",
]


@pytest.mark.parametrize("module", REMOVED_MODULES)
def test_removed_modules_raise(module):
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(module)


@pytest.mark.parametrize("module", MOVES["torchaoModules"])
def test_replacement_modules_exist(module):
    importlib.import_module(module)


@pytest.mark.parametrize("old, home", sorted(MOVES["names"].items()))
def test_moved_names(old, home):
    module, name = old.rsplit(".", 1)
    with pytest.raises(ImportError):
        exec(f"from {module} import {name}", {})
    with pytest.raises(AttributeError):
        getattr(importlib.import_module(module), name)
    assert callable(getattr(importlib.import_module(home), name))


@pytest.mark.parametrize("old", MOVES["removedFunctions"])
def test_removed_functions(old):
    module, name = old.rsplit(".", 1)
    with pytest.raises(ImportError):
        exec(f"from {module} import {name}", {})


def test_export_module_replaces_capture_pre_autograd_graph():
    from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e
    from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (
        X86InductorQuantizer,
        get_default_x86_inductor_quantization_config,
    )

    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU()).eval()
    x = torch.randn(2, 3, 8, 8)
    graph = torch.export.export(model, (x,)).module()
    prepared = prepare_pt2e(graph, X86InductorQuantizer().set_global(get_default_x86_inductor_quantization_config()))
    assert prepared(x).shape == (2, 4, 6, 6)


def test_xnnpack_quantizer_left_for_executorch():
    doc = importlib.import_module("torchao.testing.pt2e._xnnpack_quantizer").XNNPACKQuantizer.__doc__
    assert "executorch.backends.xnnpack.quantizer.xnnpack_quantizer" in doc
