"""The model contract: how the user's model is called, what it returns, and how a data batch splits into the
model's inputs and the target, for models as users bring them (torchvision/timm images, Hugging Face token ids
with attention masks and `ModelOutput` results, several inputs of any dtype).

- Inputs: `model.example_input` is a shape (one float tensor), a list of input specs (positional arguments) or
  a mapping name -> spec (keyword arguments, in the mapping's order); a spec is {shape, dtype, range | fill}.
  Without it the example is the first two samples of the first validation batch.
- Batches: an (inputs, target) pair whose inputs are a tensor, a tuple or a dict of tensors, or a dict batch
  (Hugging Face style) whose target is `data.target` (default: labels, label, target) and whose inputs are
  `data.inputs` (default: the batch's keys the model's forward names).
- Outputs: `model.output` names the prediction, a key of a dict / ModelOutput or an index into a tuple; by
  default the output itself when it is a tensor, else its `logits`, else its first element.

`ModelIO.bind` gives the model instance a forward that takes the inputs as positional tensors in `names` order
and returns the prediction tensor. Every later stage (torch.export and PT2E, ONNX, ONNX Runtime, TVM, the C
runner, the layer comparison) then meets one calling convention, and module paths stay the user's own (a wrapper
module would prefix them)."""

from __future__ import annotations

import inspect
import keyword
import re
import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from qat_kernel.rpc.errors import ConfigInvalid

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    import torch

    from qat_kernel.pipeline.config import Config

TARGET_KEYS = ("labels", "label", "target", "targets", "y")


@dataclass
class InputSpec:
    name: str
    shape: list[int]
    dtype: str = "float32"
    low: float | None = None  # integer inputs: values drawn from [low, high)
    high: float | None = None
    fill: float | None = None  # every value this one (e.g. an attention mask of ones)

    def make(self, generator: torch.Generator):
        import torch

        shape = list(self.shape)
        # A batch of 1 makes torch.export specialise the batch dim even when asked to keep it dynamic.
        shape[0] = max(shape[0], 2)
        dtype = getattr(torch, self.dtype)
        if self.fill is not None:
            return torch.full(shape, self.fill, dtype=dtype)
        if dtype.is_floating_point:
            return torch.randn(*shape, generator=generator).to(dtype)
        if dtype == torch.bool:
            return torch.ones(shape, dtype=dtype)
        low = int(self.low if self.low is not None else 0)
        high = int(self.high if self.high is not None else 2)
        return torch.randint(low, high, shape, generator=generator, dtype=dtype)


def _specs(example: Any) -> tuple[list[InputSpec], bool]:
    """(specs, keyword) from the config's model.example_input."""

    def spec(name: str, value: Any, where: str) -> InputSpec:
        if isinstance(value, list):
            return InputSpec(name, list(value))
        rng = value.get("range")
        return InputSpec(
            name,
            list(value["shape"]),
            value.get("dtype", "float32"),
            low=rng[0] if rng else None,
            high=rng[1] if rng else None,
            fill=value.get("fill"),
        )

    if isinstance(example, Mapping):
        return [spec(str(k), v, f"model.example_input.{k}") for k, v in example.items()], True
    if example and all(isinstance(v, int) for v in example):
        return [InputSpec("input", list(example))], False
    return [spec(f"input{i}", v, f"model.example_input.{i}") for i, v in enumerate(example)], False


def _forward_params(model: torch.nn.Module) -> list[str]:
    try:
        params = inspect.signature(type(model).forward).parameters
    except (TypeError, ValueError):
        return []
    return [p for p in params if p != "self"]


def _accepts_any_keyword(model: torch.nn.Module) -> bool:
    try:
        params = inspect.signature(type(model).forward).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


def describe(value: Any) -> str:
    """A short description of a batch or an output for messages: its type and, for containers, its keys."""
    import torch

    if isinstance(value, torch.Tensor):
        return f"a {str(value.dtype).replace('torch.', '')} tensor of shape {list(value.shape)}"
    if isinstance(value, Mapping) or hasattr(value, "keys"):
        return f"{type(value).__name__} with keys {list(value.keys())}"
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of {len(value)}: ({', '.join(describe(v) for v in value[:4])})"
    return type(value).__name__


