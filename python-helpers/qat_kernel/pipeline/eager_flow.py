"""Legacy eager torch.ao QAT, for models written for it (QuantStub/DeQuantStub around the float part):
fuse_modules_qat -> qconfig from the YAML -> prepare_qat -> train -> convert.

Fusion groups come from `eager.fuse` in the config, else from one traced forward: a Conv->BN->ReLU,
Conv->BN, Conv->ReLU or Linear->ReLU run of sibling leaf modules where each one's output is the next
one's input (tensor identity), each module called once. A converted model leaves the fused group's
result on its first module (conv1 = conv+BN+ReLU) and Identity in the other slots, so layers are
compared at group outputs: FP32 at the last module of the group, INT8 at the first.

torch.ao.quantization warns on nearly every call (deprecated, reduce_range, quantized dtypes);
`collect_warnings` records them so each distinct one is reported once, in the result."""

from __future__ import annotations

import contextlib
import copy
import logging
import re
import warnings
from typing import TYPE_CHECKING, Any

from qat_kernel.pipeline.model_io import as_args
from qat_kernel.rpc.errors import ConfigInvalid

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    import torch

    from qat_kernel.pipeline.fused_groups import FakeQuants
    from qat_kernel.pipeline.qconfig import QConfigPlan
    from qat_kernel.userpaths import SourceLocation

log = logging.getLogger("qat_kernel")

_CONV = ("Conv1d", "Conv2d", "Conv3d")
_BN = ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d")
_PATTERNS = [  # longest first
    (_CONV, _BN, ("ReLU",)),
    (_CONV, _BN),
    (_CONV, ("ReLU",)),
    (("Linear",), ("ReLU",)),
    (("Linear",), ("BatchNorm1d",)),
]
_OPS = {
    "Conv1d": "conv1d",
    "Conv2d": "conv2d",
    "Conv3d": "conv3d",
    "Linear": "linear",
    "ReLU": "relu",
    "BatchNorm1d": "batch_norm",
    "BatchNorm2d": "batch_norm",
    "BatchNorm3d": "batch_norm",
}
_ENGINES = {"x86": "x86", "fbgemm": "fbgemm", "onednn": "onednn", "qnnpack": "qnnpack", "xnnpack": "qnnpack"}
_REPORTED: set[str] = set()  # warnings already written to the log by this kernel process


