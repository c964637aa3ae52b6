"""Per-module FP32-vs-quantized error for the torchao flow (compare/layers on `flow: torchao`): every nn.Linear
and nn.Embedding the plan quantized, on the same validation samples.

  propagated (top-level fields): the converted model runs whole; its module output vs the FP32 model's;
  local: the converted module alone, fed the FP32 model's input of that module (8da*: its dynamic per-token
         activation quantization runs inside), vs the FP32 output: the module's own error;
  vsQatFloat / vsQatFloatLocal: the same two against the QAT-trained float model (fake quantization off):
         quantization error alone, without the weight drift QAT added.

Outputs are read by forward hooks on the modules of the three models (the same module paths: torchao swaps
weights, not modules) and summed batch by batch (metrics.Accumulator): nothing but the current batch is kept.

weightError: the module's weight as convert stored it (dequantized) against the QAT-float weight it was made
from, per quantization group (one scale: `group_size` weights of a row, or a whole row per channel): SQNR in dB
per (row, group), the worst group, and a heat map of at most HEAT_CELLS x HEAT_CELLS cells, each the worst
(lowest) group SQNR of the rows and groups it covers, so one bad group stays visible in a 4096-wide layer."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from qat_kernel.analysis import metrics

if TYPE_CHECKING:
    from collections.abc import Sequence

    import torch
    from torch.utils.hooks import RemovableHandle

    from qat_kernel.pipeline.model_io import Inputs
    from qat_kernel.pipeline.torchao_flow import Choice
    from qat_kernel.pipeline.trained_model import Trained
    from qat_kernel.rpc.context import RequestContext

HEAT_CELLS = 64  # the heat map's most rows and columns


def _tensor(value: Any) -> torch.Tensor | None:
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach()
    return None


def _tap(model: torch.nn.Module, names: list[str], seen: dict[tuple[str, str], Any]) -> list[RemovableHandle]:
    """Hooks writing each named module's first input and its output into `seen[(name, 'in'|'out')]`."""
    handles: list[RemovableHandle] = []
    for name in names:
        module = model.get_submodule(name)

        def keep_input(_m: torch.nn.Module, args: tuple[Any, ...], name: str = name) -> None:
            seen[(name, "in")] = args[0] if args else None

        def keep_output(_m: torch.nn.Module, _args: tuple[Any, ...], out: Any, name: str = name) -> None:
            seen[(name, "out")] = out

        handles.append(module.register_forward_pre_hook(keep_input))
        handles.append(module.register_forward_hook(keep_output))
    return handles


def _dequantized(weight: Any) -> torch.Tensor:
    """A converted module's weight as float: torchao's quantized tensors dequantize themselves."""
    return weight.dequantize().float() if hasattr(weight, "dequantize") else weight.detach().float()


