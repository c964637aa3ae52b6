"""A QDQ ONNX model's quantized layers, for any runtime that runs them one by one or taps their outputs (ONNX
Runtime: runtimes/ort/intermediates.py, TVM: runtimes/tvm/stage.py).

A layer is a Conv / ConvTranspose / Gemm / MatMul node (the anchor) whose weight comes through a
DequantizeLinear, followed by the single-consumer chain of ops a fused group absorbs (BatchNormalization,
Relu, Clip, an Add of a constant bias), up to its output QuantizeLinear. The module path comes from the
exporter's name scopes (runtimes.onnx.fp16.module_of); a module called several times gives its layers in
graph order.

A layer's tap is its output QuantizeLinear's integer tensor (dequantized with that node's own scale and zero
point), or, without output quantization (a last Gemm giving logits, a conv before a residual add), the chain's
last float output. A layer alone is the sub-model from the tensor its input quantization reads (`entry`) to that
output (`extract`); `side_by_side` puts every layer's sub-model in one graph, each with its own input and output."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from qat_kernel.runtimes.onnx.fp16 import module_of

if TYPE_CHECKING:
    import numpy as np
    import onnx
    import torch

ANCHORS = {"Conv", "ConvTranspose", "Gemm", "MatMul"}
# Ops a fused group absorbs after its anchor (fused_groups.FOLLOW in ONNX terms).
FOLLOW = {"BatchNormalization", "Relu", "Clip", "Add"}
QDQ = {"QuantizeLinear", "DequantizeLinear"}


@dataclass
class OnnxLayer:
    module: str
    anchor: str  # the anchor node's name
    entry: str  # the tensor the layer's input quantization reads (a graph input or an earlier layer's value)
    output: str  # the tapped tensor: the output QuantizeLinear's, else the chain's last float output
    quantized: bool  # `output` is integer (scale and zero point below) rather than float
    scale: float | None = None
    zero_point: int = 0
    input_scale: float | None = None  # the scale of the layer's input quantization (per tensor)
    nodes: list[str] = field(default_factory=list)  # node names from the input quantization to the output


class Graph:
    """Producer and consumer indexes and constant values of one model."""

    def __init__(self, model: onnx.ModelProto):
        from onnx import numpy_helper

        self.model = model
        self.nodes = list(model.graph.node)
        self.producer = {o: n for n in self.nodes for o in n.output}
        self.consumers: dict[str, list[onnx.NodeProto]] = {}
        for n in self.nodes:
            for i in n.input:
                self.consumers.setdefault(i, []).append(n)
        self.constants = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
        for n in self.nodes:  # Constant nodes the exporter left (scales, zero points)
            if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value":
                self.constants[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
        self.outputs = {o.name for o in model.graph.output}

    def only_consumer(self, tensor: str) -> onnx.NodeProto | None:
        users = self.consumers.get(tensor, [])
        return users[0] if len(users) == 1 and tensor not in self.outputs else None

    def scalar(self, tensor: str | None) -> Any:
        if not tensor or tensor not in self.constants:
            return None
        value = self.constants[tensor]
        return value.reshape(-1)[0].item() if value.size == 1 else None

    def quantized_input(self, node: onnx.NodeProto, index: int) -> bool:
        producer = self.producer.get(node.input[index]) if len(node.input) > index else None
        return producer is not None and producer.op_type == "DequantizeLinear"


def layers(model: onnx.ModelProto) -> dict[str, list[OnnxLayer]]:
    """module path -> its quantized layers in graph order (see the module docstring)."""
    g = Graph(model)
    found: dict[str, list[OnnxLayer]] = {}
    for node in g.nodes:
        if node.op_type not in ANCHORS or len(node.input) < 2 or not g.quantized_input(node, 1):
            continue
        module = module_of(node)
        layer = _layer(g, node, module) if module is not None else None
        if layer is not None:
            found.setdefault(module or "", []).append(layer)
    return found


def by_output(model: onnx.ModelProto) -> dict[str, OnnxLayer]:
    """The model's layers by their tapped tensor."""
    return {layer.output: layer for found in layers(model).values() for layer in found}


