"""QAT005: TVM 0.27 has no Relay (tvm.relay, tvm.contrib.graph_executor); the Relax replacements exist."""

import importlib

import pytest

tvm = pytest.importorskip("tvm")


@pytest.mark.parametrize("module", ["tvm.relay", "tvm.relay.frontend", "tvm.contrib.graph_executor"])
def test_relay_modules_are_gone(module):
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(module)


def test_relax_replacements_exist():
    from tvm import relax
    from tvm.relax.frontend import onnx as relax_onnx
    from tvm.relax.frontend import torch as relax_torch

    assert callable(tvm.compile)
    assert callable(relax.VirtualMachine)
    assert callable(relax_onnx.from_onnx)
    assert callable(relax_torch.from_exported_program)
