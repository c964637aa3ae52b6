"""How many bytes of tensors a model computes with (the size reports compare FP32 with INT8)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from qat_kernel.pipeline import fused_groups

if TYPE_CHECKING:
    import torch


def _tensor_bytes(obj: Any, seen: set[tuple[int, int]]) -> int:
    import torch

    if isinstance(obj, torch.Tensor) and hasattr(obj, "__tensor_flatten__"):
        # a tensor subclass (torchao's quantized weights): the tensors it holds, not its logical float size
        names, _ = obj.__tensor_flatten__()  # pyright: ignore[reportAttributeAccessIssue] - a traceable tensor subclass
        return sum(_tensor_bytes(getattr(obj, name), seen) for name in names)
    if isinstance(obj, torch.Tensor):
        key = (
            (obj.untyped_storage().data_ptr(), obj.untyped_storage().nbytes()) if not obj.is_quantized else (id(obj), 0)
        )
        if key in seen:
            return 0
        seen.add(key)
        return obj.numel() * obj.element_size()
    if isinstance(obj, (tuple, list)):
        return sum(_tensor_bytes(o, seen) for o in obj)
    return 0


def model_bytes(model: torch.nn.Module) -> int:
    """Bytes of the tensors a model computes with: for an FX graph those its get_attr nodes read
    (a converted graph keeps the unused FP32 parameters as attributes), else its state_dict."""
    import torch.fx

    seen: set[tuple[int, int]] = set()
    if not isinstance(model, torch.fx.GraphModule):
        return sum(_tensor_bytes(v, seen) for v in model.state_dict().values())
    total = 0
    for node in model.graph.nodes:
        if node.op == "get_attr":
            total += _tensor_bytes(fused_groups.attr(model, node.target), seen)
    return total