def _layer(g: Graph, anchor: onnx.NodeProto, module: str) -> OnnxLayer | None:
    # Input: back through the DequantizeLinear / QuantizeLinear pair to what the quantization reads.
    nodes: list[str] = []
    entry = anchor.input[0]
    input_scale = None
    while (producer := g.producer.get(entry)) is not None and producer.op_type in QDQ:
        nodes.insert(0, producer.name)
        if producer.op_type == "QuantizeLinear" and input_scale is None:
            input_scale = g.scalar(producer.input[1])
        entry = producer.input[0]
    nodes.append(anchor.name)
    tensor = anchor.output[0]
    while (nxt := g.only_consumer(tensor)) is not None and nxt.op_type in FOLLOW:
        if nxt.op_type == "Add" and not any(i in g.constants for i in nxt.input if i != tensor):
            break  # a residual add is the next layer's business, a bias add is this one's
        nodes.append(nxt.name)
        tensor = nxt.output[0]
    q = g.only_consumer(tensor)
    if q is None or q.op_type != "QuantizeLinear":
        return OnnxLayer(module, anchor.name, entry, tensor, quantized=False, nodes=nodes, input_scale=input_scale)
    scale = g.scalar(q.input[1])
    if scale is None:  # per-axis output quantization: not a layer output this module compares
        return None
    nodes.append(q.name)
    zero = g.scalar(q.input[2]) if len(q.input) > 2 else 0
    return OnnxLayer(module, anchor.name, entry, q.output[0], True, float(scale), int(zero or 0), input_scale, nodes)


def dequantize(layer: OnnxLayer, value: np.ndarray) -> torch.Tensor:
    """The tapped value as float (torch): dequantized with the layer's output scale and zero point."""
    import torch

    t = torch.from_numpy(value)
    if not layer.quantized:
        return t.float()
    return (t.to(torch.int32) - layer.zero_point).float() * float(layer.scale or 0.0)


def with_outputs(model: onnx.ModelProto, names: Iterable[str]) -> bytes:
    """The model with `names` added to its graph outputs (those not already there), serialized."""
    import onnx

    tapped = onnx.ModelProto()
    tapped.CopyFrom(model)
    have = {o.name for o in tapped.graph.output}
    for name in names:
        if name not in have:
            tapped.graph.output.append(onnx.ValueInfoProto(name=name))
            have.add(name)
    return tapped.SerializeToString()


def sub_graph(g: Graph, entry: str, output: str) -> list[onnx.NodeProto]:
    """The nodes computing `output` from `entry` (and constants), in graph order."""
    keep: list[onnx.NodeProto] = []
    seen: set[str] = set()
    stack = [output]
    while stack:
        tensor = stack.pop()
        if tensor == entry or tensor in seen:
            continue
        seen.add(tensor)
        node = g.producer.get(tensor)
        if node is None:
            continue
        if node not in keep:
            keep.append(node)
        stack.extend(i for i in node.input if i)
    order = {id(n): i for i, n in enumerate(g.nodes)}
    keep.sort(key=lambda n: order[id(n)])
    return keep


def extract(model: onnx.ModelProto, entry: str, output: str) -> bytes:
    """The sub-model computing `output` from `entry` (and constants), serialized."""
    import onnx
    from onnx import helper

    keep = sub_graph(Graph(model), entry, output)
    used = {i for n in keep for i in n.input}
    inits = [t for t in model.graph.initializer if t.name in used]
    graph = helper.make_graph(
        keep,
        "layer",
        [onnx.ValueInfoProto(name=entry, type=float_type())],
        [onnx.ValueInfoProto(name=output)],
        inits,
    )
    sub = helper.make_model(graph, opset_imports=list(model.opset_import), ir_version=model.ir_version)
    return sub.SerializeToString()


