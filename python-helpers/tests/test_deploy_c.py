"""deploy/c-artifact through the real kernel on the compare_run config: the header and portable C
runner from the converted digits model, compiled with gcc here (and with aarch64-linux-gnu-gcc, run
under qemu-aarch64 when qemu-user is installed: emulated, not a board), checked against PyTorch INT8
on real digits; TVM's library and C backend output beside them; missing toolchains as typed errors."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from rpc_client import KernelClient, RpcError

AARCH64_CC = "aarch64-linux-gnu-gcc"
STRICT = ["-std=c99", "-pedantic", "-O2", "-ffp-contract=off", "-Wall", "-Wextra", "-Werror"]


def _e_machine(path) -> int:
    with open(path, "rb") as f:
        head = f.read(20)
    assert head[:4] == b"\x7fELF"
    return int.from_bytes(head[18:20], "little" if head[5] == 1 else "big")


@pytest.fixture(scope="module")
def x86_deploy(kernel, compare_run, validate):
    _, _, config = compare_run
    request_id = kernel.request_async("deploy/c-artifact", {"config": str(config)})
    result = kernel.result(request_id)
    validate("DeployCResult", result)
    return request_id, result, config


def test_runner_matches_torch_int8_on_real_digits(x86_deploy):
    _, result, _ = x86_deploy
    v = result["verify"]
    assert v["samples"] == 540 and v["emulated"] is False and v["runner"] == "native"
    m = v["vsTorchInt8"]
    # the logits within one unit of fc2's int32 accumulator, every class decision the same
    assert m["top1Agreement"] == 1.0 and m["withinOneStep"] >= 0.99 and m["cosineMin"] > 0.99999
    assert v["accuracy"]["runner"] == v["accuracy"]["torch"]
    layers = {r["name"]: r for r in v["layers"]}
    assert list(layers) == ["conv1", "conv2", "pool", "fc1"]  # flatten keeps pool's int8 values: an alias
    for row in layers.values():
        # a value may land one step away where PyTorch's float conv rounds a .5 tie the other way (measured:
        # at most 4 of fc1's 34,560 values, on an Intel Xeon with AMX)
        assert row["maxDiffSteps"] <= 1 and row["valuesDiffering"] <= row["values"] * 1e-3, row
        assert row["replayMaxDiffSteps"] <= 1 and row["replayValuesDiffering"] <= row["valuesDiffering"], row


def test_header_layers_and_files(x86_deploy):
    _, result, config = x86_deploy
    out = config.parent / "out" / "deploy-x86-64"
    assert result["outDir"] == str(out) and result["stem"] == "digits"
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["README.md", "bin", "deploy-report.json", "digits_qparams.h", "digits_runner.c", "samples", "tvm"]
    )
    kinds = [(la["name"], la["kind"], la["relu"]) for la in result["layers"]]
    assert kinds == [
        ("conv1", "conv2d", True),
        ("conv2", "conv2d", True),
        ("pool", "maxpool2d", False),
        ("fc1", "linear", True),
        ("fc2", "linear", False),
    ]
    assert "outScale" not in result["layers"][-1]  # float logits
    assert [la["inputs"] for la in result["layers"]][:2] == [["input"], [result["layers"][0]["output"]]]
    f = result["footprint"]
    # code + int8 weights in text; the activation arena (int32 values of the two largest live tensors) in bss
    assert f["text"] > result["weightBytes"] and f["bss"] >= f["arenaBytes"] == 4 * (16 * 8 * 8 + 32 * 8 * 8)
    assert f["staticRamBytes"] == f["data"] + f["bss"] and f["arch"] == "x86_64"
    assert "static RAM" in "\n".join(result["summary"])
    assert result["weightBytes"] == 16 * 9 + 32 * 16 * 9 + 64 * 512 + 10 * 64
    header = (out / "digits_qparams.h").read_text(encoding="utf-8")
    for name in ("conv1", "conv2", "fc1", "fc2"):
        assert f"qat_{name}_weight[" in header and f"qat_{name}_bias_int32[" in header
    assert "#define QAT_OUTPUT_SIZE 10" in header
    assert _e_machine(result["binary"]["path"]) == 62 and result["binary"]["warnings"] == []
    assert json.loads((out / "deploy-report.json").read_text(encoding="utf-8"))["layers"] == result["layers"]


def test_runner_compiles_strict_and_reproduces_samples(x86_deploy, tmp_path):
    """Built here with -pedantic -Werror, outside the kernel, on the shipped sample inputs."""
    _, result, _ = x86_deploy
    binary = tmp_path / "runner"
    subprocess.run(["gcc", *STRICT, "-o", str(binary), result["runner"], "-lm"], check=True)
    out = tmp_path / "out.f32"
    subprocess.run([str(binary), result["samples"]["input"], str(out)], check=True, timeout=60)
    mine = np.fromfile(out, np.float32).reshape(-1, 10)
    expected = np.fromfile(result["samples"]["expected"], np.float32).reshape(-1, 10)
    assert len(mine) == result["samples"]["count"] == 16
    assert np.abs(mine - expected).max() <= result["verify"]["outputStep"]
    assert (mine.argmax(1) == expected.argmax(1)).all()
    # a truncated input file is refused, not read past its end
    short = tmp_path / "short.f32"
    short.write_bytes(Path(result["samples"]["input"]).read_bytes()[:100])
    proc = subprocess.run([str(binary), str(short), str(out)], capture_output=True, text=True)
    assert proc.returncode == 1 and "not a whole number" in proc.stderr


def test_integer_bias_variant_matches_onnx_runtime(x86_deploy, tmp_path, compare_run):
    """-DQAT_INTEGER_BIAS adds the header's int32 biases, as ONNX Runtime's integer kernels do:
    then it agrees with ONNX Runtime (not PyTorch) to within one accumulator step."""
    from sklearn.datasets import load_digits

    from qat_kernel.runtimes.ort.sessions import run_ort
    from qat_kernel.runtimes.parity import compare, onnx_output_step

    _, result, config = x86_deploy
    binary = tmp_path / "runner-int"
    subprocess.run(["gcc", *STRICT, "-DQAT_INTEGER_BIAS", "-o", str(binary), result["runner"], "-lm"], check=True)
    x = (load_digits().images / 16.0).astype(np.float32)[:, None][:600]
    x.tofile(tmp_path / "in.f32")
    subprocess.run([str(binary), str(tmp_path / "in.f32"), str(tmp_path / "out.f32")], check=True, timeout=120)
    mine = np.fromfile(tmp_path / "out.f32", np.float32).reshape(len(x), -1)
    onnx_file = config.parent / "out" / "digits.qdq.onnx"
    m = compare(mine, run_ort(onnx_file, x), onnx_output_step(onnx_file)["step"])
    assert m["withinOneStep"] >= 0.99 and m["top1Agreement"] >= 0.995


def test_tvm_library_and_c_backend(x86_deploy):
    _, result, _ = x86_deploy
    tvm = result["tvm"]
    assert Path(tvm["library"]).stat().st_size == tvm["libraryBytes"] > 0
    c = tvm["cSource"]
    assert sorted(f["name"] for f in c["files"]) == ["devc.c", "lib0.c"]
    assert c["kernelsPerPrecision"].get("int8", 0) > 0
    # the C backend, compiled, computes what the llvm library computes
    assert c["maxAbsDiffVsLlvm"] <= 1e-5 and _e_machine(c["library"]) == 62
    text = "\n".join(result["summary"])
    print(text)
    assert "native: top-1 agreement 100.00%" in text


def test_aarch64_cross_compiled_and_emulated(kernel, compare_run, validate):
    _, _, config = compare_run
    params = {"config": str(config), "target": "aarch64", "samples": 128}
    if shutil.which(AARCH64_CC) is None or shutil.which("aarch64-linux-gnu-g++") is None:
        with pytest.raises(RpcError) as err:
            kernel.request("deploy/c-artifact", params)
        assert err.value.code == -32003 and "apt-get install -y g" in err.value.data["install"]
        return
    if shutil.which("qemu-aarch64") is None and shutil.which("qemu-aarch64-static") is None:
        with pytest.raises(RpcError) as err:
            kernel.request("deploy/c-artifact", params)
        assert err.value.code == -32003 and err.value.data["install"] == "apt-get install -y qemu-user"
        params["verify"] = False
    result = kernel.request("deploy/c-artifact", params)
    validate("DeployCResult", result)
    assert result["arch"] == "aarch64" and _e_machine(result["binary"]["path"]) == 183  # EM_AARCH64
    assert "-static" in result["binary"]["flags"] and result["binary"]["compiler"] == AARCH64_CC
    assert _e_machine(result["tvm"]["library"]) == 183 and _e_machine(result["tvm"]["cSource"]["library"]) == 183
    if params.get("verify", True):
        v = result["verify"]
        assert v["emulated"] is True and v["runner"].startswith("qemu-aarch64") and v["samples"] == 128
        assert v["vsTorchInt8"]["top1Agreement"] == 1.0 and v["vsTorchInt8"]["withinOneStep"] >= 0.99
        assert all(r["maxDiffSteps"] <= 1 for r in v["layers"])
        assert "emulated (qemu-aarch64" in "\n".join(result["summary"])


def _bin_with(tmp_path: Path, *tools: str) -> str:
    """A PATH holding only links to `tools` (those present here)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for tool in tools:
        found = shutil.which(tool)
        if found:
            os.symlink(found, folder / tool)
    return str(folder)


