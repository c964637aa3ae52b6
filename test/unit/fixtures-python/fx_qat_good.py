# expect: QAT004
"""FX graph mode QAT: QConfigMapping, prepare_qat_fx, convert_fx."""
import torch
from torch import nn
from torch.ao.quantization import QConfigMapping, get_default_qat_qconfig_mapping
from torch.ao.quantization.quantize_fx import convert_fx, prepare_qat_fx


def build(model: nn.Module, loader):
    qconfig_mapping: QConfigMapping = get_default_qat_qconfig_mapping("x86")
    qconfig_mapping.set_module_name("fc", None)
    example_inputs = (torch.randn(2, 3, 32, 32),)
    model.train()
    prepared = prepare_qat_fx(model, qconfig_mapping, example_inputs)
    opt = torch.optim.Adam(prepared.parameters(), lr=1e-4)
    for x, y in loader:
        opt.zero_grad()
        nn.functional.cross_entropy(prepared(x), y).backward()
        opt.step()
    prepared.eval()
    quantized = convert_fx(prepared)
    torch.save(quantized.state_dict(), "fx_int8.pt")
    return quantized
