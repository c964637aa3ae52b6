"""compare/stages ("QAT: Find Where INT8 Diverges"): every quantized layer's output in each stage of the
model (FP32, fake-quant, PyTorch INT8, ONNX Runtime on the QDQ export, the C runner, TVM) on the same validation
samples, compared pair by pair, propagated (each stage run whole) and local (a stage's layer fed the previous
stage's input there); then, for the pairs that should compute the same numbers, the first layer where they
part (analysis.divergence) with its likely cause and source line.

Stages (the `stage` of each $/progress): load, fp32, export, qat, convert, onnx, capture, report."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qat_kernel import atomic, reads
from qat_kernel.analysis import divergence, metrics
from qat_kernel.analysis.comparison import shadow
from qat_kernel.jobs import opening
from qat_kernel.jobs.reports import stages as report
from qat_kernel.pipeline.config import Config, check_inside
from qat_kernel.rpc.context import RequestContext
from qat_kernel.rpc.errors import ConfigInvalid
from qat_kernel.runtimes import cpu
from qat_kernel.runtimes.c import stage as c_stage
from qat_kernel.runtimes.onnx import layers as onnx_layers
from qat_kernel.runtimes.onnx import qdq_export
from qat_kernel.runtimes.ort import intermediates
from qat_kernel.runtimes.tvm import mixed
from qat_kernel.runtimes.tvm import stage as tvm_stage

if TYPE_CHECKING:
    import onnx
    import torch
    import torch.fx

    from qat_kernel.pipeline.fused_groups import Group, Region
    from qat_kernel.pipeline.model_io import Inputs
    from qat_kernel.pipeline.trained_model import Trained

DEFAULT_SAMPLES = 32
MODES = ("propagated", "local")
ONNX_BYTES = 2 * 1024 * 1024 * 1024  # protobuf's own limit for one file


@dataclass
class Layer:
    """One quantized layer across the stages: its groups in the FP32, prepared (fake-quant) and INT8 graphs
    and its layer in the ONNX model (None where a stage has no such layer)."""

    fp32: Group
    int8: Group
    region: Region
    fake: Group | None
    fake_output: torch.fx.Node | None  # the fake-quant group's output after its output fake quantizer
    fake_entry: torch.fx.Node | None  # what the fake-quant layer's input fake quantizer reads
    onnx: onnx_layers.OnnxLayer | None


def compare_stages(
    ctx: RequestContext, *, config: str, samples: int | None, steps: int | None, onnx_path: str | None
) -> dict[str, Any]:
    started = time.monotonic()
    cfg = opening.load(ctx, config, pt2e="finding where INT8 diverges runs the QDQ ONNX export of the PT2E flow")
    count: int = samples or cfg.get("compare.samples", DEFAULT_SAMPLES)
    _, trained, reused, converted = opening.model(cfg, ctx, steps=steps, convert=True)

    path, model = _onnx_model(cfg, trained, converted, ctx, onnx_path)

    from qat_kernel.pipeline.training import first_inputs

    inputs = first_inputs(trained.val, count)
    built = build(trained, model, str(cfg.folder), ctx)
    c, tvm = built.c, built.tvm
    try:
        ctx.progress("capture", f"running every stage on {sum(len(x) for x in inputs)} validation samples")
        rows, facts, outputs = capture(trained, model, inputs, str(cfg.folder), ctx, built)
        found = {divergence.pair_key(*p): divergence.bisect(rows, facts, p) for p in divergence.PAIRS}
        worst = {divergence.pair_key(*p): divergence.worst(rows, p) for p in divergence.PAIRS}
        ctx.progress("report", "accuracy of each stage on the validation set")
        accuracy = {
            "fp32": trained.fp32_accuracy,
            "fakeQuant": trained.accuracy("fakeQuant", ctx),
            "int8": trained.accuracy("int8", ctx),
            "ort": _ort_accuracy(trained, model, ctx),
            "c": _c_accuracy(trained, c, ctx) if c.missing is None else None,
            "tvm": tvm.accuracy(trained, ctx) if tvm.missing is None else None,
            "samples": trained.val_samples,
        }
    finally:
        built.close()
    missing = {st: why for st, why in (("c", c.missing), ("tvm", tvm.missing)) if why is not None}
    here = [st for st in divergence.STAGES if st not in missing]
    result: dict[str, Any] = {
        "stages": [{"id": st, "label": divergence.LABELS[st]} for st in here],
        "pairs": [divergence.pair_key(a, b) for a, b in (*divergence.PROPAGATED_ONLY, *divergence.PAIRS) if b in here],
        "bisected": [divergence.pair_key(a, b) for a, b in divergence.PAIRS if b in here],
        "samples": sum(len(x) for x in inputs),
        "layers": rows,
        "outputs": outputs,
        "divergence": {k: v for k, v in found.items() if v is not None},
        "worst": {k: v for k, v in worst.items() if v is not None},
        "accuracy": accuracy,
        "onnx": str(path),
        "cpu": cpu.summary(),
        "roundingSteps": divergence.ROUNDING_STEPS,
        "floatSqnrDb": divergence.FLOAT_SQNR_DB,
        "reused": reused,
        "model": trained.id,
    }
    if missing:
        result["missing"] = missing
    result.update(trained.report_fields())
    notes = [*tvm.notes, *([tvm.local_missing] if tvm.local_missing else [])]
    if notes:
        result["warnings"] = [*result.get("warnings", []), *(f"TVM: {n}" for n in notes)]
    markdown = cfg.out(f"{cfg.path.name.split('.')[0]}.stages.md")
    result["markdownPath"] = str(markdown)
    result["seconds"] = round(time.monotonic() - started, 2)
    result["summary"] = report.summary(result)
    shown = path.relative_to(cfg.folder) if path.is_relative_to(cfg.folder) else path
    atomic.write_text(markdown, report.markdown(result, cfg.path.name, str(shown)))
    return result


# --- the ONNX model ----------------------------------------------------------------------------------


def _onnx_model(
    cfg: Config, trained: Trained, converted: torch.fx.GraphModule, ctx: RequestContext, onnx_path: str | None
) -> tuple[Path, onnx.ModelProto]:
    """The QDQ ONNX model of the ONNX Runtime stage: `onnx_path` (a file exported from this model, say one a
    user edited) or the config's export of this model (exported now unless it is on disk already)."""
    import onnx
    from google.protobuf.message import DecodeError

    if onnx_path:
        path = (cfg.folder / onnx_path).resolve()
        check_inside(path, "onnx")
        ctx.progress("onnx", f"reading {onnx_path}")
    else:
        path, _ = qdq_export.qdq_onnx(cfg, trained, converted, ctx)
    try:
        data = reads.read_regular_bytes(path, ONNX_BYTES)
        return path, onnx.load_from_string(data)
    except (OSError, DecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or type(exc).__name__
        raise ConfigInvalid(f"onnx: {path} cannot be read as an ONNX model: {why}") from exc


def _layers(trained: Trained, model: onnx.ModelProto) -> list[Layer]:
    """Every INT8 layer with its counterparts, in the INT8 graph's order."""
    from qat_kernel.analysis.comparison import analysis

    pairs, qat_for, regions = analysis(trained.fp32_graph, trained.converted, trained.qat.model)
    in_onnx = onnx_layers.layers(model)
    taken: dict[str, int] = {}
    found = []
    for f, q in pairs:
        fake = qat_for.get(id(q))
        candidates = in_onnx.get(q.module, [])
        nth = taken.get(q.module, 0)
        taken[q.module] = nth + 1
        found.append(
            Layer(
                fp32=f,
                int8=q,
                region=regions[id(q)],
                fake=fake,
                fake_output=_after_fake_quant(trained.qat.model, fake.output) if fake else None,
                fake_entry=_before_fake_quant(trained.qat.model, fake.input) if fake else None,
                onnx=candidates[nth] if nth < len(candidates) else None,
            )
        )
    return found


def _after_fake_quant(gm: torch.fx.GraphModule, node: torch.fx.Node) -> torch.fx.Node:
    from qat_kernel.pipeline.fused_groups import fake_quant_module

    users = list(node.users)
    if len(users) == 1 and fake_quant_module(gm, users[0]) is not None:
        return users[0]
    return node


def _before_fake_quant(gm: torch.fx.GraphModule, node: torch.fx.Node) -> torch.fx.Node:
    """What the fake quantizers in front of `node` read."""
    import torch.fx

    from qat_kernel.pipeline.fused_groups import fake_quant_module

    while fake_quant_module(gm, node) is not None and node.args and isinstance(node.args[0], torch.fx.Node):
        node = node.args[0]
    return node


# --- capture and compare -------------------------------------------------------------------------------


@dataclass
class Built:
    """What compare/stages builds once for a model before running it on samples: its layers matched across the
    stages, ONNX Runtime's sessions (the model tapped at those layers; each layer alone, made on first use), TVM's
    libraries and the compiled C runner (close() removes the last two)."""

    layers: list[Layer]
    taps: intermediates.Taps
    local_ort: intermediates.LocalRun
    tvm: tvm_stage.TvmStage
    c: c_stage.CStage
    seconds: float  # spent building

    def close(self) -> None:
        self.c.close()
        self.tvm.close()


def build(trained: Trained, model: onnx.ModelProto, folder: str, ctx: RequestContext) -> Built:
    """Every stage of `model` made ready to run: the ORT sessions, TVM's two libraries and the C runner, each
    missing with its reason where it cannot be built here (the other stages still answer)."""
    started = time.perf_counter()
    layers = _layers(trained, model)
    mapped = [layer.onnx for layer in layers if layer.onnx is not None]
    taps = intermediates.Taps(model, mapped)
    ctx.progress("capture", "TVM: building the model and its layers alone for this CPU")
    tvm = tvm_stage.tvm_stage(model, mapped, folder, ctx.check_cancelled, mixed.fp16_matcher(trained.cfg))
    try:
        c = _c_build(trained, folder, ctx)
    except BaseException:
        tvm.close()
        raise
    return Built(layers, taps, intermediates.LocalRun(model), tvm, c, time.perf_counter() - started)


def capture(
    trained: Trained,
    model: onnx.ModelProto,
    inputs: list[Inputs],
    folder: str,
    ctx: RequestContext,
    built: Built | None = None,
) -> tuple[list[dict[str, Any]], dict[str, divergence.LayerFacts], dict[str, dict[str, Any]]]:
    """(rows, {module: LayerFacts}, final-output comparisons) over every batch of `inputs`: what compare/stages
    computes beyond training, the export, the builds and the accuracies (what `npm run bench compare` times).
    `built`: the stages built once (build(); the caller closes it), else they are built for this call and
    removed after it. A stage that fails running on the samples is left missing in `built`."""
    if built is None:
        built = build(trained, model, folder, ctx)
        try:
            return capture(trained, model, inputs, folder, ctx, built)
        finally:
            built.close()
    import torch

    from qat_kernel import userpaths
    from qat_kernel.pipeline import fused_groups
    from qat_kernel.pipeline.trained_model import evaluating

    layers, taps, local_ort, tvm, c = built.layers, built.taps, built.local_ort, built.tvm, built.c
    fp32_gm, int8_gm, qat_gm = trained.fp32_graph, trained.converted, trained.qat.model
    # Each stage's taps end with its graph's output: the final outputs come from the same forward.
    ends = {s: fused_groups.graph_output(gm) for s, gm in (("fp32", fp32_gm), ("fakeQuant", qat_gm), ("int8", int8_gm))}
    fp_nodes = [layer.fp32.output for layer in layers] + [ends["fp32"]]
    fake_nodes = [n for layer in layers for n in (layer.fake_output, layer.fake_entry) if n is not None]
    fake_nodes.append(ends["fakeQuant"])
    int8_nodes = list({n: None for layer in layers for n in _region_inputs(layer.region, layer.int8.output)})
    int8_nodes = list(dict.fromkeys([*int8_nodes, ends["int8"]]))
    int8_tapped = fused_groups.tapped(int8_gm, int8_nodes)
    interpreter = torch.fx.Interpreter(int8_gm)

    sums: dict[tuple[int, str, str, str], metrics.Accumulator] = {}

    def add(key: tuple[int, str, str, str], ref: torch.Tensor, got: torch.Tensor | None) -> None:
        sums.setdefault(key, metrics.Accumulator()).add(ref, got)

    final: dict[str, list[torch.Tensor]] = {s: [] for s in divergence.STAGES}
    with torch.no_grad(), evaluating(trained.qat, fake_quant=True):
        for x in inputs:
            ctx.check_cancelled()
            fp = fused_groups.capture(fp32_gm, [x], fp_nodes)
            fake = fused_groups.capture(qat_gm, [x], fake_nodes)
            env = dict(zip(int8_nodes, int8_tapped(*x)))
            ort_final, ort = taps.run(x)
            entries = {la.onnx.output: env[la.region.entry] for la in layers if la.onnx is not None}
            tvm_final, in_tvm, tvm_local = tvm.batch(x, entries)
            final["fp32"].append(fp[ends["fp32"].name])
            final["fakeQuant"].append(fake[ends["fakeQuant"].name])
            final["int8"].append(env[ends["int8"]].float())
            final["ort"].append(ort_final)
            if tvm_final is not None:
                final["tvm"].append(tvm_final)
            for i, layer in enumerate(layers):
                out = {"fp32": fp[layer.fp32.output.name], "int8": env[layer.int8.output]}
                if layer.fake_output is not None:
                    out["fakeQuant"] = fake[layer.fake_output.name]
                if layer.onnx is not None:
                    out["ort"] = ort[layer.onnx.output]
                    if layer.onnx.output in in_tvm:
                        out["tvm"] = in_tvm[layer.onnx.output]
                for a, b in (*divergence.PROPAGATED_ONLY, *divergence.PAIRS):
                    if a in out and b in out:
                        add((i, a, b, "propagated"), out[a], out[b])
                if layer.fake_entry is not None and "fakeQuant" in out:
                    local = shadow(interpreter, env, layer.region, fake[layer.fake_entry.name])
                    add((i, "fakeQuant", "int8", "local"), out["fakeQuant"], local)
                if layer.onnx is not None:
                    entry = env.get(layer.region.entry)
                    local = local_ort(layer.onnx, entry) if entry is not None else None
                    add((i, "int8", "ort", "local"), out["int8"], local)
                    if layer.onnx.output in tvm_local:
                        add((i, "int8", "tvm", "local"), out["int8"], tvm_local[layer.onnx.output])

    if tvm.missing is not None:  # it failed on a batch: none of its figures
        sums = {k: v for k, v in sums.items() if "tvm" not in k[1:3]}
        final["tvm"] = []
    joined = {s: torch.cat(v) for s, v in final.items() if v}
    _c_trace(trained, c, inputs, joined["int8"], ctx)
    if c.logits is not None:
        joined["c"] = torch.from_numpy(c.logits).reshape(joined["int8"].shape).float()
    last = ends["int8"]
    saturating = cpu.saturating_int8()
    rows, facts = [], {}
    for i, layer in enumerate(layers):
        q = layer.int8
        step = _output_scale(int8_gm, q)
        row: dict[str, Any] = {"module": q.module, "op": q.op, "group": q.ops, "pairs": {}}
        in_c = c.layers.get(_quantize_node(q))
        if in_c is None and q.output is last and "c" in joined and c.replay_logits is not None:
            # a float last layer (logits): the runner's outputs, end to end and with its input replayed
            replayed = torch.from_numpy(c.replay_logits).reshape(joined["int8"].shape).float()
            in_c = c_stage.LayerRun(q.output.name, 0.0, joined["int8"], joined["c"], replayed)
        row["stages"] = {
            "fp32": True,
            "fakeQuant": layer.fake is not None,
            "int8": True,
            "ort": layer.onnx is not None,
            "c": in_c is not None,
            "tvm": tvm.missing is None and layer.onnx is not None and any((i, "int8", "tvm", m) in sums for m in MODES),
        }
        if in_c is not None:
            for mode, values in (("propagated", in_c.propagated), ("local", in_c.local)):
                acc = sums.setdefault((i, "int8", "c", mode), metrics.Accumulator())
                acc.add(in_c.reference, values)
        for a, b in (*divergence.PROPAGATED_ONLY, *divergence.PAIRS):
            compared: dict[str, Any] = {}
            for mode in ("propagated", "local"):
                acc = sums.get((i, a, b, mode))
                value = acc.result() if acc is not None else None
                if value is not None:
                    compared[mode] = value
                    if step:
                        compared[f"{mode}Steps"] = value["maxAbs"] / step
            if compared:
                row["pairs"][divergence.pair_key(a, b)] = compared
        if layer.onnx is not None:
            row["onnx"] = {"nodes": layer.onnx.nodes, "output": layer.onnx.output}
        if step:
            row["outputScale"] = step
        source = userpaths.stack_trace_location(layer.fp32.anchor.meta.get("stack_trace"), folder)
        if source:
            row["source"] = source
        rows.append(row)
        facts[q.module] = _facts(trained, layer, step, saturating, tvm)
    outputs = {}
    for a, b in (*divergence.PROPAGATED_ONLY, *divergence.PAIRS):
        if a in joined and b in joined:
            outputs[divergence.pair_key(a, b)] = _final(joined[a], joined[b])
    return rows, facts, outputs


def _quantize_node(group: Group) -> str:
    """The INT8 graph's quantize node of a group's output (the C runner traces those), else the output's name."""
    import torch.fx

    node = group.output
    if node.args and isinstance(node.args[0], torch.fx.Node) and "dequantize" in str(node.target):
        return node.args[0].name
    return node.name


def _c_build(trained: Trained, folder: str, ctx: RequestContext) -> c_stage.CStage:
    """The C runner compiled for this machine, or a stage with `missing` set (a model of several or non-float
    inputs, ops the runner does not compute, no C compiler)."""
    import torch

    example = trained.example
    if len(example) != 1 or not (isinstance(example[0], torch.Tensor) and example[0].is_floating_point()):
        return c_stage.CStage(
            missing=f"the C runner reads one float32 input tensor; this model takes {len(example)} input(s)"
        )
    ctx.progress("capture", "the C runner: generating it from the INT8 model and compiling it for this machine")
    return c_stage.build(trained.converted, example[0], folder)


def _c_trace(
    trained: Trained, c: c_stage.CStage, inputs: list[Inputs], int8_out: torch.Tensor, ctx: RequestContext
) -> None:
    """The built C runner on the samples, traced and replayed (nothing where it is missing)."""
    import numpy as np

    from qat_kernel.pipeline.model_io import Inputs, as_inputs

    if c.missing is not None:
        return
    ctx.progress("capture", "the C runner, compiled for this machine, on the same samples")
    joined = Inputs.concat([as_inputs(x, trained.io.names) for x in inputs]).numpy()
    c.trace(trained.converted, joined.values[0], int(np.prod(int8_out.shape[1:])))


def _c_accuracy(trained: Trained, c: c_stage.CStage, ctx: RequestContext) -> float | None:
    """Top-1 accuracy of the C runner on the whole validation set."""
    import numpy as np

    from qat_kernel.runtimes import parity

    x, labels, torch_out = parity.reference_outputs(trained, trained.val_samples, trained.converted, ctx)
    return parity.accuracy(
        c.run(x.values[0], int(np.prod(torch_out.shape[1:]))).reshape(torch_out.shape), labels, trained.loss
    )


def _region_inputs(region: Region, output: torch.fx.Node) -> list[torch.fx.Node]:
    """The INT8 values a layer's local re-run reads from the whole model's run, and its output."""
    inside = set(region.nodes)
    needed = [output, region.entry]
    for n in region.nodes:
        needed.extend(i for i in n.all_input_nodes if i not in inside)
    return needed


def _quant_args(gm: torch.fx.GraphModule, node: torch.fx.Node) -> tuple[float | None, int | None]:
    """(scale, quant_max - quant_min + 1) of a per-tensor quantize/dequantize node (scale None when per
    channel or not constant)."""
    import torch.fx

    from qat_kernel.pipeline import fused_groups

    args = list(node.args)
    scale = args[1] if len(args) > 1 else None
    if isinstance(scale, torch.fx.Node) and scale.op == "get_attr":
        value = fused_groups.attr(gm, str(scale.target))
        scale = value.item() if getattr(value, "numel", lambda: 0)() == 1 else None
    levels = None
    if "per_channel" in fused_groups.op_name(node):
        qmin, qmax = (args[4], args[5]) if len(args) > 5 else (None, None)
        scale = None
    else:
        qmin, qmax = (args[3], args[4]) if len(args) > 4 else (None, None)
    if isinstance(qmin, int) and isinstance(qmax, int):
        levels = qmax - qmin + 1
    return (float(scale) if isinstance(scale, (int, float)) else None), levels


def _output_scale(gm: torch.fx.GraphModule, group: Group) -> float | None:
    from qat_kernel.pipeline import fused_groups

    node = group.output
    if not fused_groups.op_name(node).startswith("dequantize_per_tensor"):
        return None
    return _quant_args(gm, node)[0]


def _facts(
    trained: Trained, layer: Layer, out_scale: float | None, saturating: bool, tvm: tvm_stage.TvmStage
) -> divergence.LayerFacts:
    import torch

    from qat_kernel.pipeline import fused_groups

    gm = trained.converted
    in_scale = act_levels = weight_levels = None
    for n in layer.region.nodes:
        if fused_groups.op_name(n).startswith("quantize_per_tensor"):
            in_scale, act_levels = _quant_args(gm, n)
            break
    weight_scale: dict[str, list[float]] = {}
    for n in layer.region.weight:
        if fused_groups.op_name(n).startswith("dequantize_per_"):
            _, weight_levels = _quant_args(gm, n)
            scales = _scales(gm, n)
            if scales is not None:
                weight_scale["int8"] = scales
            break
    if layer.fake is not None:
        qat_gm = trained.qat.model
        names = fused_groups.layer_fake_quants(qat_gm, layer.fake).weight
        scale = getattr(qat_gm.get_submodule(names[0]), "scale", None) if names else None
        if isinstance(scale, torch.Tensor):
            weight_scale["fakeQuant"] = [float(v) for v in scale.reshape(-1)]
    input_scale: dict[str, float] = {}
    output_scale: dict[str, float] = {}
    if in_scale is not None:
        input_scale["int8"] = in_scale
    if out_scale is not None:
        output_scale["int8"] = out_scale
    if layer.onnx is not None:
        if layer.onnx.scale is not None:
            output_scale["ort"] = layer.onnx.scale
        if layer.onnx.input_scale is not None:
            input_scale["ort"] = layer.onnx.input_scale
    bias = _bias(gm, layer.int8.anchor)
    rounded = None
    if bias is not None and in_scale and out_scale and "int8" in weight_scale:
        rounded = divergence.bias_rounding(bias, in_scale, weight_scale["int8"], out_scale)
    facts = divergence.LayerFacts(
        input_scale, output_scale, weight_scale, act_levels, weight_levels, saturating, rounded
    )
    built = tvm.layer(layer.onnx.output) if layer.onnx is not None else None
    if built is not None:  # the scales of the model TVM built (it may be another file than ORT's)
        if built.scale is not None:
            output_scale["tvm"] = built.scale
        if built.input_scale is not None:
            input_scale["tvm"] = built.input_scale
        if built.output in tvm.kept_float:
            facts.kept_float["tvm"] = tvm.kept_float[built.output]
    return facts


def _bias(gm: torch.fx.GraphModule, anchor: torch.fx.Node) -> list[float] | None:
    """The float bias of a converted conv/linear (its third argument), None without one."""
    import torch
    import torch.fx

    from qat_kernel.pipeline import fused_groups

    value = anchor.args[2] if len(anchor.args) > 2 else anchor.kwargs.get("bias")
    if isinstance(value, torch.fx.Node) and value.op == "get_attr":
        value = fused_groups.attr(gm, str(value.target))
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return [float(v) for v in value.detach().reshape(-1)]
    return None


def _scales(gm: torch.fx.GraphModule, node: torch.fx.Node) -> list[float] | None:
    """The scale argument of a quantize/dequantize node as a list (one per channel, or one)."""
    import torch
    import torch.fx

    from qat_kernel.pipeline import fused_groups

    scale = node.args[1] if len(node.args) > 1 else None
    if isinstance(scale, torch.fx.Node) and scale.op == "get_attr":
        scale = fused_groups.attr(gm, str(scale.target))
    if isinstance(scale, torch.Tensor):
        return [float(v) for v in scale.reshape(-1)]
    return [float(scale)] if isinstance(scale, (int, float)) else None


def _final(a: torch.Tensor, b: torch.Tensor) -> dict[str, Any]:
    """Final outputs of two stages: the metrics and, for class scores, top-1 agreement."""
    compared = metrics.all_metrics(a, b)
    if a.dim() == 2 and a.shape == b.shape and a.shape[1] > 1:
        compared["top1Agreement"] = (a.argmax(1) == b.argmax(1)).float().mean().item()
    return compared


def _ort_accuracy(trained: Trained, model: onnx.ModelProto, ctx: RequestContext) -> float | None:
    """Top-1 accuracy of the ONNX model in ORT on the whole validation set (None where the loss has none)."""
    import torch

    from qat_kernel.pipeline.training import predict
    from qat_kernel.runtimes.ort import sessions

    sess = sessions.session(model.SerializeToString())
    run = sessions.run_fn(sess)

    def forward(*tensors: torch.Tensor) -> torch.Tensor:
        from qat_kernel.pipeline.model_io import Inputs

        names = [i.name for i in sess.get_inputs()]
        return torch.from_numpy(run(Inputs([t.numpy() for t in tensors], names)))

    outputs, targets = predict(forward, trained.val, ctx)
    return trained.loss.accuracy(outputs, targets)
