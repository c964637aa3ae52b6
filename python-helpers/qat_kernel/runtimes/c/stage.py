"""The portable C runner as a stage of compare/stages: generated from the converted model and compiled for this
machine in a temporary folder, run on the samples with a trace of every quantized layer's output (end to end:
propagated) and again replayed (each layer fed PyTorch INT8's own inputs: the layer alone, local), both read
against PyTorch INT8's integers of the same quantize nodes."""

from __future__ import annotations

import tempfile
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
    logits: np.ndarray | None = None  # the runner's outputs on the samples
    replay_logits: np.ndarray | None = None  # its outputs with every traced layer fed PyTorch INT8's inputs
    layers: dict[str, LayerRun] = field(default_factory=dict)  # by quantize node
    missing: str | None = None  # why the runner could not be a stage here
    binary: Path | None = None
    work: tempfile.TemporaryDirectory[str] | None = None

    def run(self, x: np.ndarray, out_size: int) -> np.ndarray:
        """The runner's outputs on other inputs (the validation set, for its accuracy)."""
        assert self.binary is not None and self.work is not None
        return toolchain.run_runner(self.binary, x, out_size, Path(self.work.name) / "more")[0]

    def close(self) -> None:
        if self.work is not None:
            self.work.cleanup()
            self.work = None


def c_stage(
    converted: torch.fx.GraphModule, example: torch.Tensor, x: np.ndarray, out_size: int, workspace: str
) -> CStage:
    """The runner built for this machine and run on `x` (one float input [N, ...]); a CStage with `missing` set
    when the model has ops the runner does not compute, no C compiler is installed, or compiling or running it
    failed (the other stages still answer)."""
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
    stage = CStage(work=tempfile.TemporaryDirectory(prefix="qat-stage-c-"))
    try:
        _build_and_run(stage, converted, network, input_q, example, x, out_size, arch)
    except TvmBuildError as exc:  # the compiler or the runner failed: the other stages still answer
        stage.close()
        return CStage(missing=f"the C runner failed here: {exc.message.splitlines()[0]}")
    return stage


def _build_and_run(
    stage: CStage,
    converted: torch.fx.GraphModule,
    network: layers_mod.Network,
    input_q: layers_mod.QParams,
    example: torch.Tensor,
    x: np.ndarray,
    out_size: int,
    arch: str,
) -> None:
    """Generate, compile and run the runner into `stage` (end to end, then replayed)."""
    import torch

    work = Path(stage.work.name)  # pyright: ignore[reportOptionalMemberAccess] - made by the caller
    stem = "stage"
    (work / f"{stem}_qparams.h").write_text(
        cgen.header(stem, "compare/stages", input_q, tuple(example.shape[1:]), network), encoding="utf-8"
    )
    source = work / f"{stem}_runner.c"
    source.write_text(cgen.runner(stem), encoding="utf-8")
    stage.binary = Path(toolchain.compile_runner(source, arch, work / "bin" / f"{stem}_runner")["path"])
    logits, trace, _ = toolchain.run_runner(stage.binary, x, out_size, work / "run", arch, trace=True)
    assert trace is not None  # asked for
    traced = layers_mod.traced(network)
    ref = check.reference(converted, traced, x)
    replay_logits, replayed, _ = toolchain.run_runner(
        stage.binary, x, out_size, work / "replay", arch, trace=True, replay=ref
    )
    assert replayed is not None  # asked for
    stage.logits, stage.replay_logits = logits, replay_logits
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
