"""The training loss and the top-1 measure on the model's prediction and the batch's target (train.loss).

- cross_entropy: F.cross_entropy; a prediction with more dims than the target has its class dim last when the
  target's shape is the prediction's without its last dim (token logits [B, T, V] with [B, T] labels, as Hugging
  Face), else dim 1 (PyTorch's convention: segmentation [N, C, H, W] with [N, H, W]). Targets of -100 are ignored.
- next_token: causal language modelling: position t predicts the target's token t + 1 (Hugging Face's CausalLM
  loss); the target defaults to the input ids when the batch has no labels.
- auto (default): the model's own loss when its forward takes `labels` and returns a loss, identified as one of
  the above by computing both on the same batch; cross_entropy otherwise. QAT trains an exported graph of the
  model's forward without labels, so the model's loss has to be one the kernel can compute from the prediction.
- `file.py:function`: the user's own, called as function(prediction, target) -> scalar tensor.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from qat_kernel.rpc.errors import ConfigInvalid

if TYPE_CHECKING:
    import torch

    from qat_kernel.pipeline.config import Config
    from qat_kernel.pipeline.model_io import Inputs, ModelIO

IGNORE_INDEX = -100
KINDS = ("auto", "cross_entropy", "next_token")


def _class_last(pred: torch.Tensor, target: Any) -> bool:
    return pred.dim() == target.dim() + 1 and tuple(pred.shape[:-1]) == tuple(target.shape)


def _aligned(pred: torch.Tensor, target: Any):
    """(logits [N, C], targets [N]) of a prediction and an integer target, or None when they do not align."""
    if target is None or target.is_floating_point() or pred.dim() < 2:
        return None
    if pred.dim() == 2 and target.dim() == 1 and len(target) == len(pred):
        return pred, target
    if _class_last(pred, target):
        return pred.reshape(-1, pred.shape[-1]), target.reshape(-1)
    if pred.dim() == target.dim() + 1 and (pred.shape[0],) + tuple(pred.shape[2:]) == tuple(target.shape):
        return pred.movedim(1, -1).reshape(-1, pred.shape[1]), target.reshape(-1)
    return None


def _shifted(pred: torch.Tensor, target: Any):
    if pred.dim() != 3 or target is None or target.dim() != 2:
        return None
    return pred[:, :-1, :], target[:, 1:]


@dataclass
class Loss:
    kind: str  # cross_entropy | next_token | user
    user: Callable[..., Any] | None = None
    note: str | None = None  # how `auto` decided, for the run's notes

    def aligned_pair(self, pred: torch.Tensor, target: Any):
        """(prediction, target) as this loss compares them, else None when they do not line up."""
        if self.kind == "next_token":
            shifted = _shifted(pred, target)
            return _aligned(*shifted) if shifted is not None else None
        return _aligned(pred, target)

    def __call__(self, pred: torch.Tensor, target: Any):
        import torch.nn.functional as F

        if self.user is not None:
            return self.user(pred, target)
        pair = self.aligned_pair(pred, target)
        if pair is None:
            raise ConfigInvalid(
                f"train.loss: {self.kind} needs class scores and integer targets that line up; the prediction has "
                f"shape {list(pred.shape)}, the target {_shape(target)}: set model.output, data.target or a loss "
                "function (train.loss: loss.py:function)",
                path="train.loss",
            )
        logits, labels = pair
        return F.cross_entropy(logits.float(), labels.long(), ignore_index=IGNORE_INDEX)

    def token_nll(self, pred: torch.Tensor, target: Any) -> tuple[float, int]:
        """(summed cross-entropy, positions counted) of one batch, the positions the loss averages over (-100
        skipped): what a perplexity is the exp of the mean of."""
        import torch.nn.functional as F

        pair = self.aligned_pair(pred, target)
        if pair is None:
            raise ConfigInvalid(
                f"train.loss: a perplexity needs token scores and integer targets that line up; the prediction "
                f"has shape {list(pred.shape)}, the target {_shape(target)}",
                path="train.loss",
            )
        logits, labels = pair
        total = F.cross_entropy(logits.float(), labels.long(), ignore_index=IGNORE_INDEX, reduction="sum")
        return float(total), int((labels != IGNORE_INDEX).sum())

    def target_of(self, inputs: Inputs) -> Any:
        """The target of a batch that has none: a language model's own token ids (next_token), else None."""
        return inputs.values[0] if self.kind == "next_token" else None

    def accuracy(self, pred: torch.Tensor, target: Any) -> float | None:
        """Top-1 accuracy of outputs against targets (tensors or numpy arrays), None where they do not line up
        (a user loss on something other than class scores)."""
        import torch

        if target is None:
            return None
        pred, target = torch.as_tensor(pred), torch.as_tensor(target)
        if self.aligned_pair(pred, target) is None:
            return None
        right, counted = self.correct(pred, target)
        return right / counted if counted else None

    def correct(self, pred: torch.Tensor, target: Any) -> tuple[int, int]:
        """(right, counted) top-1 predictions, the same positions the loss counts (-100 skipped)."""
        pair = self.aligned_pair(pred, target)
        if pair is None:
            if self.user is not None:
                return 0, 0
            raise ConfigInvalid(
                f"train.loss: top-1 accuracy needs class scores and integer targets that line up; the prediction "
                f"has shape {list(pred.shape)}, the target {_shape(target)}",
                path="train.loss",
            )
        logits, labels = pair
        keep = labels != IGNORE_INDEX
        return int((logits.argmax(-1)[keep] == labels[keep]).sum()), int(keep.sum())


