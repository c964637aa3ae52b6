"""Training and evaluation loops over the user's (input, target) batches, classification loss.

Every step checks for cancellation and reports progress."""
from __future__ import annotations

import itertools

from .context import RequestContext


def make_optimizer(name: str, params, lr: float):
    import torch

    kinds = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam, "adamw": torch.optim.AdamW}
    return kinds[name](params, lr=lr)


def _step(model, optimizer, x, y) -> float:
    import torch.nn.functional as F

    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()


def train_epochs(model, optimizer, train, epochs: int, ctx: RequestContext, stage: str) -> None:
    total = epochs * len(train) if hasattr(train, "__len__") else None
    done = 0
    for epoch in range(epochs):
        for x, y in train:
            ctx.check_cancelled()
            loss = _step(model, optimizer, x, y)
            done += 1
            ctx.progress(stage, f"FP32 epoch {epoch + 1}/{epochs}, step {done}, loss {loss:.3f}",
                         done / total if total else None)


def _cycle(batches):
    """Endless passes over re-iterable batches; stops if a pass yields nothing (a spent generator)."""
    while True:
        empty = True
        for batch in batches:
            empty = False
            yield batch
        if empty:
            return


def train_steps(model, optimizer, train, steps: int, ctx: RequestContext, stage: str) -> None:
    """`steps` optimizer steps, cycling through the training batches as often as needed."""
    for step, (x, y) in enumerate(itertools.islice(_cycle(train), steps), start=1):
        ctx.check_cancelled()
        loss = _step(model, optimizer, x, y)
        ctx.progress(stage, f"QAT step {step}/{steps}, loss {loss:.3f}", step / steps)


def accuracy(model, val, ctx: RequestContext) -> tuple[float, int]:
    """(top-1 accuracy, number of samples) of `model` on the validation batches."""
    import torch

    correct = total = 0
    with torch.no_grad():
        for x, y in val:
            ctx.check_cancelled()
            correct += (model(x).argmax(1) == y).sum().item()
            total += len(y)
    return (correct / total if total else 0.0), total


def first_inputs(val, count: int):
    """The first `count` validation inputs, as batches of the loader's size."""
    chunks, have = [], 0
    for x, _ in val:
        chunks.append(x[: count - have])
        have += len(chunks[-1])
        if have >= count:
            break
    return chunks
