"""torchao's QAT API (`quantize_(model, QATConfig(base_config, step=...))`), the flow torchao fine-tunes language
models with: prepare swaps the chosen nn.Linear modules for FakeQuantizedLinear (nn.Embedding for
FakeQuantizedEmbedding), which fake-quantize the weight (and, for 8da*, the input per token) in every forward; the
model trains through them; convert swaps them back and quantizes the weights with the base config. No torch.export:
the model stays the user's nn.Module, its module paths its own.

Schemes, as torchao 0.18 runs them on a CPU: Int8DynamicActivationIntxWeightConfig (8da4w, 8da8w) and
IntxWeightOnlyConfig (int4-/int8-weight-only), both stored as IntxUnpackedToInt8Tensor (the `unpacked_to_int8`
format: one int8 byte per value, the int range of `target_dtype`, a scale and zero point per `block_size`).
Int4WeightOnlyConfig is not used: its convert needs the mslk package (CUDA kernels). QAT and convert share
torchao's qparams and rounding, so the fake-quantized model and the converted one compute the same numbers.

Which modules: the config's `torchao` section (include / exclude patterns, `embedding`) and `overrides` (first
match on the module or a parent wins, as in qconfig: `precision: fp32|fp16|bf16` keeps it float, `scheme` and
`group_size` change its recipe). A group size must divide a Linear's in_features (an Embedding's embedding_dim):
checked before prepare, naming the module."""

from __future__ import annotations

import contextlib
import copy
import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from qat_kernel.pipeline.config import Config
from qat_kernel.pipeline.qconfig import FLOAT_PRECISIONS, matches_module
from qat_kernel.rpc.errors import ConfigInvalid, Unsupported

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    import torch
    from torchao.core.config import AOBaseConfig
    from torchao.quantization.qat import QATConfig

SCHEMES = ("8da4w", "8da8w", "int4-weight-only", "int8-weight-only")
WEIGHT_ONLY = ("int4-weight-only", "int8-weight-only")
DEFAULT_GROUP_SIZE = 32  # the 4-bit schemes' (torchao's 8da4w recipe); the 8-bit ones default to per channel


@dataclass(frozen=True)
class Scheme:
    """One quantization recipe: what the base config and the fake quantizers are built from."""

    name: str  # one of SCHEMES
    group_size: int | None  # weights per scale along a row; None: one scale per output row
    range_learning: bool
    path: str  # YAML path of the scheme, for errors
    group_path: str  # YAML path the group size came from

    @property
    def bits(self) -> int:
        return 4 if "4" in self.name else 8

    @property
    def dynamic_activations(self) -> bool:
        return self.name not in WEIGHT_ONLY

    @property
    def label(self) -> str:
        group = f"group {self.group_size}" if self.group_size else "per channel"
        return f"{self.name} ({group}{', range learning' if self.range_learning else ''})"

    def _dtype(self) -> torch.dtype:
        import torch

        return getattr(torch, f"int{self.bits}")  # torch.int4 exists at run time; its stubs know only int8

    def _granularity(self) -> Any:
        from torchao.quantization.granularity import PerAxis, PerGroup

        return PerGroup(self.group_size) if self.group_size else PerAxis(0)

    def base_config(self) -> AOBaseConfig:
        """The torchao PTQ config: what convert (and PTQ) apply."""
        from torchao.quantization import Int8DynamicActivationIntxWeightConfig, IntxWeightOnlyConfig

        dtype = self._dtype()
        if self.dynamic_activations:
            return Int8DynamicActivationIntxWeightConfig(weight_dtype=dtype, weight_granularity=self._granularity())
        return IntxWeightOnlyConfig(weight_dtype=dtype, granularity=self._granularity())

    def qat_config(self, step: str) -> QATConfig:
        """QATConfig for `step` (prepare | convert). With range learning, prepare gets the fake quantize configs
        torchao would infer from the base config, the weight's with range_learning=True (QATConfig takes either a
        base config or fake quantize configs); convert then quantizes with the learnt scales."""
        import torch
        from torchao.quantization.qat import IntxFakeQuantizeConfig, QATConfig, QATStep

        if step == "convert" or not self.range_learning:
            return QATConfig(self.base_config(), step=QATStep(step))
        weight = IntxFakeQuantizeConfig(
            self._dtype(), granularity=self._granularity(), is_symmetric=True, is_dynamic=False, range_learning=True
        )
        activation = (
            IntxFakeQuantizeConfig(torch.int8, "per_token", is_symmetric=False) if self.dynamic_activations else None
        )
        return QATConfig(activation_config=activation, weight_config=weight, step=QATStep.PREPARE)


