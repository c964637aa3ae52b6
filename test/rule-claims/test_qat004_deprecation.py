"""QAT004: eager/FX QAT entry points warn that torch.ao.quantization is deprecated and will be removed."""

import warnings

import torch.ao.quantization as tq
from conftest import ConvBnRelu


def test_prepare_qat_warns_deprecated():
    model = ConvBnRelu().train()
    model.qconfig = tq.get_default_qat_qconfig("x86")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tq.prepare_qat(model)
    messages = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
    assert any("torch.ao.quantization is deprecated and will be removed" in m for m in messages), messages


def test_the_pt2e_steps_in_the_hover_run():
    """The steps QAT004's hover and quick fix give (server/rules/python/eagerMigration.ts PT2E_RECIPE) run as
    written with the pinned torch and torchao."""
    import torch
    from torchao.quantization.pt2e import move_exported_model_to_eval
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_qat_pt2e
    from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (
        X86InductorQuantizer,
        get_default_x86_inductor_quantization_config,
    )

    model, example_input = ConvBnRelu().train(), torch.randn(2, 3, 8, 8)
    m = torch.export.export(model, (example_input,)).module()
    quantizer = X86InductorQuantizer().set_global(get_default_x86_inductor_quantization_config(is_qat=True))
    m = prepare_qat_pt2e(m, quantizer)
    m(example_input)
    m = convert_pt2e(m)
    move_exported_model_to_eval(m)
    assert m(example_input).shape[0] == 2
