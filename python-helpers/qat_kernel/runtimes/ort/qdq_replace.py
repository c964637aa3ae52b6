"""Q/DQ re-placement of a trained QDQ export, so that ONNX Runtime's QDQ fusion matches every layer.

The PT2E export places Q/DQ where PyTorch's x86 backend wants them: a conv feeding a residual Add
leaves its output float (the backend fuses conv + add + relu), and the last Linear writes float
logits with a float bias. ONNX Runtime only fuses DequantizeLinear -> op -> QuantizeLinear groups,
so those convs, the Add and the Gemm run in fp32 around extra layout transforms. This pass keeps the
export's trained scales and zero points and adds only what ORT needs:

  activation   a QuantizeLinear -> DequantizeLinear pair on a float tensor between quantized ops:
               the output of a quantized Conv that no QuantizeLinear follows (it then becomes a
               QLinearConv, and the Add after it a QLinearAdd), the output of an Add/Mul whose
               inputs are all dequantized, and the output of a layout op (Reshape, Flatten,
               Transpose, ...) of dequantized data that feeds a quantized op.
               Scale: the neighbouring DequantizeLinear's (layout ops do not change values, so no
               new error) or, for a tensor that has none, MinMax over a short calibration on real
               inputs.
  bias         a Gemm with dequantized input and weight, a float bias and a float output (the
               logits): its bias becomes int32 at scale input scale x weight scale behind a
               DequantizeLinear, so ORT runs a QGemm with float output; the logits stay float.
  op           a ReduceMean over every spatial axis between Q/DQ (what the exporter writes for
               AdaptiveAvgPool2d(1)) becomes the GlobalAveragePool it equals, which ORT fuses.

Layers the config keeps float (their weights are not dequantized int8) are left alone."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from qat_kernel import atomic

if TYPE_CHECKING:
    import onnx

    from qat_kernel.pipeline.model_io import Inputs

COMPUTE = {"Conv", "ConvTranspose"}
MATMUL = {"Gemm", "MatMul"}
ELEMENTWISE = {"Add", "Mul"}
LAYOUT = {"Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze"}
# A QuantizeLinear after these (with its zero point at the type's minimum) lets ORT drop them.
CLAMPS = {"Relu", "Clip"}


def _attr(node: onnx.NodeProto, name: str, default: Any = None) -> Any:
    for a in node.attribute:
        if a.name == name:
            from onnx import helper

            return helper.get_attribute_value(a)
    return default


class _Graph:
    def __init__(self, model: onnx.ModelProto):
        from onnx import numpy_helper

        self.g = model.graph
        self.nodes = list(self.g.node)
        self.inits = {t.name: numpy_helper.to_array(t) for t in self.g.initializer}
        for n in self.nodes:
            if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value":
                self.inits[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
        self.producer = {o: n for n in self.nodes for o in n.output}
        self.consumers: dict[str, list[onnx.NodeProto]] = {}
        for n in self.nodes:
            for i in n.input:
                self.consumers.setdefault(i, []).append(n)
        self.outputs = {o.name for o in self.g.output}

    def op(self, tensor: str) -> str | None:
        p = self.producer.get(tensor)
        return p.op_type if p is not None else None

    def is_dq(self, tensor: str) -> bool:
        return self.op(tensor) == "DequantizeLinear"

    def dq_params(self, tensor: str) -> tuple[float, np.ndarray] | None:
        """(scale, zero point) of the per-tensor DequantizeLinear producing `tensor`, else None."""
        p = self.producer.get(tensor)
        if p is None or p.op_type != "DequantizeLinear" or p.input[1] not in self.inits:
            return None
        s = self.inits[p.input[1]]
        zp = self.inits.get(p.input[2]) if len(p.input) > 2 and p.input[2] else np.zeros((), np.uint8)
        if s.size != 1 or zp is None or zp.size != 1:
            return None
        return float(s.reshape(())), zp.reshape(())

    def quantized_after(self, tensor: str) -> bool:
        """A QuantizeLinear consumes it, directly or through a single Relu/Clip."""
        for c in self.consumers.get(tensor, []):
            if c.op_type == "QuantizeLinear":
                return True
            if (
                c.op_type in CLAMPS
                and len(self.consumers.get(c.output[0], [])) >= 1
                and all(d.op_type == "QuantizeLinear" for d in self.consumers.get(c.output[0], []))
            ):
                return True
        return False


def _activation_dtype(graph: _Graph) -> np.dtype[Any]:
    """The element type most of the export's activation QuantizeLinear nodes use (uint8 by default)."""
    counts: dict[np.dtype[Any], int] = {}
    for n in graph.nodes:
        if n.op_type == "QuantizeLinear" and len(n.input) > 2 and n.input[2] in graph.inits:
            dt = graph.inits[n.input[2]].dtype
            counts[dt] = counts.get(dt, 0) + 1
    return max(counts, key=lambda dt: counts[dt]) if counts else np.dtype(np.uint8)


