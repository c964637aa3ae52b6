"""Writes that fail, on the real kernel: a failed write is the typed error writeFailed naming the path, the stage
and what to do; the kernel lives on with its trained models (the same request again does not train again);
nothing half-written is left."""

from __future__ import annotations

import os
import resource
import subprocess

import pytest
from conftest import copy_example
from rpc_client import KernelClient, RpcError

WRITE_FAILED = -32009


@pytest.fixture(scope="module")
def config(kernel, tmp_path_factory):
    """A copy of the example whose model the kernel has trained (one qat/convert to its default path)."""
    config = copy_example(tmp_path_factory.mktemp("writes") / "digits")
    kernel.request("qat/convert", {"config": str(config)}, timeout=600)
    return config


@pytest.fixture
def small_disk(tmp_path):
    """A 1 MiB tmpfs, all but 8 KiB of it taken by `filler` (a full disk, for real). Needs root."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(
            f"cannot mount a tmpfs here ({mounted.stderr.decode().strip()}); the tests with a folder in the "
            "way and with a file size limit cover failed writes without one"
        )
    try:
        _fill(disk)
        yield disk
    finally:
        subprocess.run(["umount", str(disk)], check=True)


def _fill(disk) -> None:
    st = os.statvfs(disk)
    (disk / "filler").write_bytes(b"\0" * (st.f_bavail * st.f_frsize - 8192))


def _write_failed(err: RpcError, validate, path, errno_name: str, stage: str) -> None:
    assert err.code == WRITE_FAILED, err.message
    validate("KernelErrorData", err.data)
    assert err.data == {"kind": "writeFailed", "path": str(path), "stage": stage, "errno": errno_name}, err.data
    assert str(path) in err.message and "run it again" in err.message


def test_convert_onto_a_folder_is_write_failed_and_the_model_is_kept(kernel, config, validate, tmp_path):
    taken = tmp_path / "digits.int8.pt2"
    taken.mkdir()
    (taken / "mine.txt").write_text("the user's", encoding="utf-8")
    with pytest.raises(RpcError) as err:
        kernel.request("qat/convert", {"config": str(config), "path": str(taken)})
    _write_failed(err.value, validate, taken, "EISDIR", "save")
    assert "another output path" in err.value.message
    assert os.listdir(tmp_path) == [taken.name] and os.listdir(taken) == ["mine.txt"]
    again = kernel.request("qat/convert", {"config": str(config), "path": str(tmp_path / "model.int8.pt2")})
    assert again["reused"] is True and (tmp_path / "model.int8.pt2").stat().st_size == again["size"]["fileBytes"]


def test_a_full_disk_is_write_failed_and_freeing_space_is_enough(kernel, config, validate, small_disk):
    pt2 = small_disk / "digits.int8.pt2"
    with pytest.raises(RpcError) as err:
        kernel.request("qat/convert", {"config": str(config), "path": str(pt2)})
    _write_failed(err.value, validate, pt2, "ENOSPC", "save")
    assert "The disk is full: free space on it" in err.value.message
    assert os.listdir(small_disk) == ["filler"]
    (small_disk / "filler").unlink()
    converted = kernel.request("qat/convert", {"config": str(config), "path": str(pt2)})
    assert converted["reused"] is True and pt2.stat().st_size == converted["size"]["fileBytes"]


def test_a_checkpoint_on_a_full_disk_is_write_failed(kernel, validate, small_disk):
    (small_disk / "filler").unlink()
    config = copy_example(small_disk / "digits")
    _fill(small_disk)
    request_id = kernel.request_async("qat/train", {"config": str(config)})
    with pytest.raises(RpcError) as err:
        kernel.result(request_id, timeout=600)
    stages = [p["stage"] for p in kernel.progress(request_id)]
    out = config.parent / "out"
    _write_failed(err.value, validate, out / "digits.qat.pt", "ENOSPC", stages[-1])
    assert "enforce fail" not in err.value.message
    assert os.listdir(out) == ["tensorboard"]
    assert kernel.request("kernel/info")["packages"]["torch"]["version"]


def test_a_kernel_that_may_not_write_large_files_says_so_and_lives_on(validate, tmp_path):
    """Under RLIMIT_FSIZE a write past the limit fails with EFBIG wherever the file is (no root needed): torch's
    own zip writer used to abort the kernel there, with every model it held."""
    config = copy_example(tmp_path / "digits")
    limit = 32 * 1024  # the INT8 program of the example is about 100 KiB

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    client = KernelClient(preexec_fn=limited)
    try:
        pt2 = config.parent / "out" / "digits.int8.pt2"
        with pytest.raises(RpcError) as err:
            client.request("qat/convert", {"config": str(config)}, timeout=600)
        _write_failed(err.value, validate, pt2, "EFBIG", "save")
        assert not [p.name for p in pt2.parent.iterdir() if p.name.startswith((pt2.name, f".{pt2.name}"))]
        accuracy = client.request("eval/accuracy", {"config": str(config)})
        assert accuracy["reused"] is True and accuracy["int8"] > 0.9
    finally:
        assert client.close(timeout=60) == 0, "".join(client.stderr_lines[-40:])
