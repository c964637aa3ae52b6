"""A model's graph as the graph view's JSON (protocol ModelGraph, *.qatgraph.json), at one stage: fp32, prepared
(fake quantizers) or converted (INT8: quantize/dequantize around integer layers).
Nodes carry the module path from `nn_module_stack`, the user's source line from `stack_trace`, the
output shape/dtype, Q/DQ parameters and the precision a compute node runs in; `modules` lists the
model's named modules with the line that assigns each one."""

from __future__ import annotations

import inspect
from pathlib import Path
from types import FunctionType
from typing import TYPE_CHECKING, Any

from qat_kernel.pipeline import fused_groups

if TYPE_CHECKING:
    from types import ModuleType

    import torch
    import torch.fx
    from torch.fx.node import Argument

    from qat_kernel.pipeline.config import Config
    from qat_kernel.userpaths import SourceLocation

STAGES = ("fp32", "prepared", "converted")
_QUANT = ("quantize_per_tensor", "quantize_per_channel")
_DEQUANT = ("dequantize_per_tensor", "dequantize_per_channel")


def default_path(cfg: Config, stage: str) -> Path:
    """out/<config name>.<stage>.qatgraph.json; ONNX Runtime's graph (stage ort) is an .onnx file."""
    suffix = "onnx" if stage == "ort" else "qatgraph.json"
    return cfg.resolve(f"out/{cfg.path.name.split('.')[0]}.{stage}.{suffix}")


def model_graph(gm: torch.fx.GraphModule, model: torch.nn.Module, cfg: Config, stage: str) -> dict[str, Any]:
    from qat_kernel import userpaths

    folder = str(cfg.folder)
    nodes: list[dict[str, Any]] = []
    tensors: dict[str, dict[str, Any]] = {}
    precision: dict[torch.fx.Node, str] = {}
    for node in gm.graph.nodes:
        if node.op == "call_module" and str(node.target).startswith("_guards"):
            continue  # torch.export's shape-guard call, not part of the model
        if node.op == "get_attr":
            value = fused_groups.attr(gm, node.target)
            if hasattr(value, "shape"):
                tensors[node.name] = _tensor_info(value)
            continue
        val = node.meta.get("val")
        if hasattr(val, "shape") and hasattr(val, "dtype"):
            tensors[node.name] = _tensor_info(val)
        entry: dict[str, Any] = {
            "id": node.name,
            "name": node.name,
            "op": _op_name(gm, node),
            "kind": "input" if node.op == "placeholder" else "output" if node.op == "output" else "op",
            "inputs": [a.name for a in node.all_input_nodes],
            "outputs": [] if node.op == "output" else [node.name],
        }
        scopes = _scopes(node) if node.op not in ("placeholder", "output") else []
        if not scopes and node.op == "call_module":
            parts = str(node.target).split(".")
            scopes = [".".join(parts[: i + 1]) for i in range(len(parts))]
        if scopes:
            entry["scopes"] = scopes
            entry["module"] = scopes[-1]
        source = userpaths.stack_trace_location(node.meta.get("stack_trace"), folder)
        if source:
            entry["source"] = source
        attributes = _attributes(node)
        if attributes:
            entry["attributes"] = attributes
        qparams = _qparams(gm, node)
        if qparams:
            entry["qparams"] = qparams
        elif node.op in ("call_function", "call_module", "call_method"):
            precision[node] = entry["precision"] = _precision(gm, node, stage, precision)
        nodes.append(entry)
    return runtime_graph({"nodes": nodes, "tensors": tensors}, model, cfg, stage)


def runtime_graph(kernels: dict[str, Any], model: torch.nn.Module, cfg: Config, stage: str) -> dict[str, Any]:
    """A graph file of `stage`: `kernels`' nodes and tensors (model_graph's, or what a runtime runs, e.g.
    runtimes/tvm/kernel_graph.py's) with the model's name, modules and config."""
    return {
        "format": "qat-studio.graph/1",
        "name": type(model).__name__,
        "config": str(cfg.path),
        "stage": stage,
        "flow": cfg.get("flow", "pt2e"),
        "nodes": kernels["nodes"],
        "tensors": kernels["tensors"],
        "modules": modules_of(model, str(cfg.folder)),
    }


