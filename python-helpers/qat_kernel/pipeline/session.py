"""The QAT pipeline shared by every method, and the kernel's cache of its results.

load config -> build model and data (user code) -> FP32 weights (load or train) -> prepare QAT
(pt2e or eager, qconfig and overrides from the YAML) -> QAT with the config's optimizer, scheduler,
freeze_bn_after and freeze_observer_after -> `Trained`, from which INT8 conversion, the FP32 graph
and accuracies are computed on first use.

The kernel lives as long as the editor session, so a `Trained` is kept, keyed by the config file and
the .py files beside it (path + mtime + size) and the training overrides of the request:
compare/layers, analyze/sensitivity, eval/accuracy, export/onnx and build/tvm after a qat/train (or
after each other) reuse the trained model instead of training again. Editing the config or a .py file
next to it, or asking for other steps/epochs, trains anew. A `Trained` also remembers the QDQ ONNX
files exported from it (record_export/exported), so build/tvm compiles the file compare/layers wrote
instead of exporting again."""

from __future__ import annotations

import collections
import contextlib
import copy
import logging
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qat_kernel.pipeline.config import Config, load_config
from qat_kernel.rpc.context import RequestContext
from qat_kernel.rpc.errors import ConfigInvalid

log = logging.getLogger("qat_kernel")

CACHE_SIZE = 2
PTQ_CALIBRATION_SAMPLES = 512
DRIFT_SAMPLES = 24  # observer snapshots kept over a QAT run (plus the first and the last step)
_CACHE: collections.OrderedDict[tuple, Trained] = collections.OrderedDict()
# Set in a torchrun worker (qat_kernel.ddp_worker): QAT then trains through DistributedDataParallel on
# this rank's share of the training batches.
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


def example_input(cfg: Config):
    import torch

    shape = list(cfg.get("model.example_input"))
    # A batch of 1 makes torch.export specialise the batch dim even when asked to keep it dynamic.
    shape[0] = max(shape[0], 2)
    return torch.randn(*shape, generator=torch.Generator().manual_seed(0))


def _file_stamp(path: Path):
    try:
        st = path.stat()
        return (str(path), st.st_mtime_ns, st.st_size)
    except OSError:
        return (str(path), None, None)


def cache_key(cfg: Config, steps: int | None, epochs: int | None) -> tuple:
    sources = sorted(cfg.folder.glob("*.py"))
    weights = cfg.get("model.weights")
    extra = [cfg.resolve(weights)] if weights else []
    return (_file_stamp(cfg.path), tuple(_file_stamp(p) for p in sources + extra), steps, epochs)


def cached(key: tuple) -> Trained | None:
    trained = _CACHE.get(key)
    if trained is not None:
        _CACHE.move_to_end(key)
    return trained


def remember(key: tuple, trained: Trained) -> None:
    _CACHE[key] = trained
    _CACHE.move_to_end(key)
    while len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)


def clear_cache() -> None:
    _CACHE.clear()


@dataclass
class Trained:
    cfg: Config
    flow: str
    qat: Any  # pt2e_flow.Pt2eQat | eager_flow.EagerQat, trained, in eval mode
    fp32: Any  # the FP32 model before QAT (eval): the reference
    train: Any
    val: Any
    example: Any
    fp32_accuracy: float
    val_samples: int
    steps: int
    epochs: int
    qplan: Any = None  # qconfig.QConfigPlan
    kept_float: list = field(default_factory=list)  # [{module, precision, override}]
    warnings: list = field(default_factory=list)
    history: list = field(default_factory=list)  # per epoch: {epoch, step, loss, accuracy?}
    drift: list = field(default_factory=list)  # [{step, epoch, observers: drift_state()}]
    seconds: float = 0.0
    # QDQ ONNX files exported from this model: path -> (mtime_ns, size, opset) when written
    exports: dict = field(default_factory=dict)
    _converted: Any = None
    _fp32_graph: Any = None
    _accuracy: dict = field(default_factory=dict)

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

    def accuracy(self, kind: str, ctx: RequestContext) -> float:
        """fp32 | qatFloat | fakeQuant | int8 | ptq top-1 accuracy on the whole validation set."""
        from qat_kernel.pipeline.training import accuracy, first_inputs

        if kind == "fp32":
            return self.fp32_accuracy
        if kind not in self._accuracy:
            if kind == "int8":
                value, _ = accuracy(self.converted, self.val, ctx)
            elif kind == "ptq":
                from qat_kernel.pipeline import pt2e_flow

                calibration = first_inputs(self.train, PTQ_CALIBRATION_SAMPLES)
                value, _ = accuracy(pt2e_flow.ptq(self.fp32, self.example, self.qplan, calibration, ctx), self.val, ctx)
            else:
                with evaluating(self.qat, fake_quant=(kind == "fakeQuant")):
                    value, _ = accuracy(self.qat.model, self.val, ctx)
            self._accuracy[kind] = value
        return self._accuracy[kind]