@dataclass
class ModelIO:
    names: list[str]  # the model's inputs, in the positional order the bound forward takes them
    keyword: bool  # the user's forward takes them as keyword arguments (names) or positionally
    output: str | int | None = None  # model.output
    target: str | int | None = None  # data.target
    specs: list[InputSpec] = field(default_factory=list)  # from model.example_input, when given

    # --- the model's outputs --------------------------------------------------------------------------------
    def prediction(self, out: Any):
        """The prediction tensor of one model output (a tensor, a tuple, a dict or a ModelOutput)."""
        import torch

        if self.output is None and isinstance(out, torch.Tensor):
            return out
        picked: Any = None
        if self.output is not None:
            try:
                picked = out[self.output]
            except (KeyError, IndexError, TypeError):
                picked = getattr(out, str(self.output), None) if isinstance(self.output, str) else None
        elif isinstance(out, Mapping) or hasattr(out, "keys"):
            keys = list(out.keys())
            picked = out["logits"] if "logits" in keys else (out[keys[0]] if keys else None)
        elif isinstance(out, (tuple, list)) and out:
            picked = out[0]
        if not isinstance(picked, torch.Tensor):
            what = f"model.output: {self.output!r} of " if self.output is not None else ""
            raise ConfigInvalid(
                f"model.output: {what}the model's output is {describe(out)}, not a tensor: set model.output to the "
                "key (dict, ModelOutput) or index (tuple) of the prediction, e.g. logits",
                path="model.output",
            )
        return picked

    def bind(self, model: torch.nn.Module):
        """Give `model` (the instance) a forward(*tensors) -> prediction; returns the model. The patch is a
        bound method, so copy.deepcopy of the model binds the copy's own forward to the copy."""
        cls_forward = type(model).forward
        names, by_name, prediction = list(self.names), self.keyword, self.prediction

        def forward(self_: torch.nn.Module, *tensors: Any):
            out = cls_forward(self_, **dict(zip(names, tensors))) if by_name else cls_forward(self_, *tensors)
            return prediction(out)

        # One named parameter per input (not *tensors): torch.export matches dynamic_shapes and the ONNX export
        # names its inputs by this signature.
        params = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in ["self_", *self.params]]
        forward.__signature__ = inspect.Signature(params)
        model.forward = types.MethodType(forward, model)
        return model

    @property
    def params(self) -> list[str]:
        """The inputs' names as Python identifiers (the bound forward's parameters)."""
        out = []
        for i, name in enumerate(self.names):
            ident = re.sub(r"\W", "_", name)
            out.append(ident if ident.isidentifier() and not keyword.iskeyword(ident) else f"input{i}")
        return out

    # --- batches --------------------------------------------------------------------------------------------
    def split(self, batch: Any) -> tuple[tuple[Any, ...], Any]:
        """(inputs as a tuple of tensors in `names` order, target) of one batch."""
        import torch

        if isinstance(batch, Mapping):
            inputs = batch
            key = self.target if self.target is not None else next((k for k in TARGET_KEYS if k in batch), None)
            target = batch.get(key) if key is not None else None
        elif isinstance(batch, (tuple, list)) and len(batch) >= 2:
            index = self.target if isinstance(self.target, int) else len(batch) - 1
            target = batch[index]
            rest = [b for i, b in enumerate(batch) if i != index % len(batch)]
            inputs = rest[0] if len(rest) == 1 else tuple(rest)
        else:
            raise ConfigInvalid(
                f"data.entry: a batch is {describe(batch)}: yield (inputs, target) pairs or dicts with a target key "
                f"({', '.join(TARGET_KEYS)})",
                path="data.entry",
            )
        if isinstance(inputs, torch.Tensor):
            tensors: tuple[Any, ...] = (inputs,)
        elif isinstance(inputs, Mapping):
            missing = [n for n in self.names if n not in inputs]
            if missing:
                raise ConfigInvalid(
                    f"data.entry: a batch has no {', '.join(missing)} (it has {list(inputs.keys())}); the model "
                    f"takes {self.names}",
                    path="data.entry",
                )
            tensors = tuple(inputs[n] for n in self.names)
        else:
            tensors = tuple(inputs)
        if len(tensors) != len(self.names):
            raise ConfigInvalid(
                f"data.entry: a batch has {len(tensors)} input(s), the model takes {len(self.names)} ({self.names})",
                path="data.entry",
            )
        return tensors, target

    def example(self, batches: Any, seed: int = 0) -> tuple[Any, ...]:
        """The example inputs torch.export traces with: from model.example_input when given, else the first two
        samples of the first batch (repeated when the batch holds one)."""
        import torch

        if self.specs:
            generator = torch.Generator().manual_seed(seed)
            return tuple(spec.make(generator) for spec in self.specs)
        for batch in batches:
            tensors, _ = self.split(batch)
            return tuple(t[:2] if len(t) >= 2 else torch.cat([t, t])[:2] for t in tensors)
        raise ConfigInvalid("data.entry: the validation batches are empty", path="data.entry")


