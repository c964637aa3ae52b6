"""Writes server/knowledge/module-exports.json from the pinned libraries (test/rule-claims checks it stays true):
- "stars": what `from M import *` binds for the modules the language server resolves star imports of;
- "attributes": the public names of the torchao PT2E modules QAT014 points old imports to (a fix is offered
  only when every imported name is there).

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

KNOWLEDGE = os.path.join(os.path.dirname(__file__), "..", "server", "knowledge")
OUT = os.path.join(KNOWLEDGE, "module-exports.json")


def star_names(module_name: str) -> list[str]:
    """The names `from module_name import *` binds: __all__, else every public name."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in vars(module) if not n.startswith("_")]
    return sorted(set(names))


def public_names(module_name: str) -> list[str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module = importlib.import_module(module_name)
    return sorted(n for n in dir(module) if not n.startswith("_"))


def exports() -> dict[str, dict[str, list[str]]]:
    with open(os.path.join(KNOWLEDGE, "pt2e-moves.json")) as f:
        targets = json.load(f)["torchaoModules"]
    return {
        "stars": {m: star_names(m) for m in MODULES},
        "attributes": {m: public_names(m) for m in targets},
    }


if __name__ == "__main__":
    data = exports()
    text = json.dumps(data, indent=1, sort_keys=True) + "\n"
    tmp = OUT + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, OUT)
    count = sum(len(v) for part in data.values() for v in part.values())
    print(f"wrote {OUT}: {count} names", file=sys.stderr)
