"""The YAML `qconfig` and `overrides` turned into what the quantizers take.

One resolved `ObserverSpec` per role (activation, weight): observer class, dtype, qscheme, integer
range, ch_axis, averaging_constant, eps. From it, `pt2e_spec` builds a torchao QuantizationSpec and
`eager_ctr` a torch.ao fake-quant constructor; both flows train with fake quantization, so every
observer runs inside FakeQuantize (FusedMovingAvgObsFakeQuantize for moving-average observers of affine
schemes, as torchao's default x86 QAT config does; see `fused_fake_quant`).

Overrides: the first whose `match` fullmatches a layer's module path, or one of its parent paths
(`layer4` covers `layer4.0.conv1`), wins. Its activation/weight keys replace the global spec's keys
one by one; `precision: fp32|fp16|bf16` keeps the layer float (fp16/bf16 are not emulated yet: the
layer runs in fp32 and the result says so)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from qat_kernel.pipeline.config import DTYPE_RANGES, Config
from qat_kernel.rpc.errors import ConfigInvalid

FLOAT_PRECISIONS = ("fp32", "fp16", "bf16")
PER_CHANNEL_OBSERVERS = {"PerChannelMinMaxObserver", "MovingAveragePerChannelMinMaxObserver"}
PER_TENSOR_OBSERVERS = {"MinMaxObserver", "MovingAverageMinMaxObserver", "HistogramObserver"}
MOVING_AVERAGE_OBSERVERS = {"MovingAverageMinMaxObserver", "MovingAveragePerChannelMinMaxObserver"}
FAKE_QUANT_WRAPPERS = {"FakeQuantize", "FusedMovingAvgObsFakeQuantize"}
# Observers that never produce usable qparams for QAT fake quantization.
NOT_FOR_QAT = {"PlaceholderObserver", "NoopObserver", "FixedQParamsObserver"}

# torchao's get_default_x86_inductor_quantization_config(is_qat=True), written as YAML.
DEFAULT_SPECS = {
    "activation": {
        "observer": "MovingAverageMinMaxObserver",
        "dtype": "quint8",
        "qscheme": "per_tensor_affine",
        "eps": 2**-12,
    },
    "weight": {
        "observer": "MovingAveragePerChannelMinMaxObserver",
        "dtype": "qint8",
        "qscheme": "per_channel_symmetric",
        "ch_axis": 0,
        "eps": 2**-12,
    },
}
_TORCH_DTYPES = {"quint8": "uint8", "qint8": "int8"}  # PT2E: plain integer dtypes
_EAGER_DTYPES = {"quint8": "quint8", "qint8": "qint8"}  # eager: quantized dtypes


@dataclass(frozen=True)
class ObserverSpec:
    role: str  # activation | weight
    observer: str  # observer class run inside the fake quantizer
    dtype: str  # quint8 | qint8
    qscheme: str
    quant_min: int
    quant_max: int
    ch_axis: int | None
    averaging_constant: float | None
    eps: float | None
    path: str  # YAML path of the spec, for errors

    @property
    def per_channel(self) -> bool:
        return self.qscheme.startswith("per_channel")

    @property
    def bits(self) -> float:
        import math

        return math.log2(self.quant_max - self.quant_min + 1)


def _fail(message: str, path: str):
    raise ConfigInvalid(f"{path}: {message}", path=path)


def resolve_spec(
    role: str, global_spec: dict[str, Any] | None, override: dict[str, Any] | None, path: str
) -> ObserverSpec:
    """Merge default <- global qconfig <- override keys; check what the quantizers can do."""
    raw = dict(DEFAULT_SPECS[role])
    user = {**(global_spec or {}), **(override or {})}
    observer = user.get("observer", raw["observer"])
    where = lambda key: f"{path}.{key}"  # noqa: E731
    if observer in NOT_FOR_QAT:
        _fail(
            f"{observer} gives no scale/zero-point for QAT fake quantization; "
            "to keep a layer float use an override with precision: fp32",
            where("observer"),
        )
    # An explicit observer without a qscheme takes that observer's natural qscheme.
    if "observer" in user and "qscheme" not in user:
        symmetric = "symmetric" if role == "weight" else "affine"
        raw["qscheme"] = (
            f"per_channel_{symmetric}"
            if observer in PER_CHANNEL_OBSERVERS
            else f"per_tensor_{symmetric}"
            if observer in PER_TENSOR_OBSERVERS
            else raw["qscheme"]
        )
    raw.update(user)
    qscheme = raw["qscheme"]
    per_channel = qscheme.startswith("per_channel")
    if per_channel and observer in PER_TENSOR_OBSERVERS:
        _fail(
            f"{observer} is per tensor; it cannot compute {qscheme} (use PerChannelMinMaxObserver "
            "or MovingAveragePerChannelMinMaxObserver)",
            where("qscheme"),
        )
    if not per_channel and observer in PER_CHANNEL_OBSERVERS:
        _fail(f"{observer} is per channel; it cannot compute {qscheme}", where("qscheme"))
    if per_channel and role == "activation":
        _fail(
            "activations are quantized per tensor (per-channel activations are not supported "
            "by the x86 quantizer nor by eager kernels)",
            where("qscheme"),
        )
    if observer in FAKE_QUANT_WRAPPERS:  # the wrapper's default observer for this qscheme
        observer = "MovingAveragePerChannelMinMaxObserver" if per_channel else "MovingAverageMinMaxObserver"
    dtype = raw["dtype"]
    if dtype not in _TORCH_DTYPES:
        _fail(
            f"{dtype} is not supported for QAT {role}s here; use quint8 or qint8, with "
            "quant_min/quant_max for fewer bits",
            where("dtype"),
        )
    lo, hi = DTYPE_RANGES[dtype]
    if raw.get("reduce_range") and role == "activation":
        lo, hi = (lo // 2, hi // 2) if dtype == "qint8" else (0, hi // 2)
    quant_min = raw.get("quant_min", lo)
    quant_max = raw.get("quant_max", hi)
    if quant_min >= quant_max:
        _fail(f"quant_min ({quant_min}) must be below quant_max ({quant_max})", where("quant_max"))
    averaging = raw.get("averaging_constant")
    if averaging is not None and not 0 < averaging <= 1:
        _fail(f"averaging_constant must be in (0, 1], got {averaging}", where("averaging_constant"))
    eps = raw.get("eps")
    if eps is not None and eps <= 0:
        _fail(f"eps must be positive, got {eps}", where("eps"))
    return ObserverSpec(
        role=role,
        observer=observer,
        dtype=dtype,
        qscheme=qscheme,
        quant_min=quant_min,
        quant_max=quant_max,
        ch_axis=raw.get("ch_axis", 0) if per_channel else None,
        averaging_constant=averaging if observer in MOVING_AVERAGE_OBSERVERS else None,
        eps=eps,
        path=path,
    )


@dataclass(frozen=True)
class LayerQConfig:
    """What one layer gets: INT8 specs, or kept float with the precision asked for."""

    precision: str  # int8 | fp32 | fp16 | bf16
    activation: ObserverSpec | None = None
    weight: ObserverSpec | None = None
    override: int | None = None  # index into overrides, None = global

    @property
    def quantized(self) -> bool:
        return self.precision == "int8"

    def int8_specs(self) -> tuple[ObserverSpec, ObserverSpec]:
        """(activation, weight) of an INT8 layer; `plan` gives every INT8 layer both."""
        assert self.activation is not None and self.weight is not None, f"{self.precision} layer without specs"
        return self.activation, self.weight


@dataclass
class QConfigPlan:
    """The global specs plus the overrides, compiled; `for_module` answers per layer."""

    default: LayerQConfig
    overrides: list[tuple[int, re.Pattern[str], LayerQConfig]] = field(
        default_factory=list
    )  # [(index, compiled regex, LayerQConfig)]
    used: set[int] = field(default_factory=set)

    def for_module(self, module: str) -> LayerQConfig:
        for index, pattern, layer in self.overrides:
            if matches_module(pattern, module):
                self.used.add(index)
                return layer
        return self.default

    def unused_overrides(self) -> list[int]:
        return [index for index, _, _ in self.overrides if index not in self.used]


def matches_module(pattern: re.Pattern[str], module: str) -> bool:
    """An override's `match` against a module path: re.fullmatch on the path or on one of its parents'
    (`layer4` covers `layer4.0.conv1`)."""
    parts = module.split(".") if module else []
    return any(pattern.fullmatch(".".join(parts[:i])) for i in range(len(parts), 0, -1))


def plan(cfg: Config) -> QConfigPlan:
    global_qconfig = cfg.get("qconfig") or {}
    default = LayerQConfig(
        "int8",
        resolve_spec("activation", global_qconfig.get("activation"), None, "qconfig.activation"),
        resolve_spec("weight", global_qconfig.get("weight"), None, "qconfig.weight"),
    )
    result = QConfigPlan(default)
    for i, override in enumerate(cfg.get("overrides") or []):
        base = f"overrides.{i}"
        try:
            pattern = re.compile(override["match"])
        except re.error as exc:
            raise ConfigInvalid(f"{base}.match: not a valid regular expression: {exc}", path=f"{base}.match") from exc
        precision = override.get("precision", "int8")
        if precision in FLOAT_PRECISIONS:
            layer = LayerQConfig(precision, override=i)
        else:
            layer = LayerQConfig(
                "int8",
                resolve_spec(
                    "activation",
                    global_qconfig.get("activation"),
                    override.get("activation"),
                    f"{base}.activation" if "activation" in override else "qconfig.activation",
                ),
                resolve_spec(
                    "weight",
                    global_qconfig.get("weight"),
                    override.get("weight"),
                    f"{base}.weight" if "weight" in override else "qconfig.weight",
                ),
                override=i,
            )
        result.overrides.append((i, pattern, layer))
    return result


# --- torchao PT2E -------------------------------------------------------------------------------


def fused_fake_quant(spec: ObserverSpec) -> bool:
    """Whether the spec trains with FusedMovingAvgObsFakeQuantize (one fused kernel) rather than FakeQuantize.

    Only for moving-average observers of affine schemes. For symmetric schemes the fused kernel (torch 2.13,
    fused_moving_avg_obs_fake_quant) computes the scale with its own formula, over the range -((qmax - qmin) / 2
    + 1) .. (qmax - qmin) / 2, while the observer's calculate_qparams, which convert uses, divides max |x| by
    (qmax - qmin) / 2: the model then trains on one grid and is converted to another, 15/14 of the scale apart
    at weights in [-7, 7] (the cifar MobileNetV2's 4-bit weights: INT8 fell 3 points below fake-quant, every
    layer several output steps away from its fake-quantized self). FakeQuantize takes its scale from the
    observer, as convert does."""
    return spec.observer in MOVING_AVERAGE_OBSERVERS and "symmetric" not in spec.qscheme


def _observer_kwargs(spec: ObserverSpec) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"reduce_range": False}  # the range is already narrowed in quant_min/quant_max
    if spec.averaging_constant is not None:
        kwargs["averaging_constant"] = spec.averaging_constant
    if spec.eps is not None:
        kwargs["eps"] = spec.eps
    if spec.per_channel:
        # torchao drops ch_axis from the spec's kwargs unless the constructor's class name says
        # PerChannel (FakeQuantize does not), so pass it to the observer here.
        kwargs["ch_axis"] = spec.ch_axis
    return kwargs


def pt2e_spec(spec: ObserverSpec, qat: bool = True):
    """QAT: the observer inside a fake quantizer; PTQ (calibration only): the bare observer."""
    import torch
    import torchao.quantization.pt2e as ao
    from torchao.quantization.pt2e.quantizer import QuantizationSpec

    observer = getattr(ao, spec.observer)
    if not qat:
        ctr = observer.with_args(**_observer_kwargs(spec))
    else:
        wrapper = ao.FusedMovingAvgObsFakeQuantize if fused_fake_quant(spec) else ao.FakeQuantize
        ctr = wrapper.with_args(observer=observer, **_observer_kwargs(spec))
    return QuantizationSpec(
        dtype=getattr(torch, _TORCH_DTYPES[spec.dtype]),
        quant_min=spec.quant_min,
        quant_max=spec.quant_max,
        qscheme=getattr(torch, spec.qscheme),
        ch_axis=spec.ch_axis,
        is_dynamic=False,
        observer_or_fake_quant_ctr=ctr,
    )


def pt2e_config(layer: LayerQConfig, qat: bool = True):
    """torchao QuantizationConfig for an INT8 layer, None for a layer kept float."""
    if not layer.quantized:
        return None
    from torchao.quantization.pt2e.quantizer import QuantizationConfig

    activation, weight = layer.int8_specs()
    act = pt2e_spec(activation, qat)
    return QuantizationConfig(act, act, pt2e_spec(weight, qat), None, qat)


# --- eager torch.ao ----------------------------------------------------------------------------


def _eager_ctr(spec: ObserverSpec):
    import torch
    from torch.ao.quantization import fake_quantize, observer

    obs = getattr(observer, spec.observer)
    wrapper = fake_quantize.FusedMovingAvgObsFakeQuantize if fused_fake_quant(spec) else fake_quantize.FakeQuantize
    return wrapper.with_args(
        observer=obs,
        quant_min=spec.quant_min,
        quant_max=spec.quant_max,
        dtype=getattr(torch, _EAGER_DTYPES[spec.dtype]),
        qscheme=getattr(torch, spec.qscheme),
        **_observer_kwargs(spec),
    )


def eager_qconfig(layer: LayerQConfig):
    """torch.ao QConfig (fake quant) for an INT8 layer."""
    from torch.ao.quantization import QConfig

    activation, weight = layer.int8_specs()
    if activation.dtype != "quint8":
        raise ConfigInvalid(
            f"{activation.path}.dtype: eager quantized kernels take quint8 activations",
            path=f"{activation.path}.dtype",
        )
    if weight.dtype != "qint8":
        raise ConfigInvalid(
            f"{weight.path}.dtype: eager quantized kernels take qint8 weights", path=f"{weight.path}.dtype"
        )
    return QConfig(activation=_eager_ctr(activation), weight=_eager_ctr(weight))
