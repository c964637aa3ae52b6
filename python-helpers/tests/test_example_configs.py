"""Every config shipped in examples/ passes the kernel's own validation (schema, ranges, files), so a user who
opens an example and runs a command does not meet a config error first."""

from __future__ import annotations

import pytest
from conftest import REPO

CONFIGS = sorted((REPO / "examples").glob("*/*.qat.yaml"))


def test_there_are_example_configs():
    assert {p.parent.name for p in CONFIGS} >= {"digits", "cifar"}


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_example_config_loads(path):
    from qat_kernel.pipeline import qconfig
    from qat_kernel.pipeline.config import load_config

    cfg = load_config(str(path))
    assert cfg.get("model.entry") and cfg.get("data.entry")
    qconfig.plan(cfg)  # observers and overrides resolve
