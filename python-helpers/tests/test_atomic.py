"""qat_kernel.atomic when a write fails or the destination is not what it seems: a failed write is one WriteError
naming the destination, whichever library was writing, and leaves nothing behind; a folder the kernel builds
replaces whatever stands at its path (a symlink itself, never what it points to)."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from qat_kernel import atomic
from qat_kernel.rpc import errors

HELPERS = Path(__file__).resolve().parents[1]

# A torch.export.save of a small program in a process that may not write files over 4 KiB (RLIMIT_FSIZE: a
# write past it fails with EFBIG, as a full disk fails with ENOSPC; Python ignores SIGXFSZ). `direct` is how
# qat/convert saved before, torch's C++ zip writer on the file; `atomic` is how it saves now.
_SAVE_UNDER_A_LIMIT = """
import json, os, resource, sys
import torch
from qat_kernel import atomic

program = torch.export.export(torch.nn.Linear(64, 64), (torch.randn(2, 64),))
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
how, path = sys.argv[1], sys.argv[2]
if how == "direct":
    torch.export.save(program, path)
else:
    try:
        atomic.write_serialized(path, lambda buffer: torch.export.save(program, buffer))
    except atomic.WriteError as exc:
        print(json.dumps({"errno": exc.errno, "filename": exc.filename}))
"""


def _save_under_a_limit(how: str, path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", _SAVE_UNDER_A_LIMIT, how, str(path)],
        cwd=HELPERS,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_torch_save_that_cannot_be_written_raises_instead_of_aborting(tmp_path):
    direct, ours = tmp_path / "direct", tmp_path / "ours"
    direct.mkdir()
    ours.mkdir()
    # torch's own writer: the failed write ends the whole process (what took the kernel and its models down).
    aborted = _save_under_a_limit("direct", direct / "model.int8.pt2")
    assert aborted.returncode < 0 and "enforce fail at inline_container.cc" in aborted.stderr, aborted
    done = _save_under_a_limit("atomic", ours / "model.int8.pt2")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"errno": errno.EFBIG, "filename": str(ours / "model.int8.pt2")}
    assert list(ours.iterdir()) == []


def test_writing_names_the_destination_of_a_failed_write_only(tmp_path, monkeypatch):
    dest = tmp_path / "out" / "model.onnx"

    def raised(exc: Exception) -> BaseException:
        try:
            with atomic.writing(dest):
                raise exc
        except Exception as caught:  # noqa: BLE001 - what the block let through is the point
            return caught
        raise AssertionError("nothing raised")

    # A write() of a full disk names no file: it is this destination's.
    full = raised(OSError(errno.ENOSPC, "No space left on device"))
    assert isinstance(full, atomic.WriteError) and (full.errno, full.filename) == (errno.ENOSPC, str(dest))
    in_the_way = raised(IsADirectoryError(errno.EISDIR, "Is a directory", str(dest)))
    assert isinstance(in_the_way, atomic.WriteError) and in_the_way.errno == errno.EISDIR
    # Another file that could not be read, or any other error, goes through as it was.
    elsewhere = PermissionError(errno.EACCES, "Permission denied", "/etc/shadow")
    assert raised(elsewhere) is elsewhere
    other = RuntimeError("INVALID_PROTOBUF : Protobuf serialization failed.")
    assert raised(other) is other
    # The same error from a library's writer when the disk holding the destination is left full: a full disk.
    monkeypatch.setattr(atomic, "free_bytes", lambda path: 4096)
    library = raised(RuntimeError("INVALID_PROTOBUF : Protobuf serialization failed."))
    assert isinstance(library, atomic.WriteError) and library.errno == errno.ENOSPC
    assert isinstance(library.__cause__, RuntimeError)


def test_a_write_failure_is_one_typed_error(validate):
    failure = atomic.WriteError(errno.ENOSPC, os.strerror(errno.ENOSPC), "/w/out/digits.int8.pt2")
    error = errors.from_exception(failure, "/w", "qat/convert", "save")
    rpc = error.to_rpc()
    assert rpc["code"] == -32009
    validate("KernelErrorData", rpc["data"])
    assert rpc["data"] == {"kind": "writeFailed", "path": "/w/out/digits.int8.pt2", "stage": "save", "errno": "ENOSPC"}
    assert rpc["message"].startswith("qat/convert (save) could not write /w/out/digits.int8.pt2: No space left")
    assert "free space" in rpc["message"] and "another disk" in rpc["message"]
    # A full disk under a writer of its own (TensorBoard events) is the same kind, read-only file systems too.
    for code in (errno.ENOSPC, errno.EDQUOT, errno.EROFS):
        plain = errors.from_exception(OSError(code, os.strerror(code)), "/w", "qat/train", "epoch")
        assert plain.kind == "writeFailed" and plain.data["errno"] == errno.errorcode[code]
    # Other OSErrors are not writes for certain.
    assert errors.from_exception(PermissionError(errno.EACCES, "denied", "/x"), None, "qat/train").kind == "internal"


@pytest.mark.parametrize("standing", ["symlink out", "dangling symlink", "file", "folder"])
def test_a_built_folder_replaces_what_stands_at_its_path(tmp_path, standing):
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("not ours", encoding="utf-8")
    folder = out / "ort-cpu"
    if standing == "symlink out":
        folder.symlink_to(elsewhere, target_is_directory=True)
    elif standing == "dangling symlink":
        folder.symlink_to(tmp_path / "gone", target_is_directory=True)
    elif standing == "file":
        folder.write_text("a file", encoding="utf-8")
    else:
        folder.mkdir()
        (folder / "stale.txt").write_text("old", encoding="utf-8")
    with atomic.staging(folder) as stage:
        (stage / "model.onnx").write_bytes(b"new")
    assert folder.is_dir() and not folder.is_symlink()
    assert sorted(p.name for p in folder.iterdir()) == ["model.onnx"]
    assert os.listdir(out) == ["ort-cpu"]  # no staging or old sibling left
    assert sorted(p.name for p in elsewhere.iterdir()) == ["keep.txt"]
    assert (elsewhere / "keep.txt").read_text(encoding="utf-8") == "not ours"


def test_a_failed_build_leaves_the_old_folder_and_no_stage(tmp_path, monkeypatch):
    folder = tmp_path / "tvm-x86"
    folder.mkdir()
    (folder / "model.so").write_bytes(b"old build")
    monkeypatch.setattr(atomic, "free_bytes", lambda path: 0)
    with pytest.raises(atomic.WriteError) as err, atomic.staging(folder) as stage:
        (stage / "model.so").write_bytes(b"half")
        raise RuntimeError("the compiler failed")  # on a full disk: a write failure
    assert err.value.errno == errno.ENOSPC and err.value.filename == str(folder)
    assert os.listdir(tmp_path) == ["tvm-x86"] and (folder / "model.so").read_bytes() == b"old build"
