"""qat/train: QAT from the config (pt2e or eager), always training anew, with progress per step
(stage `qat`: epoch, step, loss, lr) and per epoch (stage `epoch`: mean loss, fake-quant accuracy on
the validation set, every layer's fake-quantizer scale/zero-point so drift can be plotted).

After each epoch the QAT model's state_dict is written to <config folder>/out/<name>.qat.pt through a
temp file and a rename, so the file always holds the last finished epoch: a cancel stops at the next
step and leaves it. The run's loss, fake-quant accuracy and every layer's scale / zero point (and the
scale's drift since the first step) also go to TensorBoard event files under
<config folder>/out/tensorboard/<config name>/<UTC time>/, flushed per epoch.

The trained model stays in the kernel's cache, so compare/layers, eval/accuracy,
export/onnx and analyze/sensitivity on the same config (same steps/epochs) reuse it.

With train.distributed.nproc_per_node > 1 (or the request's nprocPerNode) the training runs under
torchrun with DistributedDataParallel (pipeline/distributed.py, jobs/qat_train_worker.py) and the kernel
then keeps the model it trained."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from qat_kernel import atomic, tbevents
from qat_kernel.jobs import opening
from qat_kernel.jobs.reports import analysis as report
from qat_kernel.pipeline import distributed, drift, runner, session, trained_model
from qat_kernel.pipeline.config import Config
from qat_kernel.pipeline.trained_model import Trained
from qat_kernel.rpc.context import RequestContext
from qat_kernel.rpc.errors import ConfigInvalid

WORKER = "qat_kernel.jobs.qat_train_worker"  # what torchrun starts in each process


def train(
    ctx: RequestContext,
    *,
    config: str,
    steps: int | None,
    epochs: int | None,
    checkpoint: bool,
    processes: int | None,
) -> dict[str, Any]:
    """QAT of the config, always anew; `processes` (else the config's train.distributed) > 1 runs torchrun."""
    cfg = opening.load(ctx, config, torchao=True)
    processes, backend = distributed.settings(cfg, processes)
    if processes > 1 and cfg.get("flow") == "torchao":
        raise ConfigInvalid(
            "train.distributed: the torchao flow trains in the kernel's own process for now; set nproc_per_node: 1",
            path="train.distributed",
        )
    if processes > 1 and runner.DIST is None:
        result = _run_distributed(ctx, cfg, processes, backend, steps, epochs, checkpoint)
    else:
        path = _checkpoint_path(cfg) if checkpoint else None
        result = train_here(ctx, cfg, steps=steps, epochs=epochs, checkpoint=path)
    result["summary"] = report.train(result)
    return result


def _checkpoint_path(cfg: Config) -> Path:
    return session.out_path(cfg, f"{cfg.path.name.split('.')[0]}.qat.pt")


def _run_distributed(
    ctx: RequestContext,
    cfg: Config,
    processes: int,
    backend: str,
    steps: int | None,
    epochs: int | None,
    write: bool,
) -> dict[str, Any]:
    started = time.monotonic()
    # The kernel rebuilds the trained model from the checkpoint, so one is written even when none was
    # asked for (then under a temporary name, removed afterwards).
    checkpoint = _checkpoint_path(cfg) if write else session.out_path(cfg, f".ddp-{os.getpid()}.qat.pt")
    args = ["--config", str(cfg.path), "--checkpoint", str(checkpoint)]
    if steps:
        args += ["--steps", str(steps)]
    if epochs:
        args += ["--epochs", str(epochs)]
    try:
        result = distributed.launch(cfg, ctx, processes, backend, WORKER, args)
        result["model"] = session.adopt(cfg, ctx, checkpoint, steps=steps, epochs=epochs).id
    finally:
        if not write and checkpoint.exists():
            checkpoint.unlink()
    if not write:
        result["checkpoint"] = None
    result["distributed"] = {"processes": processes, "backend": backend}
    result["seconds"] = round(time.monotonic() - started, 2)
    return result


def train_here(
    ctx: RequestContext, cfg: Config, *, steps: int | None, epochs: int | None, checkpoint: Path | None
) -> dict[str, Any]:
    """QAT in this process (the kernel's own, or one torchrun rank of a distributed run); after each epoch
    the state goes to `checkpoint` unless it is None."""
    started = time.monotonic()
    saved: dict[str, int] = {}
    main = runner.is_main()
    events = tbevents.EventWriter(tensorboard_dir(cfg)) if main else None

    def epoch_end(trained: Trained, row: dict[str, Any]) -> None:
        if not main:
            return
        with trained_model.evaluating(trained.qat, fake_quant=True) as model:
            from qat_kernel.pipeline.training import accuracy

            row["accuracy"], _ = accuracy(model, trained.val, ctx, trained.loss)
        observers = drift.observer_state(trained.qat)
        if events is not None:
            events.add_scalars(row["step"], epoch_scalars(trained, row))
        if checkpoint is not None:
            state = {
                "epoch": row["epoch"],
                "step": row["step"],
                "flow": trained.flow,
                "config": str(cfg.path),
                "accuracy": row["accuracy"],
                "state_dict": trained.qat.model.state_dict(),
            }
            if runner.DIST is not None:
                state.update(
                    world_size=runner.DIST.world,
                    history=list(trained.history),
                    drift=list(trained.drift),
                    fp32_state_dict=trained.fp32.state_dict(),
                )
            atomic.torch_save(state, checkpoint)
            saved["epoch"] = row["epoch"]
        ctx.progress(
            "epoch",
            f"epoch {row['epoch']}/{trained.epochs}: loss {row['loss']:.3f}, fake-quant accuracy {row['accuracy']:.4f}",
            row["epoch"] / trained.epochs,
            train={
                "epoch": row["epoch"],
                "epochs": trained.epochs,
                "step": row["step"],
                "steps": trained.steps,
                "loss": row["loss"],
                "accuracy": row["accuracy"],
                "observers": observers,
                "checkpoint": str(checkpoint) if checkpoint is not None else None,
            },
        )

    try:
        trained, _ = session.get(cfg, ctx, steps=steps, epochs=epochs, retrain=True, on_epoch_end=epoch_end)
    finally:
        if events is not None:
            events.close()
    result = {
        "flow": trained.flow,
        "epochs": trained.epochs,
        "steps": trained.steps,
        "history": trained.history,
        "accuracy": {
            "fp32": trained.fp32_accuracy,
            "fakeQuant": trained.accuracy("fakeQuant", ctx),
            "samples": trained.val_samples,
        },
        "observers": drift.observer_state(trained.qat),
        "checkpoint": str(checkpoint) if checkpoint is not None and saved else None,
        "perplexity": trained.perplexities(("fp32", "fakeQuant"), ctx),
        "tensorboard": str(events.logdir) if events is not None else None,
        "seconds": round(time.monotonic() - started, 2),
        "model": trained.id,
    }
    if result["perplexity"] is None:
        del result["perplexity"]
    result.update(trained.report_fields())
    return result


def tensorboard_dir(cfg: Config) -> Path:
    """A new run folder under out/tensorboard/<config name>/ (point TensorBoard at out/tensorboard)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    base = session.out_path(cfg, "tensorboard") / cfg.path.name.split(".")[0]
    folder, n = base / stamp, 1
    while folder.exists():
        n += 1
        folder = base / f"{stamp}-{n}"
    return folder


def epoch_scalars(trained: Trained, row: dict[str, Any]) -> dict[str, float]:
    """An epoch's figures as TensorBoard tags: loss, accuracy (FP32 as the reference line), and per layer
    and role the mean scale, its drift relative to the first QAT step, and the (first) zero point."""
    scalars = {
        "train/loss": row["loss"],
        "accuracy/fake_quant": row["accuracy"],
        "accuracy/fp32": trained.fp32_accuracy,
    }
    start = trained.drift[0]["observers"] if trained.drift else []
    first = {(r["module"], r["role"]): r["scale"][1] for r in start}
    for r in drift.drift_state(trained.qat):
        key, mean = (r["module"], r["role"]), r["scale"][1]
        scalars[f"scale/{r['module']}/{r['role']}"] = mean
        scalars[f"zero_point/{r['module']}/{r['role']}"] = r["zeroPoint"]
        if first.get(key):
            scalars[f"scale_drift/{r['module']}/{r['role']}"] = mean / first[key] - 1
    return scalars