@contextlib.contextmanager
def collect_warnings(into: list[str]) -> Iterator[None]:
    """Record every warning raised inside; append the distinct messages to `into`."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        finally:
            for w in caught:
                text = f"{w.category.__name__}: {str(w.message).strip().splitlines()[0]}"
                if text not in into:
                    into.append(text)
                if text not in _REPORTED:
                    _REPORTED.add(text)
                    log.info("(reported once) %s", text)


def _parent(name: str) -> str:
    return name.rsplit(".", 1)[0] if "." in name else ""


def detect_fusion(model: torch.nn.Module, example: tuple[Any, ...]) -> list[list[str]]:
    """Fusable groups of sibling modules, in call order, from one forward of a copy in eval mode."""
    import torch

    probe = copy.deepcopy(model).eval()
    leaves = {name: m for name, m in probe.named_modules() if name and not list(m.children())}
    calls: list[
        tuple[str, str, Any, Any]
    ] = []  # (name, class name, input tensor, output tensor); tensors kept alive for `is`
    counts: dict[str, int] = {}

    def hook(name: str):
        def record(module: torch.nn.Module, inputs: tuple[Any, ...], output: Any):
            counts[name] = counts.get(name, 0) + 1
            calls.append((name, type(module).__name__, inputs[0] if inputs else None, output))

        return record

    handles = [m.register_forward_hook(hook(name)) for name, m in leaves.items()]
    try:
        with torch.no_grad():
            probe(*as_args(example))
    finally:
        for h in handles:
            h.remove()
    groups, i = [], 0
    while i < len(calls):
        for pattern in _PATTERNS:
            run = calls[i : i + len(pattern)]
            if (
                len(run) == len(pattern)
                and all(c[1] in kinds for c, kinds in zip(run, pattern))
                and all(run[k + 1][2] is run[k][3] for k in range(len(run) - 1))
                and len({_parent(c[0]) for c in run}) == 1
                and all(counts[c[0]] == 1 for c in run)
            ):
                groups.append([c[0] for c in run])
                i += len(pattern)
                break
        else:
            i += 1
    return groups


def _check_groups(model: torch.nn.Module, groups: list[list[str]], path: str = "eager.fuse") -> None:
    names = dict(model.named_modules())
    for i, group in enumerate(groups):
        for name in group:
            if name not in names:
                raise ConfigInvalid(f"{path}.{i}: no module named {name!r} in the model", path=f"{path}.{i}")


class Layer:
    """One quantized layer: its fused group of module names (the first holds the INT8 result)."""

    def __init__(self, group: list[str], types: list[str]):
        self.group = group
        self.module = group[0]
        self.ops = [_OPS.get(t, t.lower()) for t in types]
        self.op = self.ops[0]


class EagerQat:
    flow = "eager"

    def __init__(
        self,
        model: torch.nn.Module,
        example: tuple[Any, ...],
        qplan: QConfigPlan,
        engine: str,
        fuse: list[list[str]] | None = None,
        warnings_out: list[str] | None = None,
    ):
        import torch
        from torch.ao.quantization import fuse_modules_qat, prepare_qat

        from qat_kernel.pipeline import qconfig

        self.warnings = warnings_out if warnings_out is not None else []
        self.bn_frozen = False
        torch.backends.quantized.engine = _ENGINES.get(engine, "x86")
        model = copy.deepcopy(model)
        with collect_warnings(self.warnings):
            groups = fuse if fuse is not None else detect_fusion(model, example)
            _check_groups(model, groups)
            types = {name: type(m).__name__ for name, m in model.named_modules()}
            fused = {name for g in groups for name in g}
            self.layers_ = [Layer(g, [types[n] for n in g]) for g in groups if types[g[0]] in _CONV + ("Linear",)]
            self.layers_ += [
                Layer([name], [t]) for name, t in types.items() if t in _CONV + ("Linear",) and name not in fused
            ]
            order = {name: i for i, name in enumerate(types)}
            self.layers_.sort(key=lambda layer: order[layer.module])
            self.groups = groups
            model.train()
            fuse_modules_qat(model, groups, inplace=True)
            model.qconfig = qconfig.eager_qconfig(qplan.default)  # pyright: ignore[reportArgumentType] - torch types Module.__setattr__ for tensors and modules; eager quantization reads this attribute
            for name, module in model.named_modules():
                if not name:
                    continue
                layer = qplan.for_module(name)
                if layer is qplan.default:
                    continue
                if not layer.quantized:  # runner.run_pipeline rejects these before user code runs
                    raise ConfigInvalid(
                        f"overrides.{layer.override}.precision: not in the eager flow",
                        path=f"overrides.{layer.override}.precision",
                    )
                module.qconfig = qconfig.eager_qconfig(layer)  # pyright: ignore[reportArgumentType] - as above
            self.model = prepare_qat(model, inplace=False)

    def train_mode(self) -> None:
        self.model.train()
        if self.bn_frozen:
            self.freeze_bn()

    def eval_mode(self) -> None:
        self.model.eval()

    def freeze_bn(self) -> bool:
        import torch.ao.nn.intrinsic.qat as nniqat

        self.model.apply(nniqat.freeze_bn_stats)
        self.bn_frozen = True
        return True

    def fake_quants(self) -> dict[str, Any]:
        # remove_duplicate=False: a shared quantizer (SharedQuantizationSpec) is reachable by each name.
        return {
            name: m for name, m in self.model.named_modules(remove_duplicate=False) if hasattr(m, "fake_quant_enabled")
        }

    def layers(self) -> list[tuple[Layer, FakeQuants]]:
        """[(Layer, FakeQuants)]: weight fake quantizer and the output one (eager quantizes outputs)."""
        from qat_kernel.pipeline.fused_groups import FakeQuants

        found: list[tuple[Layer, FakeQuants]] = []
        names = self.fake_quants()
        for layer in self.layers_:
            fqs = FakeQuants(
                weight=[n for n in (f"{layer.module}.weight_fake_quant",) if n in names],
                input=[n for n in (f"{layer.module}.activation_post_process",) if n in names],
            )
            if fqs.weight:
                found.append((layer, fqs))
        return found

    def convert(self):
        from torch.ao.quantization import convert

        with collect_warnings(self.warnings):
            return convert(copy.deepcopy(self.model).eval(), inplace=False)


def source_of(model: torch.nn.Module, module: str, is_user_file: Callable[[str], bool]) -> SourceLocation | None:
    """{file, line} of the first `self.<name>(` call in a forward of the module's parent, searching
    the parent's class and its bases (QuantDigitsNet.forward calls DigitsNet.forward)."""
    import inspect

    parent = model.get_submodule(_parent(module)) if _parent(module) else model
    name = module.rsplit(".", 1)[-1]
    call = re.compile(rf"self\.{re.escape(name)}\s*\(")
    for cls in type(parent).__mro__:
        forward = cls.__dict__.get("forward")
        if forward is None:
            continue
        try:
            lines, start = inspect.getsourcelines(forward)
            file = inspect.getsourcefile(forward)
        except (OSError, TypeError):
            continue
        if not file or not is_user_file(file):
            continue
        for offset, text in enumerate(lines):
            if call.search(text):
                return {"file": file, "line": start + offset}
    return None
