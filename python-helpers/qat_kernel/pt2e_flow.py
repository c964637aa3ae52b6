"""torchao PT2E QAT: torch.export -> prepare_qat_pt2e -> (train) -> convert_pt2e, X86 Inductor quantizer.

Batch size: torch.export specialises the batch dimension to the example's size (a graph exported at
batch 2 asserts `x.size()[0] == 2` on a batch of 64), so we export with a dynamic batch dim
(torch.export.Dim) from a batch-2 example. The dim survives prepare, convert and the ONNX export
(input dim_param "batch"); batch 1 also runs on such a graph."""
from __future__ import annotations

import contextlib

from .graphs import op_name


def dynamic_batch():
    from torch.export import Dim

    return ({0: Dim("batch")},)


def export(model, example):
    """The model as an FX GraphModule (aten ops, nn_module_stack/stack_trace kept), batch dim dynamic."""
    import torch

    return torch.export.export(model, (example,), dynamic_shapes=dynamic_batch()).module()


def quantizer():
    from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (
        X86InductorQuantizer, get_default_x86_inductor_quantization_config)

    return X86InductorQuantizer().set_global(get_default_x86_inductor_quantization_config(is_qat=True))


@contextlib.contextmanager
def _skip_absent_conv_patterns():
    """torchao's conv+BN fuse (prepare) and fold (convert) passes build their pattern graphs with a
    strict torch.export for each of conv1d, conv2d, conv_transpose1d, conv_transpose2d: 96 exports,
    ~14 s of convert_pt2e on 2 cores. Skip the conv kinds the graph does not contain; matching of the
    kinds it does contain is unchanged. If torchao renames these helpers, this does nothing."""
    try:
        from torchao.quantization.pt2e import qat_utils
    except ImportError:
        yield
        return
    saved = {}
    for name in ("_fuse_conv_bn_qat_helper", "_fold_conv_bn_qat_helper"):
        original = getattr(qat_utils, name, None)
        if original is None:
            continue

        def helper(m, conv_fn, *args, _original=original, **kwargs):
            wanted = getattr(conv_fn, "__name__", None)
            if wanted and not any(op_name(n) == wanted for n in m.graph.nodes):
                return m
            return _original(m, conv_fn, *args, **kwargs)

        saved[name] = original
        setattr(qat_utils, name, helper)
    try:
        yield
    finally:
        for name, original in saved.items():
            setattr(qat_utils, name, original)


def prepare_qat(model, example):
    """Export `model` in train mode and insert fake-quant; returns the trainable graph."""
    from torchao.quantization.pt2e import move_exported_model_to_train
    from torchao.quantization.pt2e.quantize_pt2e import prepare_qat_pt2e

    model.train()
    graph = export(model, example)
    with _skip_absent_conv_patterns():
        prepared = prepare_qat_pt2e(graph, quantizer())
    # An exported graph refuses .train()/.eval(); torchao swaps BN/dropout behaviour instead.
    move_exported_model_to_train(prepared)
    return prepared


def convert(prepared):
    """INT8 graph (quantize/dequantize around float ops, BN folded into conv) ready for inference."""
    from torchao.quantization.pt2e import move_exported_model_to_eval
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e

    move_exported_model_to_eval(prepared)
    with _skip_absent_conv_patterns():
        return convert_pt2e(prepared)
