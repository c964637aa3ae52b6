# expect: QAT002@36 QAT015@39
"""PT2E QAT that evaluates the converted model without moving it to eval: its dropout still runs as in
training. The second evaluation moves it first and is fine; .eval() on the exported graph raises."""
import torch
from torch import nn
from torchao.quantization.pt2e import move_exported_model_to_eval
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_qat_pt2e
from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (
    X86InductorQuantizer,
    get_default_x86_inductor_quantization_config,
)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 64)
        self.act = nn.ReLU()
        self.drop = nn.Dropout(0.3)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        return self.fc2(self.drop(self.act(self.fc1(x))))


def run(batches, val):
    model = Net()
    m = torch.export.export(model, (torch.randn(2, 64),)).module()
    m = prepare_qat_pt2e(m, X86InductorQuantizer().set_global(get_default_x86_inductor_quantization_config(is_qat=True)))
    opt = torch.optim.Adam(m.parameters(), lr=1e-3)
    for x, y in batches:
        opt.zero_grad()
        nn.functional.cross_entropy(m(x), y).backward()
        opt.step()
    q = convert_pt2e(m)
    acc = sum((q(x).argmax(1) == y).sum().item() for x, y in val)
    move_exported_model_to_eval(q)
    acc_eval = sum((q(x).argmax(1) == y).sum().item() for x, y in val)
    q.eval()
    return acc, acc_eval
