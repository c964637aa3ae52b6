"""Numerical health of a QAT run: what real initialisations do to the conv+BN fold, and where a NaN or
Inf comes from when one appears.

Before QAT
- Non-finite parameters or buffers (a damaged weights file, a diverged FP32 run): a NonFinite error
  naming the tensor (`check_state`).
- Zero or tiny BatchNorm gamma after a conv (timm's zero_init_last, network-slimming-pruned channels).
  torchao's PT2E QAT rewrites conv -> BN as conv(x, W * s) / s -> BN with s = gamma / sqrt(var + eps),
  so a channel with gamma = 0 computes 0 / 0 = NaN on the first forward, and the observers after it
  fail with an assertion. `floor_folded_gamma` raises |gamma| to GAMMA_FLOOR * sqrt(var + eps) (sign
  kept, 0 -> +) in such channels before prepare_qat_pt2e. Why that floor: a nonzero s trains like
  the original (on a small residual block, gamma from 1e-38 to 1e-5 gave the same losses and gradients
  step for step), so only s == 0 is broken; 1e-6 keeps s, W * s and 1 / s far from float32 underflow,
  denormals and flush-to-zero for any weight scale, while the change to the BN's output,
  |d gamma| * |x_hat| <= 1e-6 * |x - running_mean|, is of the order of float32 rounding of the
  activations around it (relative 2e-7 on the tests' residual net). The change in the model's output
  is measured on the example input and reported. BNs that follow no conv are not folded and are left
  alone. "Tiny" is therefore |gamma| / sigma < 1e-6, treated as 0.
  The eager flow needs no change to the model: torch's fused ConvBn modules have an exact two-pass
  path for gamma == 0 (`_forward_slow`), switched on for those modules only (`eager_exact_fold`).
- All-zero output channels of a conv/linear weight (pruned): per-channel observers see min = max = 0
  and give the channel the smallest scale (the observer's eps), the fold keeps the row at zero and the
  channel computes its bias (after BN: beta). Nothing breaks; the result says which layers have them
  and that QAT's updates can move those weights off zero (`pruned_channels`).

During training (`guard`, called by the training loop around each forward and loss)
- A non-finite loss, or an exception from the forward (an observer's "min should be less than max"
  assertion on NaN), re-runs that batch without observers and finds where the first non-finite value
  appears: the input batch, a parameter the previous update made non-finite, the first FX node of
  the prepared graph (an fx.Interpreter that stops there) or the first module whose output is
  non-finite (forward hooks, FP32 and eager models). The NonFinite error names the layer, the step
  and what to do. An exception without a non-finite value behind it is re-raised unchanged."""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from qat_kernel.rpc.errors import KernelError, NonFinite

if TYPE_CHECKING:
    import os
    from collections.abc import Callable, Iterator

    import torch

    from qat_kernel.userpaths import SourceLocation

GAMMA_FLOOR = 1e-6  # relative to the BN's sqrt(running_var + eps)

_CONV_OPS = {"conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d"}
_STAGES = {"fp32": "FP32 training", "qat": "QAT"}
_QUANTIZER_SUFFIXES = (".activation_post_process", ".weight_fake_quant")


# --- before QAT ---------------------------------------------------------------------------------


def _count(t: torch.Tensor) -> tuple[str, int]:
    """('NaN' | 'Inf' | 'NaN and Inf', number of non-finite values) of a tensor."""
    import torch

    nan = int(torch.isnan(t).sum())
    inf = int(torch.isinf(t).sum())
    what = "NaN and Inf" if nan and inf else ("NaN" if nan else "Inf")
    return what, nan + inf


def _is_quantizer(name: str, module: torch.nn.Module | None = None) -> bool:
    if module is not None and hasattr(module, "observer_enabled"):
        return True
    return "activation_post_process" in name or "weight_fake_quant" in name


