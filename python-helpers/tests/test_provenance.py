"""The kernel's record of what it built (qat_kernel.runtimes.provenance): a file it recorded is trusted while
unchanged; a changed, unknown, missing or special file is not, and loading one through load_tvm is refused with a
typed error before TVM opens it."""

from __future__ import annotations

import os

import pytest

from qat_kernel.rpc.errors import ArtifactUnknown
from qat_kernel.runtimes import provenance

pytestmark = pytest.mark.hostile_workspace


@pytest.fixture(autouse=True)
def state(tmp_path, monkeypatch):
    monkeypatch.setenv(provenance.ENV_VAR, str(tmp_path / "state"))


def test_recorded_files_are_trusted_until_changed(tmp_path):
    lib = tmp_path / "model.so"
    lib.write_bytes(b"\x7fELF built")
    assert not provenance.built_here(lib)
    provenance.record(lib)
    assert provenance.built_here(lib)
    # Through a symlink to it too: the record is by resolved path.
    link = tmp_path / "link.so"
    link.symlink_to(lib)
    assert provenance.built_here(link)
    lib.write_bytes(b"\x7fELF planted")
    assert not provenance.built_here(lib)
    with pytest.raises(ArtifactUnknown, match="not built by QAT Studio"):
        provenance.require(lib, "build/tvm")


def test_unknown_missing_and_special_files_are_not_trusted(tmp_path):
    assert not provenance.built_here(tmp_path / "none.so")
    fifo = tmp_path / "fifo.so"
    os.mkfifo(fifo)
    assert not provenance.built_here(fifo)
    assert not provenance.built_here(tmp_path)


def test_the_record_is_by_content_and_keeps_the_newest(tmp_path, monkeypatch):
    staged, final = tmp_path / "staging.so", tmp_path / "final.so"
    staged.write_bytes(b"built")
    provenance.record(staged)
    staged.rename(final)  # a build is staged, then moved into place
    assert provenance.built_here(final)
    monkeypatch.setattr(provenance, "KEEP", 2)
    for i in range(3):
        f = tmp_path / f"{i}.so"
        f.write_bytes(b"%d" % i)
        provenance.record(f)
    assert not provenance.built_here(final) and provenance.built_here(tmp_path / "2.so")


def test_load_tvm_refuses_a_library_it_did_not_build(tmp_path):
    pytest.importorskip("tvm")
    from qat_kernel.runtimes.tvm.run import load_tvm

    lib = tmp_path / "model.so"
    lib.write_bytes(b"\x7fELF planted")
    with pytest.raises(ArtifactUnknown) as err:
        load_tvm(lib)
    assert err.value.to_rpc()["code"] == -32008 and "Run build/tvm" in err.value.message
