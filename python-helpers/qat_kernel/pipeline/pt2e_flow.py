"""torchao PT2E QAT: torch.export -> prepare_qat_pt2e -> (train) -> convert_pt2e, X86 Inductor quantizer.

Batch size: torch.export specialises the batch dimension to the example's size (a graph exported at
batch 2 asserts `x.size()[0] == 2` on a batch of 64), so we export with a dynamic batch dim
(torch.export.Dim) from a batch-2 example. The dim survives prepare, convert and the ONNX export
(input dim_param "batch"); batch 1 also runs on such a graph."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from qat_kernel.pipeline.fused_groups import op_name
from qat_kernel.pipeline.model_io import as_args

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    import torch

    from qat_kernel.pipeline.fused_groups import FakeQuants, Group
    from qat_kernel.pipeline.qconfig import LayerQConfig, QConfigPlan
    from qat_kernel.rpc.context import RequestContext


def dynamic_batch(count: int = 1):
    """One dynamic batch dim shared by the model's `count` inputs (their dim 0)."""
    from torch.export import Dim

    batch = Dim("batch")
    return tuple({0: batch} for _ in range(count))


def export(model: torch.nn.Module, example: tuple[Any, ...]) -> torch.fx.GraphModule:
    """The model as an FX GraphModule (aten ops, nn_module_stack/stack_trace kept), batch dim dynamic. `example`:
    the model's inputs (pipeline.model_io.as_args: Inputs, a tuple of tensors or one tensor)."""
    import torch

    example = as_args(example)
    return torch.export.export(model, example, dynamic_shapes=dynamic_batch(len(example))).module()


def quantizer(qplan: QConfigPlan | None = None, qat: bool = True):
    """X86InductorQuantizer driven by the config's plan (qconfig.plan); None: torchao's QAT default.

    Per-layer configs do not go through set_module_name_qconfig: its filter needs *every* node of a
    fused pattern to come from the named module, and conv1/bn1/relu1 are siblings, so an override
    on `conv1` would annotate the bare conv and leave BN/ReLU to the global config. Here a layer's
    config applies to its whole fused group (the conv/linear plus the BN/ReLU nodes that follow it,
    fused_groups.fp32_groups), annotated before module-name, operator-type and global configs, which
    skip nodes already annotated."""
    from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (
        X86InductorQuantizer,
        get_default_x86_inductor_quantization_config,
    )

    from qat_kernel.pipeline import fused_groups, qconfig

    if qplan is None:
        return X86InductorQuantizer().set_global(get_default_x86_inductor_quantization_config(is_qat=qat))

    class PlanQuantizer(X86InductorQuantizer):
        def annotate(self, model: torch.fx.GraphModule) -> torch.fx.GraphModule:
            configs: dict[tuple[int, frozenset[str | None]], tuple[LayerQConfig, set[str | None]]] = {}
            for group in fused_groups.fp32_groups(model):
                layer = qplan.for_module(group.module)
                if layer is qplan.default:
                    continue  # the global config annotates it
                modules = {fused_groups.module_path(n) for n in group.nodes}
                key = (id(layer), frozenset(modules))
                configs.setdefault(key, (layer, modules))
            for layer, modules in configs.values():
                self._annotate_with_config(model, qconfig.pt2e_config(layer, qat), _all_from(modules))
            super().annotate(model)
            _drop_empty_annotations(model)
            return model

    default = qconfig.pt2e_config(qplan.default, qat)
    assert default is not None, "the global qconfig is INT8"
    return PlanQuantizer().set_global(default)


def _drop_empty_annotations(model: torch.fx.GraphModule) -> None:
    """Nodes of float layers carry an empty "do not quantize" annotation. torchao 0.18's QAT conv+BN
    rewrite (qat_utils._update_conv_input_qspec_map_after_replacement) indexes the annotation's
    input_qspec_map and fails on an empty one, so set_module_name_qconfig(conv, None) cannot keep a
    conv+BN float. Once annotation is done, an empty annotation means the same as none: drop it."""
    for node in model.graph.nodes:
        annotation = node.meta.get("quantization_annotation")
        if annotation is not None and not annotation.input_qspec_map and annotation.output_qspec is None:
            del node.meta["quantization_annotation"]


def _all_from(modules: set[str | None]) -> Callable[[Iterable[torch.fx.Node | None]], bool]:
    from qat_kernel.pipeline import fused_groups

    def check(nodes: Iterable[torch.fx.Node | None]) -> bool:
        return all(n is not None and fused_groups.module_path(n) in modules for n in nodes)

    return check


@contextlib.contextmanager
def _skip_absent_conv_patterns():
    """torchao's conv+BN fuse (prepare) and fold (convert) passes build their pattern graphs with a
    strict torch.export for each of conv1d, conv2d, conv_transpose1d, conv_transpose2d: 96 exports,
    ~14 s of convert_pt2e on 2 cores. Skip the conv kinds the graph does not contain; matching of the
    kinds it does contain is unchanged. If torchao renames these helpers, this does nothing."""
    try:
        from torchao.quantization.pt2e import qat_utils
    except ImportError:
        yield
        return
    saved = {}
    for name in ("_fuse_conv_bn_qat_helper", "_fold_conv_bn_qat_helper"):
        original = getattr(qat_utils, name, None)
        if original is None:
            continue

        def helper(
            m: Any, conv_fn: Callable[..., Any], *args: Any, _original: Callable[..., Any] = original, **kwargs: Any
        ):
            wanted = getattr(conv_fn, "__name__", None)
            if wanted and not any(op_name(n) == wanted for n in m.graph.nodes):
                return m
            return _original(m, conv_fn, *args, **kwargs)

        saved[name] = original
        setattr(qat_utils, name, helper)
    try:
        yield
    finally:
        for name, original in saved.items():
            setattr(qat_utils, name, original)


