"""TVM (Relax, 0.27) build of the digits QDQ model: our Q/DQ fold, report, parity with ONNX
Runtime on real digits, targets (aarch64 cross build, cuda) and latency helpers.

Every output goes to tmp_path. The builds are shared per module (each takes ~2 s on 2 cores)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

tvm = pytest.importorskip("tvm")
onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from qat_kernel.jobs.tvm_vs_ort import compare_backends, verify_parity
from qat_kernel.rpc.errors import Cancelled, ToolchainMissing, TvmBuildError
from qat_kernel.runtimes import targets as targets_mod
from qat_kernel.runtimes.bench import bench_latency
from qat_kernel.runtimes.onnx.fp32_twin import strip_qdq
from qat_kernel.runtimes.ort.sessions import run_ort, session
from qat_kernel.runtimes.targets import elf_machine, resolve_target
from qat_kernel.runtimes.tvm import vnni
from qat_kernel.runtimes.tvm.build import build_tvm, import_onnx
from qat_kernel.runtimes.tvm.fold import count_ops, fold_qdq
from qat_kernel.runtimes.tvm.run import run_tvm

DIGITS_QDQ = Path(__file__).resolve().parents[2] / "test/fixtures/digits/digits.qdq.onnx"


@pytest.fixture(scope="module")
def digits_x() -> np.ndarray:
    from sklearn.datasets import load_digits

    return (load_digits().images / 16.0).astype(np.float32)[:, None]


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("tvm")


@pytest.fixture(scope="module")
def int8_build(work):
    events: list = []
    report = build_tvm(
        DIGITS_QDQ,
        "x86-64",
        work / "int8",
        progress=lambda stage, message, fraction: events.append((stage, message, fraction)),
    )
    return report, events


@pytest.fixture(scope="module")
def fp32_build(work):
    return build_tvm(DIGITS_QDQ, "x86-64", work / "qdq-fp32", fold_int8=False)


def _e_machine(path) -> int:
    with open(path, "rb") as f:
        head = f.read(20)
    assert head[:4] == b"\x7fELF"
    return int.from_bytes(head[18:20], "little" if head[5] == 1 else "big")


# ---------------------------------------------------------------------------------------- fold


def test_fold_turns_fp32_qdq_into_int8_ops():
    mod, provenance, _ = import_onnx(DIGITS_QDQ)
    before = count_ops(mod["main"])
    assert before["per_precision"]["int8"] == 0  # the importer computes Q/DQ in fp32
    assert before["anchors_per_precision"]["float32"] == 4  # 2 conv2d + 2 matmul
    result = fold_qdq(mod, provenance)
    after = count_ops(result.mod["main"])
    assert after["per_precision"]["int8"] > 0
    assert after["anchors_per_precision"] == {"int8": 4, "int32": 0, "float16": 0, "float32": 0}
    assert after["per_precision"]["float32"] == 0  # only the requantize epilogues stay float
    assert after["conversions"].get("dequantize:int8->float32", 0) == 0  # no weight dequantize left
    script = result.mod.script()
    assert 'out_dtype="int32"' in script and "R.dequantize" not in script
    folded = {f["onnx_node"]: f for f in result.folded}
    assert folded["node_conv2d"]["output"] == "quantized"
    assert folded["node_linear_1"]["output"] == "float32"  # the logits stay float: dequantized epilogue


def test_build_report_digits(int8_build, fp32_build):
    report, events = int8_build
    art = Path(report["artifact"])
    assert art.is_file() and art.stat().st_size == report["artifact_bytes"] > 0
    assert report["tvm_version"].startswith("0.27")
    target = json.loads(report["target"])
    assert target["kind"] == "llvm"
    if targets_mod.host_arch() == "x86_64":
        assert report["arch"] == "x86_64" and elf_machine(art) == "x86_64"
        cpu = targets_mod.host_cpu()
        if cpu:
            assert target.get("mcpu") == cpu
    assert report["build_time_s"] > 0 and report["times_s"]["compile"] > 0
    # int8 op count > 0 after our pass, 0 before it
    assert report["ops_before"]["per_precision"]["int8"] == 0
    assert report["ops_after"]["per_precision"]["int8"] > 0
    assert report["ops_per_precision"] == report["ops_after"]["per_precision"]
    assert fp32_build["ops_per_precision"]["int8"] == 0
    # per ONNX node: convs and gemms int8, the input quantize fp32 with its reason
    ops = {o["onnx_node"]: o for o in report["ops"]}
    for o in ops.values():
        if o["op_type"] in ("Conv", "Gemm", "Relu", "MaxPool", "Reshape"):
            assert o["precision"] == "int8", o
    first_q = next(o for o in report["ops"] if o["op_type"] == "QuantizeLinear")
    assert first_q["precision"] == "fp32" and "graph input" in first_q["reason"]
    assert all(o["reason"] for o in report["ops"] if o["precision"] == "fp32")
    # the lowered kernels: convs/matmuls read uint8 data
    fused = [k for k in report["kernels"] if "conv2d" in k["name"] or "matmul" in k["name"]]
    assert len(fused) == 4 and all(k["precision"] == "int8" for k in fused)
    assert all(k["precision"] == "float32" for k in fp32_build["kernels"] if "conv2d" in k["name"])
    # int8 weights: smaller library than the fp32-weight build
    assert report["artifact_bytes"] < fp32_build["artifact_bytes"]
    # the report on disk is the returned JSON
    on_disk = json.loads(Path(report["report_path"]).read_text(encoding="utf-8"))
    assert on_disk == json.loads(json.dumps(report))
    stages = [e[0] for e in events]
    assert stages[0] == "target" and stages[-1] == "done" and "fold" in stages and "compile" in stages
    fractions = [e[2] for e in events]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0


def _kernel_graph_file(report: dict) -> dict:
    """build/tvm's pane file around the report's kernel graph (analysis.model_graph.runtime_graph's fields)."""
    graph = report["kernel_graph"]
    return {"format": "qat-studio.graph/1", "name": "DigitsNet", "stage": "tvm", "flow": "pt2e", **graph}


def _edges_connect(graph: dict) -> None:
    """Every value a node reads is written by a node before it, and the output is reached from the input."""
    made: dict = {}
    for n in graph["nodes"]:
        assert all(i in made for i in n["inputs"]), n
        made.update({o: n for o in n["outputs"]})
    reached = {n["id"] for n in graph["nodes"] if n["kind"] == "input"}
    for n in graph["nodes"]:
        if any(made[i]["id"] in reached for i in n["inputs"]):
            reached.add(n["id"])
    assert "output" in reached


def test_kernel_graph_int8_kernels_with_their_modules(int8_build, validate):
    report, _ = int8_build
    graph = _kernel_graph_file(report)
    validate("ModelGraph", graph)
    _edges_connect(graph)
    ops = [n for n in graph["nodes"] if n["kind"] == "op"]
    # one node per kernel the library calls: the input quantize, 2 conv and 2 matmul kernels, max_pool2d, reshape
    assert len(ops) == 7 and {n["name"] for n in ops} <= {k["name"] for k in report["kernels"]}
    fused = [n for n in ops if n["op"] in ("nn.conv2d", "matmul")]
    assert [n["modules"] for n in fused] == [["conv1", "relu1"], ["conv2", "relu2"], ["fc1", "relu3"], ["fc2"]]
    assert [n["module"] for n in fused] == ["conv1", "conv2", "fc1", "fc2"]
    assert all(n["precision"] == "int8" and n["name"].startswith("fused_") for n in fused)
    conv1 = fused[0]
    assert {"node_conv2d", "node_relu", "node_dequantize_per_channel_2"} <= set(conv1["onnx_nodes"])
    # the weight as the kernel holds it: int8, or int16 on the AVX2 path (vnni.py)
    isa = vnni.isa_for(resolve_target("x86-64").target)
    weight = isa.weight if isa is not None else "int8"
    assert conv1["attributes"]["dtypes"].startswith(f"uint8, {weight}")
    assert conv1["attributes"]["dtypes"].endswith("uint8")
    assert graph["tensors"][conv1["outputs"][0]] == {"dtype": "uint8", "dims": [-1, 16, 8, 8]}
    first = next(n for n in ops if n["inputs"] == ["x"])
    assert (
        first["op"] == "quantize"
        and first["precision"] == "fp32"
        and first["onnx_nodes"] == ["node_quantize_per_tensor"]
    )
    assert [m["path"] for m in graph["modules"]][:2] == ["conv1", "relu1"] and graph["modules"][0]["type"] == "Conv2d"
    # ids are unique although TVM names several bindings `lv`
    assert len({n["id"] for n in graph["nodes"]}) == len(graph["nodes"])


def test_kernel_graph_without_the_fold_maps_fp32_kernels(fp32_build, validate):
    graph = _kernel_graph_file(fp32_build)
    validate("ModelGraph", graph)
    _edges_connect(graph)
    convs = [n for n in graph["nodes"] if n["op"] == "nn.conv2d"]
    assert [n["modules"] for n in convs] == [["conv1", "relu1"], ["conv2", "relu2"]]
    assert {n["precision"] for n in convs} == {"fp32"}


def test_kernel_graph_of_a_float_model_keeps_the_op_that_ends_each_kernel(tmp_path, validate):
    """The FP32 twin: TVM fuses conv, bias and ReLU with the ReLU last, the binding FuseOps renames; its module
    is still the kernel's."""
    fp32 = strip_qdq(DIGITS_QDQ, tmp_path / "fp32.onnx")
    graph = _kernel_graph_file(build_tvm(fp32, "x86-64", tmp_path / "out"))
    validate("ModelGraph", graph)
    _edges_connect(graph)
    fused = [n for n in graph["nodes"] if n["op"] in ("nn.conv2d", "matmul")]
    assert [n["modules"] for n in fused] == [["conv1", "relu1"], ["conv2", "relu2"], ["fc1", "relu3"], ["fc2"]]
    assert all("node_relu" in n["onnx_nodes"] for n in fused[:1])


def test_build_cancel_leaves_nothing(tmp_path):
    calls = {"n": 0}

    def cancel_after_import():
        calls["n"] += 1
        if calls["n"] >= 2:
            raise Cancelled("Request cancelled")

    with pytest.raises(Cancelled):
        build_tvm(DIGITS_QDQ, "x86-64", tmp_path / "out", check_cancelled=cancel_after_import)
    assert list(tmp_path.iterdir()) == []


def test_build_replaces_out_dir_atomically(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "stale.txt").write_text("old")
    report = build_tvm(DIGITS_QDQ, "x86-64", out, batch=1)
    assert sorted(p.name for p in out.iterdir()) == ["build-report.json", "model.so"]
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # no temp or old folder left
    assert report["batch"] == 1
    x = np.zeros((1, 1, 8, 8), np.float32)
    assert run_tvm(report["artifact"], x).shape == (1, 10)


# -------------------------------------------------------------------------------------- parity


def test_parity_int8_matches_ort_on_digits(int8_build, digits_x):
    report, _ = int8_build
    result = verify_parity(DIGITS_QDQ, report["artifact"], digits_x)
    vs = result["vsOrt"]
    assert vs["samples"] == len(digits_x) == 1797
    assert result["outputKind"] == "accumulator"  # float logits straight from the last Gemm
    assert vs["top1Agreement"] >= 0.999
    assert vs["cosineMin"] > 0.9999
    # one step = one unit of the last Gemm's int32 accumulator. The fold's epilogue adds the float bias as
    # PyTorch does; ONNX Runtime's QLinearConv/QGemm round the biases of conv1, conv2 and fc1 to int32, which
    # moves some uint8 activations a step and the logits by many accumulator units
    # (docs/measurements.md: ORT vs PyTorch)
    assert vs["maxAbsDiff"] < 0.05
    json.dumps(result)
    # a reference array (e.g. PyTorch INT8 outputs) is compared the same way
    ref = run_ort(DIGITS_QDQ, digits_x[:64])
    with_ref = verify_parity(DIGITS_QDQ, report["artifact"], digits_x[:64], reference_int8_outputs=ref)
    assert with_ref["ortVsReference"]["maxAbsDiff"] == 0.0
    assert with_ref["vsReference"]["top1Agreement"] >= 0.98


def test_parity_last_quantized_tensor_within_one_step(work, digits_x):
    """Cut the model at fc1's dequantized uint8 output: TVM's integer kernels and ORT agree
    within one quantization step on every element."""
    cut = work / "digits-fc1.onnx"
    model = onnx.load(str(DIGITS_QDQ))
    gemms = [n for n in model.graph.node if n.op_type == "Gemm"]
    last_dq = gemms[-1].input[0]
    onnx.utils.extract_model(str(DIGITS_QDQ), str(cut), ["x"], [last_dq])
    report = build_tvm(cut, "x86-64", work / "fc1")
    result = verify_parity(cut, report["artifact"], digits_x)
    assert result["outputKind"] == "quantized"
    vs = result["vsOrt"]
    assert vs["maxDiffSteps"] <= 1.0 + 1e-3
    assert vs["withinOneStep"] == 1.0
    exit_dq = [o for o in report["ops"] if o["op_type"] == "DequantizeLinear" and o["precision"] == "fp32"]
    assert exit_dq and "graph output" in exit_dq[-1]["reason"]


def _residual_qdq(path: Path) -> Path:
    """A QDQ model with what the fold must handle: a non-zero activation zero point (128), a residual
    Add of two dequantized tensors (falls back to fp32), a reshape between equal Q/DQ, a Gemm."""
    from onnx import TensorProto as TP
    from onnx import helper as h
    from onnx import numpy_helper as nh

    rng = np.random.default_rng(0)
    c = 4
    inits = [
        nh.from_array(np.float32(0.02), "sx"),
        nh.from_array(np.uint8(128), "zx"),
        nh.from_array(rng.integers(-127, 128, (c, c, 3, 3)).astype(np.int8), "w"),
        nh.from_array((rng.random(c) * 0.01 + 0.002).astype(np.float32), "ws"),
        nh.from_array(np.zeros(c, np.int8), "wz"),
        nh.from_array((rng.standard_normal(c) * 0.1).astype(np.float32), "b"),
        nh.from_array(np.float32(0.05), "sy"),
        nh.from_array(np.uint8(10), "zy"),
        nh.from_array(np.array([-1, c * 36], np.int64), "shape"),
        nh.from_array(rng.integers(-127, 128, (5, c * 36)).astype(np.int8), "w2"),
        nh.from_array(np.float32(0.004), "w2s"),
        nh.from_array(np.int8(0), "w2z"),
        nh.from_array(np.float32(0.03), "sr"),
        nh.from_array(np.uint8(0), "zr"),
    ]
    nodes = [
        h.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
        h.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"]),
        h.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], axis=0),
        h.make_node("Conv", ["xd", "wd", "b"], ["c"], pads=[1, 1, 1, 1], kernel_shape=[3, 3], name="conv"),
        h.make_node("QuantizeLinear", ["c", "sy", "zy"], ["cq"]),
        h.make_node("DequantizeLinear", ["cq", "sy", "zy"], ["cd"]),
        h.make_node("Add", ["cd", "xd"], ["s"], name="residual"),
        h.make_node("Relu", ["s"], ["r"]),
        h.make_node("QuantizeLinear", ["r", "sr", "zr"], ["rq"]),
        h.make_node("DequantizeLinear", ["rq", "sr", "zr"], ["rd"]),
        h.make_node("Reshape", ["rd", "shape"], ["f"], name="flatten"),
        h.make_node("QuantizeLinear", ["f", "sr", "zr"], ["fq"]),
        h.make_node("DequantizeLinear", ["fq", "sr", "zr"], ["fd"]),
        h.make_node("DequantizeLinear", ["w2", "w2s", "w2z"], ["w2d"]),
        h.make_node("Gemm", ["fd", "w2d"], ["y"], transB=1, name="fc"),
    ]
    graph = h.make_graph(
        nodes,
        "residual",
        [h.make_tensor_value_info("x", TP.FLOAT, ["batch", c, 6, 6])],
        [h.make_tensor_value_info("y", TP.FLOAT, ["batch", 5])],
        inits,
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 18)])
    model.ir_version = 9
    onnx.save(model, str(path))
    return path


