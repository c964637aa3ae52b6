"""Nothing sent to the kernel ends it: malformed frames get a JSON-RPC error (or are dropped with a log line)
and kernel/info answers after each; a cancel stops user code that never checks for it, and the kernel keeps
its trained models."""

from __future__ import annotations

import json
import random

import pytest
from conftest import copy_example
from rpc_client import KernelClient

pytest.importorskip("torch")


def frame(body: bytes, length: str | None = None) -> bytes:
    return b"Content-Length: " + (length if length is not None else str(len(body))).encode() + b"\r\n\r\n" + body


CANCEL = "$/cancelRequest"
SPECIAL = {
    "json null": frame(b"null"),
    "json number": frame(b"42"),
    "json list": frame(b"[1, 2]"),
    "method is a list": frame(json.dumps({"jsonrpc": "2.0", "id": 9001, "method": ["kernel/info"]}).encode()),
    "method is an object": frame(json.dumps({"jsonrpc": "2.0", "id": 9002, "method": {"a": 1}}).encode()),
    "id is a list": frame(json.dumps({"jsonrpc": "2.0", "id": [1], "method": "kernel/info"}).encode()),
    "id is an object": frame(json.dumps({"jsonrpc": "2.0", "id": {"a": 1}, "method": "kernel/info"}).encode()),
    "cancel with a list id": frame(
        json.dumps({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": [1]}}).encode()
    ),
    "cancel with list params": frame(
        json.dumps({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": [1]}).encode()
    ),
    "params are a list": frame(
        json.dumps({"jsonrpc": "2.0", "id": 9003, "method": "compare/layers", "params": [1]}).encode()
    ),
    "non-numeric length": b"Content-Length: twelve\r\n\r\n{}",
    "negative length": b"Content-Length: -5\r\n\r\n{}",
    "huge length": b"Content-Length: 99999999999999999999\r\n\r\n{}",
    "overflowing length": b"Content-Length: 1" + b"0" * 400 + b"\r\n\r\n{}",
    "json nested 100k deep": frame(b"[" * 100_000 + b"]" * 100_000),
    "objects nested 100k deep": frame(b'{"a":' * 100_000 + b"1" + b"}" * 100_000),
    "not utf-8": frame(b"\xff\xfe\x00garbage"),
    "not json": frame(b"{oops"),
    "no jsonrpc": frame(json.dumps({"id": 9004, "method": "kernel/info"}).encode()),
    "bool id": frame(json.dumps({"jsonrpc": "2.0", "id": True, "method": "kernel/info"}).encode()),
    "unknown method": frame(json.dumps({"jsonrpc": "2.0", "id": 9005, "method": "no/such"}).encode()),
    "no header": b"{}\r\n\r\n",
}


def mutated(rng: random.Random) -> bytes:
    """A frame whose Content-Length, when it has one, matches its body (a length longer than the body would
    only make the kernel wait for the rest, as it must)."""
    kind = rng.randrange(5)
    valid = {"jsonrpc": "2.0", "id": rng.randrange(10_000, 20_000), "method": "kernel/info", "params": {}}
    if kind == 0:  # random bytes
        return frame(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))))
    if kind == 1:  # a valid message with one field replaced by a random JSON value
        values = [None, 0, -1, 2**70, 1.5, "", "x" * 300, [], [None], {}, {"id": []}, True]
        message = dict(valid)
        message[rng.choice(list(message))] = rng.choice(values)
        return frame(json.dumps(message).encode())
    if kind == 2:  # a valid message cut or with a byte flipped
        body = bytearray(json.dumps(valid).encode())
        if rng.random() < 0.5:
            body = body[: rng.randrange(1, len(body))]
        else:
            body[rng.randrange(len(body))] = rng.randrange(256)
        return frame(bytes(body))
    if kind == 3:  # a bad header
        header = rng.choice([b"Content-Length: ", b"Content-Length:", b"content-length: ", b"X: 1\r\nContent-Length: "])
        length = rng.choice([b"abc", b"-1", b"1e9", b"0x10", b"", b"99999999999999"])
        return header + length + b"\r\n\r\n{}"
    return frame(json.dumps(rng.choice([None, 1, "a", [valid], {"jsonrpc": "1.0"}])).encode())


@pytest.fixture(scope="module")
def fresh_kernel():
    """One kernel for every frame; kernel/info once first, so its package imports are not what is timed."""
    client = KernelClient()
    client.request("kernel/info", timeout=600)
    yield client
    assert client.close() == 0, "".join(client.stderr_lines[-40:])


def _alive(client: KernelClient, label: str) -> None:
    info = client.request("kernel/info", timeout=60)
    assert info["python"], label
    assert client.proc.poll() is None, label


@pytest.mark.parametrize("name", list(SPECIAL))
def test_special_frame_then_kernel_info(fresh_kernel, name):
    fresh_kernel.proc.stdin.write(SPECIAL[name])
    fresh_kernel.proc.stdin.flush()
    _alive(fresh_kernel, name)


def test_malformed_frames_leave_the_kernel_answering(fresh_kernel):
    """Every special frame, then 240 mutated ones, each followed by kernel/info on the same process."""
    rng = random.Random(15)
    frames = list(SPECIAL.values()) + [mutated(rng) for _ in range(240)]
    for i, raw in enumerate(frames):
        fresh_kernel.proc.stdin.write(raw)
        fresh_kernel.proc.stdin.flush()
        _alive(fresh_kernel, f"frame {i}: {raw[:80]!r}")
    assert len(frames) >= 200


NEVER_YIELDS = {
    "model": "def make_model():\n    n = 0\n    while True:\n        n += 1\n",
    "data": (
        "def loaders():\n    n = 0\n    while True:\n        try:\n            n += 1\n"
        "        except Exception:\n            pass\n"
    ),
}


@pytest.mark.parametrize("entry", list(NEVER_YIELDS))
def test_cancel_interrupts_user_code_that_never_yields(kernel, tmp_path, entry):
    """A model (or data) entry that loops forever, even one catching Exception, is stopped by a cancel; the
    kernel answers "cancelled", then serves again and still has the model it trained before."""
    trained = copy_example(tmp_path / "trained")
    first = kernel.request("eval/accuracy", {"config": str(trained), "steps": 2}, timeout=600)
    looping = copy_example(tmp_path / "looping")
    if entry == "model":
        (looping.parent / "model.py").write_text(NEVER_YIELDS["model"], encoding="utf-8")
    else:
        (looping.parent / "data.py").write_text(NEVER_YIELDS["data"], encoding="utf-8")
    request_id = kernel.request_async("compare/layers", {"config": str(looping), "steps": 2})
    kernel.wait_progress(request_id, where=lambda p: p.get("message") == "building model and data")
    kernel.notify("$/cancelRequest", {"id": request_id})
    response = kernel.wait_response(request_id, timeout=60)
    assert response["error"]["code"] == -32800 and response["error"]["data"]["kind"] == "cancelled", response
    assert kernel.request("kernel/info", timeout=60)["python"]
    again = kernel.request("eval/accuracy", {"config": str(trained), "steps": 2}, timeout=600)
    assert again["reused"] is True and again["int8"] == first["int8"]


def test_sigkill_during_training_leaves_a_loadable_checkpoint(tmp_path):
    """The kernel killed at random moments of a QAT run (between and during the per-epoch checkpoint writes):
    the checkpoint on disk is always a complete epoch, loadable without pickle, and no temp file is left."""
    import signal
    import time

    import torch
    import yaml

    rng = random.Random(7)
    for trial in range(3):
        config = copy_example(tmp_path / f"run{trial}")
        data = yaml.safe_load(config.read_text(encoding="utf-8"))
        data["train"] = {**data["train"], "fp32_epochs": 1, "epochs": 1000, "steps": None}
        data["train"] = {k: v for k, v in data["train"].items() if v is not None}
        config.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        checkpoint = config.parent / "out" / "digits.qat.pt"
        client = KernelClient()
        try:
            request_id = client.request_async("qat/train", {"config": str(config)})
            client.wait_progress(request_id, timeout=600, where=lambda p: p.get("stage") == "epoch")
            time.sleep(rng.uniform(0.0, 3.0))
            client.proc.send_signal(signal.SIGKILL)
            client.proc.wait(timeout=30)
        finally:
            client.close()
        saved = torch.load(checkpoint, weights_only=True)
        assert saved["epoch"] >= 1 and saved["state_dict"], trial
        # No temporary file is left beside the checkpoint; the run's TensorBoard folder is its log, written as it goes.
        left = sorted(p.name for p in checkpoint.parent.iterdir() if p.name != "tensorboard")
        assert left == ["digits.qat.pt"], trial