@contextlib.contextmanager
def evaluating(qat, fake_quant: bool | dict = True):
    """The QAT model in eval mode with observers off (an eval pass must not move scales) and fake
    quantization on, off, or per module ({name: bool}); every flag restored afterwards."""
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


def observer_state(qat) -> list[dict]:
    """Per layer: scale and zero-point of its weight and input/output fake quantizers."""
    fqs = qat.fake_quants()
    rows = []
    for layer, found in qat.layers():
        for role, names in (("weight", found.weight), ("activation", found.input)):
            for name in names:
                m = fqs[name]
                rows.append(
                    {
                        "module": layer.module,
                        "role": role,
                        "fakeQuant": name,
                        "scale": [float(v) for v in m.scale.flatten().tolist()],
                        "zeroPoint": [int(v) for v in m.zero_point.flatten().tolist()],
                    }
                )
    return rows


def drift_state(qat) -> list[dict]:
    """observer_state compacted for plots: per layer and role, the scale's min/mean/max over channels
    and the first zero point."""
    rows = []
    for row in observer_state(qat):
        scale = row["scale"]
        rows.append(
            {
                "module": row["module"],
                "role": row["role"],
                "scale": [min(scale), sum(scale) / len(scale), max(scale)],
                "zeroPoint": row["zeroPoint"][0],
            }
        )
    return rows


def drift_series(trained: Trained) -> dict | None:
    """How each layer's scale and zero point moved during QAT, as series over the sampled steps."""
    if len(trained.drift) < 2:
        return None
    layers: dict = {}
    for snap in trained.drift:
        for row in snap["observers"]:
            series = layers.setdefault(
                (row["module"], row["role"]),
                {
                    "module": row["module"],
                    "role": row["role"],
                    "scaleMin": [],
                    "scaleMean": [],
                    "scaleMax": [],
                    "zeroPoint": [],
                },
            )
            lo, mean, hi = row["scale"]
            series["scaleMin"].append(lo)
            series["scaleMean"].append(mean)
            series["scaleMax"].append(hi)
            series["zeroPoint"].append(row["zeroPoint"])
    count = len(trained.drift)
    return {
        "steps": [s["step"] for s in trained.drift],
        "epochs": [s["epoch"] for s in trained.drift],
        "layers": [v for v in layers.values() if len(v["scaleMean"]) == count],
    }


def _load_user_objects(cfg: Config):
    from qat_kernel.pipeline import usercode

    make_model = usercode.load_entry(cfg.folder, cfg.get("model.entry"), "model.entry")
    make_data = usercode.load_entry(cfg.folder, cfg.get("data.entry"), "data.entry")
    _seed(cfg.get("train.seed", 0))
    model = make_model()
    if not hasattr(model, "forward") or not hasattr(model, "state_dict"):
        raise ConfigInvalid(f"model.entry returned {type(model).__name__}, not an nn.Module", path="model.entry")
    train, val = make_data()
    return model, train, val


def _fp32_model(cfg: Config, model, train, ctx: RequestContext):
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
    train_epochs(model, optimizer, train, epochs, ctx, "fp32")
    return model


