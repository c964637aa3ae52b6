"""qat/train: QAT from the config (pt2e or eager), always training anew, with progress per step
(stage `qat`: epoch, step, loss, lr) and per epoch (stage `epoch`: mean loss, fake-quant accuracy on
the validation set, every layer's fake-quantizer scale/zero-point so drift can be plotted).

After each epoch the QAT model's state_dict is written to <config folder>/out/<name>.qat.pt through a
temp file and a rename, so the file always holds the last finished epoch: a cancel stops at the next
step and leaves it. The trained model stays in the kernel's cache, so compare/layers, eval/accuracy,
export/onnx and analyze/sensitivity on the same config (same steps/epochs) reuse it."""
from __future__ import annotations

import time

from .. import session
from ..context import RequestContext


def run(ctx: RequestContext) -> dict:
    started = time.monotonic()
    params = ctx.params
    cfg = session.load(params, ctx)
    write = params.get("checkpoint", True)
    checkpoint = session.out_path(cfg, f"{cfg.path.name.split('.')[0]}.qat.pt") if write else None
    saved: dict = {}

    def epoch_end(trained, row: dict) -> None:
        with session.evaluating(trained.qat, fake_quant=True) as model:
            from ..training import accuracy

            row["accuracy"], _ = accuracy(model, trained.val, ctx)
        observers = session.observer_state(trained.qat)
        if checkpoint is not None:
            session.atomic_save({"epoch": row["epoch"], "step": row["step"], "flow": trained.flow,
                                 "config": str(cfg.path), "accuracy": row["accuracy"],
                                 "state_dict": trained.qat.model.state_dict()}, checkpoint)
            saved["epoch"] = row["epoch"]
        ctx.progress("epoch", f"epoch {row['epoch']}/{trained.epochs}: loss {row['loss']:.3f}, "
                              f"fake-quant accuracy {row['accuracy']:.4f}",
                     row["epoch"] / trained.epochs,
                     train={"epoch": row["epoch"], "epochs": trained.epochs, "step": row["step"],
                            "steps": trained.steps, "loss": row["loss"], "accuracy": row["accuracy"],
                            "observers": observers,
                            "checkpoint": str(checkpoint) if checkpoint is not None else None})

    trained, _ = session.get(cfg, ctx, steps=params.get("steps"), epochs=params.get("epochs"),
                             retrain=True, on_epoch_end=epoch_end)
    result = {
        "flow": trained.flow,
        "epochs": trained.epochs,
        "steps": trained.steps,
        "history": trained.history,
        "accuracy": {"fp32": trained.fp32_accuracy, "fakeQuant": trained.accuracy("fakeQuant", ctx),
                     "samples": trained.val_samples},
        "observers": session.observer_state(trained.qat),
        "checkpoint": str(checkpoint) if checkpoint is not None and saved else None,
        "seconds": round(time.monotonic() - started, 2),
    }
    if trained.kept_float:
        result["keptFloat"] = trained.kept_float
    if trained.warnings:
        result["warnings"] = list(trained.warnings)
    return result
