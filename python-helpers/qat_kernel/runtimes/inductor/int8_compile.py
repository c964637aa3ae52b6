"""The PT2E INT8 graph compiled by torch.compile (Inductor, freezing on), the x86 CPU path PyTorch itself
deploys X86InductorQuantizer models on (build/inductor; bench/run's Inductor row).

Freezing lets Inductor treat the weights as constants: it folds the dequantize of each int8 weight,
prepacks it for oneDNN and lowers dequantize -> conv/linear -> quantize to quantized conv/linear
kernels. torch._inductor.config.freezing is set for the compile and restored after; each batch size is
compiled by its first call. A compile that cannot run (no C++ compiler) or fails is a kernel error with a
message, not a traceback (`failure`)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from qat_kernel.pipeline import model_io
from qat_kernel.rpc.context import RequestContext
from qat_kernel.rpc.errors import Cancelled, KernelError
from qat_kernel.runtimes import parity
from qat_kernel.runtimes.bench import BATCHES

if TYPE_CHECKING:
    import numpy as np
    import torch

    from qat_kernel.pipeline.losses import Loss

PARITY_BATCH = 16
LABEL = "Inductor INT8 (PT2E, freezing)"
LABELS = {"torch-fp32": "PyTorch FP32 (eager)", "torch-int8": "PyTorch INT8 (PT2E converted)", "inductor-int8": LABEL}
CXX_INSTALL = "apt-get install -y g++"


class InductorCompileFailed(KernelError):
    """torch.compile could not build the INT8 model (not a bug of the kernel: the message says why)."""

    kind = "internal"


def compiler() -> str:
    """The C++ compiler Inductor's CPU backend will call; ToolchainMissing when there is none."""
    from torch._inductor import config as inductor_config

    from qat_kernel.rpc.errors import ToolchainMissing

    try:
        from torch._inductor.cpp_builder import get_cpp_compiler

        return get_cpp_compiler()
    except Exception as exc:  # noqa: BLE001 - InvalidCxxCompiler, or a torch without the helper
        search = getattr(getattr(inductor_config, "cpp", None), "cxx", None) or ()
        names = ", ".join(str(c) for c in search if c) or "g++"
        raise ToolchainMissing(
            f"torch.compile (Inductor, CPU) needs a C++ compiler and found none ({names}; "
            f"{type(exc).__name__}). Install one with: {CXX_INSTALL}, or set CXX",
            install=CXX_INSTALL,
            package="g++",
        ) from None


def failure(exc: BaseException) -> KernelError:
    """A compile exception as a kernel error whose message names the cause in one line."""
    from qat_kernel.rpc.errors import ToolchainMissing

    if isinstance(exc, KernelError):
        return exc
    from qat_kernel.rpc.errors import format_traceback

    cause = exc
    seen = set()
    while True:
        inner = getattr(cause, "inner_exception", None) or cause.__cause__
        if inner is None or id(inner) in seen:
            break
        seen.add(id(cause))
        cause = inner
    name = type(cause).__name__
    text = str(cause).strip()
    if name == "InvalidCxxCompiler" or (isinstance(cause, FileNotFoundError) and "++" in text):
        return ToolchainMissing(
            f"torch.compile (Inductor, CPU) needs a C++ compiler: {text.splitlines()[0] if text else name}. "
            f"Install one with: {CXX_INSTALL}",
            install=CXX_INSTALL,
            package="g++",
        )
    if name == "CppCompileError":
        lines = [ln.strip() for ln in text.splitlines() if "error" in ln.lower() and ln.strip()]
        detail = lines[1] if len(lines) > 1 else (lines[0] if lines else "see the traceback")
        return InductorCompileFailed(
            f"Inductor's generated C++ did not compile ({detail[:300]}); check that "
            f"the C++ compiler works, or reinstall it with: {CXX_INSTALL}",
            traceback=format_traceback(exc),
            install=CXX_INSTALL,
        )
    first = text.splitlines()[0] if text else ""
    return InductorCompileFailed(
        f"torch.compile (Inductor, freezing) failed on the INT8 model: {name}: {first[:400]}",
        traceback=format_traceback(exc),
    )