@dataclass(frozen=True)
class Choice:
    """What the plan does with one nn.Linear / nn.Embedding."""

    module: str
    kind: str  # linear | embedding
    scheme: Scheme | None  # None: kept float
    why: str  # how it was decided: default, exclude, include, embedding, overrides.N
    precision: str = "fp32"  # of a float module: what an override asked for


@dataclass
class TorchaoPlan:
    """The config's torchao section and overrides, resolved; `choose` applies them to a model's modules."""

    scheme: Scheme  # nn.Linear modules
    embedding: Scheme | None  # nn.Embedding modules (None: float)
    include: list[re.Pattern[str]] | None
    exclude: list[re.Pattern[str]]
    overrides: list[tuple[int, re.Pattern[str], dict[str, Any]]]
    ignored: list[str] = field(default_factory=list)  # notes on keys of the config this flow does not read
    used: set[int] = field(default_factory=set)

    def choose(self, name: str, kind: str) -> Choice:
        for index, pattern, override in self.overrides:
            if not matches_module(pattern, name):
                continue
            self.used.add(index)
            precision = override.get("precision", "int8")
            if precision in FLOAT_PRECISIONS:
                return Choice(name, kind, None, f"overrides.{index}", precision)
            return Choice(name, kind, self._override_scheme(index, override, kind), f"overrides.{index}")
        if kind == "embedding" and self.embedding is None:
            return Choice(name, kind, None, "torchao.embedding")
        if any(matches_module(p, name) for p in self.exclude):
            return Choice(name, kind, None, "torchao.exclude")
        if self.include is not None and not any(matches_module(p, name) for p in self.include):
            return Choice(name, kind, None, "torchao.include")
        if kind == "embedding":
            return Choice(name, kind, self.embedding, "torchao.embedding")
        return Choice(name, kind, self.scheme, "torchao.scheme")

    def _override_scheme(self, index: int, override: dict[str, Any], kind: str) -> Scheme:
        base = self.embedding if kind == "embedding" and self.embedding is not None else self.scheme
        name = override.get("scheme", base.name)
        if "group_size" in override:
            group, group_path = _group(override["group_size"]), f"overrides.{index}.group_size"
        elif "scheme" in override:
            group, group_path = _default_group(name), f"overrides.{index}.scheme"
        else:
            group, group_path = base.group_size, base.group_path
        path = f"overrides.{index}.scheme" if "scheme" in override else base.path
        return Scheme(name, group, self.scheme.range_learning, path, group_path)

    def unused_overrides(self) -> list[int]:
        return [index for index, _, _ in self.overrides if index not in self.used]


def _default_group(scheme: str) -> int | None:
    return DEFAULT_GROUP_SIZE if "4" in scheme else None


def _group(value: int | str) -> int | None:
    return None if value == "per_channel" else int(value)


