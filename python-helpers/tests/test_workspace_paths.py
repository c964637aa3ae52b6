"""Paths a config names, held to the workspace the extension opened (QAT_STUDIO_WORKSPACE): model and data entries,
weights and outputs outside it (relative ../, absolute, through a symlink) are a configInvalid naming the key, before
any user code is imported; inside it, or with no workspace given, they load as before."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from qat_kernel.pipeline import config as configmod
from qat_kernel.rpc.errors import ConfigInvalid

pytestmark = pytest.mark.hostile_workspace

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "digits"


@pytest.fixture
def layout(tmp_path):
    ws = tmp_path / "ws"
    shutil.copytree(EXAMPLE, ws, ignore=shutil.ignore_patterns("out", "__pycache__"))
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    shutil.copy(ws / "model.py", outside / "model.py")
    return ws, outside


def _config(ws: Path, text: str) -> Path:
    path = ws / "probe.qat.yaml"
    base = (ws / "digits.qat.yaml").read_text(encoding="utf-8")
    path.write_text(base.replace('model: {entry: "model.py:make_model"', text, 1), encoding="utf-8")
    return path


def test_entries_outside_the_workspace_are_refused(layout, monkeypatch):
    ws, outside = layout
    base = (ws / "digits.qat.yaml").read_text(encoding="utf-8")
    assert 'model: {entry: "model.py:make_model"' in base
    monkeypatch.setenv(configmod.WORKSPACE_ENV, json.dumps([str(ws)]))
    (ws / "linked.py").symlink_to(outside / "model.py")
    for entry in ("../elsewhere/model.py:make_model", f"{outside}/model.py:make_model", "linked.py:make_model"):
        with pytest.raises(ConfigInvalid) as err:
            configmod.load_config(str(_config(ws, f'model: {{entry: "{entry}"')))
        assert err.value.data.get("path") == "model.entry", entry
        assert "outside the workspace" in err.value.message and "allowPathsOutsideWorkspace" in err.value.message
    # Inside it: loads.
    assert configmod.load_config(str(ws / "digits.qat.yaml")).get("model.entry") == "model.py:make_model"


def test_an_output_folder_that_is_a_symlink_out_is_refused(layout, monkeypatch):
    ws, outside = layout
    monkeypatch.setenv(configmod.WORKSPACE_ENV, json.dumps([str(ws)]))
    (ws / "out").symlink_to(outside, target_is_directory=True)
    cfg = configmod.load_config(str(ws / "digits.qat.yaml"))
    with pytest.raises(ConfigInvalid, match="outside the workspace"):
        cfg.resolve("out/digits.qdq.onnx")
    # The folders build/ort, build/tvm and deploy/c-artifact build there too.
    with pytest.raises(ConfigInvalid, match="outside the workspace"):
        cfg.out("ort-cpu")


def test_without_a_workspace_nothing_is_limited(layout, monkeypatch):
    ws, outside = layout
    monkeypatch.delenv(configmod.WORKSPACE_ENV, raising=False)
    cfg = configmod.load_config(str(_config(ws, 'model: {entry: "../elsewhere/model.py:make_model"')))
    assert cfg.resolve("../elsewhere/model.py") == (outside / "model.py").resolve()