def test_fold_fallback_is_reported_and_correct(tmp_path):
    src = _residual_qdq(tmp_path / "residual.onnx")
    report = build_tvm(src, "x86-64", tmp_path / "out")
    ops = {o["onnx_node"]: o for o in report["ops"]}
    assert ops["residual"]["precision"] == "fp32"
    assert "residual add of two dequantized tensors" in ops["residual"]["reason"]
    assert ops["conv"]["precision"] == "int8" and "zp-shifted" in ops["conv"]["detail"]
    assert ops["flatten"]["precision"] == "int8" and ops["fc"]["precision"] == "int8"
    x = np.random.default_rng(1).random((64, 4, 6, 6)).astype(np.float32) * 4 - 1
    # the reference: the QDQ graph as written (ORT without graph optimizations: float ops on dequantized values,
    # float bias), which is what the fold's epilogue computes; ORT's fused QLinearConv rounds the bias to int32
    literal = run_ort(session(src, level="disabled"), x)
    result = verify_parity(src, report["artifact"], x, reference_int8_outputs=literal)
    vs = result["vsReference"]
    assert vs["maxDiffSteps"] <= 1.0 + 1e-3 and vs["top1Agreement"] == 1.0
    assert result["vsOrt"]["top1Agreement"] >= 0.95


