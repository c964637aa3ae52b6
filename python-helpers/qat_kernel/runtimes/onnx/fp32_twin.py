"""The FP32 twin of a QDQ model: the same graph and weights with its quantization removed, the float
baseline every runtime's INT8 row is compared with (ONNX Runtime FP32, TVM FP32) and the all-float
mixed-precision candidate."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import numpy as np

if TYPE_CHECKING:
    import onnx
    from google.protobuf.message import Message

_Message = TypeVar("_Message", bound="Message")


def strip_qdq(onnx_path: str | Path, out_path: str | Path) -> Path:
    """The FP32 twin of a QDQ model file (strip_qdq_model), written to `out_path`."""
    import onnx

    model = strip_qdq_model(onnx.load(str(onnx_path)))
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(out_path))
    return out_path


def strip_qdq_model(source: onnx.ModelProto) -> onnx.ModelProto:
    """The FP32 twin of a QDQ ModelProto (`source` is not changed): each DequantizeLinear of a constant
    becomes a float initializer (the quantized weight's float value), each QuantizeLinear ->
    DequantizeLinear pair on an activation is bypassed. Same graph and weights, no quantization: the
    FP32 baseline."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.ModelProto()
    model.CopyFrom(source)
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    nodes = list(g.node)  # one wrapper per node: id() below stays valid
    producer = {o: n for n in nodes for o in n.output}
    rename: dict[str, str] = {}
    drop = set()
    new_inits = []

    def const(name: str) -> np.ndarray | None:
        t = inits.get(name)
        return None if t is None else numpy_helper.to_array(t)

    for n in nodes:
        if n.op_type != "DequantizeLinear":
            continue
        x = const(n.input[0])
        if x is not None:
            s = const(n.input[1])
            zp = const(n.input[2]) if len(n.input) > 2 and n.input[2] else np.zeros((), x.dtype)
            if s is not None and zp is not None:  # a constant dequantized by constants: its float value
                axis = next((a.i for a in n.attribute if a.name == "axis"), 1)
                shape = [1] * x.ndim
                if s.size > 1:
                    shape[axis] = -1
                w = (x.astype(np.float32) - zp.astype(np.float32).reshape(shape)) * s.astype(np.float32).reshape(shape)
                new_inits.append(numpy_helper.from_array(w.astype(np.float32), n.output[0]))
                drop.add(id(n))
            continue
        q = producer.get(n.input[0])
        if q is not None and q.op_type == "QuantizeLinear":
            rename[n.output[0]] = q.input[0]
            drop.add(id(n))
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for n in nodes:
        for name in n.input:
            consumers.setdefault(name, []).append(n)
    graph_outputs = {o.name for o in g.output}
    for n in nodes:
        if (
            n.op_type == "QuantizeLinear"
            and n.output[0] not in graph_outputs
            and all(id(c) in drop for c in consumers.get(n.output[0], []))
        ):
            drop.add(id(n))

    def resolve(name: str) -> str:
        while name in rename:
            name = rename[name]
        return name

    kept = []
    for n in nodes:
        if id(n) in drop:
            continue
        for i, name in enumerate(n.input):
            n.input[i] = resolve(name)
        kept.append(n)
    for o in g.output:
        if o.name in rename:
            kept.append(helper.make_node("Identity", [resolve(o.name)], [o.name]))
    used = {i for n in kept for i in n.input}

    def copy(msg: _Message) -> _Message:
        c = type(msg)()
        c.CopyFrom(msg)
        return c

    kept = [copy(n) for n in kept]
    keep_inits = [copy(t) for t in g.initializer if t.name in used] + [t for t in new_inits if t.name in used]
    del g.node[:]
    g.node.extend(kept)
    del g.initializer[:]
    g.initializer.extend(keep_inits)
    return model
