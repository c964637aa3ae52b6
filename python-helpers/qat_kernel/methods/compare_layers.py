"""compare/layers: QAT the user's model with torchao PT2E, then compare every quantized layer's
fused-group output, FP32 vs INT8, on real validation samples; export the INT8 model to QDQ ONNX.

Stages (the `stage` of each $/progress): load, fp32, export, qat, convert, compare, onnx."""
from __future__ import annotations

import copy
import logging
import random
import time

from .. import packages
from ..config import Config, load_config
from ..context import RequestContext
from ..errors import ConfigInvalid

log = logging.getLogger("qat_kernel")

DEFAULT_SAMPLES = 32
DEFAULT_THRESHOLD = 0.99
DEFAULT_OPSET = 18


def _seed(seed: int) -> None:
    import torch

    random.seed(seed)
    torch.manual_seed(seed)
    try:
        import numpy

        numpy.random.seed(seed)
    except ImportError:
        pass


def _example_input(cfg: Config):
    import torch

    shape = list(cfg.get("model.example_input"))
    # A batch of 1 makes torch.export specialise the batch dim even when asked to keep it dynamic.
    shape[0] = max(shape[0], 2)
    return torch.randn(*shape, generator=torch.Generator().manual_seed(0))


def _load_user_objects(cfg: Config, ctx: RequestContext):
    from .. import usercode

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

    from ..training import make_optimizer, train_epochs

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


def _compare(reference_graph, int8_graph, inputs, cfg: Config, ctx: RequestContext) -> list[dict]:
    from .. import graphs, metrics, userpaths

    pairs = graphs.pair_groups(graphs.fp32_groups(reference_graph), graphs.int8_groups(int8_graph))
    fp32_values = graphs.capture(reference_graph, inputs, [f.output for f, _ in pairs])
    ctx.check_cancelled()
    int8_values = graphs.capture(int8_graph, inputs, [q.output for _, q in pairs])
    layers = []
    for fp32, int8 in pairs:
        layer = {"module": fp32.module, "op": fp32.op, "group": fp32.ops,
                 **metrics.all_metrics(fp32_values[fp32.output.name], int8_values[int8.output.name])}
        source = userpaths.stack_trace_location(fp32.anchor.meta.get("stack_trace"), str(cfg.folder))
        if source:
            layer["source"] = source
        layers.append(layer)
    return layers


def _export_onnx(cfg: Config, converted, example, ctx: RequestContext) -> dict:
    from .. import onnx_export, pt2e_flow

    relative = cfg.get("export.onnx.path") or f"out/{cfg.path.name.split('.')[0]}.qdq.onnx"
    path = cfg.resolve(relative)
    opset = cfg.get("export.onnx.opset", DEFAULT_OPSET)
    ctx.progress("onnx", f"exporting QDQ ONNX (opset {opset}) to {relative}")
    try:
        onnx_export.export_qdq(converted, example, path, opset, pt2e_flow.dynamic_batch())
    except Exception as exc:  # the comparison is still worth returning
        log.warning("ONNX export failed: %s: %s", type(exc).__name__, exc)
        error = f"{type(exc).__name__}: {exc}"
        if isinstance(exc, ModuleNotFoundError) and exc.name:  # e.g. onnxscript
            error += f" (install: {packages.install_command(exc.name.split('.')[0])})"
        return {"path": None, "error": error}
    return {"path": str(path)}


def run(ctx: RequestContext) -> dict:
    started = time.monotonic()
    params = ctx.params
    ctx.progress("load", "reading config")
    cfg = load_config(params["config"])
    ctx.workspace = str(cfg.folder)
    if cfg.get("flow", "pt2e") != "pt2e":
        raise ConfigInvalid("flow: compare/layers supports only the pt2e flow so far", path="flow")
    if cfg.get("data.entry") is None:
        raise ConfigInvalid("data: compare/layers needs data.entry (train and validation batches)", path="data")
    samples = params.get("samples") or cfg.get("compare.samples", DEFAULT_SAMPLES)
    steps = params.get("steps") or cfg.get("train.steps")

    ctx.progress("load", "importing torch and torchao")
    # Imported here, before any user code runs, so a missing package is reported as such.
    import torch  # noqa: F401
    import torchao  # noqa: F401

    from .. import pt2e_flow, usercode
    from ..training import accuracy, first_inputs, make_optimizer, train_steps

    ctx.check_cancelled()
    with usercode.workspace(cfg.folder):
        ctx.progress("load", "building model and data")
        model, train, val = _load_user_objects(cfg, ctx)
        ctx.check_cancelled()
        model = _fp32_model(cfg, model, train, ctx)
        model.eval()
        fp32_accuracy, val_samples = accuracy(model, val, ctx)
        ctx.progress("fp32", f"FP32 accuracy {fp32_accuracy:.4f}", 1.0)

        # The reference is the FP32 model before QAT: ep.module() shares parameter storage with the
        # model it exported, so QAT would otherwise train the reference too.
        reference = copy.deepcopy(model).eval()
        example = _example_input(cfg)
        ctx.progress("export", "torch.export + prepare_qat_pt2e")
        reference_graph = pt2e_flow.export(reference, example)
        prepared = pt2e_flow.prepare_qat(model, example)
        ctx.check_cancelled()

        if steps is None:
            if not hasattr(train, "__len__"):
                raise ConfigInvalid("train.steps: the training batches have no len(); set train.steps",
                                    path="train.steps")
            steps = cfg.get("train.epochs", 1) * len(train)
        optimizer = make_optimizer(cfg.get("train.optimizer", "adam"), prepared.parameters(), cfg.get("train.lr", 1e-3))
        train_steps(prepared, optimizer, train, steps, ctx, "qat")

        ctx.progress("convert", "convert_pt2e")
        converted = pt2e_flow.convert(prepared)
        ctx.check_cancelled()
        int8_accuracy, _ = accuracy(converted, val, ctx)
        ctx.progress("convert", f"INT8 accuracy {int8_accuracy:.4f}", 1.0)

        ctx.progress("compare", f"comparing layers on {samples} validation samples")
        inputs = first_inputs(val, samples)
        compared = sum(len(x) for x in inputs)
        layers = _compare(reference_graph, converted, inputs, cfg, ctx)
        ctx.check_cancelled()

        onnx = _export_onnx(cfg, converted, example, ctx)

    return {
        "flow": "pt2e",
        "reference": "fp32",
        "mode": "propagated",
        "samples": compared,
        "threshold": cfg.get("compare.threshold.cosine", DEFAULT_THRESHOLD),
        "layers": layers,
        "accuracy": {"fp32": fp32_accuracy, "int8": int8_accuracy, "samples": val_samples},
        "onnx": onnx,
        "seconds": round(time.monotonic() - started, 2),
    }
