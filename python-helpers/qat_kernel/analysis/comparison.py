"""Per-layer FP32-vs-INT8 error at fused-group outputs, for both flows.

For each quantized layer, on the same samples:
  propagated (top-level fields): the whole INT8 model runs; vs the original FP32 model;
  local: the INT8 layer (its input quantization, the layer, its output quantization) fed the FP32
         model's input of that layer, vs the FP32 output: the layer's own error, no upstream error;
  vsQatFloat / vsQatFloatLocal: the same two against the QAT-trained float model (fake quant off),
         i.e. quantization error alone, without the weight drift QAT added.

PT2E: values are FX node values (fused_groups.capture / an Interpreter keeping its env); the local run
re-executes the layer's INT8 region (fused_groups.int8_region) with the reference input substituted.
Eager: forward (pre-)hooks on the group's first module (INT8, QAT) and last module (FP32); the
local run quantizes the reference input with the INT8 module's own input scale/zero-point and calls
the converted module. Quantized outputs are dequantized before any metric. A layer with nothing to compare
(eager: a module the model defines but its forward does not call, which the pt2e export leaves out) is left out."""

from __future__ import annotations

import contextlib
import weakref
from typing import TYPE_CHECKING, Any, TypeAlias

from qat_kernel.analysis import metrics

if TYPE_CHECKING:
    from collections.abc import Sequence

    import torch
    import torch.fx
    from torch.utils.hooks import RemovableHandle

    from qat_kernel.pipeline.fused_groups import Group, Region
    from qat_kernel.pipeline.model_io import Inputs
    from qat_kernel.pipeline.trained_model import Trained
    from qat_kernel.rpc.context import RequestContext

# What analysis() gives: the (FP32, INT8) group pairs; by id() of the INT8 group, its QAT group and its INT8 region.
Analysis: TypeAlias = "tuple[list[tuple[Group, Group]], dict[int, Group], dict[int, Region]]"

MODES = ("propagated", "local")
REFERENCES = ("fp32", "qatFloat")


def _cat(parts: Sequence[torch.Tensor | None]) -> torch.Tensor | None:
    import torch

    tensors = [p for p in parts if p is not None]
    if not parts or len(tensors) < len(parts):
        return None
    return tensors[0] if len(tensors) == 1 else torch.cat(tensors)


def _metrics(ref: torch.Tensor | None, got: torch.Tensor | None) -> dict[str, float] | None:
    return metrics.all_metrics(ref, got) if ref is not None and got is not None and ref.shape == got.shape else None


def _layer_row(
    module: str,
    op: str,
    ops: list[str],
    fp_out: torch.Tensor,
    q_out: torch.Tensor,
    q_local: torch.Tensor | None,
    qat_out: torch.Tensor | None,
    q_local_qat: torch.Tensor | None,
) -> dict[str, Any]:
    row = {"module": module, "op": op, "group": ops, **metrics.all_metrics(fp_out, q_out)}
    extra = {
        "local": _metrics(fp_out, q_local),
        "vsQatFloat": _metrics(qat_out, q_out),
        "vsQatFloatLocal": _metrics(qat_out, q_local_qat),
    }
    row.update({k: v for k, v in extra.items() if v is not None})
    return row


# --- PT2E -------------------------------------------------------------------------------------------


