"""Running a built library on a board through TVM RPC (tvm.rpc, a `python -m tvm.exec.rpc_server`
there): upload model.so, load it in the remote runtime's Relax VM, run it on numpy inputs and time
it there with the VM's time_evaluator (the board's own clock: no network time in the numbers)."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from qat_kernel.rpc.context import RequestContext
from qat_kernel.rpc.errors import ConfigInvalid, TvmBuildError
from qat_kernel.runtimes import bench

if TYPE_CHECKING:
    import tvm
    from tvm.rpc import RPCSession

    from qat_kernel.pipeline.model_io import Inputs

ADDRESS = re.compile(r"^(?P<host>[^\s:]+):(?P<port>[0-9]{1,5})$")


class RpcUnreachable(TvmBuildError):
    """The RPC server did not answer (or refused the library)."""


def parse_address(text: str) -> tuple[str, int]:
    m = ADDRESS.match(str(text).strip())
    if not m or not 0 < int(m["port"]) < 65536:
        raise ValueError(f"{text!r} is not host:port")
    return m["host"], int(m["port"])


def connect(address: str, timeout_s: float = 5.0) -> RPCSession:
    """A tvm.rpc session; retried until `timeout_s` (a server that has just been started may not
    listen yet)."""
    from tvm import rpc

    host, port = parse_address(address)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return rpc.connect(host, port, session_timeout=0)
        except Exception as exc:  # noqa: BLE001 - TVMError/OSError: nothing listening yet, or refused
            if time.monotonic() >= deadline:
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                raise RpcUnreachable(
                    f"No TVM RPC server answers at {address} ({first}). Start one on the board: "
                    "python -m tvm.exec.rpc_server --host 0.0.0.0 --port "
                    f"{port}"
                ) from exc
            time.sleep(0.25)


class RemoteModel:
    """model.so uploaded to the remote and loaded in its Relax VM on `device` (cpu or cuda)."""

    def __init__(self, remote: RPCSession, artifact: str | Path, device: str = "cpu"):
        from tvm import relax

        artifact = Path(artifact)
        self.remote = remote
        self.name = f"qat-{artifact.parent.name}-{artifact.stat().st_mtime_ns}.so"
        started = time.perf_counter()
        remote.upload(str(artifact), self.name)
        self.upload_s = time.perf_counter() - started
        self.bytes = artifact.stat().st_size
        # typed as tvm_ffi's base Device; at run time it is TVM's subclass, which the VM takes
        self.dev = cast("tvm.runtime.Device", remote.cuda(0) if device == "cuda" else remote.cpu(0))
        self.vm = relax.VirtualMachine(remote.load_module(self.name), self.dev)

    def _tensors(self, inputs: Inputs | np.ndarray) -> list[tvm.runtime.Tensor]:
        """The model's Inputs (pipeline.model_io) or one array as tensors on the remote device."""
        import tvm

        from qat_kernel.pipeline.model_io import as_inputs

        return [tvm.runtime.tensor(a, self.dev) for a in as_inputs(inputs).numpy()]

    def __call__(self, inputs: Inputs | np.ndarray) -> np.ndarray:
        out = self.vm["main"](*self._tensors(inputs))
        if not hasattr(out, "numpy"):
            out = out[0]
        return out.numpy()

    def latency(self, inputs: Inputs | np.ndarray, warmup: int, runs: int) -> dict[str, Any]:
        """runtimes.bench.stats of calls on the remote device (one call per repeat)."""
        self.vm.set_input("main", *self._tensors(inputs))
        for _ in range(max(0, warmup)):
            self.vm.invoke_stateful("main")
        timer = self.vm.time_evaluator("invoke_stateful", self.dev, number=1, repeat=max(1, runs))
        times = [float(t) * 1e3 for t in timer("main").results]
        return bench.stats(times, len(inputs))

    def close(self) -> None:
        try:
            self.remote.remove(self.name)
        except Exception:  # noqa: BLE001 - a server that went away keeps nothing anyway
            pass


def connect_rpc(address: str, path: str) -> RPCSession:
    """A TVM RPC session; ConfigInvalid at the target's `rpc` when nothing answers there."""
    try:
        return connect(address)
    except (ValueError, RpcUnreachable) as exc:
        raise ConfigInvalid(f"{path}: {getattr(exc, 'message', exc)}", path=path) from exc


def on_board(
    remote: RPCSession,
    artifact: Path,
    report: dict[str, Any],
    address: str,
    x: Inputs | np.ndarray,
    runs: int,
    ctx: RequestContext,
) -> tuple[RemoteModel, dict[str, Any]]:
    """(RemoteModel, result `rpc`): the library uploaded and run on the board; its outputs against
    this machine's run of the same library when it runs here; latency at batch 1 and 16 there."""
    from qat_kernel.runtimes.tvm.run import run_tvm

    ctx.progress("rpc", f"uploading {artifact.name} to {address}", 0.0)
    model = RemoteModel(remote, artifact, report["device"])
    info: dict[str, Any] = {
        "address": address,
        "device": report["device"],
        "uploadBytes": model.bytes,
        "uploadSeconds": round(model.upload_s, 4),
    }
    from qat_kernel.pipeline.model_io import repeat_to

    pool = repeat_to(x, max(bench.BATCHES))
    if report["runnable_here"]:
        ctx.progress("rpc", "comparing the board's outputs with this machine's", 0.3)
        info["maxAbsDiffVsLocal"] = float(np.abs(model(x) - run_tvm(artifact, x)).max())
    info["latency"] = {}
    for b in bench.BATCHES:
        ctx.check_cancelled()
        ctx.progress("rpc", f"timing batch {b} on the board", 0.5)
        info["latency"][f"b{b}"] = model.latency(pool[:b], max(3, runs // 10), runs)
    return model, info