def _shape(target: Any) -> str:
    return "none" if target is None else str(list(target.shape))


def resolve(cfg: Config, model: torch.nn.Module | None = None, io: ModelIO | None = None, batch: Any = None) -> Loss:
    """The config's loss; `auto` looks at the model's own loss on `batch` (one training batch) to name it."""
    spec = cfg.get("train.loss", "auto")
    if spec not in KINDS:
        from qat_kernel.pipeline import usercode

        return Loss("user", user=usercode.load_entry(cfg.folder, spec, "train.loss"))
    if spec != "auto":
        return Loss(spec)
    own = _own_loss(model, io, batch)
    if own is None:
        return Loss("cross_entropy")
    value, pred, target = own
    for kind in ("cross_entropy", "next_token"):
        pair = Loss(kind).aligned_pair(pred, target)
        if pair is None:
            continue
        import torch.nn.functional as F

        ours = float(F.cross_entropy(pair[0].float(), pair[1].long(), ignore_index=IGNORE_INDEX))
        if abs(ours - value) <= 1e-3 * max(1.0, abs(value)):
            return Loss(kind, note=f"train.loss auto: the model's own loss is {kind} ({value:.4f} on a batch)")
    raise ConfigInvalid(
        f"train.loss: the model computes its own loss ({value:.4f} on a batch), which is neither cross_entropy nor "
        "next_token on its prediction; QAT trains the exported forward without labels, so name the loss: "
        "train.loss: cross_entropy | next_token | loss.py:function(prediction, target)",
        path="train.loss",
    )


def _own_loss(model: torch.nn.Module | None, io: ModelIO | None, batch: Any):
    """(the model's own loss, its prediction, the target) on one batch, or None when it has none."""
    import inspect

    import torch

    if model is None or io is None or batch is None or not io.keyword:
        return None
    forward = type(model).forward
    try:
        takes_labels = "labels" in inspect.signature(forward).parameters
    except (TypeError, ValueError):
        takes_labels = False
    if not takes_labels:
        return None
    tensors, target = io.split(batch)
    if target is None:
        return None
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            out = forward(model, **dict(zip(io.names, tensors)), labels=target)
    finally:
        model.train(was_training)
    value = out.get("loss") if hasattr(out, "get") else getattr(out, "loss", None)
    if not isinstance(value, torch.Tensor):
        return None
    return float(value), io.prediction(out), target