@pytest.mark.parametrize(
    "tools,install",
    [
        ((), "apt-get install -y gcc-aarch64-linux-gnu"),
        ((AARCH64_CC,), "apt-get install -y qemu-user"),
    ],
)
def test_missing_cross_compiler_or_qemu_is_package_missing(compare_run, tmp_path, validate, tools, install):
    """Checked before training: a PATH without the cross compiler, then one without qemu-user."""
    if tools and shutil.which(tools[0]) is None:
        pytest.skip(f"{tools[0]} is not installed here")
    _, _, config = compare_run
    client = KernelClient(env={"PATH": _bin_with(tmp_path, *tools), "CC": ""})
    try:
        with pytest.raises(RpcError) as err:
            client.request("deploy/c-artifact", {"config": str(config), "target": "aarch64", "tvm": False}, timeout=120)
    finally:
        assert client.close() == 0
    validate("KernelErrorData", err.value.data)
    assert err.value.code == -32003 and err.value.data["install"] == install
    assert install in err.value.message


def test_float_literals_read_back_exactly():
    from qat_kernel.runtimes.c.cgen import _f, c_stem

    values = np.random.default_rng(0).normal(scale=1e-3, size=200).astype(np.float32)
    assert all(np.float32(float(_f(v)[:-1])) == v for v in values)
    assert _f(1.0) == "1.000000000e+00f"
    assert c_stem("my-model") == "my_model" and c_stem("3net") == "m_3net"
