"""One torchrun process of a distributed qat/train (see pipeline/distributed.py).

stdout carries only rank 0's messages, one JSON object per line after distributed.MARK: progress,
then the result or a typed error; everything else printed goes to stderr."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from qat_kernel.jobs import opening
from qat_kernel.pipeline import runner
from qat_kernel.pipeline.distributed import MARK, Dist
from qat_kernel.rpc import errors
from qat_kernel.rpc.context import RequestContext


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="qat_kernel.jobs.qat_train_worker")
    parser.add_argument("--config", required=True)
    parser.add_argument("--steps", type=int)
    parser.add_argument("--epochs", type=int)
    parser.add_argument("--checkpoint", required=True)
    args = parser.parse_args(argv)

    out = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1, encoding="utf-8")
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), 1)
    sys.stdout = sys.stderr

    import torch.distributed as dist

    backend = os.environ.get("QAT_DDP_BACKEND", "gloo")
    dist.init_process_group(backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    runner.DIST = Dist(rank, world, backend)

    def emit(message: dict[str, Any]) -> None:
        out.write(MARK + json.dumps(message) + "\n")

    def notify(_method: str, params: dict[str, Any]) -> None:
        if rank == 0:
            emit({"progress": params})

    ctx = RequestContext(f"rank{rank}", "qat/train", {"config": args.config}, notify)
    code = 0
    try:
        from qat_kernel.jobs import qat_train

        cfg = opening.load(ctx, args.config)
        result = qat_train.train_here(
            ctx, cfg, steps=args.steps or None, epochs=args.epochs or None, checkpoint=Path(args.checkpoint)
        )
        if rank == 0:
            emit({"result": result})
    except BaseException as exc:  # noqa: BLE001 - reported to the kernel, typed
        emit({"error": errors.from_exception(exc, ctx.workspace, ctx.method, ctx.stage).to_rpc()})
        code = 1
    finally:
        out.flush()
        if code == 0:
            dist.destroy_process_group()
    return code


if __name__ == "__main__":
    raise SystemExit(main())
