"""The QAT pipeline: load config -> build model and data (user code) -> FP32 weights (load or train) ->
prepare QAT (pt2e or eager with the YAML's qconfig and overrides; torchao with its `torchao` section and
overrides) -> QAT with the config's optimizer, scheduler, freeze_bn_after and freeze_observer_after -> a
Trained model (pipeline.trained_model)."""

from __future__ import annotations

import contextlib
import copy
import importlib
import math
import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from qat_kernel.pipeline import health
from qat_kernel.pipeline.config import Config
from qat_kernel.pipeline.drift import DRIFT_SAMPLES, drift_state
from qat_kernel.pipeline.trained_model import Trained
from qat_kernel.rpc.context import RequestContext
from qat_kernel.rpc.errors import ConfigInvalid

if TYPE_CHECKING:
    from collections.abc import Iterable

    import torch

    from qat_kernel.pipeline.losses import Loss
    from qat_kernel.pipeline.qconfig import QConfigPlan

# Set in a torchrun worker (qat_kernel.jobs.qat_train_worker): QAT then trains through DistributedDataParallel
# on this rank's share of the training batches.
DIST: Any = None


def is_main() -> bool:
    """True outside torchrun and on rank 0: the process that evaluates, writes and reports."""
    return DIST is None or DIST.rank == 0


def _seed(seed: int) -> None:
    import torch

    random.seed(seed)
    torch.manual_seed(seed)
    try:
        import numpy

        numpy.random.seed(seed)
    except ImportError:
        pass


def build_model(cfg: Config):
    """The user's FP32 model from model.entry (in a usercode.workspace)."""
    from qat_kernel.pipeline import usercode

    make_model = usercode.load_entry(cfg.folder, cfg.get("model.entry"), "model.entry")
    _seed(cfg.get("train.seed", 0))
    model = make_model()
    if not hasattr(model, "forward") or not hasattr(model, "state_dict"):
        raise ConfigInvalid(f"model.entry returned {type(model).__name__}, not an nn.Module", path="model.entry")
    return model


class UserObjects(NamedTuple):
    model: Any  # bound to the contract: forward(*inputs) -> prediction
    train: Any  # model_io.Batches: (inputs, target) pairs
    val: Any
    io: Any  # model_io.ModelIO
    loss: Loss
    example: tuple[Any, ...]  # the inputs torch.export traces with


def load_user_objects(cfg: Config, notes: list[str] | None = None) -> UserObjects:
    """The model and the data under the model contract (pipeline.model_io): the inputs read from
    model.example_input or the first batch, the loss resolved (the model's own, when it has one), the model's
    forward bound to positional inputs and one prediction, the batches as (inputs, target) pairs."""
    from qat_kernel.pipeline import losses, model_io, usercode

    model = build_model(cfg)
    make_data = usercode.load_entry(cfg.folder, cfg.get("data.entry"), "data.entry")
    loaded = make_data()
    if not isinstance(loaded, (tuple, list)) or len(loaded) != 2:
        raise ConfigInvalid(
            f"data.entry returned {model_io.describe(loaded)}: return (train, val), two iterables of batches",
            path="data.entry",
        )
    train, val = loaded
    io = model_io.model_io(cfg, model, val)
    first = next(iter(train), None)
    if first is None:
        raise ConfigInvalid("data.entry: the training batches are empty", path="data.entry")
    loss = losses.resolve(cfg, model, io, first)
    if loss.note and notes is not None:
        notes.append(loss.note)
    io.bind(model)
    train_b = model_io.batches(train, io, loss.target_of)
    val_b = model_io.batches(val, io, loss.target_of)
    return UserObjects(model, train_b, val_b, io, loss, io.example(val))


def model_and_example(cfg: Config) -> tuple[Any, tuple[Any, ...]]:
    """(the model bound to the contract, its example inputs) for a job that needs no training: from
    model.example_input alone when the config gives it, else with the data's first batch."""
    from qat_kernel.pipeline.model_io import model_io

    if cfg.get("model.example_input") is None:
        user = load_user_objects(cfg)
        return user.model, user.example
    io = model_io(cfg)
    return io.bind(build_model(cfg)), io.example(None)


def _fp32_model(cfg: Config, model: torch.nn.Module, train: Iterable[Any], ctx: RequestContext, loss: Loss):
    import torch

    from qat_kernel.pipeline.training import make_optimizer, train_epochs

    weights = cfg.get("model.weights")
    if weights:
        ctx.progress("fp32", f"loading weights {weights}")
        model.load_state_dict(torch.load(cfg.resolve(weights), map_location="cpu", weights_only=True))
        return model
    epochs = cfg.get("train.fp32_epochs", 3)
    model.train()
    optimizer = make_optimizer(cfg.get("train.optimizer", "adam"), model.parameters(), cfg.get("train.lr", 1e-3))
    train_epochs(model, optimizer, train, epochs, ctx, "fp32", loss)
    return model


