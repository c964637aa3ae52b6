"""Files a workspace can plant where the kernel reads (a config, a build or deploy report): a FIFO, a symlink to
/dev/zero, a folder, an oversized or non-UTF-8 file. Each is refused at once with a typed answer or read as absent;
nothing blocks or reads without bound."""

from __future__ import annotations

import json
import os
import threading

import pytest

from qat_kernel.pipeline import config as configmod
from qat_kernel.reads import CONFIG_BYTES, read_regular_text
from qat_kernel.rpc.errors import ConfigInvalid
from qat_kernel.runtimes.c import folder as c_folder

pytestmark = pytest.mark.hostile_workspace


def _planted(tmp_path, name):
    fifo = tmp_path / f"fifo.{name}"
    os.mkfifo(fifo)
    zero = tmp_path / f"zero.{name}"
    zero.symlink_to("/dev/zero")
    folder = tmp_path / f"folder.{name}"
    folder.mkdir()
    return {"FIFO": fifo, "/dev/zero": zero, "folder": folder}


def _within(seconds, fn):
    """fn's outcome, or a failure if it blocks: a FIFO read would never return."""
    box = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            box["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"still blocked after {seconds} s"
    if "error" in box:
        raise box["error"]
    return box.get("value")


def test_special_oversized_and_binary_configs_are_a_config_error(tmp_path):
    for kind, path in _planted(tmp_path, "qat.yaml").items():
        with pytest.raises(ConfigInvalid, match="not a regular file") as err:
            _within(5, lambda p=path: configmod.load_config(str(p)))
        assert "Cannot read" in err.value.message, kind
    big = tmp_path / "big.qat.yaml"
    big.write_bytes(b"# " + b"x" * CONFIG_BYTES)
    with pytest.raises(ConfigInvalid, match="over the 2097152-byte limit"):
        configmod.load_config(str(big))
    binary = tmp_path / "binary.qat.yaml"
    binary.write_bytes(b"version: 1\n\xff\xfe\n")
    with pytest.raises(ConfigInvalid, match="is not UTF-8 text"):
        configmod.load_config(str(binary))


def test_a_file_growing_past_the_limit_while_read_is_refused(tmp_path):
    # /proc files report size 0 and yield more: the limit holds while reading too.
    with pytest.raises(OSError, match="over the 16-byte limit"):
        read_regular_text("/proc/self/status", 16)
    (tmp_path / "ok.txt").write_text("fits", encoding="utf-8")
    assert read_regular_text(tmp_path / "ok.txt", 16) == "fits"


def test_a_planted_deploy_report_is_read_as_no_runner(tmp_path):
    for kind in ("FIFO", "/dev/zero", "junk"):
        deploy = tmp_path / kind.strip("/").replace("/", "_")
        deploy.mkdir()
        report = deploy / c_folder.REPORT
        if kind == "FIFO":
            os.mkfifo(report)
        elif kind == "/dev/zero":
            report.symlink_to("/dev/zero")
        else:
            report.write_text(json.dumps({"runner": 7}), encoding="utf-8")
        assert _within(5, lambda d=deploy: c_folder.host_runner(d)) is None, kind
