"""Running a built library here in TVM's Relax VM (on a board: rpc.py)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from qat_kernel.pipeline.model_io import Inputs
from qat_kernel.reads import REPORT_BYTES, read_regular_text
from qat_kernel.rpc.errors import TvmBuildError
from qat_kernel.runtimes import provenance
from qat_kernel.runtimes.targets import elf_machine, host_arch

if TYPE_CHECKING:
    import tvm
    from tvm import relax

# (library path, its mtime, device) -> the Relax VM that runs it and its device
_VMS: dict[tuple[str, int, str], tuple[relax.VirtualMachine, tvm.runtime.Device]] = {}


def _artifact_report(artifact: Path) -> dict[str, Any]:
    report = artifact.with_name("build-report.json")
    if report.exists():
        try:
            return json.loads(read_regular_text(report, REPORT_BYTES))
        except (OSError, ValueError):
            pass
    return {}


def _artifact_device(artifact: Path) -> str:
    return _artifact_report(artifact).get("device", "cpu")


def _static_batch(artifact: Path) -> int | None:
    """The batch a library was built for (build_tvm's batch), None for a symbolic batch."""
    batch = _artifact_report(artifact).get("batch")
    return batch if isinstance(batch, int) and batch > 0 else None


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


def load_tvm(artifact: str | Path, device: str | None = None) -> Callable[[Inputs | np.ndarray], np.ndarray]:
    """A function inputs -> numpy out running the library's `main` in TVM's Relax VM: the model's Inputs
    (pipeline.model_io, in the model's order, as the ONNX export's inputs are) or one array. The device comes
    from the build-report.json next to the library (cpu when absent)."""
    outputs = load_tvm_outputs(artifact, device)

    def run(inputs: Inputs | np.ndarray) -> np.ndarray:
        return outputs(inputs)[0]

    return run


def load_tvm_outputs(
    artifact: str | Path, device: str | None = None
) -> Callable[[Inputs | np.ndarray], list[np.ndarray]]:
    """As load_tvm, every output of `main` (a model built with more graph outputs: compare/stages' taps)."""
    _default_threads()
    import tvm
    from tvm import relax

    artifact = Path(artifact)
    # Loading a library runs its constructors: only one the kernel built.
    provenance.require(artifact, "build/tvm")
    machine = elf_machine(artifact)
    if machine is not None and machine != host_arch():
        raise TvmBuildError(
            f"{artifact.name} is built for {machine}; this machine is {host_arch()}. Run it on "
            "the board (TVM RPC server) or under qemu-user."
        )
    device = device or _artifact_device(artifact)
    key = (str(artifact.resolve()), artifact.stat().st_mtime_ns, device)
    if key not in _VMS:
        # typed as tvm_ffi's base Module and Device; at run time they are TVM's subclasses, which the VM takes
        lib = cast(tvm.runtime.Module, tvm.runtime.load_module(str(artifact)))
        dev = cast(tvm.runtime.Device, tvm.cuda(0) if device == "cuda" else tvm.cpu(0))
        if device == "cuda" and not dev.exist:
            raise TvmBuildError("This library is built for CUDA and no CUDA GPU is visible here")
        _VMS[key] = (relax.VirtualMachine(lib, dev), dev)
    vm, dev = _VMS[key]
    fn = vm["main"]
    static = _static_batch(artifact)

    def call(arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        out = fn(*(tvm.runtime.tensor(np.ascontiguousarray(a), dev) for a in arrays))
        if isinstance(out, (list, tuple)) or hasattr(out, "__len__") and not hasattr(out, "numpy"):
            return [o.numpy() for o in out]
        return [out.numpy()]

    def run(inputs: Inputs | np.ndarray) -> list[np.ndarray]:
        arrays = inputs.numpy().values if isinstance(inputs, Inputs) else (np.ascontiguousarray(inputs),)
        count = len(arrays[0]) if arrays and np.ndim(arrays[0]) else 0
        if static is None or count == static:
            return call(arrays)
        # a library built for a fixed batch: the samples in chunks of that size, the last one padded
        outs: list[list[np.ndarray]] = []
        for start in range(0, count, static):
            chunk = [a[start : start + static] for a in arrays]
            short = static - len(chunk[0])
            if short:
                chunk = [np.concatenate([c, np.repeat(c[-1:], short, axis=0)]) for c in chunk]
            outs.append([o[: static - short] for o in call(chunk)])
        return [np.concatenate(parts) for parts in zip(*outs)]

    return run


def run_tvm(artifact: str | Path, inputs: Inputs | np.ndarray) -> np.ndarray:
    """Run the built library on `inputs` (the model's Inputs, or one array such as float32 [N,1,8,8]) and return
    its first output."""
    return load_tvm(artifact)(inputs)


def forget_vms(folder: Path) -> None:
    """Drop the Relax VMs load_tvm cached for libraries in `folder` (a staging folder that is moved)."""
    import os

    prefix = str(folder.resolve()) + os.sep
    for key in [k for k in _VMS if str(k[0]).startswith(prefix)]:
        _VMS.pop(key, None)
