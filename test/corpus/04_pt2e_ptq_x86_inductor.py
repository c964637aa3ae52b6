# expect: none
"""PT2E post-training quantization with X86InductorQuantizer and torch.compile, in the style of torchao's
pt2e_quant_ptq and pt2e_quant_x86_inductor tutorials."""
import copy

import torch
import torchvision
from torch.export import export
from torchao.quantization.pt2e import move_exported_model_to_eval
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (
    X86InductorQuantizer,
    get_default_x86_inductor_quantization_config,
)


def calibrate(model, data_loader):
    move_exported_model_to_eval(model)
    with torch.no_grad():
        for image, _ in data_loader:
            model(image)


def quantize(data_loader, example_inputs):
    float_model = torchvision.models.resnet18(weights=None).eval()
    model_to_quantize = copy.deepcopy(float_model)
    exported_model = export(model_to_quantize, example_inputs).module()
    quantizer = X86InductorQuantizer()
    quantizer.set_global(get_default_x86_inductor_quantization_config())
    prepared_model = prepare_pt2e(exported_model, quantizer)
    calibrate(prepared_model, data_loader)
    quantized_model = convert_pt2e(prepared_model)
    move_exported_model_to_eval(quantized_model)
    with torch.no_grad():
        optimized_model = torch.compile(quantized_model)
        optimized_model(*example_inputs)
    return quantized_model, float_model


if __name__ == "__main__":
    example_inputs = (torch.randn(2, 3, 224, 224),)
    loader = [(torch.randn(2, 3, 224, 224), torch.tensor([0, 1]))]
    q, f = quantize(loader, example_inputs)
    print(torch.nn.functional.cosine_similarity(q(*example_inputs).flatten(), f(*example_inputs).flatten(), dim=0))