def _compile(pattern: str, path: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ConfigInvalid(f"{path}: not a valid regular expression: {exc}", path=path) from exc


def plan(cfg: Config) -> TorchaoPlan:
    """The config's torchao section and overrides, checked (regexes compile) before any user code runs."""
    section: dict[str, Any] = cfg.get("torchao") or {}
    here = "torchao" if cfg.get("torchao") is not None else "flow"
    name = section.get("scheme", "8da4w")
    if "group_size" in section:
        group, group_path = _group(section["group_size"]), "torchao.group_size"
    else:
        group, group_path = _default_group(name), ("torchao.scheme" if "scheme" in section else here)
    learning = bool(section.get("range_learning", False))
    scheme = Scheme(name, group, learning, "torchao.scheme" if "scheme" in section else here, group_path)
    embedding = None
    if section.get("embedding", "none") != "none":
        emb = section["embedding"]
        embedding = Scheme(
            emb,
            group if "group_size" in section else _default_group(emb),
            learning,
            "torchao.embedding",
            group_path if "group_size" in section else "torchao.embedding",
        )
    include = section.get("include")
    ignored = (
        ["qconfig: the torchao flow does not read it (its recipe is torchao.scheme)"] if cfg.get("qconfig") else []
    )
    for i, override in enumerate(cfg.get("overrides") or []):
        specs = [role for role in ("activation", "weight") if role in override]
        if specs:
            ignored.append(
                f"overrides.{i}: {' and '.join(specs)} observer specs do not apply to the torchao flow (use scheme "
                "and group_size)"
            )
    return TorchaoPlan(
        scheme=scheme,
        embedding=embedding,
        include=[_compile(p, f"torchao.include.{i}") for i, p in enumerate(include)] if include else None,
        exclude=[_compile(p, f"torchao.exclude.{i}") for i, p in enumerate(section.get("exclude") or [])],
        overrides=[
            (i, _compile(o["match"], f"overrides.{i}.match"), o) for i, o in enumerate(cfg.get("overrides") or [])
        ],
        ignored=ignored,
    )


def _kind(module: torch.nn.Module) -> str | None:
    import torch

    if isinstance(module, torch.nn.Linear):
        return "linear"
    if isinstance(module, torch.nn.Embedding):
        return "embedding"
    return None


def choose_modules(model: torch.nn.Module, qplan: TorchaoPlan) -> list[Choice]:
    """The plan's choice for every nn.Linear and nn.Embedding of the model, in named_modules order."""
    chosen: list[Choice] = []
    for name, module in model.named_modules():
        kind = _kind(module)
        if name and kind is not None:
            chosen.append(qplan.choose(name, kind))
    return chosen


def _width(module: torch.nn.Module) -> int:
    """What a weight group runs along: a Linear's in_features, an Embedding's embedding_dim."""
    return int(getattr(module, "in_features", 0) or getattr(module, "embedding_dim", 0))


def _fitting_group(widths: list[int], wanted: int) -> int | None:
    """The largest power of two up to `wanted` that divides every width (None below 2)."""
    common = math.gcd(*widths)
    size = 1 << max(wanted.bit_length() - 1, 0)
    while size >= 2 and common % size:
        size //= 2
    return size if size >= 2 else None


def check(model: torch.nn.Module, chosen: list[Choice], qplan: TorchaoPlan, notes: list[str]) -> None:
    """What torchao's prepare would fail on, or silently skip, reported first with the module and the fix:
    modules the API cannot swap (a transformers Conv1D, a model with no Linear), a group size that does not
    divide a module's width, an activation scheme on an embedding. Tied weights get a note."""
    modules = dict(model.named_modules())
    _check_swappable(model, modules, qplan)
    quantized = [c for c in chosen if c.scheme is not None]
    if not quantized:
        if chosen:
            raise ConfigInvalid(
                f"torchao: the include/exclude patterns and overrides leave none of the model's {len(chosen)} "
                "nn.Linear / nn.Embedding modules quantized",
                path="torchao",
            )
        raise Unsupported(
            f"flow: torchao quantizes nn.Linear and nn.Embedding modules, and {type(model).__name__} has none; "
            "use flow: pt2e (it quantizes convolutions too)",
            unsupported=[
                {"op": type(m).__name__, "node": name, "module": name, "reason": "not an nn.Linear or nn.Embedding"}
                for name, m in modules.items()
                if name and isinstance(getattr(m, "weight", None), _tensor_type())
            ][:20],
        )
    for choice in quantized:
        scheme = choice.scheme
        assert scheme is not None
        if choice.kind == "embedding" and scheme.dynamic_activations:
            raise ConfigInvalid(
                f"{scheme.path}: {choice.module} is an nn.Embedding, which takes a weight-only scheme "
                f"(int4-weight-only or int8-weight-only), not {scheme.name}: an embedding's input is token ids",
                path=scheme.path,
            )
        width = _width(modules[choice.module])
        if scheme.group_size and width % scheme.group_size:
            what = "in_features" if choice.kind == "linear" else "embedding_dim"
            same = [_width(modules[c.module]) for c in quantized if c.scheme == scheme]
            fits = _fitting_group(same, scheme.group_size)
            advice = f"use group_size {fits} (it divides every one) or per_channel" if fits else "use per_channel"
            raise ConfigInvalid(
                f"{scheme.group_path}: group size {scheme.group_size} does not divide the {what} ({width}) of "
                f"{choice.module} ({type(modules[choice.module]).__name__}); {advice}, or keep it float "
                f"(torchao.exclude: [{choice.module}])",
                path=scheme.group_path,
            )
    notes.extend(_tied(modules, quantized))


def _tensor_type() -> type:
    import torch

    return torch.Tensor


def _check_swappable(model: torch.nn.Module, modules: dict[str, torch.nn.Module], qplan: TorchaoPlan) -> None:
    """transformers' Conv1D (GPT-2's projections) holds a Linear's weight transposed and is no nn.Linear:
    torchao's QAT would leave it float without a word. Unsupported, unless the config keeps it float itself."""
    found = [
        name
        for name, m in modules.items()
        if type(m).__name__ == "Conv1D"
        and getattr(getattr(m, "weight", None), "dim", lambda: 0)() == 2
        and qplan.choose(name, "linear").scheme is not None
    ]
    if found:
        raise Unsupported(
            f"{found[0]} ({len(found)} such modules) is a transformers Conv1D: its weight is stored transposed "
            "(in_features, out_features) and it is no nn.Linear, so torchao's QAT API cannot quantize it. Load the "
            "model with nn.Linear projections, or keep them float: torchao.exclude: "
            f"['{re.escape(found[0]).replace(chr(92) + '.', '.')}', ...]",
            unsupported=[
                {"op": "Conv1D", "node": n, "module": n, "reason": "weight transposed; not an nn.Linear"}
                for n in found[:20]
            ],
        )


def _tied(modules: dict[str, torch.nn.Module], quantized: list[Choice]) -> list[str]:
    """Notes for quantized modules whose weight is another module's too (a language model's tied embedding and
    output head): QAT trains the one tensor through both, convert stores a quantized copy for each."""
    owners: dict[int, list[str]] = {}
    for name, m in modules.items():
        weight = getattr(m, "weight", None)
        if name and _kind(m) is not None and weight is not None:
            owners.setdefault(id(weight), []).append(name)
    quantized_names = {c.module for c in quantized}
    notes = []
    for names in owners.values():
        if len(names) > 1 and quantized_names & set(names):
            notes.append(
                f"torchao: {' and '.join(names)} share one weight (tied): QAT trains it through both; the converted "
                "model holds each module's own copy"
            )
    return notes


def _by_scheme(chosen: list[Choice]) -> dict[Scheme, set[str]]:
    groups: dict[Scheme, set[str]] = {}
    for c in chosen:
        if c.scheme is not None:
            groups.setdefault(c.scheme, set()).add(c.module)
    return groups


def _apply(model: torch.nn.Module, chosen: list[Choice], config_of: Callable[[Scheme], AOBaseConfig]) -> None:
    """quantize_ once per scheme, on exactly the modules chosen for it."""
    from torchao.quantization import quantize_

    for scheme, names in _by_scheme(chosen).items():
        quantize_(model, config_of(scheme), filter_fn=lambda _m, fqn, names=names: fqn in names)


def ptq(fp32: torch.nn.Module, chosen: list[Choice]) -> torch.nn.Module:
    """Post-training quantization of (a copy of) the FP32 model with the same schemes: the base configs applied
    directly, no QAT. torchao's weight qparams come from the weights and its activation ones per token at run
    time, so there is nothing to calibrate."""
    model = copy.deepcopy(fp32).eval()
    _apply(model, chosen, lambda s: s.base_config())
    return model


def quantizers(model: torch.nn.Module) -> dict[str, Any]:
    """Every torchao fake quantizer of a prepared model (weight and activation), by module path."""
    from torchao.quantization.qat import FakeQuantizerBase

    return {name: m for name, m in model.named_modules() if isinstance(m, FakeQuantizerBase)}


def weight_quantizers(model: torch.nn.Module) -> dict[str, Any]:
    """The weight fake quantizers, by the path of the module they quantize."""
    return {
        name.rpartition(".")[0]: m for name, m in quantizers(model).items() if name.endswith("weight_fake_quantizer")
    }


class TorchaoQat:
    """The user's model with torchao's fake-quantized modules swapped in (quantize_ with QATConfig prepare), and the
    switches the pipeline needs on it. The model is prepared in place: pass the copy that QAT trains."""

    flow = "torchao"

    def __init__(
        self, model: torch.nn.Module, example: tuple[Any, ...], qplan: TorchaoPlan, notes: list[str] | None = None
    ):
        import torch

        from qat_kernel.pipeline.model_io import as_args

        notes = notes if notes is not None else []
        self.choices = choose_modules(model, qplan)
        check(model, self.choices, qplan, notes)
        model.train()
        _apply(model, self.choices, lambda s: s.qat_config("prepare"))
        if any(c.scheme is not None and c.scheme.range_learning for c in self.choices):
            from torchao.quantization.qat import initialize_fake_quantizers

            # the scales start from the weights' range and become parameters, before the optimizer is made
            with torch.no_grad():
                initialize_fake_quantizers(model, as_args(example))
        # Any, as the other flows' models are typed: jobs that read pt2e's graph narrow it themselves
        self.model: Any = model
        self.bn_frozen = False

    @property
    def quantized(self) -> list[Choice]:
        return [c for c in self.choices if c.scheme is not None]

    def train_mode(self) -> None:
        self.model.train()
        if self.bn_frozen:
            self._bn_eval()

    def eval_mode(self) -> None:
        self.model.eval()

    def freeze_bn(self) -> bool:
        self.bn_frozen = True
        self._bn_eval()
        return True

    def _bn_eval(self) -> None:
        import torch

        for m in self.model.modules():
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):  # pyright: ignore[reportPrivateUsage] - the base of every BatchNorm
                m.eval()

    def fake_quants(self) -> dict[str, Any]:
        """The torch.ao-style fake quantizers (observer_enabled, scale, zero_point) the drift plots read: none here;
        torchao's are `quantizers()`, their qparams computed in each forward."""
        return {}

    def layers(self) -> list[Any]:
        """Layers with torch.ao-style fake quantizers (see fake_quants): none."""
        return []

    @contextlib.contextmanager
    def switched(self, fake_quant: bool | dict[str, Any]) -> Iterator[None]:
        """Fake quantization on, off, or per module ({module path: bool}; a module not named: off) while inside;
        every quantizer's flag restored afterwards."""
        found = quantizers(self.model)
        saved = {name: m.enabled for name, m in found.items()}
        try:
            for name, m in found.items():
                owner = name.rpartition(".")[0]
                m.enabled = bool(fake_quant.get(owner, False)) if isinstance(fake_quant, dict) else fake_quant
            yield
        finally:
            for name, m in found.items():
                m.enabled = saved[name]

    def convert(self) -> torch.nn.Module:
        """The quantized model, from a copy: the QAT model stays usable (fake-quant, QAT-float)."""
        model = copy.deepcopy(self.model).eval()
        _apply(model, self.choices, lambda s: s.qat_config("convert"))
        return model

    def kept_float(self) -> list[dict[str, Any]]:
        """The modules kept float on purpose (an exclude, an include that leaves them out, an override), as the
        results' keptFloat rows; nn.Embedding modules left float because `torchao.embedding` is none are not listed."""
        rows: list[dict[str, Any]] = []
        for c in self.choices:
            if c.scheme is not None or c.why == "torchao.embedding":
                continue
            row: dict[str, Any] = {"module": c.module, "precision": c.precision}
            if c.why.startswith("overrides."):
                row["override"] = int(c.why.split(".")[1])
                if c.precision != "fp32":
                    row["note"] = f"{c.precision} is not emulated yet: the layer runs in fp32"
            else:
                row["note"] = f"kept float by {c.why}"
            rows.append(row)
        return rows

    def summary(self) -> str:
        """One line: how many modules run which scheme."""
        counts: dict[str, int] = {}
        for c in self.quantized:
            assert c.scheme is not None
            key = f"{c.kind} {c.scheme.label}"
            counts[key] = counts.get(key, 0) + 1
        float_count = len(self.choices) - len(self.quantized)
        parts = [f"{n} {key}" for key, n in counts.items()] + ([f"{float_count} float"] if float_count else [])
        return "torchao QAT: " + ", ".join(parts)
