"""Training and evaluation loops over the user's batches as (inputs, target) pairs (pipeline.model_io.Batches:
`inputs` a tuple of tensors the model takes positionally), with the config's loss and top-1 measure
(pipeline.losses; cross-entropy unless given another).

Every step checks for cancellation and reports progress."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sized
from typing import TYPE_CHECKING, Any

from qat_kernel.pipeline import health
from qat_kernel.pipeline.losses import Loss
from qat_kernel.rpc.context import RequestContext

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    import torch

CROSS_ENTROPY = Loss("cross_entropy")


def make_optimizer(name: str, params: Iterable[torch.nn.Parameter], lr: float):
    import torch

    kinds = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam, "adamw": torch.optim.AdamW}
    return kinds[name](params, lr=lr)


def _step(
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    x: Any,
    y: Any,
    stage: str = "qat",
    step: int = 0,
    loss_fn: Loss = CROSS_ENTROPY,
) -> float:
    optimizer.zero_grad()
    # A NaN/Inf loss, or an exception a NaN caused in the forward, becomes a NonFinite error naming
    # where it first appeared (pipeline.health); the optimizer never sees it.
    with health.guard(model, lambda m: m(*x), x, stage, step, optimizer) as check:
        loss = loss_fn(model(*x), y)
        value = check(loss)
    loss.backward()
    optimizer.step()
    return value


def train_epochs(
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    train: Iterable[Any],
    epochs: int,
    ctx: RequestContext,
    stage: str,
    loss_fn: Loss = CROSS_ENTROPY,
) -> None:
    total = epochs * len(train) if isinstance(train, Sized) else None
    done = 0
    for epoch in range(epochs):
        for x, y in train:
            ctx.check_cancelled()
            done += 1
            loss = _step(model, optimizer, x, y, stage, done, loss_fn)
            ctx.progress(
                stage, f"FP32 epoch {epoch + 1}/{epochs}, step {done}, loss {loss:.3f}", done / total if total else None
            )


def _cycle(batches: Iterable[Any]):
    """Endless passes over re-iterable batches; stops if a pass yields nothing (a spent generator)."""
    while True:
        empty = True
        for batch in batches:
            empty = False
            yield batch
        if empty:
            return


def make_scheduler(name: str, optimizer: torch.optim.Optimizer, total_steps: int):
    """Stepped once per optimizer step. cosine: to 0 over the run; step: x0.1 at 1/2 and 3/4 of it."""
    import torch

    if name == "cosine":
        return torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=max(total_steps, 1))
    if name == "step":
        milestones = sorted({max(total_steps // 2, 1), max(total_steps * 3 // 4, 1)})
        return torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=milestones, gamma=0.1)
    return None


def train_steps(
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    train: Iterable[Any],
    steps: int,
    ctx: RequestContext,
    stage: str,
    steps_per_epoch: int | None = None,
    scheduler: torch.optim.lr_scheduler.LRScheduler | None = None,
    on_epoch_end: Callable[[int, int, float], None] | None = None,
    on_step: Callable[[int, int], None] | None = None,
    loss_fn: Loss = CROSS_ENTROPY,
) -> None:
    """`steps` optimizer steps, cycling through the training batches as often as needed.

    An epoch is `steps_per_epoch` steps (len(train) when known); `on_step(step, epoch)` runs after every
    step, `on_epoch_end(epoch, step, loss)` after each epoch and after the last step; `loss` is the
    epoch's mean."""
    per_epoch = steps_per_epoch or steps
    epochs = -(-steps // per_epoch)
    losses: list[float] = []
    for step, (x, y) in enumerate(itertools.islice(_cycle(train), steps), start=1):
        ctx.check_cancelled()
        loss = _step(model, optimizer, x, y, stage, step, loss_fn)
        if scheduler is not None:
            scheduler.step()
        losses.append(loss)
        epoch = -(-step // per_epoch)
        lr = optimizer.param_groups[0]["lr"]
        ctx.progress(
            stage,
            f"QAT epoch {epoch}/{epochs}, step {step}/{steps}, loss {loss:.3f}",
            step / steps,
            train={"epoch": epoch, "epochs": epochs, "step": step, "steps": steps, "loss": loss, "lr": lr},
        )
        if on_step is not None:
            on_step(step, epoch)
        if on_epoch_end is not None and (step % per_epoch == 0 or step == steps):
            on_epoch_end(epoch, step, sum(losses) / len(losses))
            losses.clear()


def accuracy(
    model: torch.nn.Module, val: Iterable[Any], ctx: RequestContext, loss_fn: Loss = CROSS_ENTROPY
) -> tuple[float, int]:
    """(top-1 accuracy, number of samples) of `model` on the validation batches; the accuracy counts the
    positions the loss counts (a language model's next tokens, labels other than -100)."""
    import torch

    correct = counted = samples = 0
    with torch.no_grad():
        for x, y in val:
            ctx.check_cancelled()
            right, n = loss_fn.correct(model(*x), y)
            correct, counted, samples = correct + right, counted + n, samples + len(x)
    return (correct / counted if counted else 0.0), samples


def perplexity(
    model: Callable[..., torch.Tensor], val: Iterable[Any], ctx: RequestContext, loss_fn: Loss
) -> tuple[float, int]:
    """(perplexity, tokens) of a language model on the validation batches: exp of the mean next-token
    cross-entropy over every token the loss counts (batches of any length weigh by their tokens)."""
    import math

    import torch

    total, tokens = 0.0, 0
    with torch.no_grad():
        for x, y in val:
            ctx.check_cancelled()
            nll, n = loss_fn.token_nll(model(*x), y)
            total, tokens = total + nll, tokens + n
    return (math.exp(total / tokens) if tokens else float("nan")), tokens


def first_inputs(val: Iterable[Any], count: int) -> list[Any]:
    """The first `count` validation inputs, as batches of the loader's size (model_io.Inputs)."""
    chunks: list[Any] = []
    have = 0
    for x, _ in val:
        chunks.append(x[: count - have])
        have += len(chunks[-1])
        if have >= count:
            break
    return chunks


def predict(model: Callable[..., torch.Tensor], val: Iterable[Any], ctx: RequestContext, limit: int | None = None):
    """(outputs, targets) of `model` (a module, or any function of the inputs, e.g. a runtime's session) on the
    validation batches (the first `limit` samples)."""
    import torch

    outputs, targets, have = [], [], 0
    with torch.no_grad():
        for x, y in val:
            ctx.check_cancelled()
            if limit is not None:
                x, y = x[: limit - have], y[: limit - have]
            outputs.append(model(*x).float())
            targets.append(y)
            have += len(y)
            if limit is not None and have >= limit:
                break
    return torch.cat(outputs), torch.cat(targets)