def plan(model: onnx.ModelProto) -> list[dict[str, Any]]:
    """What to change, in graph order: {"kind": "activation"|"bias"|"op", "tensor", "node" (the op it
    serves), "opType", "why", and for activations "source": "neighbour" (with scale, zeroPoint, dtype
    and the neighbouring DequantizeLinear) or "calibration" (scale set later from the measured range)}."""
    graph = _Graph(model)
    ranks = _ranks(model)
    todo: list[dict[str, Any]] = []
    will_dq: set[str] = set()  # float tensors that get a Q/DQ pair

    def dq_like(t: str) -> bool:
        return graph.is_dq(t) or t in will_dq

    def add_activation(
        tensor: str, node: onnx.NodeProto, why: str, params: tuple[float, np.ndarray] | None = None
    ) -> None:
        if tensor in will_dq or tensor in graph.outputs:
            return
        will_dq.add(tensor)
        item: dict[str, Any] = {
            "kind": "activation",
            "tensor": tensor,
            "node": node.name,
            "opType": node.op_type,
            "why": why,
        }
        if params is not None:
            neighbour = _dq_source(graph, tensor)
            assert neighbour is not None  # params are its DequantizeLinear's
            item.update(
                source="neighbour",
                scale=params[0],
                zeroPoint=int(params[1]),
                dtype=str(params[1].dtype),
                neighbour=graph.producer[neighbour].name,
            )
        else:
            item["source"] = "calibration"
        todo.append(item)

    for n in graph.nodes:
        op = n.op_type
        if op in COMPUTE or op in MATMUL:
            if len(n.input) < 2 or not graph.is_dq(n.input[1]):
                continue  # a float layer: its weight is not int8
            data = n.input[0]
            if not dq_like(data):
                src = _dq_source(graph, data)
                if src is None:
                    continue
                params = graph.dq_params(src)
                if params is None:
                    continue
                add_activation(
                    data,
                    graph.producer[data],
                    f"{graph.op(data)} of dequantized data feeds {op} {n.name}: requantized at the same scale",
                    params,
                )
            out = n.output[0]
            if graph.quantized_after(out):
                continue
            if op in COMPUTE:
                add_activation(out, n, f"{op} output had no QuantizeLinear: ORT cannot fuse it into QLinearConv")
            elif (
                op == "Gemm"
                and len(n.input) > 2
                and n.input[2] in graph.inits
                and graph.inits[n.input[2]].dtype.kind == "f"
            ):
                todo.append(
                    {
                        "kind": "bias",
                        "tensor": n.input[2],
                        "node": n.name,
                        "opType": op,
                        "why": "Gemm with a float output and a float bias: int32 bias lets ORT run QGemm "
                        "with float output",
                    }
                )
        elif (
            op == "ReduceMean"
            and dq_like(n.input[0])
            and graph.quantized_after(n.output[0])
            and _global_mean(graph, n, ranks)
        ):
            todo.append(
                {
                    "kind": "op",
                    "tensor": n.output[0],
                    "node": n.name,
                    "opType": op,
                    "why": "ReduceMean over every spatial axis between Q/DQ: the same mean as "
                    "GlobalAveragePool, which ORT runs as QLinearGlobalAveragePool",
                }
            )
        elif op in ELEMENTWISE:
            ins = [i for i in n.input[:2] if i]
            consts = [i for i in ins if i in graph.inits]
            live = [i for i in ins if i not in graph.inits]
            if consts or len(live) < 2 or not all(dq_like(i) for i in live):
                continue
            if not graph.quantized_after(n.output[0]):
                add_activation(
                    n.output[0],
                    n,
                    f"{op} of dequantized inputs had no QuantizeLinear on its output: "
                    f"ORT cannot fuse it into QLinear{op}",
                )
    return todo


def _ranks(model: onnx.ModelProto) -> dict[str, int]:
    import onnx

    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - without shapes the ReduceMean rewrite is skipped
        return {}
    ranks = {}
    for v in list(inferred.graph.input) + list(inferred.graph.value_info) + list(inferred.graph.output):
        t = v.type.tensor_type
        if t.HasField("shape"):
            ranks[v.name] = len(t.shape.dim)
    return ranks


