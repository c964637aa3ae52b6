# expect: QAT004@27
"""One script, both flows: each branch sets its qconfig right before its own prepare, the QAT branch trains
in train mode, the PTQ branch calibrates in eval mode, and both convert in eval mode."""
import argparse
import copy

import torch
import torch.ao.quantization as tq

from models import build_model
from data import calibration_batches, train_batches


def quantize(model, qat: bool, backend: str = "x86"):
    torch.backends.quantized.engine = backend
    model = copy.deepcopy(model)
    if qat:
        model.train()
        model.fuse_model(is_qat=True)
        model.qconfig = tq.get_default_qat_qconfig(backend)
    else:
        model.eval()
        model.fuse_model(is_qat=False)
        model.qconfig = tq.get_default_qconfig(backend)
    if qat:
        model.qconfig = tq.get_default_qat_qconfig(backend)
        model = tq.prepare_qat(model)
        opt = torch.optim.SGD(model.parameters(), lr=1e-4)
        for x, y in train_batches():
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
    else:
        model = tq.prepare(model)
        with torch.no_grad():
            for x in calibration_batches():
                model(x)
    model.eval()
    return tq.convert(model)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--qat", action="store_true")
    args = parser.parse_args()
    int8 = quantize(build_model(), args.qat)
    torch.save(int8.state_dict(), "int8.pt")