def compare_pt2e(
    trained: Trained,
    inputs: Sequence[Inputs],
    folder: str,
    ctx: RequestContext,
    local: bool = True,
    qat_reference: bool = True,
) -> list[dict[str, Any]]:
    """`local=False` skips the shadow runs and `qat_reference=False` the QAT-float model: propagated
    error against FP32 only, what the Numeric Suite reports (the benchmark times both ways)."""
    import torch
    import torch.fx

    from qat_kernel import userpaths
    from qat_kernel.pipeline import fused_groups
    from qat_kernel.pipeline.trained_model import evaluating

    fp32_gm, int8_gm, qat_gm = trained.fp32_graph, trained.converted, trained.qat.model
    pairs, qat_for, regions = analysis(fp32_gm, int8_gm, qat_gm)
    if not qat_reference:
        qat_for = {}
    fp_nodes = [n for f, _ in pairs for n in (f.output, f.input)]
    qat_nodes = [n for g in qat_for.values() for n in (g.output, g.input)]
    # Metrics accumulate batch by batch: no layer output is kept beyond its batch.
    sums: dict[tuple[int, str], metrics.Accumulator] = {}

    def add(key: tuple[int, str], ref: torch.Tensor | None, got: torch.Tensor | None) -> None:
        sums.setdefault(key, metrics.Accumulator()).add(ref, got)

    # INT8 values the comparison reads: each group's output and, for the local runs, every value a
    # region takes from outside itself (its entry, weights, scales).
    needed = {q.output: None for _, q in pairs}
    if local:
        for region in regions.values():
            inside = set(region.nodes)
            needed[region.entry] = None
            for n in region.nodes:
                needed.update((i, None) for i in n.all_input_nodes if i not in inside)
    needed = list(needed)
    int8_tapped = fused_groups.tapped(int8_gm, needed)
    interpreter = torch.fx.Interpreter(int8_gm)  # dispatches the region re-runs; never runs the graph

    # Only the QAT-float reference runs the QAT model, and only it needs fake quantization switched off.
    with torch.no_grad(), evaluating(trained.qat, fake_quant=False) if qat_reference else contextlib.nullcontext():
        for x in inputs:
            ctx.check_cancelled()
            fp = fused_groups.capture(fp32_gm, [x], fp_nodes)
            qat = fused_groups.capture(qat_gm, [x], qat_nodes) if qat_reference else {}
            env = dict(zip(needed, int8_tapped(*x)))
            for f, q in pairs:
                g, region = qat_for.get(id(q)), regions[id(q)]
                fp_out, q_out = fp[f.output.name], env[q.output]
                add((id(q), "main"), fp_out, q_out)
                if local:
                    add((id(q), "local"), fp_out, shadow(interpreter, env, region, fp[f.input.name]))
                if g is not None:
                    qat_out = qat[g.output.name]
                    add((id(q), "vsQatFloat"), qat_out, q_out)
                    if local:
                        add(
                            (id(q), "vsQatFloatLocal"),
                            qat_out,
                            shadow(interpreter, env, region, qat[g.input.name]),
                        )
    layers: list[dict[str, Any]] = []
    for f, q in pairs:
        main = sums[(id(q), "main")].result()
        if main is None:
            continue  # FP32 and INT8 outputs of different shapes: nothing to compare
        row: dict[str, Any] = {"module": f.module, "op": f.op, "group": f.ops, **main}
        for extra in ("local", "vsQatFloat", "vsQatFloatLocal"):
            value = sums[(id(q), extra)].result() if (id(q), extra) in sums else None
            if value is not None:
                row[extra] = value
        region = regions[id(q)]
        row["nodes"] = [n.name for n in region.weight + [n for n in region.nodes]]
        if q.anchor.name not in row["nodes"]:
            row["nodes"].append(q.anchor.name)
        layer = trained_layer_config(trained, f.module)
        if layer is not None:
            row["override"] = layer
        source = userpaths.stack_trace_location(f.anchor.meta.get("stack_trace"), folder)
        if source:
            row["source"] = source
        layers.append(row)
    return layers


_ANALYSES: weakref.WeakKeyDictionary[torch.fx.GraphModule, tuple[tuple[int, int], Analysis]] = (
    weakref.WeakKeyDictionary()
)


def analysis(fp32_gm: torch.fx.GraphModule, int8_gm: torch.fx.GraphModule, qat_gm: torch.fx.GraphModule) -> Analysis:
    """Paired groups, QAT counterparts and INT8 regions: graph walks in Python, done once per model."""
    from qat_kernel.pipeline import fused_groups

    key = (id(fp32_gm), id(qat_gm))
    cached = _ANALYSES.get(int8_gm)
    if cached is None or cached[0] != key:
        pairs = fused_groups.pair_groups(fused_groups.fp32_groups(fp32_gm), fused_groups.int8_groups(int8_gm))
        qat_for = {
            id(q): g for g, q in fused_groups.pair_groups(fused_groups.prepared_groups(qat_gm), [q for _, q in pairs])
        }
        regions = {id(q): fused_groups.int8_region(q) for _, q in pairs}
        cached = (key, (pairs, qat_for, regions))
        _ANALYSES[int8_gm] = cached
    return cached[1]


def shadow(interpreter: torch.fx.Interpreter, env: dict[torch.fx.Node, Any], region: Region, value: Any) -> Any:
    """The INT8 region's output with `value` as its entry (None where the shapes differ): a layer's local run."""
    entry_value = env.get(region.entry)
    if entry_value is None or not hasattr(value, "shape") or value.shape != entry_value.shape:
        return None
    from qat_kernel.pipeline import fused_groups

    return fused_groups.run_region(interpreter, env, region, value)


def trained_layer_config(trained: Trained, module: str) -> int | None:
    """Index of the override that configures `module`, if any."""
    from qat_kernel.pipeline import qconfig

    layer = qconfig.plan(trained.cfg).for_module(module)
    return layer.override


# --- eager ------------------------------------------------------------------------------------------