def _global_mean(graph: _Graph, node: onnx.NodeProto, ranks: dict[str, int]) -> bool:
    """ReduceMean with keepdims over all axes after N and C, i.e. GlobalAveragePool."""
    rank = ranks.get(node.input[0])
    if rank is None or rank < 3 or _attr(node, "keepdims", 1) != 1:
        return False
    if len(node.input) > 1 and node.input[1]:
        axes = graph.inits.get(node.input[1])
        if axes is None:
            return False
        axes = [int(a) for a in np.asarray(axes).reshape(-1)]
    else:
        axes = list(_attr(node, "axes", []) or [])
    return sorted(a % rank for a in axes) == list(range(2, rank))


def _dq_source(graph: _Graph, tensor: str | None) -> str | None:
    """The DequantizeLinear output reached from `tensor` back through layout ops, else None."""
    seen = 0
    while tensor is not None and seen < 16:
        p = graph.producer.get(tensor)
        if p is None:
            return None
        if p.op_type == "DequantizeLinear":
            return tensor
        if p.op_type not in LAYOUT:
            return None
        tensor, seen = p.input[0], seen + 1
    return None


def _params_from_range(lo: float, hi: float, dtype: np.dtype[Any]) -> tuple[float, np.ndarray]:
    info = np.iinfo(dtype)
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    scale = (hi - lo) / (info.max - info.min)
    if scale <= 0 or not np.isfinite(scale):
        scale = 1.0
    zp = int(np.clip(np.round(info.min - lo / scale), info.min, info.max))
    return float(np.float32(scale)), np.array(zp, dtype=dtype)


def calibrate(
    model: onnx.ModelProto, tensors: list[str], batches: Sequence[Inputs | np.ndarray]
) -> dict[str, tuple[float, float]]:
    """{tensor: (min, max)} of the given float tensors over `batches` (float32 arrays), running the
    model unoptimised in ONNX Runtime with those tensors as extra outputs."""
    import onnx
    from onnx import TensorProto, helper

    from qat_kernel.runtimes.ort.sessions import feed, session

    if not tensors:
        return {}
    m = onnx.ModelProto()
    m.CopyFrom(model)
    present = {o.name for o in m.graph.output}
    for t in tensors:
        if t not in present:
            m.graph.output.append(helper.make_tensor_value_info(t, TensorProto.FLOAT, None))
    sess = session(m.SerializeToString(), level="disabled")
    ranges = {t: [np.inf, -np.inf] for t in tensors}
    for b in batches:
        outs = cast("list[np.ndarray]", sess.run(tensors, feed(sess, b)))  # float tensors, not sequences or maps
        for t, v in zip(tensors, outs):
            ranges[t][0] = min(ranges[t][0], float(v.min()))
            ranges[t][1] = max(ranges[t][1], float(v.max()))
    return {t: (lo, hi) for t, (lo, hi) in ranges.items()}