# ------------------------------------------------------------------------------------- targets


def test_aarch64_cross_build_or_toolchain_missing(tmp_path, digits_x):
    if shutil.which(targets_mod.AARCH64_CXX) is None:
        with pytest.raises(ToolchainMissing) as info:
            build_tvm(DIGITS_QDQ, "aarch64", tmp_path / "a64")
        assert info.value.install == "apt-get install -y g++-aarch64-linux-gnu"
        assert not (tmp_path / "a64").exists()
        return
    report = build_tvm(DIGITS_QDQ, "aarch64", tmp_path / "a64")
    assert _e_machine(report["artifact"]) == 183  # EM_AARCH64
    assert report["arch"] == "aarch64" and report["cross_compiler"] == "aarch64-linux-gnu-g++"
    assert json.loads(report["target"]) == {"kind": "llvm", "mtriple": "aarch64-linux-gnu", "mattr": ["+neon"]}
    assert report["ops_per_precision"]["int8"] > 0
    if targets_mod.host_arch() != "aarch64":
        assert report["runnable_here"] is False
        with pytest.raises(TvmBuildError, match="qemu"):
            run_tvm(report["artifact"], digits_x[:1])


def test_missing_cross_compiler_raises_with_install_command(tmp_path, monkeypatch):
    monkeypatch.setattr(targets_mod.shutil, "which", lambda name: None)
    monkeypatch.setattr(targets_mod, "host_arch", lambda: "x86_64")
    with pytest.raises(ToolchainMissing) as info:
        build_tvm(DIGITS_QDQ, "aarch64", tmp_path / "a64")
    err = info.value
    assert "aarch64-linux-gnu-g++" in err.message and err.install in err.message
    assert err.to_rpc()["data"] == {
        "kind": "packageMissing",
        "install": "apt-get install -y g++-aarch64-linux-gnu",
        "package": "aarch64-linux-gnu-g++",
    }
    assert not (tmp_path / "a64").exists()


