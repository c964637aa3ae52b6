"""qat/train under torchrun: DistributedDataParallel over N local processes (gloo on CPU).

The kernel starts `python -m torch.distributed.run --standalone --nproc_per_node N -m
qat_kernel.jobs.qat_train_worker ...` and relays what rank 0 reports. Every rank builds the model and data from the
config and trains the FP32 weights (seeded; rank 0's are then broadcast to all), prepares QAT the
same way, then trains through DistributedDataParallel, each rank on every N-th training batch: a
QAT step is one batch per process with the gradients averaged, so an epoch is len(train) // N steps.
Rank 0 evaluates, writes the per-epoch checkpoint (with the FP32 reference, so the kernel can rebuild
the trained model from it) and streams progress as lines on its stdout. When the run ends the kernel
rebuilds the model from the checkpoint and keeps it, so later methods reuse it as after a one-process
qat/train. Cancel terminates the process group; the checkpoint of the last finished epoch stays."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Sized
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from qat_kernel import HELPERS_DIR
from qat_kernel.rpc.errors import Cancelled, InternalError, KernelError

if TYPE_CHECKING:
    from collections.abc import Iterable

    import torch

    from qat_kernel.pipeline.config import Config
    from qat_kernel.rpc.context import RequestContext

MARK = "@@qat-kernel "
BACKENDS = ("gloo",)


@dataclass
class Dist:
    rank: int
    world: int
    backend: str

    def shard(self, batches: Iterable[Any]):
        return Shard(batches, self.rank, self.world)

    def broadcast(self, model: torch.nn.Module) -> None:
        """Rank 0's parameters and buffers in every process (thread counts can make float training
        differ in the last bits between processes)."""
        import torch.distributed as dist

        for tensor in list(model.parameters()) + list(model.buffers()):
            dist.broadcast(tensor.data, src=0)

    def wrap(self, model: torch.nn.Module):
        from torch.nn.parallel import DistributedDataParallel

        return DistributedDataParallel(model)


class Shard:
    """Every world-th batch starting at `rank`; with a known length, each rank gets the same number of
    batches (len // world), so no rank waits for a gradient the others never send."""

    def __init__(self, batches: Iterable[Any], rank: int, world: int):
        self.batches, self.rank, self.world = batches, rank, world
        if isinstance(batches, Sized):
            self._len = len(batches) // world
            if self._len == 0:
                from qat_kernel.rpc.errors import ConfigInvalid

                raise ConfigInvalid(
                    f"train.distributed.nproc_per_node: {world} processes need at least "
                    f"{world} training batches; data.entry gives {len(batches)}",
                    path="train.distributed.nproc_per_node",
                )

    def __len__(self) -> int:
        return self._len

    def __iter__(self):
        limit = getattr(self, "_len", None)
        given = 0
        for index, batch in enumerate(self.batches):
            if index % self.world == self.rank:
                if limit is not None and given >= limit:
                    return
                given += 1
                yield batch


def settings(cfg: Config, processes: int | None) -> tuple[int, str]:
    """(processes, backend): the request's `processes`, else the config's train.distributed."""
    spec = cfg.get("train.distributed") or {}
    count = processes or spec.get("nproc_per_node", 1)
    return int(count), spec.get("backend", "gloo")


class RemoteError(KernelError):
    """A typed error a worker reported, raised again in the kernel with the same code and data."""

    def __init__(self, rpc: dict[str, Any]):
        super().__init__(rpc.get("message", "distributed training failed"))
        self.code = rpc.get("code", InternalError.code)
        data = dict(rpc.get("data") or {})
        self.kind = data.pop("kind", "internal")
        self.data = data


def launch(
    cfg: Config, ctx: RequestContext, processes: int, backend: str, worker: str, worker_args: list[str]
) -> dict[str, Any]:
    """Runs the torchrun job (`python -m worker` per rank), relays rank 0's progress, returns its result;
    raises what it raised."""
    package_root = str(HELPERS_DIR)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    env["QAT_DDP_BACKEND"] = backend
    # Each process gets its share of the cores (torchrun would otherwise set 1 and say so).
    env.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // processes)))
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc_per_node={processes}",
        "-m",
        worker,
        *worker_args,
    ]
    ctx.progress("load", f"starting {processes} processes (torchrun, {backend})")
    proc = subprocess.Popen(
        cmd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=str(cfg.folder),
        text=True,
        bufsize=1,
        start_new_session=True,
    )
    out, err = proc.stdout, proc.stderr
    assert out is not None and err is not None  # both are pipes
    lines: queue.Queue[str | None] = queue.Queue()
    tail: deque[str] = deque(maxlen=40)

    def pump_stdout() -> None:
        for line in out:
            lines.put(line)
        lines.put(None)

    def pump_stderr() -> None:
        for line in err:
            tail.append(line)
            sys.stderr.write(line)

    threads = [threading.Thread(target=f, daemon=True) for f in (pump_stdout, pump_stderr)]
    for t in threads:
        t.start()
    result = error = None
    try:
        while True:
            if ctx.cancelled:
                _stop(proc)
                raise Cancelled("Request cancelled; the checkpoint of the last finished epoch is kept")
            try:
                line = lines.get(timeout=0.2)
            except queue.Empty:
                continue
            if line is None:
                break
            if not line.startswith(MARK):
                sys.stderr.write(line)  # user code printing: to the log, as in the kernel
                continue
            message = json.loads(line[len(MARK) :])
            if "progress" in message:
                p = message["progress"]
                extra = {k: v for k, v in p.items() if k not in ("token", "stage", "message", "fraction")}
                ctx.progress(p["stage"], p["message"], p.get("fraction"), **extra)
            elif "result" in message:
                result = message["result"]
            elif "error" in message and error is None:
                error = message["error"]
        code = proc.wait()
    finally:
        if proc.poll() is None:
            _stop(proc)
        for t in threads:
            t.join(timeout=5)
    if error is not None:
        raise RemoteError(error)
    if code != 0 or result is None:
        raise InternalError(f"torchrun exited with code {code} before reporting a result", traceback="".join(tail))
    return result


def _stop(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
