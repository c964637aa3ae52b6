"""QAT003: torch.quantization and torch.nn.{quantized,qat,intrinsic,quantizable} are the torch.ao objects under
their legacy names, also through `from torch import nn`."""

import torch
import torch.ao.nn.intrinsic.qat
import torch.ao.nn.quantized
import torch.ao.quantization
import torch.nn.intrinsic.qat
import torch.nn.quantized
import torch.quantization


def test_legacy_names_are_the_same_objects():
    assert torch.quantization.prepare_qat is torch.ao.quantization.prepare_qat
    assert torch.quantization.default_qat_qconfig is torch.ao.quantization.default_qat_qconfig
    assert torch.nn.quantized.FloatFunctional is torch.ao.nn.quantized.FloatFunctional
    assert torch.nn.intrinsic.qat.freeze_bn_stats is torch.ao.nn.intrinsic.qat.freeze_bn_stats


def test_through_from_torch_import_nn():
    from torch import nn

    assert nn.quantized.FloatFunctional is torch.ao.nn.quantized.FloatFunctional


def test_the_fix_needs_only_import_torch():
    import subprocess
    import sys

    code = "import torch; print(torch.ao.nn.quantized.FloatFunctional.__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "FloatFunctional"
