"""build/tvm with a config target that names a TVM RPC server (`rpc: host:port`): a real
`python -m tvm.exec.rpc_server` started here on a free local port stands in for the board. The x86
library is uploaded, run and timed through it; its outputs must equal this machine's run of the same
library. An address where nothing listens is a config error at the target's rpc, before training."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import pytest
from conftest import copy_example, edit_config
from rpc_client import RpcError

pytest.importorskip("tvm")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def rpc_server(tmp_path_factory):
    port = _free_port()
    log = tmp_path_factory.mktemp("rpc") / "server.log"
    with open(log, "wb") as out:
        # its own process group: the server forks a child per session, all stopped together below
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tvm.exec.rpc_server",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--port-end",
                str(port + 1),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    deadline = time.monotonic() + 120
    while f"bind to 127.0.0.1:{port}" not in log.read_text(errors="replace"):
        assert proc.poll() is None, log.read_text(errors="replace")
        assert time.monotonic() < deadline, "the RPC server did not start"
        time.sleep(0.2)
    yield f"127.0.0.1:{port}"
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@pytest.fixture(scope="module")
def board_config(tmp_path_factory, rpc_server):
    config = copy_example(tmp_path_factory.mktemp("board") / "digits")
    return edit_config(
        config,
        lambda d: d.update(
            targets=[
                {"name": "local-board", "tvm": "x86-64", "rpc": rpc_server},
                {"name": "no-board", "tvm": "x86-64", "rpc": f"127.0.0.1:{_free_port()}"},
            ]
        ),
    )


def test_library_runs_on_the_board_like_here(kernel, board_config, validate):
    request_id = kernel.request_async(
        "build/tvm", {"config": str(board_config), "target": "local-board", "benchRuns": 20}
    )
    result = kernel.result(request_id)
    validate("BuildTvmResult", result)
    board = result["rpc"]
    assert board["address"].startswith("127.0.0.1:") and board["uploadBytes"] == result["artifactBytes"]
    # the same library on the same CPU, once through the RPC server and once in this process
    assert board["maxAbsDiffVsLocal"] == 0.0
    for b in ("b1", "b16"):
        assert board["latency"][b]["runs"] == 20 and board["latency"][b]["medianMs"] > 0
    # parity came from the board's outputs
    assert result["parity"]["samples"] == 540 and result["parity"]["vsOrt"]["top1Agreement"] >= 0.99
    assert any(p["stage"] == "rpc" for p in kernel.progress(request_id))
    assert "On the board through TVM RPC" in "\n".join(result["summary"])


def test_no_server_is_config_invalid_at_rpc(kernel, board_config):
    started = time.monotonic()
    with pytest.raises(RpcError) as err:
        kernel.request("build/tvm", {"config": str(board_config), "target": "no-board"}, timeout=120)
    assert err.value.code == -32001 and err.value.data["path"] == "targets.1.rpc"
    assert "python -m tvm.exec.rpc_server" in err.value.message
    assert time.monotonic() - started < 60
    assert not (board_config.parent / "out" / "tvm-no-board").exists()


def test_rpc_address_in_the_config_schema(board_config):
    import json

    import jsonschema
    import yaml
    from conftest import PROTOCOL

    schema = json.loads((PROTOCOL / "qat-config.schema.json").read_text(encoding="utf-8"))
    data = yaml.safe_load(board_config.read_text(encoding="utf-8"))
    jsonschema.validate(data, schema)
    data["targets"][0]["rpc"] = "board-without-port"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, schema)
