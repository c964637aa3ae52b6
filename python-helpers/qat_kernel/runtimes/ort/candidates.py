"""Mixed-precision candidates as ONNX Runtime runs them: the config's QDQ export with some layers float.

From the all-INT8 QDQ export (every searchable layer quantized), a candidate's graph is made by
rewiring only the layers it keeps float:
  fp32  the layer's Conv/Gemm/MatMul reads its weight as a float32 initializer (the QAT model's float
        weight, BN folded, as its weight fake quantizer receives it; the dequantized int8 value where
        none is given) and a dequantized bias, and its data
        input straight from the tensor before the QuantizeLinear -> DequantizeLinear pair, that edge
        only (another reader of the same pair keeps it); Q/DQ nobody reads any more are removed;
  fp16  as fp32, then the layer's nodes compute in float16 (runtimes/onnx/fp16.convert_fp16_layers:
        float16 initializers, a Cast to float16 on the way in and back to float32 on the way out);
        ORT's CPU EP runs float16 Conv/Gemm.
With no layer INT8 the candidate is the export with every Q/DQ removed (the quantizers no layer owns
go too). Layers are found by the exporter's module scopes (fp16.module_of), the names overrides use.
Size is the bytes of the candidate's initializers (weights, biases, scales and zero points at their
types; the export's metadata and unused tensors not counted); latency is timed in ORT sessions from
runtimes/ort/sessions.py."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from qat_kernel.runtimes.onnx import fp16

if TYPE_CHECKING:
    import onnx

WEIGHT_OPS = {"Conv", "ConvTranspose", "Gemm", "MatMul"}


class CandidateError(Exception):
    """A candidate the export cannot be rewritten into (a layer without nodes in the export)."""


def layer_nodes(model: onnx.ModelProto) -> dict[str, list[int]]:
    """{module path: [indices of its Conv/Gemm/MatMul nodes]} of the export."""
    found: dict[str, list[int]] = {}
    for i, node in enumerate(model.graph.node):
        if node.op_type in WEIGHT_OPS:
            module = fp16.module_of(node)
            if module is not None:
                found.setdefault(module, []).append(i)
    return found


def _const(inits: dict[str, onnx.TensorProto], name: str) -> np.ndarray | None:
    from onnx import numpy_helper

    t = inits.get(name)
    return None if t is None else numpy_helper.to_array(t)


def _dequantized(dq: onnx.NodeProto, inits: dict[str, onnx.TensorProto]) -> np.ndarray | None:
    x = _const(inits, dq.input[0])
    if x is None:
        return None
    s = _const(inits, dq.input[1])
    if s is None:
        return None
    zp = _const(inits, dq.input[2]) if len(dq.input) > 2 and dq.input[2] else np.zeros((), x.dtype)
    if zp is None:
        return None
    axis = next((a.i for a in dq.attribute if a.name == "axis"), 1)
    shape = [1] * x.ndim
    if s.size > 1:
        shape[axis % max(x.ndim, 1)] = -1
    return ((x.astype(np.float32) - zp.astype(np.float32).reshape(shape)) * s.astype(np.float32).reshape(shape)).astype(
        np.float32
    )


def _prune(model: onnx.ModelProto) -> None:
    """Drop nodes nothing reads (back from the graph outputs) and initializers no node reads."""
    g = model.graph
    needed = {o.name for o in g.output}
    keep = []
    for node in reversed(list(g.node)):
        if any(o in needed for o in node.output if o):
            keep.append(node)
            needed.update(i for i in node.input if i)
    keep.reverse()
    if len(keep) != len(g.node):
        copies = []
        for n in keep:
            import onnx

            c = onnx.NodeProto()
            c.CopyFrom(n)
            copies.append(c)
        del g.node[:]
        g.node.extend(copies)
    used = {i for n in g.node for i in n.input}
    inits = [t for t in g.initializer if t.name in used]
    if len(inits) != len(g.initializer):
        kept = []
        for t in inits:
            import onnx

            c = onnx.TensorProto()
            c.CopyFrom(t)
            kept.append(c)
        del g.initializer[:]
        g.initializer.extend(kept)


def _float_weight(value: np.ndarray, floats: dict[str, np.ndarray], module: str) -> np.ndarray:
    """The layer's float weight (floats[module], BN folded) in the export's layout, else the dequantized one."""
    w = floats.get(module)
    if w is None:
        return value
    if w.shape == value.shape:
        return w.astype(np.float32)
    if w.ndim == 2 and w.T.shape == value.shape:  # Linear exported as MatMul reads W^T
        return np.ascontiguousarray(w.T).astype(np.float32)
    return value


def build(
    qdq: onnx.ModelProto,
    assignment: dict[str, str],
    nodes_of: dict[str, list[int]] | None = None,
    float_weights: dict[str, np.ndarray] | None = None,
) -> onnx.ModelProto:
    """The candidate ModelProto: `qdq` (the all-INT8 export, not changed) with each module of
    `assignment` ({module: int8 | fp16 | fp32}) as asked. `float_weights` ({module: array}): the float
    weights a float layer computes with (the QAT model's, BN folded, before its weight fake quantizer);
    a layer missing there, or of another shape, reads its dequantized int8 weight. Raises CandidateError
    for a float module with no Conv/Gemm/MatMul in the export."""
    import onnx
    from onnx import numpy_helper

    from qat_kernel.runtimes.onnx.fp32_twin import strip_qdq_model

    nodes_of = layer_nodes(qdq) if nodes_of is None else nodes_of
    floats = {m: p for m, p in assignment.items() if p != "int8"}
    missing = sorted(m for m in floats if m not in nodes_of)
    if missing:
        raise CandidateError(f"no Conv/Gemm/MatMul of {', '.join(missing)} in the QDQ export")
    float_weights = float_weights or {}
    model = onnx.ModelProto()
    model.CopyFrom(qdq)
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    producer = {o: n for n in g.node for o in n.output if o}
    made: dict[str, str] = {}
    for module in floats:
        for i in nodes_of[module]:
            node = g.node[i]
            for k, tensor in enumerate(list(node.input)):
                src = producer.get(tensor)
                if src is None or src.op_type != "DequantizeLinear":
                    continue
                if k == 0:
                    q = producer.get(src.input[0])
                    if q is not None and q.op_type == "QuantizeLinear":
                        node.input[k] = q.input[0]
                    continue
                if tensor not in made:
                    value = _dequantized(src, inits)
                    if value is None:
                        continue
                    if k == 1:
                        value = _float_weight(value, float_weights, module)
                    made[tensor] = f"{tensor}__float"
                    g.initializer.append(numpy_helper.from_array(value, made[tensor]))
                node.input[k] = made[tensor]
    if floats and len(floats) == len(assignment):
        # Every layer float: the Q/DQ no layer owns go too.
        model = strip_qdq_model(model)
    _prune(model)
    halves = {m for m, p in floats.items() if p == "fp16"}
    if halves:
        model = fp16.convert_fp16_layers(model, lambda m: m if m in halves else None).model
    return model


def weight_bytes(model: onnx.ModelProto) -> int:
    """Bytes of the initializers a model computes with, at their element types."""
    from onnx import helper

    total = 0
    for t in model.graph.initializer:
        count = 1
        for d in t.dims:
            count *= d
        total += count * np.dtype(helper.tensor_dtype_to_np_dtype(t.data_type)).itemsize
    return total