def _kept_float(qat, qplan, reference) -> list[dict]:
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


def load(config: str, ctx: RequestContext) -> Config:
    """The config at path `config`, checked, with ctx.workspace set to its folder."""
    ctx.progress("load", "reading config")
    cfg = load_config(config)
    ctx.workspace = str(cfg.folder)
    if cfg.get("data.entry") is None:
        raise ConfigInvalid(f"data: {ctx.method} needs data.entry (train and validation batches)", path="data")
    return cfg


def adopt(
    cfg: Config, ctx: RequestContext, checkpoint: Path, steps: int | None = None, epochs: int | None = None
) -> Trained:
    """The model a torchrun run trained, rebuilt here from its checkpoint (the FP32 reference and the
    QAT state) and kept in the cache, so later methods on the config reuse it as after a qat/train."""
    import torch

    saved = torch.load(checkpoint, map_location="cpu", weights_only=True)
    trained = run_pipeline(cfg, ctx, steps, epochs, adopted=saved)
    remember(cache_key(cfg, steps, epochs), trained)
    return trained


def require_pt2e(cfg: Config, why: str) -> None:
    """ConfigInvalid on `flow` (why: what needs the PT2E flow) when the config uses the eager flow."""
    if cfg.get("flow", "pt2e") != "pt2e":
        raise ConfigInvalid(f"flow: {why}", path="flow")


def get(
    cfg: Config,
    ctx: RequestContext,
    steps: int | None = None,
    epochs: int | None = None,
    retrain: bool = False,
    on_epoch_end: Callable | None = None,
    on_start: Callable | None = None,
) -> tuple[Trained, bool]:
    """(Trained, reused) for the config: from the cache unless `retrain`, else trained now."""
    key = cache_key(cfg, steps, epochs)
    if not retrain:
        hit = cached(key)
        if hit is not None:
            ctx.progress("load", "reusing the model trained earlier in this session")
            hit.cfg = cfg
            return hit, True
    trained = run_pipeline(cfg, ctx, steps, epochs, on_epoch_end, on_start)
    remember(key, trained)
    return trained, False


