"""Each module's source line (the `self.<name> = ...` that assigns it) is found from the class's own methods, also
for a model cached by an earlier request whose module a later request dropped from sys.modules, and with TVM
imported (its patched inspect.getfile looks classes up in sys.modules and raised KeyError there)."""

from __future__ import annotations

import importlib
import sys

from qat_kernel.analysis.model_graph import modules_of
from qat_kernel.pipeline import usercode

MODEL = """import torch


class Base(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(1, 4, 3)


class Net(Base):
    def __init__(self):
        super().__init__()
        self.head: torch.nn.Module = torch.nn.Linear(4, 2)
        self.blocks = torch.nn.Sequential(torch.nn.ReLU())

    def reset_head(self):
        self.head = torch.nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)).mean((2, 3)))


def make():
    return Net()
"""


def _lines(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_sources_of_a_model_whose_module_left_sys_modules(tmp_path):
    tvm_imported = importlib.util.find_spec("tvm") is not None
    if tvm_imported:
        importlib.import_module("tvm.script")  # patches inspect.getfile as the kernel's TVM requests do
    folder, other = tmp_path / "a", tmp_path / "b"
    folder.mkdir()
    other.mkdir()
    (folder / "model.py").write_text(MODEL, encoding="utf-8")
    with usercode.workspace(folder):
        model = usercode.load_entry(folder, "model.py:make", "model.entry")()
    name = type(model).__module__
    assert name in sys.modules
    with usercode.workspace(other):  # another workspace's request drops this one's modules
        pass
    assert name not in sys.modules

    sources = {m["path"]: m.get("source") for m in modules_of(model, str(folder))}
    file = str((folder / "model.py").resolve())
    assert sources["stem"] == {"file": file, "line": _lines(MODEL, "self.stem =")}  # in the base class
    assert sources["head"] == {"file": file, "line": _lines(MODEL, "self.head: torch.nn.Module")}  # first, annotated
    assert sources["blocks"] == {"file": file, "line": _lines(MODEL, "self.blocks =")}
    assert sources["blocks.0"] is None  # made inside Sequential(...), assigned by no `self.` line of the user's


def test_classes_outside_the_workspace_give_no_source(tmp_path):
    import torch

    model = torch.nn.Sequential(torch.nn.Linear(2, 2))
    assert [m.get("source") for m in modules_of(model, str(tmp_path))] == [None]