def _check_fp32(cfg: Config, model: torch.nn.Module, adopted: dict[str, Any] | None) -> None:
    """NonFinite when the FP32 weights QAT starts from hold a NaN/Inf, saying where they came from."""
    weights = cfg.get("model.weights")
    if adopted is not None:
        source, advice = "the weights of the distributed run", "Lower train.lr."
    elif weights:
        source, advice = f"the weights loaded from {weights}", "Save them again from a run that did not diverge."
    elif cfg.get("train.fp32_epochs", 3):
        source, advice = "the model after FP32 training", "Lower train.lr or check the data."
    else:
        source, advice = "the model built by model.entry", "Check how model.entry initialises it."
    health.check_state(model, source, advice)


def _kept_float(qplan: QConfigPlan, reference: torch.nn.Module) -> list[dict[str, Any]]:
    """Conv/linear layers an override keeps float, with the precision asked for."""
    kept = []
    for name, module in reference.named_modules():
        if type(module).__name__ not in ("Conv1d", "Conv2d", "Conv3d", "Linear"):
            continue
        layer = qplan.for_module(name)
        if not layer.quantized:
            row = {"module": name, "precision": layer.precision, "override": layer.override}
            if layer.precision != "fp32":
                row["note"] = f"{layer.precision} is not emulated yet: the layer runs in fp32"
            kept.append(row)
    return kept


def _training_length(cfg: Config, steps: int | None, epochs: int | None, per_epoch: int | None) -> tuple[int, int]:
    """(steps, epochs) to train. An `epochs` request overrides train.steps too; a `steps` request overrides both."""
    total = steps or (cfg.get("train.steps") if epochs is None else None)
    if total is None:
        if per_epoch is None:
            raise ConfigInvalid("train.steps: the training batches have no len(); set train.steps", path="train.steps")
        total = (epochs if epochs is not None else cfg.get("train.epochs", 1)) * per_epoch
    return total, math.ceil(total / per_epoch) if per_epoch else 1


