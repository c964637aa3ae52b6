"""Writes that fail, cancels that come mid-write and output folders that are symlinks, on the real kernel: a
failed write is the typed error writeFailed naming the path, the stage and what to do; the kernel lives on
with its trained models (the same request again does not train again); nothing half-written is left."""

from __future__ import annotations

import os
import resource
import subprocess

import pytest
from conftest import copy_example
from rpc_client import KernelClient, RpcError

pytestmark = pytest.mark.hostile_workspace

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


def test_a_failed_onnx_export_is_an_error_never_ok_without_the_file(kernel, config, validate, tmp_path):
    taken = tmp_path / "digits.qdq.onnx"
    taken.mkdir()
    with pytest.raises(RpcError) as err:
        kernel.request("export/onnx", {"config": str(config), "path": str(taken), "verify": False})
    _write_failed(err.value, validate, taken, "EISDIR", "onnx")
    assert os.listdir(tmp_path) == [taken.name] and os.listdir(taken) == []
    result = kernel.request("export/onnx", {"config": str(config), "path": str(tmp_path / "ok.onnx"), "verify": False})
    validate("ExportOnnxResult", result)
    assert result["reused"] is True and result["path"] == str(tmp_path / "ok.onnx")


def test_a_full_disk_is_write_failed_and_freeing_space_is_enough(kernel, config, validate, small_disk):
    pt2, onnx = small_disk / "digits.int8.pt2", small_disk / "digits.qdq.onnx"
    with pytest.raises(RpcError) as err:
        kernel.request("qat/convert", {"config": str(config), "path": str(pt2)})
    _write_failed(err.value, validate, pt2, "ENOSPC", "save")
    assert "The disk is full: free space on it" in err.value.message
    with pytest.raises(RpcError) as err:
        kernel.request("export/onnx", {"config": str(config), "path": str(onnx), "verify": False})
    _write_failed(err.value, validate, onnx, "ENOSPC", "onnx")
    assert os.listdir(small_disk) == ["filler"]
    (small_disk / "filler").unlink()
    converted = kernel.request("qat/convert", {"config": str(config), "path": str(pt2)})
    exported = kernel.request("export/onnx", {"config": str(config), "path": str(onnx), "verify": False})
    assert converted["reused"] is True and exported["reused"] is True
    assert pt2.stat().st_size == converted["size"]["fileBytes"] and onnx.stat().st_size > 0


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


def test_a_cancel_during_the_onnx_export_writes_nothing(kernel, config, validate, tmp_path):
    path = tmp_path / "digits.qdq.onnx"
    request_id = kernel.request_async("export/onnx", {"config": str(config), "path": str(path), "verify": False})
    kernel.wait_progress(request_id, where=lambda p: p["stage"] == "onnx")
    kernel.notify("$/cancelRequest", {"id": request_id})
    response = kernel.wait_response(request_id, timeout=120)
    assert "error" in response, response
    assert response["error"]["code"] == -32800 and response["error"]["data"]["kind"] == "cancelled", response
    validate("KernelErrorData", response["error"]["data"])
    assert os.listdir(tmp_path) == []
    assert kernel.request("kernel/info")["packages"]["torch"]["version"]


def test_a_cancel_the_exporter_never_saw_discards_its_file(tmp_path):
    """The same, certain to have come during the export: the exporter does not look at cancels, so one that came
    before it returns is honoured as it ends, before its file replaces anything."""
    import torch

    from qat_kernel.rpc.context import RequestContext
    from qat_kernel.rpc.errors import Cancelled
    from qat_kernel.runtimes.onnx import qdq_export

    path = tmp_path / "model.onnx"
    path.write_bytes(b"the previous export")
    ctx = RequestContext(1, "export/onnx", {}, lambda method, params: None)
    ctx.cancel()
    model = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU()).eval()
    with pytest.raises(Cancelled):
        qdq_export.export_qdq(model, (torch.randn(2, 8),), path, 18, check_cancelled=ctx.check_cancelled)
    assert os.listdir(tmp_path) == [path.name] and path.read_bytes() == b"the previous export"


def test_an_output_folder_that_is_a_symlink_is_replaced_not_written_through(kernel, config, tmp_path):
    elsewhere = tmp_path / "someone-elses"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("not QAT Studio's", encoding="utf-8")
    out = config.parent / "out"
    folder = out / "ort-cpu"
    folder.symlink_to(elsewhere, target_is_directory=True)
    params = {"config": str(config), "quantizeStatic": False, "bench": False, "replaceQdq": False}
    result = kernel.request("build/ort", params, timeout=600)
    assert result["outDir"] == str(folder)
    assert folder.is_dir() and not folder.is_symlink()
    assert (folder / "model.qdq.onnx").is_file() and (folder / "build-report.json").is_file()
    assert sorted(os.listdir(elsewhere)) == ["keep.txt"]
    assert (elsewhere / "keep.txt").read_text(encoding="utf-8") == "not QAT Studio's"
    assert not [name for name in os.listdir(out) if name.startswith(".")], os.listdir(out)