def prepare_qat(
    model: torch.nn.Module, example: tuple[Any, ...], qplan: QConfigPlan | None = None, notes: list[str] | None = None
):
    """Export `model` in train mode and insert fake-quant; returns the trainable graph. BatchNorm gamma
    that would make the conv+BN fold divide by zero is raised to a floor first (health.floor_folded_gamma,
    which says so in `notes`)."""
    from torchao.quantization.pt2e import move_exported_model_to_train  # pyright: ignore[reportPrivateUsage] - public in torchao's __all__
    from torchao.quantization.pt2e.quantize_pt2e import prepare_qat_pt2e

    from qat_kernel.pipeline import health

    model.train()
    example = as_args(example)
    graph = export(model, example)
    health.floor_folded_gamma(model, graph, example, notes if notes is not None else [])
    with _skip_absent_conv_patterns():
        prepared = prepare_qat_pt2e(graph, quantizer(qplan))
    # An exported graph refuses .train()/.eval(); torchao swaps BN/dropout behaviour instead.
    move_exported_model_to_train(prepared)
    return prepared


def ptq(
    model: torch.nn.Module, example: tuple[Any, ...], qplan: QConfigPlan, batches: Iterable[Any], ctx: RequestContext
) -> torch.fx.GraphModule:
    """Post-training quantization of the FP32 model with the same qconfig (observers, no fake
    quant): export in eval mode, prepare_pt2e, calibrate on `batches`, convert_pt2e. The baseline
    QAT has to beat."""
    import copy

    import torch
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    # A copy: the exported graph shares parameter storage with the model, which is the reference.
    prepared = prepare_pt2e(export(copy.deepcopy(model).eval(), example), quantizer(qplan, qat=False))
    with torch.no_grad():
        for x in batches:
            ctx.check_cancelled()
            prepared(*as_args(x))
    return convert_pt2e(prepared)


def convert(prepared: torch.fx.GraphModule):
    """INT8 graph (quantize/dequantize around float ops, BN folded into conv) ready for inference."""
    from torchao.quantization.pt2e import move_exported_model_to_eval  # pyright: ignore[reportPrivateUsage] - public in torchao's __all__
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e

    move_exported_model_to_eval(prepared)
    with _skip_absent_conv_patterns():
        return convert_pt2e(prepared)


class Pt2eQat:
    """A prepare_qat_pt2e graph and the switches QAT needs on it (an exported graph refuses
    .train()/.eval(): torchao rewrites its BN and dropout ops instead)."""

    flow = "pt2e"

    def __init__(
        self, model: torch.nn.Module, example: tuple[Any, ...], qplan: QConfigPlan, notes: list[str] | None = None
    ):
        self.model = prepare_qat(model, example, qplan, notes)
        self.bn_frozen = False
        self._layers: list[tuple[Group, FakeQuants]] | None = None

    def train_mode(self) -> None:
        from torchao.quantization.pt2e import move_exported_model_to_train  # pyright: ignore[reportPrivateUsage] - public in torchao's __all__

        move_exported_model_to_train(self.model)
        if self.bn_frozen:
            self._bn_eval()

    def eval_mode(self) -> None:
        from torchao.quantization.pt2e import move_exported_model_to_eval  # pyright: ignore[reportPrivateUsage] - public in torchao's __all__

        move_exported_model_to_eval(self.model)

    def freeze_bn(self) -> bool:
        """BN uses and keeps its running statistics from now on; False if torchao lacks the pass."""
        if not self._bn_eval():
            return False
        self.bn_frozen = True
        return True

    def _bn_eval(self) -> bool:
        try:
            from torchao.quantization.pt2e.export_utils import _replace_batchnorm  # pyright: ignore[reportPrivateUsage] - no public form
        except ImportError:
            return False
        _replace_batchnorm(self.model, train_to_eval=True)
        self.model.recompile()
        return True

    def fake_quants(self) -> dict[str, Any]:
        # remove_duplicate=False: a shared quantizer (SharedQuantizationSpec) is reachable by each name.
        return {
            name: m for name, m in self.model.named_modules(remove_duplicate=False) if hasattr(m, "fake_quant_enabled")
        }

    def layers(self) -> list[tuple[Group, FakeQuants]]:
        """[(Group, FakeQuants)] of the quantized layers (those with a weight fake quantizer)."""
        from qat_kernel.pipeline import fused_groups

        if self._layers is None:
            found: list[tuple[Group, FakeQuants]] = []
            for group in fused_groups.prepared_groups(self.model):
                fqs = fused_groups.layer_fake_quants(self.model, group)
                if fqs.weight:
                    found.append((group, fqs))
            self._layers = found
        return self._layers

    def convert(self):
        """INT8 graph of a copy: the QAT graph stays usable (QAT-float reference, sensitivity)."""
        import copy

        return convert(copy.deepcopy(self.model))
