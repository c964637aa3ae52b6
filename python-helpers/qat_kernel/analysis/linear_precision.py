"""Mixed precision per nn.Linear for the torchao flow, what search/mixed-precision measures a `flow: torchao` model
with (jobs/search_torchao.py): each candidate is a real torchao model, built from the QAT-trained float weights.

  int4  the config's 4-bit recipe (8da4w, or int4-weight-only when the config's scheme is weight-only; the config's
        group size, 32 when its scheme is an 8-bit one);
  int8  8da8w (int8-weight-only when the config's scheme is weight-only), one scale per output row;
  fp16  kept float, emulated: the weight and bias rounded to float16 and back once, the input in every forward, so
        the layer computes on float16 values with float32 sums;
  fp32  kept float.

A candidate model is a copy of the QAT model with its fake-quantized modules swapped back to float (QATConfig's
convert step without a base config: the trained weights, no fake quantization), then torchao's base configs applied
per module with quantize_ and a filter_fn (as torchao_flow._apply does). nn.Embedding modules the plan quantizes keep
the plan's scheme, and the modules the plan keeps float stay float, in every candidate.

Bytes are the packed size of a searched Linear's weight and bias: the quantized values at their bits (int4 two per
byte; torchao 0.18 stores them one per int8 byte, unpacked_to_int8), plus the scale and zero-point tensors torchao
holds for them, at their dtypes; fp16 two bytes per value, fp32 four."""

from __future__ import annotations

import copy
import re
from typing import TYPE_CHECKING, Any

from qat_kernel.pipeline import torchao_flow
from qat_kernel.pipeline.torchao_flow import WEIGHT_ONLY, Choice, Scheme, TorchaoPlan

if TYPE_CHECKING:
    from collections.abc import Iterable

    import torch

    from qat_kernel.pipeline.trained_model import Trained
    from qat_kernel.rpc.context import RequestContext

PRECISIONS = ("int4", "int8", "fp16", "fp32")
QUANTIZED = ("int4", "int8")
DEFAULT_PRECISIONS = ["int4", "int8", "fp16"]
OBJECTIVES = (("perplexity", "min"), ("bytes", "min"))


def schemes(qplan: TorchaoPlan, widths: list[int]) -> dict[str, Scheme]:
    """{int4, int8: the Scheme a searched Linear gets at that precision}, in the family of the config's scheme
    (dynamic int8 activations, or weight-only). `widths`: the searched Linears' in_features, which an int4 group
    size the config does not give must divide."""
    base = qplan.scheme
    weight_only = base.name in WEIGHT_ONLY
    if base.bits == 4:
        int4 = Scheme(base.name, base.group_size, False, base.path, base.group_path)
    else:
        group = torchao_flow._fitting_group(widths, torchao_flow.DEFAULT_GROUP_SIZE)  # pyright: ignore[reportPrivateUsage] - the flow's own rule
        int4 = Scheme("int4-weight-only" if weight_only else "8da4w", group, False, "precisions", "precisions")
    int8 = Scheme("int8-weight-only" if weight_only else "8da8w", None, False, "precisions", "precisions")
    return {"int4": int4, "int8": int8}


def _qat(trained: Trained) -> torchao_flow.TorchaoQat:
    qat = trained.qat
    assert isinstance(qat, torchao_flow.TorchaoQat), "a torchao model"
    return qat


def searched(trained: Trained) -> list[str]:
    """The nn.Linear modules the config's plan quantizes, in model order: what the search assigns precisions to."""
    return [c.module for c in _qat(trained).choices if c.kind == "linear" and c.scheme is not None]


def choices(trained: Trained, assignment: dict[str, str], by_precision: dict[str, Scheme]) -> list[Choice]:
    """The plan's choices with each searched Linear at its precision of `assignment` (float ones: scheme None)."""
    out = []
    for c in _qat(trained).choices:
        if c.module not in assignment:
            out.append(c)
            continue
        p = assignment[c.module]
        scheme = by_precision.get(p)
        out.append(Choice(c.module, c.kind, scheme, "search", "fp32" if scheme else p))
    return out


def float_model(trained: Trained) -> torch.nn.Module:
    """A copy of the QAT model with its fake-quantized modules swapped back to nn.Linear / nn.Embedding: the
    trained float weights, nothing fake-quantized (QATConfig's convert step without a base config)."""
    from torchao.quantization import quantize_
    from torchao.quantization.qat import QATConfig, QATStep

    model = copy.deepcopy(_qat(trained).model).eval()
    quantize_(model, QATConfig(step=QATStep.CONVERT))
    return model