def float_type(shape: Sequence[int | str] | None = None) -> onnx.TypeProto:
    """A float32 tensor type, of `shape` where given (a str is a symbolic dim)."""
    import onnx

    t = onnx.TypeProto()
    t.tensor_type.elem_type = onnx.TensorProto.FLOAT
    if shape is not None:
        dims = t.tensor_type.shape.dim
        for d in shape:
            dim = dims.add()
            if isinstance(d, str):
                dim.dim_param = d
            else:
                dim.dim_value = d
    return t


def shapes(model: onnx.ModelProto) -> dict[str, list[int | str]]:
    """tensor name -> its shape (a str for a symbolic dim) as the model declares it or ONNX shape inference finds
    it; tensors of unknown rank are left out."""
    import onnx

    def read(values: Iterable[onnx.ValueInfoProto], into: dict[str, list[int | str]]) -> None:
        for v in values:
            t = v.type.tensor_type
            if t.HasField("shape"):
                into[v.name] = [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in t.shape.dim]

    found: dict[str, list[int | str]] = {}
    read(model.graph.input, found)
    read(model.graph.value_info, found)
    read(model.graph.output, found)
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - inference is a fallback for what the export did not declare
        return found
    more: dict[str, list[int | str]] = {}
    read(inferred.graph.value_info, more)
    return {**more, **found}


@dataclass
class SideBySide:
    """Every layer's sub-model in one graph: layer i reads input `inputs[i]` and gives output `outputs[i]`."""

    model: onnx.ModelProto
    layers: list[OnnxLayer]  # the layers in it, in input order
    inputs: list[str]
    outputs: list[str]
    left_out: dict[str, str]  # layer output -> why that layer is not in the graph


def side_by_side(model: onnx.ModelProto, wanted: Sequence[OnnxLayer]) -> SideBySide:
    """One model holding each wanted layer's sub-model (`extract`'s) side by side, its tensors and nodes renamed
    `l<i>_<name>` so that none is shared but the initializers; each input is float32 of the entry tensor's shape
    in `model` (the importers of some runtimes need shapes). A layer whose entry has no known shape, or whose
    sub-model reads another graph input, is left out with the reason."""
    import onnx
    from onnx import helper

    g = Graph(model)
    known = shapes(model)
    graph_inputs = {i.name for i in model.graph.input}
    inits = {t.name: t for t in model.graph.initializer}
    nodes: list[onnx.NodeProto] = []
    used: dict[str, onnx.TensorProto] = {}
    result = SideBySide(onnx.ModelProto(), [], [], [], {})
    inputs: list[onnx.ValueInfoProto] = []
    for layer in wanted:
        keep = sub_graph(g, layer.entry, layer.output)
        made = {o for n in keep for o in n.output} | {layer.entry}
        outside = {i for n in keep for i in n.input if i and i not in made and i not in inits}
        if layer.entry not in known:
            result.left_out[layer.output] = f"no shape is known for its input {layer.entry}"
            continue
        if outside & graph_inputs:
            result.left_out[layer.output] = f"it reads another graph input ({', '.join(sorted(outside))})"
            continue
        prefix = f"l{len(result.layers)}_"
        for n in keep:
            copy = onnx.NodeProto()
            copy.CopyFrom(n)
            if copy.name:
                copy.name = prefix + copy.name
            for k, name in enumerate(copy.input):
                if name in made:
                    copy.input[k] = prefix + name
                elif name in inits:
                    used[name] = inits[name]
            for k, name in enumerate(copy.output):
                copy.output[k] = prefix + name
            nodes.append(copy)
        inputs.append(onnx.ValueInfoProto(name=prefix + layer.entry, type=float_type(known[layer.entry])))
        result.layers.append(layer)
        result.inputs.append(prefix + layer.entry)
        result.outputs.append(prefix + layer.output)
    graph = helper.make_graph(
        nodes, "layers", inputs, [onnx.ValueInfoProto(name=o) for o in result.outputs], list(used.values())
    )
    result.model = helper.make_model(graph, opset_imports=list(model.opset_import), ir_version=model.ir_version)
    result.model.functions.extend(model.functions)
    return result
