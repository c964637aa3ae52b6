"""TVM as a stage of compare/stages: the QDQ model built as build/tvm builds it for this machine's CPU (build_tvm:
the int8 fold, our CPU schedule and kernel layouts), in a temporary folder, and run on the samples.

Propagated: the whole model with each quantized layer's output QuantizeLinear also a graph output (the integer
tensor ORT's taps read), built once. The fold makes the same int8 kernels with the taps as without them (the
stage checks: `notes` says where it did not); a tap can end a fused kernel at the tapped tensor instead of
dequantizing it in the same loop (MobileNetV2: 4 of 66 kernels), which moves no value, the tensor being integers
either way. A layer with no output quantization inside the graph (a conv feeding a residual add) is not tapped:
its float output exists only inside the kernel that adds, and a tap would split that kernel at a float value,
computing other float roundings than the deployed one; it is compared locally only. A float graph output (the
logits) is the model's own output.

Local: every layer's sub-model side by side in one model (onnx.layers.side_by_side), built once, each layer fed
PyTorch INT8's input there, one call per batch.

What cannot be built or run (TVM missing, an op the importer rejects, a compile error, no TVM preset for this
CPU) leaves the stage out with a one-line reason (`missing`); the local model alone failing leaves the local
comparison out (`local_missing`)."""

from __future__ import annotations

import importlib
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qat_kernel.rpc.errors import Cancelled, KernelError
from qat_kernel.runtimes import targets
from qat_kernel.runtimes.onnx import layers as onnx_layers

if TYPE_CHECKING:
    import numpy as np
    import onnx
    import torch

    from qat_kernel.pipeline.trained_model import Trained
    from qat_kernel.rpc.context import RequestContext

PRESETS = {"x86_64": "x86-64", "aarch64": "aarch64"}  # this machine's architecture -> the build/tvm preset