def non_finite_tensors(model: torch.nn.Module, buffers: bool = True) -> list[tuple[str, str, int, int, object]]:
    """(name, what, count, total, tensor) of each floating parameter (and buffer) with NaN/Inf, quantizer
    state (observer min/max, scales) left out: an observer that saw a NaN holds one without being the cause."""
    import torch

    found = []
    for owner_name, owner in model.named_modules():
        if _is_quantizer(owner_name, owner):
            continue
        tensors = list(owner.named_parameters(recurse=False))
        if buffers:
            tensors += list(owner.named_buffers(recurse=False))
        for name, t in tensors:
            if not t.is_floating_point() or bool(torch.isfinite(t).all()):
                continue
            what, count = _count(t.detach())
            found.append((f"{owner_name}.{name}" if owner_name else name, what, count, t.numel(), t))
    return found


def check_state(model: torch.nn.Module, source: str, advice: str) -> None:
    """NonFinite naming the first non-finite parameter/buffer of `model`; `source` says where the values
    came from ("the weights loaded from w.pt"), `advice` what to do."""
    found = non_finite_tensors(model)
    if not found:
        return
    name, what, count, total, _ = found[0]
    more = f" (and {len(found) - 1} more tensors)" if len(found) > 1 else ""
    raise NonFinite(
        f"Non-finite values in {source}: `{name}` is {what} in {count} of {total} values{more}. {advice}",
        module=_owner(name),
    )


def _owner(tensor_name: str) -> str:
    return tensor_name.rpartition(".")[0]