def run_pipeline(
    cfg: Config,
    ctx: RequestContext,
    steps: int | None,
    epochs: int | None,
    on_epoch_end: Callable[..., Any] | None = None,
    on_start: Callable[..., Any] | None = None,
    adopted: dict[str, Any] | None = None,
) -> Trained:
    """`adopted`: a distributed run's checkpoint; its FP32 and QAT weights replace both trainings."""
    import time

    started = time.monotonic()
    ctx.progress("load", "importing torch and torchao")
    # Imported here, before any user code runs, so a missing package is reported as such.
    importlib.import_module("torch")
    importlib.import_module("torchao")

    from qat_kernel.pipeline import qconfig, torchao_flow, usercode
    from qat_kernel.pipeline.training import accuracy, make_optimizer, make_scheduler, train_steps

    flow = cfg.get("flow", "pt2e")
    qplan = qconfig.plan(cfg)  # config errors before any user code runs
    tplan = torchao_flow.plan(cfg) if flow == "torchao" else None
    if flow == "eager":
        for index, _, layer in qplan.overrides:
            if not layer.quantized:
                raise ConfigInvalid(
                    f"overrides.{index}.precision: the eager flow cannot keep a layer "
                    f"{layer.precision} (it would need its own DeQuantStub/QuantStub); "
                    "use flow: pt2e",
                    path=f"overrides.{index}.precision",
                )
    notes: list[str] = []
    ctx.check_cancelled()
    with usercode.workspace(cfg.folder):
        ctx.progress("load", "building model and data")
        user = load_user_objects(cfg, notes)
        model, train, val, example = user.model, user.train, user.val, user.example
        ctx.check_cancelled()
        if adopted is not None:
            ctx.progress("load", f"loading the model trained by {adopted['world_size']} processes")
            model.load_state_dict(adopted["fp32_state_dict"])
        else:
            with health.locating(cfg.folder, model):
                model = _fp32_model(cfg, model, train, ctx, user.loss)
            if DIST is not None:
                DIST.broadcast(model)
        _check_fp32(cfg, model, adopted)
        model.eval()
        fp32_accuracy, val_samples = accuracy(model, val, ctx, user.loss)
        ctx.progress("fp32", f"FP32 accuracy {fp32_accuracy:.4f}", 1.0)
        # The reference is the FP32 model before QAT: ep.module() shares parameter storage with the
        # model it exported, so QAT would otherwise train the reference too.
        reference = copy.deepcopy(model).eval()
        health.pruned_channels(model, notes)
        if flow == "pt2e":
            from qat_kernel.pipeline import pt2e_flow

            ctx.progress("export", "torch.export + prepare_qat_pt2e")
            if cfg.get("backend", "x86") in ("qnnpack", "xnnpack"):
                notes.append(
                    f"backend {cfg.get('backend')}: PT2E uses torchao's X86InductorQuantizer "
                    "recipe here (the XNNPACK quantizer lives in executorch)"
                )
            qat = pt2e_flow.Pt2eQat(model, example, qplan, notes)
        elif tplan is not None:
            ctx.progress("prepare", 'quantize_(model, QATConfig(base_config, step="prepare"))')
            notes.extend(tplan.ignored)
            qat = torchao_flow.TorchaoQat(model, example, tplan, notes)
            ctx.progress("prepare", qat.summary())
        else:
            from qat_kernel.pipeline import eager_flow

            if not any(type(m).__name__ == "QuantStub" for m in model.modules()):
                raise ConfigInvalid(
                    "flow: eager needs a model with QuantStub/DeQuantStub around its "
                    "quantized part (model.entry returns none); use flow: pt2e",
                    path="flow",
                )
            ctx.progress("export", "fuse_modules_qat + prepare_qat (eager)")
            qat = eager_flow.EagerQat(
                model, example, qplan, cfg.get("backend", "x86"), fuse=cfg.get("eager.fuse"), warnings_out=notes
            )
            health.eager_exact_fold(qat.model, notes)
        ctx.check_cancelled()
        for index in (tplan or qplan).unused_overrides():
            notes.append(f"overrides.{index}.match matches no layer of the model")

        if DIST is not None:
            train = DIST.shard(train)
        per_epoch = len(train) if hasattr(train, "__len__") else None
        steps, epochs = _training_length(cfg, steps, epochs, per_epoch)
        optimizer = make_optimizer(
            cfg.get("train.optimizer", "adam"), qat.model.parameters(), cfg.get("train.lr", 1e-3)
        )
        scheduler = make_scheduler(cfg.get("train.scheduler", "none"), optimizer, steps)
        trained = Trained(
            cfg=cfg,
            flow=flow,
            qat=qat,
            fp32=reference,
            train=train,
            val=val,
            example=example,
            io=user.io,
            loss=user.loss,
            fp32_accuracy=fp32_accuracy,
            val_samples=val_samples,
            steps=steps,
            epochs=epochs,
            qplan=qplan,
            kept_float=qat.kept_float() if isinstance(qat, torchao_flow.TorchaoQat) else _kept_float(qplan, reference),
            warnings=notes,
        )
        freeze_bn = cfg.get("train.freeze_bn_after")
        freeze_obs = cfg.get("train.freeze_observer_after")

        def freeze(done_epochs: int) -> None:
            if freeze_bn is not None and done_epochs >= freeze_bn and not qat.bn_frozen:
                if qat.freeze_bn():
                    ctx.progress("qat", f"BatchNorm statistics frozen after epoch {done_epochs}")
                elif "freeze_bn_after: not supported by this torchao" not in notes:
                    notes.append("freeze_bn_after: not supported by this torchao")
            if freeze_obs is not None and done_epochs >= freeze_obs:
                for m in qat.fake_quants().values():
                    m.observer_enabled.fill_(0)

        def epoch_end(epoch: int, step: int, loss: float) -> None:
            freeze(epoch)
            row = {"epoch": epoch, "step": step, "loss": loss}
            trained.history.append(row)
            if on_epoch_end is not None:
                on_epoch_end(trained, row)
                qat.train_mode()

        if adopted is not None:
            qat.model.load_state_dict(adopted["state_dict"])
            trained.history = list(adopted.get("history") or [])
            trained.drift = list(adopted.get("drift") or [])
            qat.eval_mode()
            for m in qat.fake_quants().values():
                m.observer_enabled.fill_(0)
            trained.seconds = round(time.monotonic() - started, 2)
            return trained
        if on_start is not None:
            on_start(trained)
        qat.train_mode()
        freeze(0)
        every = max(1, -(-steps // DRIFT_SAMPLES))

        def on_step(step: int, epoch: int) -> None:
            if step == 1 or step % every == 0 or step == steps:
                trained.drift.append({"step": step, "epoch": epoch, "observers": drift_state(qat)})

        stepped = DIST.wrap(qat.model) if DIST is not None else qat.model
        with _eager_warnings(flow, notes), health.locating(cfg.folder, qat.model):
            train_steps(
                stepped, optimizer, train, steps, ctx, "qat", per_epoch, scheduler, epoch_end, on_step, user.loss
            )
        health.check_state(qat.model, f"the model after QAT step {steps}", "Lower train.lr.")
        qat.eval_mode()
        if freeze_obs is None:  # later passes over the model must not move the scales
            for m in qat.fake_quants().values():
                m.observer_enabled.fill_(0)
        trained.seconds = round(time.monotonic() - started, 2)
    return trained


@contextlib.contextmanager
def _eager_warnings(flow: str, notes: list[str]):
    if flow != "eager":
        yield
        return
    from qat_kernel.pipeline.eager_flow import collect_warnings

    with collect_warnings(notes):
        yield
