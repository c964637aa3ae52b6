"""How every job opens its request: the config read and checked (`load`: data.entry present, ctx.workspace set;
the PT2E flow required where the job needs it), then the config's trained model (`model`: the session's,
else trained now), converted to INT8 where asked. `load_model` is both in one call; a job that checks
something in between (build/tvm resolves its target before the flow check, deploy/c-artifact and bench/run
their toolchain before training) calls `load` and `model` apart."""

from __future__ import annotations

from typing import Any, NamedTuple

from qat_kernel.pipeline import session
from qat_kernel.pipeline.config import Config
from qat_kernel.pipeline.trained_model import Trained
from qat_kernel.rpc.context import RequestContext
from qat_kernel.rpc.errors import ConfigInvalid


class Opened(NamedTuple):
    cfg: Config
    trained: Trained
    reused: bool  # the session's model, trained by an earlier request
    converted: Any  # the INT8 model when asked for, else None


# The methods that take the torchao flow (flow: torchao); the others ask for pt2e or eager models (FX graphs,
# torch.ao fake quantizers, the QDQ ONNX export). graph/export takes it for its fp32 stage.
TORCHAO_METHODS = (
    "qat/train",
    "qat/convert",
    "eval/accuracy",
    "compare/layers",
    "analyze/sensitivity",
    "search/mixed-precision",
    "deploy/torchao",
    "graph/export's fp32 stage",
)


def require_pt2e(cfg: Config, why: str) -> None:
    """ConfigInvalid on `flow` (why: what needs the PT2E flow) when the config uses the eager flow."""
    if cfg.get("flow", "pt2e") != "pt2e":
        raise ConfigInvalid(f"flow: {why}", path="flow")


def load(
    ctx: RequestContext, config: str, *, pt2e: str | None = None, needs_data: bool = True, torchao: bool = False
) -> Config:
    """The config at path `config`, checked; with `pt2e` (what needs the PT2E flow) an eager config is
    ConfigInvalid, and so is a torchao one unless the job takes it (`torchao`). needs_data=False: a job that
    builds the model alone (graph/export's fp32 stage)."""
    cfg = session.load(config, ctx, needs_data=needs_data)
    if pt2e is not None:
        require_pt2e(cfg, pt2e)
    elif cfg.get("flow") == "torchao" and not torchao:
        raise ConfigInvalid(
            f"flow: {ctx.method} does not take the torchao flow yet ({', '.join(TORCHAO_METHODS)} do); "
            "use flow: pt2e for it",
            path="flow",
        )
    return cfg


def model(
    cfg: Config, ctx: RequestContext, *, steps: int | None = None, convert: bool = False, model_id: str | None = None
) -> Opened:
    """The config's trained model (the session's, else trained now with `steps`), or with `model_id` (the
    "model" an earlier result gave) that model whatever the config says now; with `convert` its INT8 model (converted on
    first use)."""
    trained, reused = session.get(cfg, ctx, steps=steps, model=model_id)
    return Opened(cfg, trained, reused, session.convert(trained, ctx) if convert else None)


def load_model(
    ctx: RequestContext,
    config: str,
    *,
    steps: int | None = None,
    pt2e: str | None = None,
    convert: bool = False,
    model_id: str | None = None,
    torchao: bool = False,
) -> Opened:
    """`load` then `model`."""
    cfg = load(ctx, config, pt2e=pt2e, torchao=torchao)
    return model(cfg, ctx, steps=steps, convert=convert, model_id=model_id)