def apply(model: onnx.ModelProto, todo: list[dict[str, Any]]) -> onnx.ModelProto:
    """A copy of `model` with the planned Q/DQ pairs and int32 biases (every activation item must
    carry scale/zeroPoint/dtype by now)."""
    import onnx
    from onnx import helper, numpy_helper

    out = onnx.ModelProto()
    out.CopyFrom(model)
    graph = _Graph(out)
    g = out.graph
    taken = {n.name for n in graph.nodes} | set(graph.producer) | set(graph.inits)

    def fresh(base: str) -> str:
        name, i = base, 1
        while name in taken:
            name, i = f"{base}_{i}", i + 1
        taken.add(name)
        return name

    after: dict[str, list[onnx.NodeProto]] = {}  # tensor -> nodes to emit after its producer
    before: dict[str, list[onnx.NodeProto]] = {}  # node name -> nodes to emit before it
    rename: dict[str, str] = {}  # tensor -> its dequantized replacement
    new_inits = []
    planned = {i["tensor"]: i["scale"] for i in todo if i["kind"] == "activation"}
    for item in todo:
        t = item["tensor"]
        if item["kind"] == "activation":
            s = fresh(f"{t}_rq_scale")
            z = fresh(f"{t}_rq_zero_point")
            new_inits += [
                numpy_helper.from_array(np.array(item["scale"], np.float32), s),
                numpy_helper.from_array(np.array(item["zeroPoint"], np.dtype(item["dtype"])), z),
            ]
            q, dq = fresh(f"{t}_rq"), fresh(f"{t}_rdq")
            after[t] = [
                helper.make_node("QuantizeLinear", [t, s, z], [q], name=fresh(f"{item['node']}_requantize")),
                helper.make_node("DequantizeLinear", [q, s, z], [dq], name=fresh(f"{item['node']}_redequantize")),
            ]
            rename[t] = dq
            item["quantized"], item["dequantized"] = q, dq
        elif item["kind"] == "op":
            node = next(n for n in graph.nodes if n.name == item["node"])
            node.op_type = "GlobalAveragePool"
            del node.input[1:]
            node.ClearField("attribute")
        else:
            node = next(n for n in graph.nodes if n.name == item["node"])
            x_scale = planned.get(node.input[0]) or _scale_of(graph, node.input[0])
            w_dq = graph.producer[node.input[1]]
            w_scale = graph.inits[w_dq.input[1]].astype(np.float64).reshape(-1)
            bias = graph.inits[t].astype(np.float64).reshape(-1)
            scale = (x_scale * w_scale) if w_scale.size == bias.size else np.full(bias.size, x_scale * w_scale[0])
            scale = np.where(scale > 0, scale, 1.0).astype(np.float32)
            q = np.clip(np.round(bias / scale.astype(np.float64)), -(2**31), 2**31 - 1).astype(np.int32)
            qname, sname, zname = fresh(f"{t}_int32"), fresh(f"{t}_int32_scale"), fresh(f"{t}_int32_zero_point")
            dq = fresh(f"{t}_dq")
            new_inits += [
                numpy_helper.from_array(q, qname),
                numpy_helper.from_array(scale, sname),
                numpy_helper.from_array(np.zeros(bias.size, np.int32), zname),
            ]
            before.setdefault(node.name, []).append(
                helper.make_node(
                    "DequantizeLinear", [qname, sname, zname], [dq], name=fresh(f"{node.name}_bias_dequantize"), axis=0
                )
            )
            node.input[2] = dq
            item["scale"] = float(scale.max()) if scale.size else 0.0
            item["maxRoundingError"] = float(np.abs(q * scale.astype(np.float64) - bias).max()) if bias.size else 0.0
    nodes = []
    for n in graph.nodes:  # the new Q/DQ nodes are not among these: only the old consumers are renamed
        nodes += before.get(n.name, [])
        for k, i in enumerate(n.input):
            if i in rename:
                n.input[k] = rename[i]
        nodes.append(n)
        for o in n.output:
            nodes += after.get(o, [])
    g.ClearField("node")
    g.node.extend(nodes)
    g.initializer.extend(new_inits)
    return out


def _scale_of(graph: _Graph, tensor: str) -> float:
    src = _dq_source(graph, tensor) or tensor
    p = graph.producer[src]
    return float(graph.inits[p.input[1]].reshape(-1)[0])


def replace(
    src: str | Path, dst: str | Path, calibration: Sequence[Inputs | np.ndarray] | None = None
) -> dict[str, Any]:
    """Write the re-placed model of `src` to `dst` atomically; returns {"onnx", "inserted": [...],
    "calibrationSamples", "activationDtype"}."""
    import onnx

    model = onnx.load(str(src))
    todo = plan(model)
    dtype = _activation_dtype(_Graph(model))
    need = [i["tensor"] for i in todo if i["kind"] == "activation" and i["source"] == "calibration"]
    if need and not calibration:
        raise ValueError("calibration inputs are needed for tensors without a neighbouring Q/DQ: " + ", ".join(need))
    ranges = calibrate(model, need, calibration or [])
    for item in todo:
        if item["kind"] == "activation" and item["source"] == "calibration":
            lo, hi = ranges[item["tensor"]]
            scale, zp = _params_from_range(lo, hi, dtype)
            item.update(scale=scale, zeroPoint=int(zp), dtype=str(zp.dtype), range=[lo, hi])
    out = apply(model, todo)
    onnx.checker.check_model(out)
    with atomic.replacing(dst) as tmp:
        onnx.save(out, str(tmp))
    samples = int(sum(len(b) for b in calibration)) if need and calibration else 0
    for item in todo:
        item.pop("quantized", None)
        item.pop("dequantized", None)
    return {"onnx": str(dst), "inserted": todo, "calibrationSamples": samples, "activationDtype": str(np.dtype(dtype))}
