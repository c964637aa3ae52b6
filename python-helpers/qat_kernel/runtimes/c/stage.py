"""The portable C runner as a stage of compare/stages: generated from the converted model and compiled for this
machine in a temporary folder (build, once per model), then run on the samples (CStage.trace, as often as asked)
with a trace of every quantized layer's output (end to end: propagated) and again replayed (each layer fed PyTorch
INT8's own inputs: the layer alone, local), both read against PyTorch INT8's integers of the same quantize nodes."""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from qat_kernel.rpc.errors import PackageMissing, TvmBuildError
from qat_kernel.runtimes.c import cgen, check, toolchain
from qat_kernel.runtimes.c import layers as layers_mod

if TYPE_CHECKING:
    import torch

# Past this many bytes of int8 weights the runner's header takes minutes to compile: the stage is left out (the
# deploy/c-artifact request builds such a runner on its own).
WEIGHT_BYTES = 32 * 1024 * 1024


@dataclass
class LayerRun:
    """One traced layer: PyTorch INT8's and the runner's values of its quantize node, dequantized."""

    node: str  # the INT8 graph's quantize node
    scale: float
    reference: Any  # torch float tensors [N, ...]
    propagated: Any
    local: Any


@dataclass
class CStage:
    """The runner generated and compiled for this machine (build), then run on the samples (trace); close()
    removes it."""

    logits: np.ndarray | None = None  # the runner's outputs on the samples
    replay_logits: np.ndarray | None = None  # its outputs with every traced layer fed PyTorch INT8's inputs
    layers: dict[str, LayerRun] = field(default_factory=dict)  # by quantize node
    missing: str | None = None  # why the runner could not be a stage here
    binary: Path | None = None
    network: layers_mod.Network | None = None  # the layers compiled into it
    arch: str | None = None
    seconds: float = 0.0  # spent generating and compiling it
    work: tempfile.TemporaryDirectory[str] | None = None

    def run(self, x: np.ndarray, out_size: int) -> np.ndarray:
        """The runner's outputs on `x`, no trace (the validation set, for its accuracy; one plain forward)."""
        assert self.binary is not None and self.work is not None, "run on a runner that is missing"
        return toolchain.run_runner(self.binary, x, out_size, Path(self.work.name) / "more", self.arch)[0]

    def trace(self, converted: torch.fx.GraphModule, x: np.ndarray, out_size: int) -> None:
        """Run on `x` (one float input [N, ...]) end to end, then replayed, each traced layer read against
        `converted`'s integers: fills logits, replay_logits and layers. Nothing where the stage is missing; a
        run that fails makes it missing with the reason (the other stages still answer)."""
        self.logits = self.replay_logits = None
        self.layers = {}
        if self.missing is not None:
            return
        try:
            _trace(self, converted, x, out_size)
        except TvmBuildError as exc:  # the runner failed: the other stages still answer
            self.close()
            self.layers = {}
            self.missing = f"the C runner failed here: {exc.message.splitlines()[0]}"

    def close(self) -> None:
        if self.work is not None:
            self.work.cleanup()
            self.work = None


def build(converted: torch.fx.GraphModule, example: torch.Tensor, workspace: str) -> CStage:
    """The runner generated from `converted` and compiled for this machine; a CStage with `missing` set when the
    model has ops the runner does not compute, its weights are too large to compile here, no C compiler is
    installed, or compiling failed (the other stages still answer)."""
    started = time.perf_counter()
    try:
        input_q, network = layers_mod.extract(converted, example, workspace)
        arch = toolchain.host_arch()
        toolchain.c_compiler(arch)
    except layers_mod.UnsupportedForC as exc:
        return CStage(missing=f"the C runner cannot run this model: {exc.message.splitlines()[0].rstrip(':')}")
    except PackageMissing as exc:
        return CStage(missing=exc.message)
    weights = sum(la.weight.size for la in network if la.weight is not None)
    if weights > WEIGHT_BYTES:
        return CStage(
            missing=f"{weights / 2**20:.0f} MB of int8 weights, over the {WEIGHT_BYTES / 2**20:.0f} MB this comparison "
            "compiles into a runner (deploy/c-artifact builds such a runner on its own)"
        )
    stage = CStage(network=network, arch=arch, work=tempfile.TemporaryDirectory(prefix="qat-stage-c-"))
    work = Path(stage.work.name)  # pyright: ignore[reportOptionalMemberAccess] - made just above
    stem = "stage"
    try:
        (work / f"{stem}_qparams.h").write_text(
            cgen.header(stem, "compare/stages", input_q, tuple(example.shape[1:]), network), encoding="utf-8"
        )
        source = work / f"{stem}_runner.c"
        source.write_text(cgen.runner(stem), encoding="utf-8")
        stage.binary = Path(toolchain.compile_runner(source, arch, work / "bin" / f"{stem}_runner")["path"])
    except TvmBuildError as exc:  # the compiler failed: the other stages still answer
        stage.close()
        return CStage(missing=f"the C runner failed here: {exc.message.splitlines()[0]}")
    stage.seconds = time.perf_counter() - started
    return stage


def _trace(stage: CStage, converted: torch.fx.GraphModule, x: np.ndarray, out_size: int) -> None:
    """The built runner on `x` into `stage`: end to end with its trace, then replayed on PyTorch INT8's values."""
    import torch

    assert stage.binary is not None and stage.network is not None and stage.work is not None
    work = Path(stage.work.name)
    logits, trace, _ = toolchain.run_runner(stage.binary, x, out_size, work / "run", stage.arch, trace=True)
    assert trace is not None  # asked for
    traced = layers_mod.traced(stage.network)
    ref = check.reference(converted, traced, x)
    replay_logits, replayed, _ = toolchain.run_runner(
        stage.binary, x, out_size, work / "replay", stage.arch, trace=True, replay=ref
    )
    assert replayed is not None  # asked for
    offset = 0
    for la in traced:
        size = int(np.prod(la.out_shape))
        q = la.output
        assert q is not None  # traced layers end at a quantize node
        columns = slice(offset, offset + size)

        def dequantized(values: np.ndarray, q: layers_mod.QParams = q, columns: slice = columns) -> torch.Tensor:
            return torch.from_numpy((values[:, columns].astype(np.float64) - q.zero_point) * q.scale).float()

        stage.layers[la.node] = LayerRun(la.node, q.scale, dequantized(ref), dequantized(trace), dequantized(replayed))
        offset += size
    stage.logits, stage.replay_logits = logits, replay_logits