def test_cuda_without_gpu_or_compiler(tmp_path, monkeypatch):
    monkeypatch.setattr(targets_mod, "cuda_arch_here", lambda: None)
    with pytest.raises(ToolchainMissing, match="arch"):
        resolve_target("cuda")
    monkeypatch.setattr(targets_mod.shutil, "which", lambda name: None if name == "nvcc" else "/usr/bin/" + name)
    try:
        import cuda.bindings.nvrtc  # noqa: F401
    except Exception:  # noqa: BLE001
        with pytest.raises(ToolchainMissing) as info:
            resolve_target({"kind": "cuda", "arch": "sm_90"})
        assert "nvidia-cuda-toolkit" in info.value.install


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="no nvcc: the cuda build needs a CUDA compiler")
def test_cuda_build_with_explicit_arch(tmp_path):
    report = build_tvm(DIGITS_QDQ, {"kind": "cuda", "arch": "sm_90"}, tmp_path / "cuda")
    assert report["device"] == "cuda" and Path(report["artifact"]).is_file()
    assert report["ops_per_precision"]["int8"] > 0
    if not report["runnable_here"]:
        assert any("cannot run" in n for n in report["notes"])


def test_bad_target_is_a_clear_error(tmp_path):
    with pytest.raises(TvmBuildError, match="no longer accepts"):
        build_tvm(DIGITS_QDQ, "llvm -mcpu=znver4", tmp_path / "x")