def model_io(cfg: Config, model: torch.nn.Module | None = None, batches: Iterable[Any] | None = None) -> ModelIO:
    """The contract for a config: the inputs named by model.example_input, else read from the first batch
    (`batches`) and the model's forward signature."""
    output, target = cfg.get("model.output"), cfg.get("data.target")
    names_cfg = cfg.get("data.inputs")
    example = cfg.get("model.example_input")
    if example is not None:
        specs, keyword = _specs(example)
        names = [s.name for s in specs]
        if names_cfg is not None and keyword and list(names_cfg) != names:
            raise ConfigInvalid(
                f"data.inputs: {list(names_cfg)} differs from model.example_input's names {names}", path="data.inputs"
            )
        return ModelIO(names, keyword, output, target, specs)
    if batches is None:
        raise ConfigInvalid("model.example_input: needed here (no data was loaded)", path="model.example_input")
    first = next(iter(batches), None)
    if first is None:
        raise ConfigInvalid("data.entry: the validation batches are empty", path="data.entry")
    inputs = first
    if isinstance(first, (tuple, list)) and len(first) >= 2 and not isinstance(first, Mapping):
        index = target if isinstance(target, int) else len(first) - 1
        rest = [b for i, b in enumerate(first) if i != index % len(first)]
        inputs = rest[0] if len(rest) == 1 else tuple(rest)
    if isinstance(inputs, Mapping):  # a mapping batch, or a mapping beside the target
        keys = list(inputs.keys())
        if names_cfg is not None:
            names = [str(n) for n in names_cfg]
        else:
            target_key = target if target is not None else next((k for k in TARGET_KEYS if k in keys), None)
            params = _forward_params(model) if model is not None else []
            accepted = [k for k in params if k in keys and k != target_key]
            if not accepted and (model is None or _accepts_any_keyword(model)):
                accepted = [k for k in keys if k != target_key]
            names = accepted
        if not names:
            raise ConfigInvalid(
                f"data.inputs: a batch is {describe(first)} and the model's forward names none of its keys: list "
                "the inputs in data.inputs",
                path="data.inputs",
            )
        return ModelIO(names, True, output, target)
    import torch

    if isinstance(inputs, torch.Tensor):
        return ModelIO(["input"], False, output, target)
    if isinstance(inputs, Sequence):
        return ModelIO([f"input{i}" for i in range(len(inputs))], False, output, target)
    raise ConfigInvalid(
        f"data.entry: a batch is {describe(first)}: yield (inputs, target) pairs or dicts", path="data.entry"
    )