def _tensor_info(t: torch.Tensor) -> dict[str, Any]:
    dims = []
    for d in t.shape:
        try:
            dims.append(int(d))
        except (TypeError, ValueError):  # a symbolic (dynamic) dimension
            dims.append(-1)
    return {"dtype": str(t.dtype).replace("torch.", ""), "dims": dims}


def _op_name(gm: torch.fx.GraphModule, node: torch.fx.Node) -> str:
    if node.op == "call_module":
        return type(fused_groups.attr(gm, str(node.target))).__name__
    if node.op == "call_function":
        name = str(node.target)
        return name if "." in name else getattr(node.target, "__name__", name)
    return str(node.target) if node.op == "call_method" else node.op


def _scopes(node: torch.fx.Node) -> list[str]:
    stack = node.meta.get("nn_module_stack") or {}
    paths = []
    for value in stack.values():
        path = value[0] if isinstance(value, (tuple, list)) else str(value)
        path = _clean_path(path)
        if path and path not in paths:
            paths.append(path)
    return paths


def _clean_path(path: str) -> str:
    # torch.export names nested modules like L['self'].layer1[0].conv1 in some versions
    return path.replace("L['self'].", "").replace("L['self']", "").replace("[", ".").replace("]", "").strip(".")


def _attributes(node: torch.fx.Node) -> dict[str, str]:
    import torch.fx

    out: dict[str, str] = {}
    if node.op != "call_function":
        return out
    for i, arg in enumerate(node.args):
        if not isinstance(arg, torch.fx.Node) and not _has_node(arg):
            out[f"arg{i}"] = _short(arg)
    for key, value in node.kwargs.items():
        if not isinstance(value, torch.fx.Node) and not _has_node(value):
            out[key] = _short(value)
    return out


def _has_node(value: Argument) -> bool:
    import torch.fx

    if isinstance(value, (list, tuple)):
        return any(isinstance(v, torch.fx.Node) or _has_node(v) for v in value)
    return False


def _short(value: Argument) -> str:
    text = str(value)
    return text if len(text) <= 200 else text[:197] + "..."


def _kind(node: torch.fx.Node) -> str | None:
    name = str(node.target) if node.op == "call_function" else ""
    if any(q in name for q in _DEQUANT):
        return "dequantize"
    if any(q in name for q in _QUANT):
        return "quantize"
    return None


def _number(gm: torch.fx.GraphModule, value: Argument) -> Any:
    """A Q/DQ argument as Python numbers: a get_attr node's tensor or a tensor as (a list of) numbers."""
    import torch.fx

    if isinstance(value, torch.fx.Node) and value.op == "get_attr":
        value = fused_groups.attr(gm, str(value.target))
    tolist = getattr(value, "tolist", None)
    return tolist() if tolist is not None else value


def _qparams(gm: torch.fx.GraphModule, node: torch.fx.Node) -> dict[str, Any] | None:
    kind = _kind(node)
    if kind is None:
        return None
    name = str(node.target)
    args = list(node.args)
    per_channel = "per_channel" in name
    try:
        if per_channel:  # (input, scales, zero_points, axis, quant_min, quant_max, dtype)
            scale, zero_point, axis, qmin, qmax, dtype = (_number(gm, a) for a in args[1:7])
        else:  # (input, scale, zero_point, quant_min, quant_max, dtype)
            scale, zero_point, qmin, qmax, dtype = (_number(gm, a) for a in args[1:6])
            axis = None
    except ValueError:
        return None
    if not isinstance(scale, (int, float, list)) or not isinstance(zero_point, (int, float, list)):
        return None  # computed at run time (dynamic quantization)
    out: dict[str, Any] = {
        "dtype": str(dtype).replace("torch.", ""),
        "scale": _floats(scale),
        "zero_point": _ints(zero_point),
    }
    if axis is not None:
        out["axis"] = int(axis)
    if isinstance(qmin, int) and isinstance(qmax, int):
        out["quant_min"], out["quant_max"] = qmin, qmax
    return out


