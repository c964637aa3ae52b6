# expect: QAT004@19
"""Per-layer sensitivity in the style of many QAT repos: quantize everything but one layer at a time (its
qconfig set to None before prepare), evaluate, rank."""
import copy

import torch
import torch.ao.quantization as tq

from evaluate import accuracy


def sensitivity(model, layers, calib, val):
    results = {}
    for name in layers:
        candidate = copy.deepcopy(model)
        candidate.train()
        candidate.qconfig = tq.get_default_qat_qconfig("x86")
        getattr(candidate, name).qconfig = None
        prepared = tq.prepare_qat(candidate)
        prepared.apply(tq.disable_observer)
        with torch.no_grad():
            for x in calib:
                prepared(x)
        prepared.eval()
        results[name] = accuracy(tq.convert(prepared), val)
    return sorted(results.items(), key=lambda kv: kv[1])
