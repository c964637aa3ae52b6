"""fp16 layers: the ONNX nodes of layers the config keeps in `precision: fp16`, rewritten to compute in
float16 (before TVM's Relax import; ONNX Runtime's mixed-precision candidates too).

The PT2E flow leaves such a layer float, so the QDQ export has it as a plain Conv/Gemm/MatMul with a
float32 weight initializer and no DequantizeLinear on the weight. The dynamo exporter writes each
node's module nesting into metadata_props["pkg.torch.onnx.name_scopes"] (one full path per level,
the FX node name last), which names the layer a node belongs to. For every node of an fp16 layer:
float32 initializers it reads become float16 initializers, other float32 inputs get a Cast to
float16 (once per tensor; a tensor made by another fp16 node is used as it is), and its float output
gets a Cast back to float32 for the nodes outside the layer. The int8 layers around it keep their
Q/DQ, so the int8 fold still matches them.

TVM then widens the accumulators (runtimes/tvm/mixed.py).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import onnx

SCOPES_KEY = "pkg.torch.onnx.name_scopes"
FP16_SUFFIX = "__fp16"

# ONNX ops converted, with the input positions that carry float data (None: every input).
FLOAT_INPUTS: dict[str, tuple[int, ...] | None] = {
    "Conv": (0, 1, 2),
    "ConvTranspose": (0, 1, 2),
    "Gemm": (0, 1, 2),
    "MatMul": (0, 1),
    "Relu": (0,),
    "LeakyRelu": (0,),
    "Sigmoid": (0,),
    "Tanh": (0,),
    "HardSigmoid": (0,),
    "HardSwish": (0,),
    "Elu": (0,),
    "Erf": (0,),
    "Gelu": (0,),
    "Softmax": (0,),
    "Clip": (0, 1, 2),
    "Add": (0, 1),
    "Sub": (0, 1),
    "Mul": (0, 1),
    "Div": (0, 1),
    "MaxPool": (0,),
    "AveragePool": (0,),
    "GlobalAveragePool": (0,),
    "BatchNormalization": (0, 1, 2, 3, 4),
    "Reshape": (0,),
    "Flatten": (0,),
    "Transpose": (0,),
    "Squeeze": (0,),
    "Unsqueeze": (0,),
    "Identity": (0,),
    "Concat": None,
}
WEIGHT_OPS = {"Conv", "ConvTranspose", "Gemm", "MatMul"}
FLOAT32, FLOAT16 = 1, 10  # onnx.TensorProto.FLOAT, FLOAT16


def module_of(node: onnx.NodeProto) -> str | None:
    """The module path a node of the dynamo export belongs to ("" for the root module), or None when
    its metadata has no name scopes."""
    for prop in node.metadata_props:
        if prop.key == SCOPES_KEY:
            try:
                scopes = ast.literal_eval(prop.value)
            except (ValueError, SyntaxError):
                return None
            if not isinstance(scopes, (list, tuple)) or len(scopes) < 2:
                return None
            return str(scopes[-2])
    return None


def pattern_matcher(patterns: Iterable[str]) -> Callable[[str], str | None]:
    """A matcher from regular expressions, fullmatched against a module path or one of its parents
    (as config overrides are): returns the pattern that matched."""
    compiled = [(p, re.compile(p)) for p in patterns]

    def match(module: str) -> str | None:
        parts = module.split(".") if module else []
        candidates = [".".join(parts[:i]) for i in range(len(parts), 0, -1)]
        for text, rx in compiled:
            if any(rx.fullmatch(c) for c in candidates):
                return text
        return None

    return match


@dataclass
class Fp16Rewrite:
    model: onnx.ModelProto  # the rewritten model
    nodes: dict[str, str | None] = field(default_factory=dict)  # converted node name -> module path
    owner: dict[str, str] = field(default_factory=dict)  # inserted Cast node name -> the converted node it serves
    layers: list[dict[str, Any]] = field(default_factory=list)  # per matched layer: module, match, nodes, skipped
    notes: list[str] = field(default_factory=list)


def _node_name(node: onnx.NodeProto, index: int) -> str:
    return node.name or f"{node.op_type}_{index}"


def _float_types(model: onnx.ModelProto) -> dict[str, int]:
    """{tensor name: onnx elem type} from initializers, graph inputs/outputs and shape inference."""
    import onnx

    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - inference is a help, not a requirement
        inferred = model
    g = inferred.graph
    types = {t.name: t.data_type for t in g.initializer}
    for v in list(g.input) + list(g.value_info) + list(g.output):
        if v.type.HasField("tensor_type") and v.type.tensor_type.elem_type:
            types.setdefault(v.name, v.type.tensor_type.elem_type)
    return types


def convert_fp16_layers(model: onnx.ModelProto, match: Callable[[str], str | None]) -> Fp16Rewrite:
    """Rewrite the nodes whose module `match` names (see the module docstring); `model` is not changed.

    A node of a matched layer stays float32, with the reason in the layer's `skipped`, when its op is
    not one converted here, or when it is a Conv/Gemm/MatMul whose weight is dequantized from int8
    (the export quantized the layer after all)."""
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper

    out = onnx.ModelProto()
    out.CopyFrom(model)
    g = out.graph
    result = Fp16Rewrite(model=out)
    types = _float_types(model)
    producers = {o: n for n in g.node for o in n.output if o}
    inits = {t.name: t for t in g.initializer}
    graph_outputs = {o.name for o in g.output}

    layers: dict[str, dict[str, Any]] = {}
    chosen: list[int] = []
    any_scope = False
    for i, node in enumerate(g.node):
        module = module_of(node)
        if module is None:
            continue
        any_scope = True
        pattern = match(module) if module else None
        if pattern is None:
            continue
        name = _node_name(node, i)
        layer = layers.setdefault(module, {"module": module, "match": pattern, "nodes": [], "skipped": []})
        why = None
        if node.domain not in ("", "ai.onnx"):
            why = f"{node.op_type} is a {node.domain} op"
        elif node.op_type not in FLOAT_INPUTS:
            why = f"no float16 rewrite for {node.op_type}"
        elif node.op_type in WEIGHT_OPS and len(node.input) > 1:
            src = producers.get(node.input[1])
            if src is not None and src.op_type == "DequantizeLinear":
                why = (
                    "its weight is dequantized from int8 in the export (the layer was quantized): "
                    "re-export after changing the override"
                )
        if why is None and node.output and types.get(node.output[0], FLOAT32) != FLOAT32:
            why = "its output is not float32"
        if why is not None:
            layer["skipped"].append({"onnx_node": name, "op_type": node.op_type, "reason": why})
            continue
        layer["nodes"].append(name)
        chosen.append(i)
    result.layers = list(layers.values())
    if not any_scope:
        result.notes.append(
            "fp16 overrides not applied: the ONNX nodes carry no module scopes "
            f"({SCOPES_KEY}), so no node can be matched to a layer"
        )
        return result
    if not chosen:
        return result

    chosen_set = set(chosen)
    half = {}  # float32 tensor -> its float16 twin
    new_inits = []
    new_nodes = []
    emitted_casts = set()
    rewired_outputs = {}  # original output -> fp16 output of a converted node

    for i, node in enumerate(g.node):
        if i not in chosen_set:
            new_nodes.append(node)
            continue
        name = _node_name(node, i)
        result.nodes[name] = module_of(node)
        positions = FLOAT_INPUTS[node.op_type]
        for k, tensor in enumerate(list(node.input)):
            if not tensor or (positions is not None and k not in positions):
                continue
            if tensor in rewired_outputs:
                node.input[k] = rewired_outputs[tensor]
                continue
            if types.get(tensor, FLOAT32) != FLOAT32:
                continue
            if tensor not in half:
                twin = tensor + FP16_SUFFIX
                if tensor in inits:
                    arr = numpy_helper.to_array(inits[tensor]).astype(np.float16)
                    new_inits.append(numpy_helper.from_array(arr, twin))
                else:
                    cast_name = f"{name}{FP16_SUFFIX}_in{k}"
                    new_nodes.append(helper.make_node("Cast", [tensor], [twin], name=cast_name, to=FLOAT16))
                    result.owner[cast_name] = name
                    emitted_casts.add(twin)
                half[tensor] = twin
            node.input[k] = half[tensor]
        new_nodes.append(node)
        original = node.output[0]
        twin = original + FP16_SUFFIX
        node.output[0] = twin
        rewired_outputs[original] = twin
        cast_name = f"{name}{FP16_SUFFIX}_out"
        new_nodes.append(helper.make_node("Cast", [twin], [original], name=cast_name, to=FLOAT32))
        result.owner[cast_name] = name

    # Output casts nobody outside the fp16 region reads are dropped.
    readers = {t for n in new_nodes for t in n.input} | graph_outputs
    kept = []
    for n in new_nodes:
        if n.name in result.owner and n.name.endswith("_out") and n.output[0] not in readers:
            result.owner.pop(n.name)
            continue
        copy = onnx.NodeProto()
        copy.CopyFrom(n)
        kept.append(copy)
    del g.node[:]
    g.node.extend(kept)
    g.initializer.extend(new_inits)
    # Initializers only the converted nodes read are replaced by their float16 twins.
    used = {t for n in g.node for t in n.input} | graph_outputs
    keep_inits = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(keep_inits)
    # The float16 tensors are new: drop stale shape info for renamed outputs.
    stale = set(rewired_outputs.values())
    keep_vi = [v for v in g.value_info if v.name not in stale]
    del g.value_info[:]
    g.value_info.extend(keep_vi)
    return result