def compare_eager(trained: Trained, inputs: Sequence[Inputs], folder: str, ctx: RequestContext) -> list[dict[str, Any]]:
    import torch

    from qat_kernel import userpaths
    from qat_kernel.pipeline import eager_flow
    from qat_kernel.pipeline.trained_model import evaluating

    fp32, int8 = trained.fp32, trained.converted
    qat = trained.qat
    assert isinstance(qat, eager_flow.EagerQat), f"compare_eager on a model of the {trained.flow} flow"
    layers = [layer for layer, _ in qat.layers()]
    columns: dict[tuple[int, str], list[torch.Tensor | None]] = {}

    def add(key: tuple[int, str], value: torch.Tensor | None) -> None:
        if value is not None and getattr(value, "is_quantized", False):
            value = value.dequantize()
        # Fresh tensors from the tapped forwards and region re-runs: nothing writes to them later.
        columns.setdefault(key, []).append(None if value is None else value.detach().float())

    def hooks(model: torch.nn.Module, spots: list[tuple[str, str, tuple[str, int]]]) -> list[RemovableHandle]:
        """spots: [(module name, 'in'|'out', key)] -> registered handles writing into `seen`."""
        handles: list[RemovableHandle] = []
        for name, where, key in spots:
            module = model.get_submodule(name)
            if where == "in":

                def keep_input(_m: torch.nn.Module, args: tuple[Any, ...], key: tuple[str, int] = key) -> None:
                    seen[key] = args[0]

                handles.append(module.register_forward_pre_hook(keep_input))
            else:

                def keep_output(
                    _m: torch.nn.Module, args: tuple[Any, ...], out: Any, key: tuple[str, int] = key
                ) -> None:
                    seen[key] = out

                handles.append(module.register_forward_hook(keep_output))
        return handles

    seen: dict[tuple[str, int], Any] = {}
    handles: list[RemovableHandle] = []
    try:
        handles += hooks(
            fp32,
            [(l.group[0], "in", ("fpIn", i)) for i, l in enumerate(layers)]
            + [(l.group[-1], "out", ("fp", i)) for i, l in enumerate(layers)],
        )
        handles += hooks(
            trained.qat.model,
            [(l.module, "in", ("qatIn", i)) for i, l in enumerate(layers)]
            + [(l.module, "out", ("qat", i)) for i, l in enumerate(layers)],
        )
        handles += hooks(
            int8,
            [(l.module, "in", ("qIn", i)) for i, l in enumerate(layers)]
            + [(l.module, "out", ("q", i)) for i, l in enumerate(layers)],
        )
        with torch.no_grad(), evaluating(trained.qat, fake_quant=False):
            for x in inputs:
                ctx.check_cancelled()
                seen.clear()
                fp32(*x)
                trained.qat.model(*x)
                int8(*x)
                batch = dict(seen)
                for i, layer in enumerate(layers):
                    for kind in ("fp", "qat", "q"):
                        add((i, kind), batch.get((kind, i)))
                    q_in = batch.get(("qIn", i))
                    module = int8.get_submodule(layer.module)
                    add((i, "local"), _requantized_call(module, q_in, batch.get(("fpIn", i))))
                    add((i, "localQat"), _requantized_call(module, q_in, batch.get(("qatIn", i))))
    finally:
        for h in handles:
            h.remove()
    rows = []
    for i, layer in enumerate(layers):
        get = lambda kind, i=i: _cat(columns.get((i, kind), []))  # noqa: E731
        fp_out, q_out = get("fp"), get("q")
        if fp_out is None or q_out is None:
            continue  # a module the model defines but its forward did not call on these samples
        row = _layer_row(layer.module, layer.op, layer.ops, fp_out, q_out, get("local"), get("qat"), get("localQat"))
        override = trained_layer_config(trained, layer.module)
        if override is not None:
            row["override"] = override
        source = eager_flow.source_of(fp32, layer.module, lambda f: userpaths.is_user_file(f, folder))
        if source:
            row["source"] = source
        rows.append(row)
    return rows


def _requantized_call(module: torch.nn.Module, q_in: torch.Tensor | None, reference_in: torch.Tensor | None) -> Any:
    """The converted module on the reference input, quantized as its real input was."""
    import torch

    if (
        q_in is None
        or reference_in is None
        or not getattr(q_in, "is_quantized", False)
        or q_in.qscheme() != torch.per_tensor_affine
        or reference_in.shape != q_in.shape
    ):
        return None
    x = torch.quantize_per_tensor(
        reference_in.dequantize() if reference_in.is_quantized else reference_in,
        q_in.q_scale(),
        q_in.q_zero_point(),
        q_in.dtype,
    )
    return module(x)