def _floats(v: float | list[float]) -> float | list[float]:
    return [float(x) for x in v] if isinstance(v, list) else float(v)


def _ints(v: float | list[float]) -> int | list[int]:
    return [int(x) for x in v] if isinstance(v, list) else int(v)


def _precision(gm: torch.fx.GraphModule, node: torch.fx.Node, stage: str, known: dict[torch.fx.Node, str]) -> str:
    """int8 when the node reads a dequantized (converted) or fake-quantized (prepared) value, or continues
    an int8 node straight into a quantize (the ReLU a backend fuses into its conv)."""
    if stage == "fp32":
        return "fp32"
    if node.op == "call_module":  # eager: the module class says it
        m = gm.get_submodule(str(node.target))
        cls = type(m).__module__
        if ".quantized" in cls or (stage == "prepared" and hasattr(m, "weight_fake_quant")):
            return "int8"
    users = list(node.users)
    if (
        users
        and all(_kind(u) == "quantize" for u in users)
        and any(known.get(a) == "int8" for a in node.all_input_nodes)
    ):
        return "int8"
    for arg in node.all_input_nodes:
        if _kind(arg) == "dequantize":
            return "int8"
        if stage == "prepared" and (
            arg.op == "call_module" and "activation_post_process" in str(arg.target) or "fake_quant" in str(arg.target)
        ):
            return "int8"
    return "fp32"


def modules_of(model: torch.nn.Module, folder: str) -> list[dict[str, Any]]:
    """named_modules() with the class name and the line in user code that assigns each module."""
    from qat_kernel import userpaths

    rows = []
    owners = dict(model.named_modules())
    for path, module in owners.items():
        if not path:
            continue
        row: dict[str, Any] = {"path": path, "type": type(module).__name__}
        width = getattr(module, "in_features", None)  # what a Linear's weight groups run along (group sizes)
        if isinstance(width, int):
            row["inFeatures"] = width
        parent_path, _, attr = path.rpartition(".")
        source = _assignment_line(type(owners.get(parent_path, model)), attr, folder, userpaths)
        if source:
            row["source"] = source
        rows.append(row)
    return rows


_SOURCE_CACHE: dict[tuple[type, str], SourceLocation | None] = {}


def _assignment_line(cls: type, attr: str, folder: str, userpaths: ModuleType) -> SourceLocation | None:
    """Where `self.<attr> = ...` is written in the class (or a base class) defined in the user's files."""
    for klass in inspect.getmro(cls):
        key = (klass, attr)
        if key not in _SOURCE_CACHE:
            _SOURCE_CACHE[key] = _find_assignment(klass, attr, folder, userpaths)
        if _SOURCE_CACHE[key]:
            return _SOURCE_CACHE[key]
    return None


def _find_assignment(klass: type, attr: str, folder: str, userpaths: ModuleType) -> SourceLocation | None:
    """The first `self.<attr> = ...` in the methods written in the class's body, in source order. Read from the
    methods' own code: a class's file is looked up through sys.modules, which no longer holds a user module that a
    later request re-imported (a cached model outlives it), and TVM's patched inspect.getfile raises KeyError there."""
    import re

    pattern = re.compile(rf"\bself\.{re.escape(attr)}\s*(?::[^=]*)?=(?!=)")
    for method in _own_methods(klass):
        try:
            file = inspect.getsourcefile(method)
            lines, start = inspect.getsourcelines(method)
        except (OSError, TypeError):
            continue
        if not file or not userpaths.is_user_file(file, folder):
            continue
        for offset, line in enumerate(lines):
            if pattern.search(line):
                return {"file": file, "line": start + offset}
    return None


def _own_methods(klass: type) -> list[FunctionType]:
    """The functions defined in the class's body (not assigned from elsewhere), in source order."""
    own = [
        f
        for f in (getattr(m, "__func__", m) for m in vars(klass).values())
        if isinstance(f, FunctionType) and f.__qualname__.startswith(f"{klass.__qualname__}.")
    ]
    return sorted(own, key=lambda f: f.__code__.co_firstlineno)