class Inputs:
    """One batch of the model's inputs: its tensors (or numpy arrays) in the contract's order, with their names.
    len() and slices count samples (the batch dim), as for a single input tensor; unpacking gives the tensors, so
    `model(*inputs)` calls the model and `tuple(inputs)` is what torch.export takes."""

    __slots__ = ("values", "names")

    def __init__(self, values: Iterable[Any], names: Sequence[str]):
        self.values, self.names = tuple(values), tuple(names)

    def __iter__(self):
        return iter(self.values)

    def __len__(self) -> int:
        return len(self.values[0]) if self.values else 0

    def __getitem__(self, index: slice) -> Inputs:
        if isinstance(index, slice):  # pyright: ignore[reportUnnecessaryIsInstance] - an index from untyped code
            return Inputs([v[index] for v in self.values], self.names)
        raise TypeError("Inputs are sliced by samples (inputs[:n]) or unpacked (*inputs)")

    def __repr__(self) -> str:
        return f"Inputs({', '.join(f'{n}: {describe(v)}' for n, v in zip(self.names, self.values))})"

    def numpy(self) -> Inputs:
        """The inputs as numpy arrays: floats as float32 (what the runtimes take), integers and booleans kept."""
        import numpy as np

        out = []
        for v in self.values:
            a = v.detach().cpu().numpy() if hasattr(v, "detach") else np.asarray(v)
            out.append(np.ascontiguousarray(a.astype(np.float32) if a.dtype.kind == "f" else a))
        return Inputs(out, self.names)

    def torch(self) -> Inputs:
        """The inputs as torch tensors (numpy arrays wrapped without a copy)."""
        import torch

        return Inputs([torch.as_tensor(v) for v in self.values], self.names)

    def feed(self, names: list[str]) -> dict[str, Any]:
        """A runtime's feed: its input names to the arrays, by name where the runtime's names are the model's,
        else in order."""
        arrays = self.numpy().values
        if set(names) <= set(self.names):
            return {n: arrays[self.names.index(n)] for n in names}
        if len(names) != len(arrays):
            raise ValueError(f"the runtime takes {len(names)} inputs ({names}), the model {list(self.names)}")
        return dict(zip(names, arrays))

    @staticmethod
    def concat(chunks: list[Inputs]) -> Inputs:
        """Batches joined along the batch dim."""
        import numpy as np
        import torch

        first = chunks[0]
        join = torch.cat if isinstance(first.values[0], torch.Tensor) else np.concatenate
        return Inputs([join([c.values[i] for c in chunks]) for i in range(len(first.values))], first.names)


def as_inputs(x: Any, names: Sequence[str] = ("input",)) -> Inputs:
    """`x` as Inputs: Inputs as they are, one tensor or array as a single input named `names[0]`."""
    return x if isinstance(x, Inputs) else Inputs([x], names[:1])


def as_args(x: Any) -> tuple[Any, ...]:
    """The model's positional inputs: Inputs unpacked, a tuple or list as it is, one tensor or array as a 1-tuple."""
    if isinstance(x, Inputs):
        return x.values
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def call(model: Callable[..., Any], inputs: Any) -> Any:
    """`model` (a torch model under the contract) on `inputs` (Inputs or one array or tensor), no gradients."""
    import torch

    with torch.no_grad():
        return model(*as_inputs(inputs).torch())


def join(chunks: list[Any]) -> Any:
    """Batches (Inputs, or single arrays) joined along the batch dim."""
    import numpy as np

    return Inputs.concat(chunks) if isinstance(chunks[0], Inputs) else np.concatenate(chunks)


def repeat_to(x: Any, count: int):
    """`x` (Inputs or one array) repeated along the batch dim until it holds at least `count` samples."""
    reps = -(-count // len(x))
    return join([x] * reps) if reps > 1 else x


class Batches:
    """The user's batches as (inputs, target) pairs, inputs the model's Inputs in the contract's order: what every
    loop of the kernel iterates. Re-iterable when the user's iterable is; sized when it is (`batches()`)."""

    def __init__(self, raw: Iterable[Any], io: ModelIO, default_target: Callable[[Inputs], Any] | None = None):
        self.raw, self.io, self.default_target = raw, io, default_target

    def __iter__(self):
        for batch in self.raw:
            tensors, target = self.io.split(batch)
            inputs = Inputs(tensors, self.io.names)
            if target is None and self.default_target is not None:
                target = self.default_target(inputs)
            yield inputs, target


class SizedBatches(Batches):
    def __len__(self) -> int:
        return len(self.raw)  # pyright: ignore[reportArgumentType] - batches() makes SizedBatches only of a sized iterable


def batches(raw: Iterable[Any], io: ModelIO, default_target: Callable[[Inputs], Any] | None = None) -> Batches:
    """`raw` as Batches; `default_target(inputs)` gives the target of a batch that has none (a language model's
    own token ids)."""
    cls = SizedBatches if hasattr(raw, "__len__") else Batches
    return cls(raw, io, default_target)
