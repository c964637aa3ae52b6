"""The runner's traced layer outputs against PyTorch INT8's, twice: end to end (the runner's own inputs
all the way) and replayed (each layer fed PyTorch's own inputs: the runner's REPLAY mode). End to end,
a value within a float ulp of a rounding tie that lands one step away changes what later layers see,
and in deep or densely connected networks (DenseNet, a transformer's float residual stream) such
one-step differences spread; replayed, each layer is checked on its own."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import torch

    from qat_kernel.runtimes.c.layers import Layer


def reference(converted: torch.fx.GraphModule, layers: Sequence[Layer], x: np.ndarray) -> np.ndarray:
    """PyTorch's quantized output of every traced layer, laid out as the runner's trace [N, ...]."""
    import torch

    from qat_kernel.pipeline import fused_groups

    nodes = {n.name: n for n in converted.graph.nodes}
    values = fused_groups.capture(converted, [torch.from_numpy(x)], [nodes[la.node] for la in layers])
    if not layers:
        return np.zeros((len(x), 0), np.int64)
    return np.concatenate([values[la.node].reshape(len(x), -1).numpy().astype(np.int64) for la in layers], 1)


def rows(
    layers: Sequence[Layer], trace: np.ndarray, ref: np.ndarray, replayed: np.ndarray | None
) -> list[dict[str, Any]]:
    """One row per traced layer: maxDiffSteps and valuesDiffering end to end, and replayed when given."""
    out, offset = [], 0
    for la in layers:
        size = int(np.prod(la.out_shape))
        theirs = ref[:, offset : offset + size]
        diff = np.abs(trace[:, offset : offset + size].astype(np.int64) - theirs)
        row = {
            "name": la.name,
            "values": int(diff.size),
            "maxDiffSteps": int(diff.max()) if diff.size else 0,
            "valuesDiffering": int((diff > 0).sum()),
        }
        if replayed is not None:
            again = np.abs(replayed[:, offset : offset + size].astype(np.int64) - theirs)
            row["replayMaxDiffSteps"] = int(again.max()) if again.size else 0
            row["replayValuesDiffering"] = int((again > 0).sum())
        offset += size
        out.append(row)
    return out


def replay(binary: Path, x: np.ndarray, out_size: int, work: Path, arch: str, ref: np.ndarray) -> np.ndarray:
    from qat_kernel.runtimes.c import toolchain

    trace = toolchain.run_runner(binary, x, out_size, work, arch, trace=True, replay=ref)[1]
    assert trace is not None  # asked for
    return trace


def describe(rows_: list[dict[str, Any]]) -> str:
    """One line: each layer on PyTorch's own inputs, then end to end."""
    if not rows_:
        return "no quantized layer output to compare"
    total = sum(r["values"] for r in rows_)
    worst = max(rows_, key=lambda r: r["maxDiffSteps"])
    text = ""
    if "replayMaxDiffSteps" in rows_[0]:
        text = (
            f"fed PyTorch's own inputs, every layer within {max(r['replayMaxDiffSteps'] for r in rows_)} step(s) "
            f"({sum(r['replayValuesDiffering'] for r in rows_):,} of {total:,} values differ); "
        )
    return text + (
        f"end to end max {worst['maxDiffSteps']} step(s) ({worst['name']}), "
        f"{sum(r['valuesDiffering'] for r in rows_):,} of {total:,} values differ"
    )