@contextlib.contextmanager
def freezing() -> Iterator[None]:
    """torch._inductor.config.freezing on for the compiles inside, and compile_threads 1: Inductor
    compiles in this process instead of starting a pool of worker processes, which would still be
    importing torch (and taking the CPUs) while the first rows are timed. Both restored afterwards."""
    from torch._inductor import config as inductor_config

    saved = inductor_config.freezing, inductor_config.compile_threads
    inductor_config.freezing = True
    inductor_config.compile_threads = 1
    try:
        yield
    finally:
        inductor_config.freezing, inductor_config.compile_threads = saved


def compile_int8(
    converted: torch.nn.Module,
    example: model_io.Inputs | np.ndarray,
    batches: Sequence[int] = BATCHES,
    ctx: RequestContext | None = None,
) -> tuple[Callable[[model_io.Inputs | np.ndarray], np.ndarray], dict[str, float], str]:
    """(fn numpy -> numpy, {"b1": s, "b16": s}, compiler): `converted` compiled with freezing, one
    static-shape graph per batch size in `batches`, each compiled (and timed) by its first call.
    Raises ToolchainMissing or InductorCompileFailed; Cancelled passes through."""
    import torch

    cxx = compiler()
    # a graph compiled by an earlier request is not reused: the seconds are this compile's
    torch._dynamo.reset()  # pyright: ignore[reportPrivateUsage] - torch's documented way to drop compiled graphs
    compiled = torch.compile(converted, dynamic=False)
    seconds: dict[str, float] = {}
    pool = model_io.repeat_to(example, max(batches))
    try:
        with freezing(), torch.no_grad():
            for i, b in enumerate(sorted(batches, reverse=True)):
                if ctx is not None:
                    ctx.check_cancelled()
                    ctx.progress("compile", f"torch.compile (Inductor, freezing), batch {b}", i / len(batches))
                x = model_io.as_inputs(pool[:b]).torch()
                started = time.perf_counter()
                compiled(*x)
                seconds[f"b{b}"] = round(time.perf_counter() - started, 3)
    except Cancelled:
        raise
    except Exception as exc:  # noqa: BLE001 - classified by failure()
        torch._dynamo.reset()  # pyright: ignore[reportPrivateUsage] - torch's documented way to drop compiled graphs
        raise failure(exc) from None
    if ctx is not None:
        ctx.progress("compile", "compiled", 1.0)

    def run(a: model_io.Inputs | np.ndarray) -> np.ndarray:
        return model_io.call(compiled, a).numpy()

    return run, seconds, cxx


def padded_outputs(
    fn: Callable[[model_io.Inputs | np.ndarray], np.ndarray],
    x: model_io.Inputs | np.ndarray,
    batch: int = PARITY_BATCH,
    ctx: RequestContext | None = None,
) -> np.ndarray:
    """fn over `x` in batches of `batch`, the last one padded (by repeating it) so every call has the
    compiled shape; padding rows are dropped from the outputs."""
    import numpy as np

    outs = []
    for start in range(0, len(x), batch):
        if ctx is not None:
            ctx.check_cancelled()
        chunk = x[start : start + batch]
        n = len(chunk)
        if n < batch:
            chunk = model_io.join([chunk] + [chunk[-1:]] * (batch - n))
        outs.append(np.asarray(fn(chunk))[:n])
    return np.concatenate(outs)


def compiled_parity(
    out: np.ndarray, torch_out: np.ndarray, labels: np.ndarray, loss: Loss
) -> tuple[dict[str, Any], dict[str, float | None]]:
    """(compiled vs PyTorch INT8 metrics, accuracies) on the same samples."""
    accuracy: dict[str, float | None] = {}
    if parity.accuracy(out, labels, loss) is not None:
        accuracy = {
            "inductorInt8": parity.accuracy(out, labels, loss),
            "torchInt8": parity.accuracy(torch_out, labels, loss),
        }
    return parity.compare(out, torch_out), accuracy