def run_pipeline(
    cfg: Config,
    ctx: RequestContext,
    steps: int | None,
    epochs: int | None,
    on_epoch_end: Callable | None = None,
    on_start: Callable | None = None,
    adopted: dict | None = None,
) -> Trained:
    """`adopted`: a distributed run's checkpoint; its FP32 and QAT weights replace both trainings."""
    import time

    started = time.monotonic()
    ctx.progress("load", "importing torch and torchao")
    # Imported here, before any user code runs, so a missing package is reported as such.
    import torch  # noqa: F401
    import torchao  # noqa: F401

    from qat_kernel.pipeline import qconfig, usercode
    from qat_kernel.pipeline.training import accuracy, make_optimizer, make_scheduler, train_steps

    flow = cfg.get("flow", "pt2e")
    qplan = qconfig.plan(cfg)  # config errors before any user code runs
    if flow == "eager":
        for index, _, layer in qplan.overrides:
            if not layer.quantized:
                raise ConfigInvalid(
                    f"overrides.{index}.precision: the eager flow cannot keep a layer "
                    f"{layer.precision} (it would need its own DeQuantStub/QuantStub); "
                    "use flow: pt2e",
                    path=f"overrides.{index}.precision",
                )
    notes: list = []
    ctx.check_cancelled()
    with usercode.workspace(cfg.folder):
        ctx.progress("load", "building model and data")
        model, train, val = _load_user_objects(cfg)
        ctx.check_cancelled()
        if adopted is not None:
            ctx.progress("load", f"loading the model trained by {adopted['world_size']} processes")
            model.load_state_dict(adopted["fp32_state_dict"])
        else:
            model = _fp32_model(cfg, model, train, ctx)
            if DIST is not None:
                DIST.broadcast(model)
        model.eval()
        fp32_accuracy, val_samples = accuracy(model, val, ctx)
        ctx.progress("fp32", f"FP32 accuracy {fp32_accuracy:.4f}", 1.0)
        # The reference is the FP32 model before QAT: ep.module() shares parameter storage with the
        # model it exported, so QAT would otherwise train the reference too.
        reference = copy.deepcopy(model).eval()
        example = example_input(cfg)
        if flow == "pt2e":
            from qat_kernel.pipeline import pt2e_flow

            ctx.progress("export", "torch.export + prepare_qat_pt2e")
            if cfg.get("backend", "x86") in ("qnnpack", "xnnpack"):
                notes.append(
                    f"backend {cfg.get('backend')}: PT2E uses torchao's X86InductorQuantizer "
                    "recipe here (the XNNPACK quantizer lives in executorch)"
                )
            qat = pt2e_flow.Pt2eQat(model, example, qplan)
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
        ctx.check_cancelled()
        for index in qplan.unused_overrides():
            notes.append(f"overrides.{index}.match matches no layer of the model")

        if DIST is not None:
            train = DIST.shard(train)
        per_epoch = len(train) if hasattr(train, "__len__") else None
        # An `epochs` request overrides train.steps too; a `steps` request overrides both.
        steps = steps or (cfg.get("train.steps") if epochs is None else None)
        epochs = epochs if epochs is not None else cfg.get("train.epochs", 1)
        if steps is None:
            if per_epoch is None:
                raise ConfigInvalid(
                    "train.steps: the training batches have no len(); set train.steps", path="train.steps"
                )
            steps = epochs * per_epoch
        epochs = math.ceil(steps / per_epoch) if per_epoch else 1
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
            fp32_accuracy=fp32_accuracy,
            val_samples=val_samples,
            steps=steps,
            epochs=epochs,
            qplan=qplan,
            kept_float=_kept_float(qat, qplan, reference),
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
        with _eager_warnings(flow, notes):
            train_steps(stepped, optimizer, train, steps, ctx, "qat", per_epoch, scheduler, epoch_end, on_step)
        qat.eval_mode()
        if freeze_obs is None:  # later passes over the model must not move the scales
            for m in qat.fake_quants().values():
                m.observer_enabled.fill_(0)
        trained.seconds = round(time.monotonic() - started, 2)
    return trained


@contextlib.contextmanager
def _eager_warnings(flow: str, notes: list):
    if flow != "eager":
        yield
        return
    from qat_kernel.pipeline.eager_flow import collect_warnings

    with collect_warnings(notes):
        yield


def convert(trained: Trained, ctx: RequestContext):
    """The INT8 model, converting on first use (with progress)."""
    if trained._converted is None:
        ctx.progress("convert", "convert_pt2e" if trained.flow == "pt2e" else "convert (eager)")
        trained.converted  # noqa: B018
        ctx.check_cancelled()
    return trained.converted


def record_export(trained: Trained, path, opset: int) -> None:
    """Remember that `path` holds this model's QDQ ONNX export (opset), as the file is now."""
    st = Path(path).stat()
    trained.exports[str(Path(path))] = (st.st_mtime_ns, st.st_size, opset)


def exported(trained: Trained, path, opset: int) -> bool:
    """True when `path` still is the file this model was exported to with `opset` (not rewritten
    or replaced since)."""
    try:
        st = Path(path).stat()
    except OSError:
        return False
    return trained.exports.get(str(Path(path))) == (st.st_mtime_ns, st.st_size, opset)


def out_path(cfg: Config, name: str) -> Path:
    folder = cfg.folder / "out"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / name


def layer_source(trained: Trained, layer) -> dict | None:
    """{file, line} where the user's forward calls the layer (a Group in pt2e, a Layer in eager)."""
    from qat_kernel.pipeline import userpaths

    folder = str(trained.cfg.folder)
    if trained.flow == "pt2e":
        return userpaths.stack_trace_location(layer.anchor.meta.get("stack_trace"), folder)
    from qat_kernel.pipeline.eager_flow import source_of

    return source_of(trained.fp32, layer.module, lambda f: userpaths.is_user_file(f, folder))
