# expect: QAT004@25
"""FX graph mode QAT with a QConfigMapping, in the style of the FX QAT tutorial."""
import copy

import torch
from torch.ao.quantization import QConfigMapping, get_default_qat_qconfig
from torch.ao.quantization.quantize_fx import convert_fx, prepare_qat_fx


def train_loop(model, loader, epochs=2):
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    model.train()
    for _ in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            opt.step()


def fx_qat(float_model, example_inputs, loader):
    model = copy.deepcopy(float_model)
    model.train()
    qconfig_mapping = QConfigMapping().set_global(get_default_qat_qconfig("x86"))
    qconfig_mapping.set_module_name("classifier", None)
    prepared = prepare_qat_fx(model, qconfig_mapping, example_inputs)
    train_loop(prepared, loader)
    prepared.eval()
    quantized = convert_fx(prepared)
    torch.jit.save(torch.jit.script(quantized), "fx_int8.pt")
    return quantized
