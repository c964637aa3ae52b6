# expect: QAT014@5 QAT014@6 QAT014@7 QAT014@8 QAT014@25
"""The PT2E QAT flow as 2023-2024 tutorials wrote it: capture_pre_autograd_graph, torch.ao's quantize_pt2e and
the XNNPACK quantizer, move_exported_model_to_eval from torch.ao.quantization. None of it is in torch 2.13."""
import torch
from torch._export import capture_pre_autograd_graph
from torch.ao.quantization import move_exported_model_to_eval
from torch.ao.quantization.quantize_pt2e import convert_pt2e, prepare_qat_pt2e
from torch.ao.quantization.quantizer.xnnpack_quantizer import (
    XNNPACKQuantizer,
    get_symmetric_quantization_config,
)


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(5, 10)

    def forward(self, x):
        return self.linear(x)


example_inputs = (torch.randn(1, 5),)
m = M()
m = capture_pre_autograd_graph(m, example_inputs)
quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_qat=True))
m = prepare_qat_pt2e(m, quantizer)
for _ in range(10):
    m(*example_inputs).sum().backward()
m = convert_pt2e(m)
move_exported_model_to_eval(m)
print(m(*example_inputs))
