"""User code is imported afresh per request, each workspace's own files (not another's left in sys.modules)."""

import sys

import pytest

from qat_kernel.pipeline import usercode


@pytest.fixture(autouse=True)
def _own_modules(tmp_path):
    """The test's `model` and `entry` modules leave sys.modules with it (later in-process tests import the
    example's model.py by that name)."""
    yield
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", None) or "").startswith(str(tmp_path)):
            del sys.modules[name]


def _workspace(folder, value: int):
    folder.mkdir()
    (folder / "model.py").write_text(f"VALUE = {value}\n", encoding="utf-8")
    (folder / "entry.py").write_text("from model import VALUE\n\n\ndef make():\n    return VALUE\n", encoding="utf-8")
    return folder


def test_plain_imports_come_from_this_workspace(tmp_path):
    first, second = _workspace(tmp_path / "a", 1), _workspace(tmp_path / "b", 2)
    for folder, value in ((first, 1), (second, 2), (first, 1)):
        with usercode.workspace(folder):
            assert usercode.load_entry(folder, "entry.py:make", "model.entry")() == value


def test_edited_files_are_read_again(tmp_path):
    folder = _workspace(tmp_path / "a", 1)
    with usercode.workspace(folder):
        assert usercode.load_entry(folder, "entry.py:make", "model.entry")() == 1
    (folder / "model.py").write_text("VALUE = 333\n", encoding="utf-8")  # another size: no stale .pyc
    with usercode.workspace(folder):
        assert usercode.load_entry(folder, "entry.py:make", "model.entry")() == 333


def test_a_same_named_module_imported_from_elsewhere_gives_way(tmp_path, monkeypatch):
    """A `model` module already in sys.modules from outside any workspace (a script or notebook cell run in the
    same process) does not answer this workspace's plain `from model import VALUE`."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "model.py").write_text("OTHER = 0\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(elsewhere))
    monkeypatch.delitem(sys.modules, "model", raising=False)
    import model  # noqa: F401  (the stray module, as an earlier import left it)

    assert sys.modules["model"].__file__.startswith(str(elsewhere))
    import json

    folder = _workspace(tmp_path / "a", 7)
    (folder / "json.py").write_text("X = 1\n", encoding="utf-8")  # an installed module's name: that one stays
    with usercode.workspace(folder):
        assert usercode.load_entry(folder, "entry.py:make", "model.entry")() == 7
        assert sys.modules["json"] is json