def _names(names: list[str], limit: int = 3) -> str:
    shown = ", ".join(f"`{n}`" for n in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _sigma(bn_running_var: torch.Tensor, eps: float):
    import torch

    return torch.sqrt(bn_running_var.detach().float() + eps)


def folded_batch_norms(graph: torch.fx.GraphModule) -> list[tuple[str, str, torch.Tensor, torch.Tensor, float]]:
    """(BN module path, gamma's attribute path, gamma, running_var, eps) of each conv -> batch_norm pair of
    an exported graph that torchao's QAT conv+BN rewrite folds (a conv whose only user is an affine
    batch_norm)."""
    from qat_kernel.pipeline.fused_groups import attr, module_path, op_name

    pairs = []
    for node in graph.graph.nodes:
        if op_name(node) not in _CONV_OPS or len(node.users) != 1:
            continue
        bn = next(iter(node.users))
        if op_name(bn) != "batch_norm" or bn.args[0] is not node or len(bn.args) < 8:
            continue
        weight, running_var = bn.args[1], bn.args[4]
        if getattr(weight, "op", None) != "get_attr" or getattr(running_var, "op", None) != "get_attr":
            continue
        gamma, var = attr(graph, weight.target), attr(graph, running_var.target)
        name = module_path(bn) or _owner(weight.target)
        pairs.append((name, weight.target, gamma, var, float(bn.args[7])))
    return pairs


def floor_folded_gamma(
    model: torch.nn.Module, graph: torch.fx.GraphModule, example: tuple[Any, ...], notes: list[str]
) -> None:
    """Raise |gamma| to GAMMA_FLOOR * sigma in the channels of folded BNs below it, in place (the
    exported graph shares its parameters with `model`); a note says which BNs and by how much the FP32
    model's output on `example` moved."""
    import torch

    changes = []
    for name, target, gamma, var, eps in folded_batch_norms(graph):
        floor = (GAMMA_FLOOR * _sigma(var, eps)).to(gamma.dtype)
        low = gamma.detach().abs() < floor
        if bool(low.any()):
            sign = torch.where(gamma.detach() < 0, -1.0, 1.0).to(gamma.dtype)
            value = torch.where(low, sign * floor, gamma.detach())
            changes.append((name, [gamma, _same_tensor(model, target)], value, int(low.sum()), low.numel()))
    if not changes:
        return
    before = _eval_output(model, example)
    with torch.no_grad():
        for _, tensors, value, _, _ in changes:
            for t in tensors:
                if t is not None:
                    t.copy_(value)
    after = _eval_output(model, example)
    model.train()
    channels = sum(c[3] for c in changes)
    total = sum(c[4] for c in changes)
    notes.append(
        f"BatchNorm gamma is 0 or below {GAMMA_FLOOR:g}*sigma in {channels} of {total} channels of "
        f"{len(changes)} BatchNorms after a conv ({_names([c[0] for c in changes])}; e.g. zero_init_last): "
        f"PT2E QAT's conv+BN fold divides by gamma/sigma, so they start QAT at +-{GAMMA_FLOOR:g}*sigma and "
        f"train as usual; this moves the FP32 model's output by {_change(before, after)} on the example input"
    )


def _same_tensor(model: torch.nn.Module, target: str):
    """`model`'s parameter at `target`: the graph's own while torch.export shares parameter storage, as it
    does today; written as well in case it stops, since the output change is measured on `model`."""
    try:
        return model.get_parameter(target)
    except AttributeError:
        return None


def _eval_output(model: torch.nn.Module, example: tuple[Any, ...]):
    import torch

    from qat_kernel.pipeline.model_io import as_args

    model.eval()
    with torch.no_grad():
        return _floats(model(*as_args(example)))


def _floats(output: Any) -> list[torch.Tensor]:
    import torch
    from torch.utils._pytree import tree_leaves

    return [t.detach().float() for t in tree_leaves(output) if isinstance(t, torch.Tensor) and t.is_floating_point()]


def _change(before: list[torch.Tensor], after: list[torch.Tensor]) -> str:
    """'at most D (relative R)' between two model outputs."""
    delta = max((float((a - b).abs().max()) for a, b in zip(after, before) if a.numel()), default=0.0)
    scale = max((float(b.abs().max()) for b in before if b.numel()), default=0.0)
    relative = delta / scale if scale else 0.0
    return f"at most {delta:.2g} (relative {relative:.2g})"


def eager_exact_fold(model: torch.nn.Module, notes: list[str]) -> None:
    """Fused eager ConvBn modules with gamma below the floor take torch's exact two-pass forward
    (`_forward_slow`: BN statistics from an unscaled conv, no division by gamma); the model is unchanged."""
    import torch

    names = []
    for name, module in model.named_modules():
        bn = getattr(module, "bn", None)
        if not hasattr(module, "_enable_slow_path_for_better_numerical_stability") or bn is None:
            continue
        if bn.weight is None or bn.running_var is None:
            continue
        with torch.no_grad():
            low = bn.weight.abs() < GAMMA_FLOOR * _sigma(bn.running_var, bn.eps)
        if bool(low.any()):
            module._enable_slow_path_for_better_numerical_stability = True  # pyright: ignore[reportArgumentType] - a plain flag; torch types Module.__setattr__ for tensors and modules
            names.append(name)
    if names:
        notes.append(
            f"BatchNorm gamma is 0 or below {GAMMA_FLOOR:g}*sigma in {len(names)} fused conv+BN layers "
            f"({_names(names)}): the one-pass conv+BN fold divides by gamma, so these train with torch's exact "
            "two-pass conv+BN (one more conv per step each); the model is unchanged"
        )


def pruned_channels(model: torch.nn.Module, notes: list[str]) -> None:
    """A note per conv/linear layer with all-zero output channels in its weight."""
    rows = []
    for name, module in model.named_modules():
        if type(module).__name__ not in ("Conv1d", "Conv2d", "Conv3d", "Linear"):
            continue
        weight = getattr(module, "weight", None)
        if weight is None or weight.dim() < 2 or not weight.is_floating_point():
            continue
        zero = int((weight.detach().flatten(1).abs().amax(1) == 0).sum())
        if zero:
            rows.append(f"`{name}` {zero} of {weight.shape[0]}")
    if rows:
        notes.append(
            "all-zero (pruned) output channels in the weights of "
            + ", ".join(rows[:5])
            + (f" and {len(rows) - 5} more layers" if len(rows) > 5 else "")
            + ": their per-channel weight scale is the observer's minimum and they compute only their bias "
            "(after a folded BN: beta); QAT updates them like the other weights, nothing keeps them at zero"
        )


# --- during training ----------------------------------------------------------------------------


@dataclass
class Finding:
    """Where the first non-finite value of a re-run appeared."""

    kind: str  # input | parameter | buffer | node | between | output | none
    module: str | None = None
    op: str | None = None
    what: str = "NaN"
    count: int = 0
    total: int = 0
    previous: str | None = None  # between: the last module whose output was finite
    largest: float = 0.0  # output: the largest |value| of the (finite) outputs
    stack_trace: str | None = None  # node: torch.export's stack trace of the node
    extra: dict[str, Any] = field(default_factory=dict)


class _Stop(Exception):
    pass


def _leaves_bad(value: Any) -> tuple[str, int, int] | None:
    """(what, count, total) of the non-finite values among the tensors in `value`, None if all finite."""
    import torch
    from torch.utils._pytree import tree_leaves

    bad_what, bad, total = set(), 0, 0
    for t in tree_leaves(value):
        if not isinstance(t, torch.Tensor) or not t.is_floating_point():
            continue
        total += t.numel()
        if bool(torch.isfinite(t).all()):
            continue
        what, count = _count(t.detach())
        bad_what.update(what.split(" and "))
        bad += count
    if not bad:
        return None
    return " and ".join(sorted(bad_what, reverse=True)), bad, total


def _unwrap(model: torch.nn.Module) -> torch.nn.Module:
    """The module DistributedDataParallel wraps (its forward would start collectives on one rank only)."""
    return cast("torch.nn.Module", model.module) if type(model).__name__ == "DistributedDataParallel" else model


@contextlib.contextmanager
def _observers_off(model: torch.nn.Module) -> Iterator[None]:
    saved = []
    for m in model.modules():
        flag = getattr(m, "observer_enabled", None)
        if flag is not None and hasattr(flag, "fill_"):
            saved.append((flag, flag.clone()))
            flag.fill_(0)
    try:
        yield
    finally:
        for flag, value in saved:
            flag.copy_(value)


def locate(model: torch.nn.Module, call: Callable[[torch.nn.Module], Any], batch: Any) -> Finding:
    """Re-run `call(model)` on the same batch (no gradients, observers off) and find the first
    non-finite value: in `batch`, in a parameter, at a graph node or module output; else describe the
    (finite) output."""
    import torch

    model = _unwrap(model)
    bad = _leaves_bad(batch)
    if bad:
        return Finding("input", what=bad[0], count=bad[1], total=bad[2])
    # A parameter only changes in optimizer.step: a non-finite one comes from an earlier update.
    params = non_finite_tensors(model, buffers=False)
    if params:
        name, what, count, total, _ = params[0]
        return Finding("parameter", module=name, what=what, count=count, total=total, extra={"more": len(params) - 1})
    # BatchNorm running statistics were updated by the failing forward itself: for the re-run their
    # non-finite entries go back to the initial 0 (mean) / 1 (var), which changes no train-mode output
    # (BN normalises with the batch's statistics; the QAT fold's scale cancels). Other buffers are reported.
    stats, others = [], []
    for row in non_finite_tensors(model):
        (stats if row[0].endswith(("running_mean", "running_var")) else others).append(row)
    if others:
        name, what, count, total, _ = others[0]
        return Finding("buffer", module=name, what=what, count=count, total=total, extra={"more": len(others) - 1})
    with torch.no_grad(), _observers_off(model), _reset_stats([row[4] for row in stats], stats):
        if isinstance(model, torch.fx.GraphModule):
            return _locate_in_graph(model, call)
        return _locate_in_modules(model, call)


@contextlib.contextmanager
def _reset_stats(tensors: list[torch.Tensor], rows: list[tuple[str, str, int, int, Any]]) -> Iterator[None]:
    import torch

    saved = [t.detach().clone() for t in tensors]
    for (name, *_), t in zip(rows, tensors):
        bad = ~torch.isfinite(t)
        t.detach().masked_fill_(bad, 1.0 if name.endswith("running_var") else 0.0)
    try:
        yield
    finally:
        for t, value in zip(tensors, saved):
            t.detach().copy_(value)


def _locate_in_graph(gm: torch.fx.GraphModule, call: Callable[[torch.nn.Module], Any]) -> Finding:
    import torch.fx

    found: dict[str, Any] = {}

    class Finder(torch.fx.Interpreter):
        def run_node(self, n: torch.fx.Node):
            out = super().run_node(n)
            if n.op not in ("get_attr", "output") and (bad := _leaves_bad(out)):
                found.update(node=n, bad=bad)
                raise _Stop
            return out

    interpreter = Finder(gm)
    gm.forward = lambda *args: interpreter.run(*args)  # the instance attribute shadows the compiled forward
    try:
        output = call(gm)
    except _Stop:
        output = None
    except Exception:  # noqa: BLE001 - the re-run failed otherwise: nothing to report from it
        return Finding("none")
    finally:
        del gm.forward
    if not found:
        return _output_finding(output)
    node, (what, count, total) = found["node"], found["bad"]
    if node.op == "placeholder":
        return Finding("input", what=what, count=count, total=total)
    module, op = _node_layer(node)
    return Finding(
        "node", module=module, op=op, what=what, count=count, total=total, stack_trace=node.meta.get("stack_trace")
    )


def _node_layer(node: torch.fx.Node) -> tuple[str, str]:
    """(module path, op) of a prepared graph's node, for the user: torchao's fold arithmetic (div, add,
    reshape between a conv and its BN) carries no module, so it is named after the BN it feeds; a fake
    quantizer after the module of its input."""
    import torch.fx

    from qat_kernel.pipeline.fused_groups import module_path, op_name

    module = module_path(node)
    if node.op == "call_module" and "activation_post_process" in str(node.target):
        source = node.all_input_nodes[0] if node.all_input_nodes else None
        return (module_path(source) if source is not None else None) or "", "fake quantizer"
    if not module:
        nxt = node
        for _ in range(4):
            users = list(nxt.users)
            if len(users) != 1:
                break
            nxt = users[0]
            if op_name(nxt) == "batch_norm":
                weight = nxt.args[1] if len(nxt.args) > 1 else None
                owner = (
                    _owner(str(weight.target)) if isinstance(weight, torch.fx.Node) and weight.op == "get_attr" else ""
                )
                return module_path(nxt) or owner, f"{op_name(node)} of the conv+BN fold"
    return module or "", op_name(node) or str(node.target)


def _locate_in_modules(model: torch.nn.Module, call: Callable[[torch.nn.Module], Any]) -> Finding:
    names = {id(m): name for name, m in model.named_modules(remove_duplicate=False)}
    state: dict[str, Any] = {"previous": None}

    def hook(module: torch.nn.Module, args: Any, output: Any):
        name = names.get(id(module), "")
        bad = _leaves_bad(output)
        if not bad:
            if name and not _is_quantizer(name, module):
                state["previous"] = name
            return
        state.update(name=name, module=module, bad=bad, inputs_bad=_leaves_bad(args) is not None)
        raise _Stop

    handles = [m.register_forward_hook(hook) for m in model.modules()]
    try:
        output = call(model)
    except _Stop:
        output = None
    except Exception:  # noqa: BLE001 - the re-run failed otherwise: nothing to report from it
        return Finding("none")
    finally:
        for h in handles:
            h.remove()
    if "name" not in state:
        return _output_finding(output)
    name, (what, count, total) = state["name"], state["bad"]
    for suffix in _QUANTIZER_SUFFIXES:
        if name.endswith(suffix):
            return Finding(
                "node", module=name[: -len(suffix)], op="fake quantizer", what=what, count=count, total=total
            )
    if state["inputs_bad"]:
        parent = name.rpartition(".")[0] if name else ""
        return Finding(
            "between", module=parent, op=name, what=what, count=count, total=total, previous=state["previous"]
        )
    return Finding("node", module=name, op=type(state["module"]).__name__, what=what, count=count, total=total)


def _output_finding(output: Any) -> Finding:
    values = _floats(output) if output is not None else []
    largest = max((float(v.abs().max()) for v in values if v.numel()), default=0.0)
    return Finding("output" if values else "none", largest=largest)


def _layer(module: str | None) -> str:
    return f"`{module}`" if module else "the model's own forward"


def describe(finding: Finding, stage: str, step: int, lr: float | None, loss: float | None) -> NonFinite:
    """The NonFinite error for a finding: where, at which step, and what to do."""
    where = f"{_STAGES.get(stage, stage)} step {step}"
    lower = f"lower train.lr (now {lr:g})" if lr is not None else "lower train.lr"
    values = f"{finding.count} of {finding.total} values"
    kind = finding.kind
    if kind == "input":
        return NonFinite(
            f"{where}: the training batch holds {finding.what} ({values}). Check data.entry: the data, "
            "not the model, is non-finite.",
            step=step,
        )
    if kind == "parameter":
        more = f" (and {finding.extra['more']} more tensors)" if finding.extra.get("more") else ""
        cause = (
            f"the optimizer update of step {step - 1} made it so (its gradients overflowed)"
            if step > 1
            else "it was so before training"
        )
        return NonFinite(
            f"{where}: `{finding.module}` is {finding.what} in {values}{more}; {cause}. "
            f"{lower[0].upper() + lower[1:]}, or train in FP32 first (train.fp32_epochs).",
            module=_owner(finding.module or ""),
            step=step,
        )
    if kind == "buffer":
        more = f" (and {finding.extra['more']} more tensors)" if finding.extra.get("more") else ""
        return NonFinite(
            f"{where}: the buffer `{finding.module}` is {finding.what} in {values}{more}: its module computed it "
            f"from non-finite values. Check what that module stores; if it trained before, {lower}.",
            module=_owner(finding.module or ""),
            step=step,
        )
    if kind == "node":
        if finding.op == "fake quantizer":
            text = (
                f"{where}: the fake quantizer after {_layer(finding.module)} produced {finding.what} ({values}) "
                f"from finite values: its scale or zero point is not finite. Report this with the model; "
                f"meanwhile {lower} or keep that layer float (overrides)."
            )
        elif finding.op and "conv+BN fold" in finding.op:
            text = (
                f"{where}: {_layer(finding.module)} produced {finding.what} ({values}) in PT2E QAT's conv+BN "
                f"fold ({finding.op}): its BatchNorm gamma/sigma is 0 in some channel. {lower[0].upper()}"
                f"{lower[1:]}, or keep that layer float (overrides)."
            )
        else:
            text = (
                f"{where}: {_layer(finding.module)} ({finding.op}) produced {finding.what} ({values}) from "
                "finite inputs. Check what it computes for values that make it undefined or overflow (log or "
                f"sqrt of values <= 0, a division by zero, exp of large values); if it trained before, {lower}."
            )
        error = NonFinite(text, module=finding.module or "", step=step)
        error.stack_trace = finding.stack_trace
        return error
    if kind == "between":
        after = f" after `{finding.previous}` returned" if finding.previous else ""
        error = NonFinite(
            f"{where}: {finding.what} first appears in the input of `{finding.op}` ({values}), made by code in "
            f"{_layer(finding.module)}{after}. Check the operations there (log or sqrt of values <= 0, a "
            f"division by zero, exp of large values); if it trained before, {lower}.",
            module=finding.module or "",
            step=step,
        )
        error.source_module = finding.op  # the line that passes the NaN to it
        return error
    value = "non-finite" if loss is None else f"{loss}"
    if kind == "output":
        return NonFinite(
            f"{where}: the loss is {value} although the model's outputs are finite (largest magnitude "
            f"{finding.largest:.3g}): the outputs grew too large for the loss. {lower[0].upper()}{lower[1:]}, "
            "or bound the outputs (normalise the logits).",
            step=step,
        )
    return NonFinite(
        f"{where}: the loss is {value}, but re-running the batch gave finite values everywhere (a random "
        f"layer such as dropout?). {lower[0].upper()}{lower[1:]}.",
        step=step,
    )


class _Check:
    def __init__(
        self,
        model: torch.nn.Module,
        call: Callable[[torch.nn.Module], Any],
        batch: Any,
        stage: str,
        step: int,
        optimizer: torch.optim.Optimizer | None,
    ):
        self.model, self.call, self.batch = model, call, batch
        self.stage, self.step, self.optimizer = stage, step, optimizer

    def lr(self) -> float | None:
        groups = getattr(self.optimizer, "param_groups", None)
        return groups[0].get("lr") if groups else None

    def __call__(self, loss: torch.Tensor) -> float:
        """The loss as a float; NonFinite if it is not finite. (`.item()` comes before backward: a
        non-finite loss must not reach the optimizer, whose update would hide where it came from.)"""
        value = loss.item()
        if not math.isfinite(value):
            finding = locate(self.model, self.call, self.batch)
            raise describe(finding, self.stage, self.step, self.lr(), value)
        return value


@contextlib.contextmanager
def guard(
    model: torch.nn.Module,
    call: Callable[[torch.nn.Module], Any],
    batch: Any,
    stage: str,
    step: int,
    optimizer: torch.optim.Optimizer | None = None,
):
    """Around one training forward and loss: `with guard(...) as check: value = check(loss)`.

    `call(m)` runs a model on this step's batch (`batch`: its inputs, checked for NaN/Inf). An exception
    from the forward becomes a NonFinite error when a non-finite value explains it (an observer's
    assertion after a NaN); any other exception passes unchanged."""
    check = _Check(model, call, batch, stage, step, optimizer)
    try:
        yield check
    except NonFinite:
        raise
    except Exception as exc:
        if isinstance(exc, KernelError):
            raise
        finding = locate(model, call, batch)
        if finding.kind in ("none", "output"):
            raise
        raise describe(finding, stage, step, check.lr(), None) from exc


@contextlib.contextmanager
def locating(folder: str | os.PathLike[str], model: torch.nn.Module):
    """Adds the user's source line ({file, line}) to a NonFinite raised inside: the node's stack trace
    (pt2e) or where the forward of the layer's parent calls it (`model`: the FP32 model or the eager one)."""
    try:
        yield
    except NonFinite as exc:
        if "location" not in exc.data and exc.data.get("module") is not None:
            location = _source(folder, model, exc)
            if location:
                exc.data["location"] = location
        raise


def _source(folder: str | os.PathLike[str], model: torch.nn.Module, exc: NonFinite) -> SourceLocation | None:
    import inspect

    from qat_kernel import userpaths

    workspace = str(folder)
    stack_trace = getattr(exc, "stack_trace", None)
    if stack_trace:
        return userpaths.stack_trace_location(stack_trace, workspace)
    module = getattr(exc, "source_module", None) or exc.data.get("module")
    if not module:
        return None
    from qat_kernel.pipeline.eager_flow import source_of

    model = _unwrap(model)

    def mine(file: str):
        return userpaths.is_user_file(file, workspace)

    try:
        found: SourceLocation | None = source_of(model, module, mine)
        if found is None:  # called from a library's forward (nn.Sequential): the layer's own forward
            forward = type(model.get_submodule(module)).forward
            file = inspect.getsourcefile(forward)
            if file and mine(file):
                found = {"file": file, "line": inspect.getsourcelines(forward)[1]}
        return found
    except (AttributeError, KeyError, OSError, TypeError):
        return None
