"""build/inductor through the real kernel on a copy of examples/digits (few QAT steps): the PT2E INT8
graph compiled by torch.compile with freezing matches the uncompiled INT8 graph on the validation
samples and is timed next to PyTorch FP32/INT8; the eager flow is refused; a missing C++ compiler is
a packageMissing error with the install command (checked in-process, without a compile), and bench/run
leaves the row out with a note in that case."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import copy_example
from rpc_client import RpcError

torch = pytest.importorskip("torch")

from qat_kernel.jobs import bench_run
from qat_kernel.rpc.context import RequestContext
from qat_kernel.runtimes import cpu
from qat_kernel.runtimes.inductor import int8_compile


@pytest.fixture(scope="module")
def inductor_run(kernel, tmp_path_factory, validate):
    config = copy_example(tmp_path_factory.mktemp("inductor") / "digits")
    result = kernel.request("build/inductor", {"config": str(config), "steps": 5, "benchRuns": 10}, timeout=600)
    validate("BuildInductorResult", result)
    return result, config


def test_compiled_int8_matches_pytorch_int8(inductor_run):
    result, _ = inductor_run
    parity = result["parity"]
    assert result["samples"] == parity["samples"] == 540
    assert result["cpu"] == cpu.summary()
    saturation = [n for n in result["notes"] if n.startswith(cpu.SATURATION_NOTE)]
    if cpu.saturating_int8():
        # oneDNN sums u8 x s8 pairs in int16 here: close to the reference, not equal, and the report says why.
        assert len(saturation) == 1 and "quant_max: 127" in saturation[0]
        assert parity["top1Agreement"] >= 0.99 and parity["cosineMin"] > 0.99
        assert abs(result["accuracy"]["inductorInt8"] - result["accuracy"]["torchInt8"]) <= 0.01
    else:
        assert not saturation
        assert parity["top1Agreement"] == 1.0 and parity["top1Mismatches"] == 0
        # Equal but for rare rounding ties: none on an AMD Zen 4 (max |diff| < 1e-3); on an Intel Xeon with AMX
        # (oneDNN's AMX kernels) a few logits one output step away, max |diff| 0.014, mean 7e-6.
        assert parity["meanAbsDiff"] < 1e-4 and parity["maxRelDiff"] < 0.01 and parity["cosineMin"] > 0.99999
        assert result["accuracy"]["inductorInt8"] == result["accuracy"]["torchInt8"]
    assert result["accuracy"]["torchInt8"] > 0.8
    assert result["freezing"] is True and result["compiler"]


def test_compile_seconds_and_latency(inductor_run):
    result, _ = inductor_run
    per = result["compileSecondsPerBatch"]
    assert set(per) == {"b1", "b16"} and all(v > 0 for v in per.values())
    assert result["compileSeconds"] == pytest.approx(sum(per.values()), abs=1e-2)
    rows = {r["name"]: r for r in result["bench"]["rows"]}
    assert list(rows) == ["torch-fp32", "torch-int8", "inductor-int8"]
    assert rows["inductor-int8"]["label"] == "Inductor INT8 (PT2E, freezing)"
    for row in rows.values():
        for b in ("b1", "b16"):
            stats = row["latency"][b]
            assert stats["runs"] == 10 and 0 < stats["p10Ms"] <= stats["medianMs"] <= stats["p90Ms"]
    assert rows["inductor-int8"]["bytes"] < rows["torch-fp32"]["bytes"]
    text = "\n".join(result["summary"])
    print(text)
    assert "Parity with PyTorch INT8" in text and "Inductor INT8 (PT2E, freezing)" in text


def test_eager_flow_is_config_invalid(kernel, inductor_run):
    config = inductor_run[1].parent / "eager.qat.yaml"
    with pytest.raises(RpcError) as err:
        kernel.request("build/inductor", {"config": str(config)}, timeout=60)
    assert err.value.code == -32001 and err.value.data["path"] == "flow"
    assert "pt2e" in err.value.message


def test_freezing_is_restored():
    from torch._inductor import config

    before = config.freezing, config.compile_threads
    with pytest.raises(ValueError):
        with int8_compile.freezing():
            assert config.freezing is True and config.compile_threads == 1
            raise ValueError
    assert (config.freezing, config.compile_threads) == before


@pytest.fixture
def no_compiler():
    from torch._inductor import config

    with config.patch({"cpp.cxx": (None, "/nonexistent/bin/g++")}):
        yield


def test_missing_compiler_is_package_missing_with_install(no_compiler):
    with pytest.raises(int8_compile.KernelError) as err:
        int8_compile.compiler()
    rpc = err.value.to_rpc()
    assert rpc["code"] == -32003 and rpc["data"]["install"] == int8_compile.CXX_INSTALL
    assert "C++ compiler" in rpc["message"] and "Traceback" not in rpc["message"]


def test_wrapped_compile_errors_name_their_cause():
    from torch._inductor.exc import InvalidCxxCompiler

    outer = RuntimeError("backend='inductor' raised: ...")
    outer.__cause__ = InvalidCxxCompiler()
    err = int8_compile.failure(outer)
    assert err.to_rpc()["data"]["kind"] == "packageMissing" and err.data["install"] == int8_compile.CXX_INSTALL
    other = int8_compile.failure(AssertionError("stride mismatch\nmore"))
    assert other.message.endswith("AssertionError: stride mismatch") and "traceback" in other.data


def test_bench_leaves_the_row_out_with_a_note(no_compiler):
    fns, sizes, notes = {"torch-fp32": (None, None)}, {"torch-fp32": 1}, []
    ctx = RequestContext(1, "bench/run", {}, lambda method, params: None)
    x = np.zeros((2, 1, 8, 8), np.float32)
    bench_run._add_inductor(fns, sizes, torch.nn.Identity(), x, x, notes, ctx)
    assert list(fns) == ["torch-fp32"] and "inductor-int8" not in sizes
    assert len(notes) == 1 and notes[0].startswith("Inductor INT8 (PT2E, freezing) left out: ")
    assert int8_compile.CXX_INSTALL in notes[0]