# ------------------------------------------------------------------------------------- latency


def test_bench_latency_shape():
    result = bench_latency(lambda x: x * 2, np.ones((16, 3), np.float32), warmup=2, runs=25)
    assert result["runs"] == 25 and result["throughputPerS"] == pytest.approx(16 / (result["medianMs"] / 1e3))
    assert 0 <= result["minMs"] <= result["p10Ms"] <= result["medianMs"] <= result["p90Ms"]


def test_strip_qdq_is_the_fp32_twin(tmp_path, digits_x):
    fp32 = strip_qdq(DIGITS_QDQ, tmp_path / "fp32.onnx")
    ops = {n.op_type for n in onnx.load(str(fp32)).graph.node}
    assert not ops & {"QuantizeLinear", "DequantizeLinear"}
    a, b = run_ort(DIGITS_QDQ, digits_x), run_ort(fp32, digits_x)
    assert (a.argmax(1) == b.argmax(1)).mean() > 0.97


def test_strip_qdq_keeps_a_dequantize_whose_scale_is_computed():
    # a constant int8 tensor dequantized by a scale the graph takes as an input: no float value to fold in
    from onnx import TensorProto, helper, numpy_helper

    from qat_kernel.runtimes.onnx.fp32_twin import strip_qdq_model

    graph = helper.make_graph(
        [helper.make_node("DequantizeLinear", ["w", "s"], ["y"])],
        "computed_scale",
        [helper.make_tensor_value_info("s", TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])],
        [numpy_helper.from_array(np.array([1, -2, 3], np.int8), "w")],
    )
    twin = strip_qdq_model(helper.make_model(graph))
    assert [(n.op_type, list(n.input)) for n in twin.graph.node] == [("DequantizeLinear", ["w", "s"])]