@dataclass
class TvmStage:
    """The built libraries (close() removes them) and what was learnt building them."""

    missing: str | None = None  # why TVM is no stage here
    local_missing: str | None = None  # why the layers alone could not be run
    target: str | None = None  # the preset built for
    layers: dict[str, onnx_layers.OnnxLayer] = field(default_factory=dict)  # tapped, by output, as TVM's model has
    every: dict[str, onnx_layers.OnnxLayer] = field(default_factory=dict)  # every wanted layer, by output, as above
    local_layers: list[onnx_layers.OnnxLayer] = field(default_factory=list)  # in the local model, in input order
    kept_float: dict[str, str] = field(default_factory=dict)  # layer output -> why the fold left its anchor float
    notes: list[str] = field(default_factory=list)
    report: dict[str, Any] = field(default_factory=dict)  # build_tvm's report of the tapped model
    seconds: float = 0.0  # spent building
    inputs: list[str] = field(default_factory=list)  # the model's graph inputs, in order
    outputs: list[str] = field(default_factory=list)  # the tapped model's graph outputs, in order
    whole: Callable[[Any], list[np.ndarray]] | None = None  # the tapped library
    alone: Callable[[Any], list[np.ndarray]] | None = None  # the local library
    work: tempfile.TemporaryDirectory[str] | None = None

    def layer(self, output: str) -> onnx_layers.OnnxLayer | None:
        """The layer whose tapped tensor is `output`, as the model TVM built has it (its scales)."""
        return self.every.get(output)

    def _values(self, x: Any) -> dict[str, np.ndarray]:
        from qat_kernel.pipeline.model_io import Inputs, as_inputs

        assert self.whole is not None, "run on a stage that is missing"
        feed = as_inputs(x, self.inputs).feed(self.inputs)
        return dict(zip(self.outputs, self.whole(Inputs([feed[n] for n in self.inputs], self.inputs))))

    def forward(self, x: Any) -> torch.Tensor:
        """The model's first output on one batch (the model's Inputs or one tensor), a float torch tensor."""
        import torch

        return torch.from_numpy(self._values(x)[self.outputs[0]]).float()

    def run(self, x: Any) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """(the model's first output, {tapped layer output: its value}) on one batch, as float torch tensors."""
        import torch

        values = self._values(x)
        taps = {out: onnx_layers.dequantize(layer, values[out]) for out, layer in self.layers.items()}
        return torch.from_numpy(values[self.outputs[0]]).float(), taps

    def batch(
        self, x: Any, entries: Mapping[str, torch.Tensor]
    ) -> tuple[torch.Tensor | None, dict[str, torch.Tensor], dict[str, torch.Tensor]]:
        """(final output, {layer output: propagated value}, {layer output: local value}) on one batch, the layers
        alone fed `entries` (local); nothing where the stage is missing. A run that fails makes the stage missing
        with the reason (the other stages still answer)."""
        if self.missing is not None:
            return None, {}, {}
        try:
            final, taps = self.run(x)
            return final, taps, self.local(entries)
        except Exception as exc:  # noqa: BLE001 - TVM's runtime errors are of its own types
            from qat_kernel.runtimes.tvm.failures import first_line

            self.close()
            self.missing = f"TVM failed running this model: {first_line(exc)}"
            return None, {}, {}

    def local(self, entries: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """{layer output: the layer's output alone} with each layer of the local model fed `entries[its output]`
        (a float torch tensor, the value of its entry tensor); empty where the local model is missing."""
        from qat_kernel.pipeline.model_io import Inputs

        if self.alone is None or not self.local_layers:
            return {}
        names = [layer.output for layer in self.local_layers]
        arrays = [entries[n].detach().float().contiguous().numpy() for n in names]
        values = self.alone(Inputs(arrays, names))
        return {layer.output: onnx_layers.dequantize(layer, v) for layer, v in zip(self.local_layers, values)}

    def accuracy(self, trained: Trained, ctx: RequestContext) -> float | None:
        """Top-1 accuracy on the whole validation set (None where the loss has none, or where TVM failed on it:
        a note says so)."""
        from qat_kernel.pipeline.model_io import Inputs
        from qat_kernel.pipeline.training import predict
        from qat_kernel.runtimes.tvm.failures import first_line

        try:
            outputs, targets = predict(
                lambda *tensors: self.forward(Inputs(list(tensors), trained.io.names)), trained.val, ctx
            )
        except Cancelled:
            raise
        except Exception as exc:  # noqa: BLE001 - TVM's runtime errors are of its own types
            self.notes.append(f"TVM failed on the validation set: {first_line(exc)}")
            return None
        return trained.loss.accuracy(outputs, targets)

    def close(self) -> None:
        from qat_kernel.runtimes.tvm.run import forget_vms

        self.whole = self.alone = None
        if self.work is not None:
            forget_vms(Path(self.work.name))
            self.work.cleanup()
            self.work = None


def tvm_stage(
    model: onnx.ModelProto,
    wanted: Sequence[onnx_layers.OnnxLayer],
    workspace: str,
    check_cancelled: Callable[[], None] | None = None,
    fp16: Callable[[str], str | None] | None = None,
) -> TvmStage:
    """`model` built with TVM for this CPU, tapped at `wanted`'s quantized outputs, and the wanted layers alone in
    one more library; a TvmStage with `missing` set where TVM cannot build or load the model (the other stages
    still answer). Layers are matched to `model`'s own by their tapped tensor, so a model edited after `wanted`
    was read dequantizes with its own scales. `fp16`: the config's fp16 layers (mixed.fp16_matcher), built in
    float16 as build/tvm builds them."""
    preset = PRESETS.get(targets.host_arch())
    if preset is None:
        return TvmStage(missing=f"build/tvm has no preset for this machine's CPU ({targets.host_arch()})")
    try:
        importlib.import_module("tvm")
    except ImportError as exc:
        return TvmStage(missing=f"TVM (apache-tvm) cannot be imported here: {exc}")
    started = time.perf_counter()
    own = onnx_layers.by_output(model)
    layers = [own.get(w.output, w) for w in wanted]
    graph_outputs = {o.name for o in model.graph.output}
    stage = TvmStage(
        target=preset,
        layers={la.output: la for la in layers if la.quantized or la.output in graph_outputs},
        every={la.output: la for la in layers},
        inputs=_graph_inputs(model),
        work=tempfile.TemporaryDirectory(prefix="qat-stage-tvm-"),
    )
    try:
        _build_whole(stage, model, preset, workspace, check_cancelled, fp16)
    except Cancelled:
        stage.close()
        raise
    except Exception as exc:  # noqa: BLE001 - KernelError (BuildFailure, ToolchainMissing) or TVM's own errors
        stage.close()
        return TvmStage(missing=f"TVM cannot build or load this model: {_reason(exc)}")
    try:
        _build_local(stage, model, layers, preset, workspace, check_cancelled)
    except Cancelled:
        stage.close()
        raise
    except Exception as exc:  # noqa: BLE001 - as above; the propagated comparison still stands
        stage.local_missing = f"TVM cannot build the layers run alone: {_reason(exc)}"
        stage.local_layers, stage.alone = [], None
    stage.seconds = time.perf_counter() - started
    return stage


def _graph_inputs(model: onnx.ModelProto) -> list[str]:
    inits = {t.name for t in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name not in inits]


def _reason(exc: BaseException) -> str:
    """One line of what failed: a kernel error's message up to its advice, else TVM's own first line."""
    from qat_kernel.runtimes.tvm.failures import first_line

    if isinstance(exc, KernelError):
        text = str(exc.message).split(" What to do")[0]
        return (text.strip().splitlines() or [type(exc).__name__])[0][:400]
    return first_line(exc)


def _build(
    model: onnx.ModelProto,
    out: Path,
    preset: str,
    workspace: str,
    check_cancelled: Callable[[], None] | None,
    fp16: Callable[[str], str | None] | None = None,
) -> dict[str, Any]:
    """build_tvm's report of `model` built into the folder `out` (the ONNX file beside it)."""
    import onnx

    from qat_kernel.runtimes.tvm.build import build_tvm

    source = out.with_suffix(".onnx")
    onnx.save(model, str(source))
    return build_tvm(source, preset, out, check_cancelled=check_cancelled, fp16=fp16, workspace=workspace)


def _build_whole(
    stage: TvmStage,
    model: onnx.ModelProto,
    preset: str,
    workspace: str,
    check_cancelled: Callable[[], None] | None,
    fp16: Callable[[str], str | None] | None,
) -> None:
    """The tapped model built and loaded into `stage`: its layers the fold left float, and where the taps changed
    the fold."""
    import onnx

    from qat_kernel.runtimes.tvm.run import load_tvm_outputs

    assert stage.work is not None
    tapped = onnx.load_from_string(onnx_layers.with_outputs(model, stage.layers))
    report = _build(tapped, Path(stage.work.name) / "whole", preset, workspace, check_cancelled, fp16)
    stage.whole = load_tvm_outputs(report["artifact"])
    stage.report = report
    stage.outputs = [o.name for o in tapped.graph.output]
    anchors = {layer.anchor: out for out, layer in stage.every.items()}
    for op in report.get("ops") or []:
        out = anchors.get(op["onnx_node"])
        if out is not None and op["precision"] == "fp32":
            stage.kept_float[out] = op.get("reason") or "the int8 fold left it in float32"
    stage.notes += _fold_changes(model, report)
    stage.notes += [n for n in report.get("notes") or [] if n.startswith(("the int8 fold", "TVM could not compile"))]


def _fold_changes(model: onnx.ModelProto, report: Mapping[str, Any]) -> list[str]:
    """Where the fold of the tapped model differs from the fold of `model` as deployed (the anchors it folded
    and into what), one note; none where they agree."""
    from qat_kernel.runtimes.tvm.build import import_onnx
    from qat_kernel.runtimes.tvm.fold import fold_qdq

    def kinds(folded: Sequence[Mapping[str, Any]]) -> set[tuple[str, str, str]]:
        return {(str(f.get("onnx_node")), str(f.get("op")), str(f.get("output"))) for f in folded}

    try:
        mod, provenance, _ = import_onnx(model)
        plain = kinds(fold_qdq(mod, provenance).folded)
    except Exception:  # noqa: BLE001 - the build's own notes say what failed
        return []
    tapped = kinds((report.get("fold") or {}).get("folded") or [])
    if plain == tapped:
        return []
    differ = sorted({f[0] for f in plain ^ tapped})
    return [
        f"TVM's int8 fold differs with the layers' outputs tapped at {', '.join(differ[:6])}: TVM's figures there "
        "are of the tapped build, not of the model as build/tvm deploys it"
    ]


def _build_local(
    stage: TvmStage,
    model: onnx.ModelProto,
    layers: Sequence[onnx_layers.OnnxLayer],
    preset: str,
    workspace: str,
    check_cancelled: Callable[[], None] | None,
) -> None:
    """Every layer alone, side by side in one library, loaded into `stage`."""
    from qat_kernel.runtimes.tvm.run import load_tvm_outputs

    assert stage.work is not None
    if not layers:
        return
    side = onnx_layers.side_by_side(model, layers)
    if not side.layers:
        stage.local_missing = "no layer could be run alone: " + "; ".join(sorted(set(side.left_out.values())))[:400]
        return
    report = _build(side.model, Path(stage.work.name) / "local", preset, workspace, check_cancelled)
    stage.alone = load_tvm_outputs(report["artifact"])
    stage.local_layers = side.layers
    if side.left_out:
        stage.notes.append(
            f"TVM runs {len(side.left_out)} layer(s) only whole: "
            + "; ".join(sorted(set(side.left_out.values())))[:300]
        )