def _round_input(_m: torch.nn.Module, args: tuple[Any, ...]) -> tuple[Any, ...]:
    import torch

    return tuple(
        a.to(torch.float16).to(a.dtype) if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args
    )


def build(float_copy: torch.nn.Module, chosen: list[Choice], assignment: dict[str, str]) -> torch.nn.Module:
    """The candidate: a copy of `float_copy` with torchao's base configs applied per module as `chosen` says, and the
    fp16 modules of `assignment` rounded to float16 (weight and bias once, the input in every forward)."""
    import torch

    model = copy.deepcopy(float_copy).eval()
    torchao_flow._apply(model, chosen, lambda s: s.base_config())  # pyright: ignore[reportPrivateUsage] - quantize_ per scheme, as the flow does
    modules = dict(model.named_modules())
    for name, p in assignment.items():
        if p != "fp16":
            continue
        m: Any = modules[name]
        # new Parameters: a weight tied to another module (an embedding) stays as it is there
        m.weight = torch.nn.Parameter(m.weight.detach().to(torch.float16).to(torch.float32), requires_grad=False)
        if getattr(m, "bias", None) is not None:
            m.bias = torch.nn.Parameter(m.bias.detach().to(torch.float16).to(torch.float32), requires_grad=False)
        m.register_forward_pre_hook(_round_input)
    return model


def module_bytes(module: torch.nn.Module, precision: str) -> int:
    """Packed bytes of a searched Linear's weight and bias at `precision` (the module as `build` made it)."""
    weight: Any = module.weight
    bias: Any = getattr(module, "bias", None)
    bias_n = int(bias.numel()) if bias is not None else 0
    if precision in ("fp16", "fp32"):
        size = 2 if precision == "fp16" else 4
        return (int(weight.numel()) + bias_n) * size
    bits = 4 if precision == "int4" else 8
    qdata = getattr(weight, "qdata", None)
    if qdata is None:  # not a torchao quantized tensor: count the values at their bits, a float32 scale per row
        return int(weight.numel()) * bits // 8 + int(weight.shape[0]) * 4 + bias_n * 4
    extra = 0
    for attr in ("scale", "zero_point"):
        t = getattr(weight, attr, None)
        if t is not None:
            extra += int(t.numel()) * t.element_size()
    return -(-int(qdata.numel()) * bits // 8) + extra + bias_n * 4


def candidate_bytes(model: torch.nn.Module, assignment: dict[str, str]) -> int:
    modules: dict[str, Any] = dict(model.named_modules())
    return sum(module_bytes(modules[name], p) for name, p in assignment.items())


def limited(val: Iterable[Any], samples: int | None) -> list[Any]:
    """The validation batches, the first `samples` sequences of them (all when None)."""
    out: list[Any] = []
    have = 0
    for x, y in val:
        if samples is not None:
            x, y = x[: samples - have], y[: samples - have]
        out.append((x, y))
        have += len(y)
        if samples is not None and have >= samples:
            break
    return out


def perplexity(model: torch.nn.Module, batches: list[Any], trained: Trained, ctx: RequestContext) -> tuple[float, int]:
    """(perplexity, tokens) of `model` on `batches` (training.perplexity: the loss's own next-token count)."""
    from qat_kernel.pipeline.training import perplexity as measure

    return measure(model, batches, ctx, trained.loss)


def overrides_for(
    assignment: dict[str, str], planned: dict[str, Scheme | None], by_precision: dict[str, Scheme]
) -> list[dict[str, Any]]:
    """The config overrides that select a candidate, to put first under `overrides:` (the first match wins, deepest
    module first): a module whose precision the plan already gives needs none; an int4 or int8 one gets `scheme` (and
    for int4 `group_size`), a float one `precision`."""
    rows: list[tuple[str, dict[str, Any]]] = []
    for module, p in assignment.items():
        want = by_precision.get(p)
        have = planned.get(module)
        if want is None:
            if have is None:
                continue
            rows.append((module, {"match": re.escape(module), "precision": p}))
            continue
        if have is not None and (have.name, have.group_size) == (want.name, want.group_size):
            continue
        row: dict[str, Any] = {"match": re.escape(module), "scheme": want.name}
        if want.bits == 4:
            row["group_size"] = want.group_size if want.group_size else "per_channel"
        rows.append((module, row))
    rows.sort(key=lambda r: -r[0].count("."))
    return [row for _, row in rows]
