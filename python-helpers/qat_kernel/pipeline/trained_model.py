"""A trained QAT model with what is derived from it on first use: the conversion, the PTQ baseline, the FP32 graph,
accuracies and (language models) perplexities."""

from __future__ import annotations

import contextlib
import itertools
import secrets
from dataclasses import dataclass, field
from typing import Any

from qat_kernel.pipeline import drift
from qat_kernel.pipeline.config import Config
from qat_kernel.pipeline.drift import QatFlow
from qat_kernel.pipeline.torchao_flow import TorchaoQat
from qat_kernel.rpc.context import RequestContext

PTQ_CALIBRATION_SAMPLES = 512

# Model ids: unique within this kernel process, and unlike those of another process (a restarted kernel).
_PROCESS = secrets.token_hex(3)
_SERIAL = itertools.count(1)


def _new_id() -> str:
    return f"{_PROCESS}-{next(_SERIAL)}"


@dataclass
class Trained:
    cfg: Config
    flow: str
    qat: QatFlow  # trained, in eval mode
    fp32: Any  # the FP32 model before QAT (eval): the reference
    train: Any  # model_io.Batches: (inputs, target) pairs, inputs a tuple of tensors
    val: Any
    example: Any  # the example inputs (a tuple of tensors) the model was exported with
    io: Any  # model_io.ModelIO: the model's inputs and output
    loss: Any  # losses.Loss: the training loss and the top-1 measure
    fp32_accuracy: float
    val_samples: int
    steps: int
    epochs: int
    qplan: Any = None  # qconfig.QConfigPlan
    kept_float: list[dict[str, Any]] = field(default_factory=list)  # [{module, precision, override}]
    warnings: list[str] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list)  # per epoch: {epoch, step, loss, accuracy?}
    drift: list[dict[str, Any]] = field(default_factory=list)  # [{step, epoch, observers: drift_state()}]
    seconds: float = 0.0
    # What results call this model ("model"), so a later request can ask for it by id (session.get).
    id: str = field(default_factory=_new_id)
    # QDQ ONNX files exported from this model: path -> (mtime_ns, size, opset) when written
    exports: dict[str, Any] = field(default_factory=dict)
    _converted: Any = None
    _fp32_graph: Any = None
    _ptq: Any = None
    _accuracy: dict[str, Any] = field(default_factory=dict)
    _perplexity: dict[str, float] = field(default_factory=dict)
    _tokens: int = 0  # validation tokens the perplexities are over

    @property
    def is_converted(self) -> bool:
        return self._converted is not None

    @property
    def converted(self):
        if self._converted is None:
            self._converted = self.qat.convert()
        return self._converted

    @property
    def fp32_graph(self):
        """The reference exported (pt2e): layers are found and captured as FX nodes."""
        if self._fp32_graph is None:
            from qat_kernel.pipeline import pt2e_flow

            self._fp32_graph = pt2e_flow.export(self.fp32, self.example)
        return self._fp32_graph

    def report_fields(self) -> dict[str, Any]:
        """What a result about this model carries besides its figures: the observers' drift over QAT, the
        layers kept float and the warnings of the run (each only when there is one)."""
        fields: dict[str, Any] = {}
        series = drift.drift_series(self)
        if series is not None:
            fields["drift"] = series
        if self.kept_float:
            fields["keptFloat"] = self.kept_float
        if self.warnings:
            fields["warnings"] = list(self.warnings)
        return fields

    def ptq_model(self, ctx: RequestContext) -> Any:
        """The FP32 model post-training quantized with the same recipe (no QAT), made on first use: pt2e
        calibrates on the first training samples; torchao applies its base configs (nothing to calibrate)."""
        if self._ptq is None:
            if isinstance(self.qat, TorchaoQat):
                from qat_kernel.pipeline import torchao_flow

                self._ptq = torchao_flow.ptq(self.fp32, self.qat.choices)
            else:
                from qat_kernel.pipeline import pt2e_flow
                from qat_kernel.pipeline.training import first_inputs

                calibration = first_inputs(self.train, PTQ_CALIBRATION_SAMPLES)
                self._ptq = pt2e_flow.ptq(self.fp32, self.example, self.qplan, calibration, ctx)
        return self._ptq

    @contextlib.contextmanager
    def _model(self, kind: str, ctx: RequestContext):
        """The model a figure of `kind` is measured on: qatFloat and fakeQuant the QAT model in eval (fake
        quantization off or on); int8 or converted the conversion; ptq the PTQ baseline; fp32 the FP32 model."""
        if kind in ("qatFloat", "fakeQuant"):
            with evaluating(self.qat, fake_quant=(kind == "fakeQuant")) as model:
                yield model
        elif kind in ("int8", "converted"):
            yield self.converted
        elif kind == "ptq":
            yield self.ptq_model(ctx)
        else:
            yield self.fp32

    def accuracy(self, kind: str, ctx: RequestContext) -> float:
        """fp32 | qatFloat | fakeQuant | int8 | ptq top-1 accuracy on the whole validation set (int8: the
        converted model, whatever its precision)."""
        from qat_kernel.pipeline.training import accuracy

        if kind == "fp32":
            return self.fp32_accuracy
        if kind not in self._accuracy:
            with self._model(kind, ctx) as model:
                value, _ = accuracy(model, self.val, ctx, self.loss)
            self._accuracy[kind] = value
        return self._accuracy[kind]

    @property
    def is_language_model(self) -> bool:
        """Trained on next-token prediction: its results carry perplexities."""
        return getattr(self.loss, "kind", None) == "next_token"

    def perplexity(self, kind: str, ctx: RequestContext) -> float:
        """fp32 | ptq | qatFloat | fakeQuant | converted perplexity on the validation set: exp of the mean
        next-token cross-entropy over every token the loss counts."""
        from qat_kernel.pipeline.training import perplexity

        if kind not in self._perplexity:
            with self._model(kind, ctx) as model:
                value, self._tokens = perplexity(model, self.val, ctx, self.loss)
            self._perplexity[kind] = value
        return self._perplexity[kind]

    def perplexities(self, kinds: tuple[str, ...], ctx: RequestContext) -> dict[str, Any] | None:
        """{kind: perplexity, ..., tokens: how many the mean is over} of a language model, None for any other."""
        if not self.is_language_model:
            return None
        found: dict[str, Any] = {kind: self.perplexity(kind, ctx) for kind in kinds}
        found["tokens"] = self._tokens
        return found


@contextlib.contextmanager
def evaluating(qat: QatFlow, fake_quant: bool | dict[str, Any] = True):
    """The QAT model in eval mode with observers off (an eval pass must not move scales) and fake
    quantization on, off, or per module ({name: bool}); every flag restored afterwards. The torchao flow's
    quantizers have no observers (their qparams come from each forward): its switch takes module paths."""
    if isinstance(qat, TorchaoQat):
        with qat.switched(fake_quant):
            qat.eval_mode()
            yield qat.model
        return
    fqs = qat.fake_quants()
    saved = {name: (m.fake_quant_enabled.clone(), m.observer_enabled.clone()) for name, m in fqs.items()}
    try:
        qat.eval_mode()
        for name, m in fqs.items():
            on = fake_quant.get(name, False) if isinstance(fake_quant, dict) else fake_quant
            m.fake_quant_enabled.fill_(1 if on else 0)
            m.observer_enabled.fill_(0)
        yield qat.model
    finally:
        for name, m in fqs.items():
            m.fake_quant_enabled.copy_(saved[name][0])
            m.observer_enabled.copy_(saved[name][1])