def test_compare_backends_digits(tmp_path, digits_x):
    class Ctx:
        def __init__(self):
            self.messages = []

        def progress(self, stage, message, fraction=None, **_):
            self.messages.append(message)

        def check_cancelled(self):
            pass

    ctx = Ctx()
    rows = ("tvm-int8", "tvm-qdq-fp32", "ort-int8")
    result = compare_backends(DIGITS_QDQ, tmp_path, digits_x[:16], ctx, runs=20, rows=rows)
    by_name = {r["name"]: r for r in result["rows"]}
    assert list(by_name) == list(rows) and result["baseline"] == "tvm-int8" and result["rounds"] == 5
    for r in by_name.values():
        assert set(r["latency"]) == {"b1", "b16"} and r["latency"]["b16"]["medianMs"] > 0
        assert len(r["latency"]["b1"]["roundsMs"]) == 5 and r["latency"]["b1"]["runs"] == 20
    assert by_name["tvm-int8"]["opsPerPrecision"]["int8"] > 0
    assert by_name["tvm-int8"]["speedupVsTorchFp32"] == {"b1": 1.0, "b16": 1.0}
    # every build happens before the first timing round: the rows are timed side by side
    first_round = ctx.messages.index(next(m for m in ctx.messages if m.startswith("timing round 1 ")))
    assert sum(m.startswith("Building ") for m in ctx.messages[:first_round]) == len(rows)
    json.dumps(result)


def test_a_symbolic_batch_the_importer_cannot_take_builds_for_batch_one(tmp_path, monkeypatch, int8_build, digits_x):
    """Where TVM's importer fails with the symbolic batch (as on Hugging Face encoders' attention reshapes), the
    library is built for batch 1, the report says so, and a batch of 7 runs sample by sample with the same
    outputs as the symbolic-batch library."""
    from qat_kernel.runtimes.tvm import build as build_mod
    from qat_kernel.runtimes.tvm.failures import BuildFailure

    real = build_mod.import_onnx
    tried: list = []

    def symbolic_fails(model, batch=None, workspace=None):
        tried.append(batch)
        if batch is None:
            raise BuildFailure("build/tvm failed in TVM's ONNX importer on Reshape node r: InternalError: no shape.")
        return real(model, batch, workspace)

    monkeypatch.setattr(build_mod, "import_onnx", symbolic_fails)
    report = build_tvm(DIGITS_QDQ, "x86-64", tmp_path / "b1")
    assert tried == [None, 1] and report["batch"] == 1
    assert any(n.startswith("built for batch 1") and "Reshape node r" in n for n in report["notes"]), report["notes"]
    x = digits_x[:7]
    got, want = run_tvm(report["artifact"], x), run_tvm(int8_build[0]["artifact"], x)
    assert got.shape == want.shape == (7, 10)
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_an_import_failure_without_a_symbolic_batch_is_raised(tmp_path, monkeypatch):
    from qat_kernel.runtimes.tvm import build as build_mod
    from qat_kernel.runtimes.tvm.failures import BuildFailure

    def fails(model, batch=None, workspace=None):
        raise BuildFailure(f"importer failed at batch {batch}")

    monkeypatch.setattr(build_mod, "import_onnx", fails)
    with pytest.raises(BuildFailure, match="at batch 1$"):
        build_tvm(DIGITS_QDQ, "x86-64", tmp_path / "fixed", batch=1)
    with pytest.raises(BuildFailure, match="at batch None$"):  # both fail: the symbolic batch's error is the one
        build_tvm(DIGITS_QDQ, "x86-64", tmp_path / "dyn")
    assert not (tmp_path / "fixed").exists() and not (tmp_path / "dyn").exists()
