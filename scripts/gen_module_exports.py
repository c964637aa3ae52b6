"""Writes server/knowledge/module-exports.json: what `from M import *` binds for the modules the language
server resolves star imports of, read from the pinned libraries (test/rule-claims checks it stays true).

    ~/.cache/qat-studio/venv/bin/python scripts/gen_module_exports.py
"""

import importlib
import json
import os
import sys
import warnings

MODULES = [
    "torch.nn",
    "torch.ao.quantization",
    "torch.quantization",
    "torch.ao.quantization.quantize_fx",
    "torch.ao.nn.quantized",
    "torch.ao.nn.intrinsic.qat",
    "torchao.quantization.pt2e",
    "torchao.quantization.pt2e.quantize_pt2e",
    "torchao.quantization.pt2e.quantizer",
    "torchao.quantization.pt2e.quantizer.x86_inductor_quantizer",
]

OUT = os.path.join(os.path.dirname(__file__), "..", "server", "knowledge", "module-exports.json")


def star_names(module_name: str) -> list[str]:
    """The names `from module_name import *` binds: __all__, else every public name."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in vars(module) if not n.startswith("_")]
    return sorted(set(names))


def exports() -> dict[str, list[str]]:
    return {m: star_names(m) for m in MODULES}


if __name__ == "__main__":
    data = exports()
    text = json.dumps(data, indent=1, sort_keys=True) + "\n"
    tmp = OUT + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, OUT)
    print(f"wrote {OUT}: {sum(len(v) for v in data.values())} names", file=sys.stderr)
