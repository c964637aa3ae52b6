"""build/tvm through the real kernel on the compare_run config: the kernel reuses the model
compare/layers trained and the QDQ file it exported (no QAT, no export here), builds with TVM, checks
parity on real digits and times the backends. Targets from the config, missing toolchains, unknown
targets and cancellation.

Runs after test_compare_layers/test_digits_results (file order), while compare_run's model is still
in the kernel's cache; the cancel test, last, removes the x86-64 build folder first."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import copy_example, edit_config
from rpc_client import KernelClient, RpcError

pytest.importorskip("tvm")

AARCH64_CXX = "aarch64-linux-gnu-g++"
AARCH64_INSTALL = "apt-get install -y g++-aarch64-linux-gnu"


def _e_machine(path) -> int:
    with open(path, "rb") as f:
        head = f.read(20)
    assert head[:4] == b"\x7fELF"
    return int.from_bytes(head[18:20], "little" if head[5] == 1 else "big")


def _leftovers(out: Path, name: str) -> list[str]:
    """Staging/temp folders of the build named `name` left in out/."""
    return [p.name for p in out.iterdir() if p.name.startswith((f".tvm-{name}", f"..tvm-{name}"))]


@pytest.fixture(scope="module")
def x86_build(kernel, compare_run, validate):
    _, _, config = compare_run
    request_id = kernel.request_async(
        "build/tvm", {"config": str(config), "target": "x86-64", "bench": True, "benchRuns": 20}
    )
    result = kernel.result(request_id)
    validate("BuildTvmResult", result)
    return request_id, result, config


def test_x86_int8_ops_after_the_fold_none_before(x86_build):
    _, result, config = x86_build
    assert result["target"] == "x86-64" and result["targetSource"] == "preset"
    assert result["tvmVersion"].startswith("0.27") and result["device"] == "cpu"
    assert result["opsPerPrecision"]["before"]["int8"] == 0
    assert result["opsPerPrecision"]["after"]["int8"] > 0
    assert result["anchorsPerPrecision"]["after"]["int8"] == 4  # 2 conv + 2 linear, all int8
    assert result["anchorsPerPrecision"]["after"]["float32"] == 0
    assert result["opsPerPrecision"]["after"]["float16"] == 0  # no fp16 override in the config
    assert "fp16Layers" not in result
    ops = {o["onnxNode"]: o for o in result["ops"]}
    assert {o["precision"] for o in ops.values() if o["opType"] in ("Conv", "Gemm")} == {"int8"}
    assert all(o.get("reason") for o in ops.values() if o["precision"] == "fp32")
    # same model, same QDQ file: nothing trained or exported again
    assert result["reused"] is True and result["onnxReused"] is True
    assert result["onnx"] == str(config.parent / "out" / "digits.qdq.onnx")


def test_x86_artifact_and_report_in_out_folder(x86_build):
    _, result, config = x86_build
    out = config.parent / "out" / "tvm-x86-64"
    assert result["outDir"] == str(out)
    artifact = Path(result["artifact"])
    assert artifact == out / "model.so" and artifact.stat().st_size == result["artifactBytes"] > 0
    if result["arch"] == "x86_64":
        assert _e_machine(artifact) == 62
    assert result["runnableHere"] is True and result["buildSeconds"] > 0
    report = json.loads(Path(result["reportPath"]).read_text(encoding="utf-8"))
    assert report["artifact"] == str(artifact)
    assert report["summary"] == result["summary"] and report["parity"] == result["parity"]
    assert sorted(p.name for p in out.iterdir()) == ["bench", "build-report.json", "build-report.md", "model.so", "ort"]
    assert _leftovers(out.parent, "x86-64") == []


def test_x86_kernels_pane_beside_the_graph_files(x86_build, validate):
    """out/digits.tvm.qatgraph.json: the library's kernels with the modules they came from, and the model's
    modules with their lines (QAT: Open Model Graphs Side by Side opens it after the PyTorch stages)."""
    _, _, config = x86_build
    graph = json.loads((config.parent / "out" / "digits.tvm.qatgraph.json").read_text(encoding="utf-8"))
    validate("ModelGraph", graph)
    assert graph["stage"] == "tvm" and graph["config"] == str(config) and graph["name"] == "DigitsNet"
    kernels = [n for n in graph["nodes"] if n["kind"] == "op" and n.get("precision") == "int8" and "modules" in n]
    assert {m for n in kernels for m in n["modules"]} >= {"conv1", "relu1", "conv2", "fc1", "fc2"}
    modules = {m["path"]: m for m in graph["modules"]}
    assert "bn1" in modules and modules["fc2"]["type"] == "Linear" and modules["fc2"]["source"]["line"] > 0


def test_x86_parity_on_real_digits(x86_build):
    _, result, _ = x86_build
    parity = result["parity"]
    assert parity["samples"] == 540 and parity["outputKind"] == "accumulator"
    # TVM's int8 kernels compute PyTorch INT8's own epilogue (float bias, x * (1/scale)) on the exact int32 sums:
    # held to PyTorch INT8 within one accumulator step. ONNX Runtime adds an int32-rounded bias, so against it
    # the logits agree in class and direction, not step for step.
    vs_torch = parity["vsTorch"]
    assert vs_torch["top1Agreement"] >= 0.99 and vs_torch["withinOneStep"] >= 0.99, vs_torch
    vs_ort = parity["vsOrt"]
    assert vs_ort["top1Agreement"] >= 0.99 and vs_ort["cosineMin"] > 0.9999, vs_ort
    accuracy = parity["accuracy"]
    assert abs(accuracy["tvm"] - accuracy["torch"]) <= 2 / 540 and accuracy["tvm"] > 0.9


def test_x86_bench_table(x86_build):
    _, result, _ = x86_build
    bench = result["bench"]
    rows = {r["name"]: r for r in bench["rows"]}
    assert set(rows) == {"torch-fp32", "torch-int8", "tvm-int8", "tvm-qdq-fp32", "tvm-fp32", "ort-int8", "ort-fp32"}
    for row in rows.values():
        assert row["latency"]["b1"]["medianMs"] > 0 and row["latency"]["b16"]["medianMs"] > 0
        assert row["bytes"] > 0
    assert rows["torch-fp32"]["speedupVsTorchFp32"] == {"b1": 1.0, "b16": 1.0}
    # timed side by side: every row in each of the interleaved rounds
    assert bench["rounds"] == 5 and all(len(r["latency"]["b1"]["roundsMs"]) == 5 for r in rows.values())
    assert bench["threads"]["cpus"] >= 1
    assert rows["tvm-int8"]["artifact"] == result["artifact"]
    assert rows["tvm-fp32"]["opsPerPrecision"]["int8"] == 0
    for k, name in bench["fastest"].items():  # None: every figure noisy (a busy machine)
        assert name is None or (name in rows and not rows[name]["latency"][k]["noisy"])


def test_x86_summary_lines(x86_build):
    _, result, _ = x86_build
    text = "\n".join(result["summary"])
    print(text)
    assert result["summary"][0].startswith("TVM 0.27") and "x86-64" in result["summary"][0]
    assert "Compute ops before the int8 fold: int8 0" in text
    assert "Compute ops after the int8 fold: int8 " in text
    assert "Parity vs ONNX Runtime (540 validation samples): ok: top-1 agreement" in text
    assert "PyTorch FP32 (eager)" in text and "ratio to PyTorch FP32" in text
    assert result["artifact"] in text


def _table(md: str, heading: str) -> list[dict]:
    """The rows of the Markdown table under `heading`, by column name."""
    lines = md.split(heading + "\n", 1)[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| "))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split(" | ")])
    header = rows[0]
    return [dict(zip(header, r)) for r in rows[2:]]


def test_x86_report_is_rendered_by_the_kernel(x86_build):
    """build-report.md, one request: the per-op table counts what the summary counts, names each node's module,
    states the parity thresholds, and times TVM INT8 in the same run as PyTorch FP32 and ONNX Runtime."""
    import re

    _, result, _ = x86_build
    md = result["markdown"]
    assert Path(result["markdownPath"]) == Path(result["outDir"]) / "build-report.md"
    assert Path(result["markdownPath"]).read_text(encoding="utf-8") == md
    assert md.startswith("# TVM build: x86-64\n") and all(f"    {line}" in md for line in result["summary"])
    # the per-op table and the summary: one source
    ops = _table(md, "## Precision of each op as built (TVM)")
    assert [o["ONNX node"] for o in ops] == [o["onnxNode"] for o in result["ops"]]
    int8_anchors = sum(1 for o in ops if o["op"] in ("Conv", "Gemm", "MatMul") and o["precision"] == "int8")
    after = next(line for line in result["summary"] if line.startswith("Compute ops after the int8 fold"))
    assert int8_anchors == int(re.search(r"conv/matmul: int8 (\d+)", after).group(1)) == 4
    assert "Conv/Gemm/MatMul nodes: int8 4)" in "\n".join(result["summary"])
    # each compute node beside its module
    modules = {o["module"] for o in ops if o["op"] in ("Conv", "Gemm")}
    assert modules == {"conv1", "conv2", "fc1", "fc2"}, modules
    assert {o["module"] for o in result["ops"] if o["opType"] in ("Conv", "Gemm")} == modules
    # parity: thresholds stated, each artifact judged by them
    assert "**ok** where top-1 agreement ≥ 99 %" in md and "under 90 %" in md
    parity = _table(md, "## Parity with PyTorch INT8 (540 validation samples)")
    assert [p["status"] for p in parity] == ["ok", "ok"] and parity[0]["artifact"] == "TVM INT8 (int8 fold)"
    # latency: every runtime of one run, ratios against its PyTorch FP32 at the stated batches
    latency = _table(md, "## Latency on this machine")
    labels = [r["runtime"] for r in latency]
    assert labels[0] == "PyTorch FP32 (eager)" and latency[0]["vs PyTorch FP32 (eager)"] == "1.00x"
    runtimes = {"TVM INT8 (int8 fold)", "ONNX Runtime INT8 (QDQ)", "ONNX Runtime FP32", "PyTorch INT8 (PT2E converted)"}
    assert runtimes <= set(labels)
    tvm = next(r for r in latency if r["runtime"] == "TVM INT8 (int8 fold)")
    assert re.match(r"[0-9.]+ ms", tvm["batch 1 median"]) and re.match(r"[0-9.]+ ms", tvm["batch 16 median"])
    assert "Every row timed in the same run, at the same batch sizes (1, 16)" in md
    # ONNX Runtime's precision as executed of the same export
    assert result["ortExecuted"]["name"] == "ours"
    assert "## ONNX Runtime INT8 (our QDQ export): precision as executed" in md


def test_progress_stages(x86_build, kernel, validate):
    request_id, _, _ = x86_build
    progress = kernel.progress(request_id)
    for params in progress:
        validate("ProgressParams", params)
    stages = [p["stage"] for p in progress]
    assert {"target", "onnx", "build", "verify", "bench"} <= set(stages)
    assert "qat" not in stages
    assert not any(".staging" in p["message"] for p in progress)


def test_aarch64_elf_or_package_missing(kernel, compare_run, validate):
    _, _, config = compare_run
    params = {"config": str(config), "target": "aarch64"}
    if shutil.which(AARCH64_CXX) is None:
        with pytest.raises(RpcError) as err:
            kernel.request("build/tvm", params)
        assert err.value.code == -32003 and err.value.data["install"] == AARCH64_INSTALL
        assert AARCH64_INSTALL in err.value.message
        return
    result = kernel.request("build/tvm", params)
    validate("BuildTvmResult", result)
    assert _e_machine(result["artifact"]) == 183  # EM_AARCH64
    assert result["arch"] == "aarch64" and result["opsPerPrecision"]["after"]["int8"] > 0
    assert json.loads(result["tvmTarget"])["mtriple"] == "aarch64-linux-gnu"
    if not result["runnableHere"]:
        assert "parity" not in result and any("does not run on this machine" in n for n in result["notes"])
        assert result["crossCompiler"] == AARCH64_CXX


def test_aarch64_without_cross_compiler_is_package_missing(compare_run, tmp_path, validate):
    """A kernel whose PATH has no compilers: the aarch64 target fails before any training, with the
    apt command."""
    _, _, config = compare_run
    client = KernelClient(env={"PATH": str(tmp_path), "CXX": ""})
    try:
        with pytest.raises(RpcError) as err:
            client.request("build/tvm", {"config": str(config), "target": "aarch64"}, timeout=120)
    finally:
        assert client.close() == 0
    validate("KernelErrorData", err.value.data)
    assert err.value.code == -32003 and err.value.data["kind"] == "packageMissing"
    assert err.value.data["install"].startswith("apt-get install -y g++")
    assert err.value.data["install"] in err.value.message


def test_unknown_target_is_config_invalid(kernel, compare_run):
    _, _, config = compare_run
    with pytest.raises(RpcError) as err:
        kernel.request("build/tvm", {"config": str(config), "target": "pi-zero"})
    assert err.value.code == -32001
    assert err.value.data == {"kind": "configInvalid", "path": "targets"}
    assert "x86-64" in err.value.message
    assert not (config.parent / "out" / "tvm-pi-zero").exists()


def test_bad_config_targets_are_config_invalid(kernel, tmp_path):
    """Checked before any training: a kind TVM cannot build here, an option TVM does not know."""
    config = copy_example(tmp_path / "digits")
    edit_config(
        config,
        lambda d: d.update(
            targets=[{"name": "gpu-cl", "tvm": {"kind": "opencl"}}, {"name": "typo", "tvm": "llvm -mcpuu=znver4"}]
        ),
    )
    for name, path in (("gpu-cl", "targets.0.tvm"), ("typo", "targets.1.tvm")):
        with pytest.raises(RpcError) as err:
            kernel.request("build/tvm", {"config": str(config), "target": name}, timeout=60)
        assert err.value.code == -32001 and err.value.data["path"] == path, err.value.message
    assert not (config.parent / "out").exists()


def test_config_target_strings_and_dicts(tmp_path):
    from qat_kernel.pipeline.config import load_config
    from qat_kernel.runtimes import targets as method

    assert method.parse_target_string("llvm -mtriple=aarch64-linux-gnu -mattr=+neon,+dotprod -num-cores=4") == {
        "kind": "llvm",
        "mtriple": "aarch64-linux-gnu",
        "mattr": ["+neon", "+dotprod"],
        "num-cores": 4,
    }
    assert method.parse_target_string("cuda -arch=sm_80") == {"kind": "cuda", "arch": "sm_80"}
    assert method.parse_target_string("aarch64") == "aarch64"
    assert method.parse_target_string("llvm") == "llvm"
    with pytest.raises(ValueError):
        method.parse_target_string("-mcpu=znver4")
    config = copy_example(tmp_path / "digits")
    edit_config(
        config,
        lambda d: d.update(
            targets=[
                {"name": "host", "tvm": "llvm"},
                {"name": "pi", "tvm": "llvm -mtriple=aarch64-linux-gnu -mattr=+neon"},
                {"name": "portable", "tvm": {"kind": "llvm"}},
                {"name": "x86-64", "tvm": {"kind": "llvm"}},
                {"name": "board", "tvm": "aarch64", "rpc": "10.0.0.7:9090"},
            ]
        ),
    )
    cfg = load_config(str(config))
    assert method.config_target(cfg, "pi") == (
        {"kind": "llvm", "mtriple": "aarch64-linux-gnu", "mattr": ["+neon"]},
        "config",
        "targets.1.tvm",
    )
    assert method.config_target(cfg, "x86-64")[1] == "config"  # the config's entry before the preset
    assert method.config_target(cfg, "aarch64") == ("aarch64", "preset", None)
    # the board's address with the YAML path a connection error points at; none for the others or a preset
    assert method.config_rpc(cfg, "board") == ("10.0.0.7:9090", "targets.4.rpc")
    assert method.config_rpc(cfg, "pi") is None and method.config_rpc(cfg, "aarch64") is None
    spec, source, resolved = method.resolve_config(cfg, "portable")
    assert resolved.target == {"kind": "llvm"} and resolved.runnable_here
    assert method.out_dir(cfg, "tvm", "my board/v2") == config.parent / "out" / "tvm-my_board_v2"


def test_cancel_mid_build_leaves_no_out_dir(kernel, compare_run):
    """Last: removes the x86-64 build of the tests above."""
    _, _, config = compare_run
    out = config.parent / "out"
    shutil.rmtree(out / "tvm-x86-64", ignore_errors=True)
    request_id = kernel.request_async("build/tvm", {"config": str(config), "target": "x86-64", "verify": False})
    kernel.wait_progress(request_id, timeout=120, where=lambda p: p["stage"] == "build")
    kernel.notify("$/cancelRequest", {"id": request_id})
    response = kernel.wait_response(request_id, timeout=120)
    assert response["error"]["code"] == -32800, response
    assert response["error"]["data"]["kind"] == "cancelled"
    assert not (out / "tvm-x86-64").exists()
    assert _leftovers(out, "x86-64") == []
    assert (out / "digits.qdq.onnx").is_file()