def group_sqnr(reference: torch.Tensor, stored: torch.Tensor, group_size: int | None) -> torch.Tensor:
    """SQNR in dB of each quantization group, (rows, groups): groups of `group_size` weights along each row, or
    one group per row (per channel). A group stored exactly is +inf; an all-zero group with error -inf."""
    import torch

    rows = reference.shape[0]
    width = reference[0].numel() if rows else 0
    size = group_size or width
    ref = reference.reshape(rows, width // size, size).double()
    err = (reference - stored).reshape(rows, width // size, size).double()
    signal, noise = (ref**2).sum(-1), (err**2).sum(-1)
    with torch.no_grad():
        db = 10 * torch.log10(signal / noise)
    return torch.where(noise == 0, torch.full_like(db, math.inf), db)


def _pool_min(values: torch.Tensor, cells: int) -> tuple[torch.Tensor, int, int]:
    """(map, rows per cell, groups per cell): the minimum over blocks of the (rows, groups) matrix, at most
    `cells` x `cells` blocks (the last row and column of blocks may cover fewer)."""
    import torch

    rows, cols = values.shape
    per_row, per_col = max(1, math.ceil(rows / cells)), max(1, math.ceil(cols / cells))
    out_rows, out_cols = math.ceil(rows / per_row), math.ceil(cols / per_col)
    padded = torch.full((out_rows * per_row, out_cols * per_col), math.inf, dtype=values.dtype)
    padded[:rows, :cols] = values
    blocks = padded.reshape(out_rows, per_row, out_cols, per_col)
    return blocks.amin(dim=(1, 3)), per_row, per_col


def _db(v: float) -> float | None:
    """A dB figure for JSON: None where infinite (exactly stored) or undefined."""
    return round(v, 2) if math.isfinite(v) else None


def weight_error(reference: torch.Tensor, stored: torch.Tensor, group_size: int | None) -> dict[str, Any]:
    """weightError of one module (see the module docstring)."""
    import torch

    db = group_sqnr(reference, stored, group_size)
    finite = db[torch.isfinite(db)]
    flat = int(torch.argmin(db).item())
    rows, groups = db.shape
    heat, per_row, per_col = _pool_min(db, HEAT_CELLS)
    whole = metrics.sqnr(reference, stored) if torch.any(reference != stored) else math.inf
    return {
        "groupSize": group_size or (reference[0].numel() if reference.shape[0] else 0),
        "rows": rows,
        "groups": groups,
        "sqnr": _db(whole),
        "median": _db(float(finite.median().item())) if finite.numel() else None,
        "worst": {"row": flat // groups, "group": flat % groups, "sqnr": _db(float(db.reshape(-1)[flat].item()))},
        "heat": {
            "rowsPerCell": per_row,
            "groupsPerCell": per_col,
            "sqnr": [[_db(float(v)) for v in row] for row in heat.tolist()],
        },
    }


def _row(
    trained: Trained, choice: Choice, sums: dict[tuple[str, str], metrics.Accumulator], weight: dict[str, Any]
) -> dict[str, Any] | None:
    from qat_kernel.pipeline import session

    got = {kind: sums[(choice.module, kind)].result() for kind in ("q", "local", "qat", "localQat")}
    if got["q"] is None:
        return None  # a module the model defines but its forward did not call on these samples
    scheme = choice.scheme
    assert scheme is not None
    row: dict[str, Any] = {
        "module": choice.module,
        "op": choice.kind,
        "group": [choice.kind],
        **got["q"],
        "scheme": scheme.label,
        "weightError": weight,
    }
    for key, kind in (("local", "local"), ("vsQatFloat", "qat"), ("vsQatFloatLocal", "localQat")):
        if got[kind] is not None:
            row[key] = got[kind]
    if choice.why.startswith("overrides."):
        row["override"] = int(choice.why.split(".")[1])
    source = session.layer_source(trained, choice)
    if source:
        row["source"] = source
    return row


def compare_torchao(
    trained: Trained, inputs: Sequence[Inputs], _folder: str, ctx: RequestContext
) -> list[dict[str, Any]]:
    """compare/layers' rows for a torchao model, in the model's module order (source lines: the trained config's
    folder, as the other flows'). Per batch the FP32 model runs first and keeps each module's input and output; the
    QAT model's hooks measure the local QAT-float comparison at once and keep only the output; the converted model's
    hooks measure the rest and drop what they used: at most three of each module's tensors are held at a time."""
    import torch

    from qat_kernel.pipeline.torchao_flow import TorchaoQat
    from qat_kernel.pipeline.trained_model import evaluating

    qat = trained.qat
    assert isinstance(qat, TorchaoQat), f"compare_torchao on a model of the {trained.flow} flow"
    chosen = qat.quantized
    names = [c.module for c in chosen]
    fp32, converted = trained.fp32, trained.converted
    sums: dict[tuple[str, str], metrics.Accumulator] = {
        (name, kind): metrics.Accumulator() for name in names for kind in ("q", "local", "qat", "localQat")
    }
    fp_seen: dict[tuple[str, str], Any] = {}
    qat_out: dict[str, torch.Tensor | None] = {}
    busy = [False]  # a converted module called from a hook: no hook of the converted model measures that call

    def alone(name: str, x: Any) -> torch.Tensor | None:
        """The converted module `name` on `x` alone."""
        if x is None:
            return None
        busy[0] = True
        try:
            return _tensor(converted.get_submodule(name)(x))
        finally:
            busy[0] = False

    def on_qat(name: str, args: tuple[Any, ...], out: Any) -> None:
        qat_out[name] = got = _tensor(out)
        sums[(name, "localQat")].add(got, alone(name, args[0] if args else None))

    def on_converted(name: str, _args: tuple[Any, ...], out: Any) -> None:
        if busy[0]:
            return
        reference, fp_in = _tensor(fp_seen.pop((name, "out"), None)), fp_seen.pop((name, "in"), None)
        if reference is None:
            return  # not called in the FP32 model's forward
        got = _tensor(out)
        sums[(name, "q")].add(reference, got)
        sums[(name, "qat")].add(qat_out.pop(name, None), got)
        sums[(name, "local")].add(reference, alone(name, fp_in))

    handles: list[RemovableHandle] = _tap(fp32, names, fp_seen)
    try:
        for name in names:
            handles.append(
                qat.model.get_submodule(name).register_forward_hook(
                    lambda _m, args, out, name=name: on_qat(name, args, out)
                )
            )
            handles.append(
                converted.get_submodule(name).register_forward_hook(
                    lambda _m, args, out, name=name: on_converted(name, args, out)
                )
            )
        with torch.no_grad(), evaluating(qat, fake_quant=False):
            for x in inputs:
                ctx.check_cancelled()
                fp_seen.clear()
                qat_out.clear()
                fp32(*x)
                qat.model(*x)
                converted(*x)
    finally:
        for handle in handles:
            handle.remove()
    rows: list[dict[str, Any]] = []
    for choice in chosen:
        scheme = choice.scheme
        assert scheme is not None
        reference = qat.model.get_submodule(choice.module).weight.detach().float()
        stored = _dequantized(converted.get_submodule(choice.module).weight)
        row = _row(trained, choice, sums, weight_error(reference, stored, scheme.group_size))
        if row is not None:
            rows.append(row)
    return rows
