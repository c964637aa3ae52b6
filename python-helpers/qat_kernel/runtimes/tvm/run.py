"""Running a built library, parity against ONNX Runtime (runtimes.parity), and latency."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from qat_kernel.rpc.errors import TvmBuildError
from qat_kernel.runtimes import parity
from qat_kernel.runtimes.targets import elf_machine, host_arch

_VMS: dict = {}


def _artifact_device(artifact: Path) -> str:
    report = artifact.with_name("build-report.json")
    if report.exists():
        try:
            return json.loads(report.read_text(encoding="utf-8")).get("device", "cpu")
        except (OSError, ValueError):
            pass
    return "cpu"


def _default_threads() -> None:
    """TVM's CPU thread pool assumes x86 cores are hyper-threaded and uses half the logical CPUs
    (1 of 2 here, while ONNX Runtime uses 2). Unless the user set TVM_NUM_THREADS, use all the CPUs
    this process may run on; it must be set before TVM starts its pool (the first parallel call)."""
    import os

    if "TVM_NUM_THREADS" not in os.environ:
        try:
            n = len(os.sched_getaffinity(0))
        except AttributeError:
            n = os.cpu_count() or 1
        os.environ["TVM_NUM_THREADS"] = str(n)


def load_tvm(artifact, device: str | None = None) -> Callable[[np.ndarray], np.ndarray]:
    """A function numpy in -> numpy out running the library's `main` in TVM's Relax VM. The
    device comes from the build-report.json next to the library (cpu when absent)."""
    _default_threads()
    import tvm
    from tvm import relax

    artifact = Path(artifact)
    machine = elf_machine(artifact)
    if machine is not None and machine != host_arch():
        raise TvmBuildError(
            f"{artifact.name} is built for {machine}; this machine is {host_arch()}. Run it on "
            "the board (TVM RPC server) or under qemu-user."
        )
    device = device or _artifact_device(artifact)
    key = (str(artifact.resolve()), artifact.stat().st_mtime_ns, device)
    if key not in _VMS:
        lib = tvm.runtime.load_module(str(artifact))
        dev = tvm.cuda(0) if device == "cuda" else tvm.cpu(0)
        if device == "cuda" and not dev.exist:
            raise TvmBuildError("This library is built for CUDA and no CUDA GPU is visible here")
        _VMS[key] = (relax.VirtualMachine(lib, dev), dev)
    vm, dev = _VMS[key]
    fn = vm["main"]

    def run(inputs: np.ndarray) -> np.ndarray:
        out = fn(tvm.runtime.tensor(np.ascontiguousarray(inputs), dev))
        if isinstance(out, (list, tuple)) or hasattr(out, "__len__") and not hasattr(out, "numpy"):
            out = out[0]
        return out.numpy()

    return run


def run_tvm(artifact, inputs: np.ndarray) -> np.ndarray:
    """Run the built library on `inputs` (e.g. float32 [N,1,8,8]) and return its first output."""
    return load_tvm(artifact)(np.asarray(inputs))


def ort_session(onnx_path, threads: int | None = None):
    from qat_kernel.runtimes.ort.session import session

    return session(onnx_path, threads=threads)


def run_ort(onnx_path_or_session, inputs: np.ndarray) -> np.ndarray:
    sess = onnx_path_or_session if hasattr(onnx_path_or_session, "run") else ort_session(onnx_path_or_session)
    name = sess.get_inputs()[0].name
    return sess.run(None, {name: np.asarray(inputs)})[0]


def verify_parity(
    onnx_path,
    artifact,
    inputs: np.ndarray,
    reference_int8_outputs: np.ndarray | None = None,
    progress=None,
    check_cancelled=None,
) -> dict:
    """Run the TVM library and ONNX Runtime (CPU EP) on the same QDQ model and inputs and compare;
    also compare with `reference_int8_outputs` (e.g. PyTorch INT8) when given."""
    progress = progress or (lambda *a: None)
    check_cancelled = check_cancelled or (lambda: None)
    inputs = np.asarray(inputs)
    progress("run-tvm", "Running the TVM library", 0.1)
    out = run_tvm(artifact, inputs)
    check_cancelled()
    progress("run-ort", "Running ONNX Runtime", 0.5)
    ref = run_ort(onnx_path, inputs)
    check_cancelled()
    step = parity.onnx_output_step(onnx_path)
    result = {
        "artifact": str(artifact),
        "onnx": str(onnx_path),
        "outputKind": step["kind"],
        "outputStep": step["step"],
        "vsOrt": parity.compare(out, ref, step["step"]),
        "vsReference": None,
        "ortVsReference": None,
    }
    if reference_int8_outputs is not None:
        result["vsReference"] = parity.compare(out, reference_int8_outputs, step["step"])
        result["ortVsReference"] = parity.compare(ref, reference_int8_outputs, step["step"])
    progress("done", "Parity checked", 1.0)
    return result


def strip_qdq(onnx_path, out_path) -> Path:
    """The FP32 twin of a QDQ model file (strip_qdq_model), written to `out_path`."""
    import onnx

    model = strip_qdq_model(onnx.load(str(onnx_path)))
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(out_path))
    return out_path


def strip_qdq_model(source):
    """The FP32 twin of a QDQ ModelProto (`source` is not changed): each DequantizeLinear of a constant
    becomes a float initializer (the quantized weight's float value), each QuantizeLinear ->
    DequantizeLinear pair on an activation is bypassed. Same graph and weights, no quantization: the
    FP32 baseline."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.ModelProto()
    model.CopyFrom(source)
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    nodes = list(g.node)  # one wrapper per node: id() below stays valid
    producer = {o: n for n in nodes for o in n.output}
    rename: dict = {}
    drop = set()
    new_inits = []

    def const(name):
        t = inits.get(name)
        return None if t is None else numpy_helper.to_array(t)

    for n in nodes:
        if n.op_type != "DequantizeLinear":
            continue
        x = const(n.input[0])
        if x is not None:
            s = const(n.input[1])
            zp = const(n.input[2]) if len(n.input) > 2 and n.input[2] else np.zeros((), x.dtype)
            axis = next((a.i for a in n.attribute if a.name == "axis"), 1)
            shape = [1] * x.ndim
            if s.size > 1:
                shape[axis] = -1
            w = (x.astype(np.float32) - zp.astype(np.float32).reshape(shape)) * s.astype(np.float32).reshape(shape)
            new_inits.append(numpy_helper.from_array(w.astype(np.float32), n.output[0]))
            drop.add(id(n))
            continue
        q = producer.get(n.input[0])
        if q is not None and q.op_type == "QuantizeLinear":
            rename[n.output[0]] = q.input[0]
            drop.add(id(n))
    consumers: dict = {}
    for n in nodes:
        for name in n.input:
            consumers.setdefault(name, []).append(n)
    graph_outputs = {o.name for o in g.output}
    for n in nodes:
        if (
            n.op_type == "QuantizeLinear"
            and n.output[0] not in graph_outputs
            and all(id(c) in drop for c in consumers.get(n.output[0], []))
        ):
            drop.add(id(n))

    def resolve(name):
        while name in rename:
            name = rename[name]
        return name

    kept = []
    for n in nodes:
        if id(n) in drop:
            continue
        for i, name in enumerate(n.input):
            n.input[i] = resolve(name)
        kept.append(n)
    for o in g.output:
        if o.name in rename:
            kept.append(helper.make_node("Identity", [resolve(o.name)], [o.name]))
    used = {i for n in kept for i in n.input}

    def copy(msg):
        c = type(msg)()
        c.CopyFrom(msg)
        return c

    kept = [copy(n) for n in kept]
    keep_inits = [copy(t) for t in g.initializer if t.name in used] + [t for t in new_inits if t.name in used]
    del g.node[:]
    g.node.extend(kept)
    del g.initializer[:]
    g.initializer.extend(keep_inits)
    return model
