"""ONNX Runtime (CPU EP) as the deployment runtime of a QDQ model: ORT's optimised graph saved to a
file, "precision as executed" (which ops of that graph run int8 kernels, which stayed fp32 and why),
and ORT's own quantize_static on the FP32 twin, for comparing Q/DQ placement.

Plain functions with JSON-serialisable results; build/ort (methods/build_ort.py) drives them.

Why read the optimised graph and not the QDQ file: ORT decides at session creation which
DequantizeLinear -> op -> QuantizeLinear groups become int8 kernels (QLinearConv, QGemm, ...); a group
it cannot match stays a float op between a DequantizeLinear and a QuantizeLinear, so only the graph
ORT runs shows what is int8. Its ops' element types are not stored in the file, so they are derived
here from the graph (initializers, zero points, the ops' type rules)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import onnx
    import onnxruntime as ort

    from qat_kernel.pipeline.model_io import Inputs

# Training inputs ORT's quantize_static (and build/ort's Q/DQ re-placement) calibrate on.
CALIBRATION_SAMPLES = 512

# Ops whose arithmetic runs on 8-bit data with a 32-bit accumulator (CPU EP kernels).
INT8_KERNELS = {
    "QLinearConv",
    "QLinearMatMul",
    "MatMulInteger",
    "ConvInteger",
    "QGemm",
    "QLinearAdd",
    "QLinearMul",
    "QLinearSigmoid",
    "QLinearLeakyRelu",
    "QLinearAveragePool",
    "QLinearGlobalAveragePool",
    "QLinearConcat",
    "QLinearSoftmax",
    "QLinearReduceMean",
    "QLinearWhere",
    "QLinearConvTranspose",
    "QAttention",
    "QEmbedLayerNormalization",
    "DynamicQuantizeMatMul",
    "MatMulIntegerToFloat",
    "DynamicQuantizeLSTM",
    "QuantizedMatMulNBits",
    "MatMulNBits",
}
CONVERSIONS = {"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "Cast"}
# Ops that move or select values without arithmetic: they run in whatever type their data has.
LAYOUT = {
    "Transpose",
    "Reshape",
    "Flatten",
    "Squeeze",
    "Unsqueeze",
    "Identity",
    "MaxPool",
    "NhwcMaxPool",
    "Concat",
    "Split",
    "Slice",
    "Gather",
    "Pad",
    "ReorderInput",
    "ReorderOutput",
    "DepthToSpace",
    "SpaceToDepth",
    "Expand",
    "Tile",
    "Resize",
    "Upsample",
}
SHAPE_OPS = {"Shape", "Size", "ConstantOfShape", "Range", "NonZero"}
# Float ops that have a quantized counterpart in ORT: their fp32 reason names the pattern.
ANCHORS = {
    "Conv": "QLinearConv",
    "ConvTranspose": "QLinearConvTranspose",
    "Gemm": "QGemm",
    "MatMul": "QLinearMatMul / MatMulIntegerToFloat",
    "Add": "QLinearAdd",
    "Mul": "QLinearMul",
    "AveragePool": "QLinearAveragePool",
    "GlobalAveragePool": "QLinearGlobalAveragePool",
    "Sigmoid": "QLinearSigmoid",
    "LeakyRelu": "QLinearLeakyRelu",
    "Softmax": "QLinearSoftmax",
    "Concat": "QLinearConcat",
}
COMPUTE_ANCHORS = {
    "Conv",
    "ConvTranspose",
    "Gemm",
    "MatMul",
    "FusedConv",
    "FusedGemm",
    "FusedMatMul",
    "QLinearConv",
    "QLinearConvTranspose",
    "QGemm",
    "QLinearMatMul",
    "MatMulInteger",
    "ConvInteger",
    "MatMulIntegerToFloat",
    "DynamicQuantizeMatMul",
}

# ORT's float fusions (conv + activation, ...) of the ops above.
FUSED_FLOAT = {"FusedConv": "Conv", "FusedGemm": "Gemm", "FusedMatMul": "MatMul"}

_INT8 = {"uint8", "int8"}
_TOKEN = re.compile(r"(_token_\d+)+$")


def source_node_name(name: str) -> str:
    """The export's node an optimised node comes from, by name: ORT names what it fuses <source>_token_<n>."""
    return _TOKEN.sub("", name)


def _dtype_name(elem_type: int) -> str:
    from onnx import helper

    try:
        return str(np.dtype(helper.tensor_dtype_to_np_dtype(elem_type)))
    except Exception:  # noqa: BLE001 - bfloat16/float8 have no numpy dtype
        return f"onnx:{elem_type}"


def infer_dtypes(model: onnx.ModelProto) -> dict[str, str | None]:
    """{tensor name: element type name} over the graph, by ORT's type rules for the ops it emits."""
    from onnx import numpy_helper

    g = model.graph
    types: dict[str, str | None] = {}
    for t in g.initializer:
        types[t.name] = _dtype_name(t.data_type)
    for v in list(g.input) + list(g.value_info) + list(g.output):
        if v.type.HasField("tensor_type") and v.type.tensor_type.elem_type:
            types.setdefault(v.name, _dtype_name(v.type.tensor_type.elem_type))
    for n in g.node:  # nodes are stored in topological order
        ins = [types.get(i) for i in n.input]
        attrs = {a.name: a for a in n.attribute}
        op = n.op_type
        if op == "Constant" and n.attribute:
            out = str(numpy_helper.to_array(n.attribute[0].t).dtype)
        elif op == "QuantizeLinear":
            if "output_dtype" in attrs and attrs["output_dtype"].i:
                out = _dtype_name(attrs["output_dtype"].i)
            else:
                out = ins[2] if len(ins) > 2 and ins[2] else "uint8"
        elif op == "DequantizeLinear":
            out = ins[1] or "float32"
        elif op == "DynamicQuantizeLinear":
            out = "uint8"
        elif op == "Cast":
            out = _dtype_name(attrs["to"].i)
        elif op in ("MatMulInteger", "ConvInteger"):
            out = "int32"
        elif op in ("MatMulIntegerToFloat", "DynamicQuantizeMatMul", "MatMulNBits"):
            out = "float32"
        elif op == "QGemm":
            # no y_scale: QGemm writes float
            out = ins[0] if len(n.input) > 7 and n.input[7] else "float32"
        elif op in SHAPE_OPS:
            out = "int64"
        elif op in INT8_KERNELS or op in LAYOUT:
            out = ins[0]
        else:
            out = next((t for t in ins if t and t.startswith("float")), ins[0] if ins else None)
        for o in n.output:
            if o:
                types[o] = out
    return types


def _precision(dtype: str | None) -> str:
    if dtype in _INT8:
        return "int8"
    if dtype == "float32":
        return "fp32"
    if dtype in ("float16", "bfloat16"):
        return "fp16" if dtype == "float16" else "bf16"
    return "other"


def _fp32_reason(
    node: onnx.NodeProto,
    producers: dict[str, onnx.NodeProto],
    consumers: dict[str, list[onnx.NodeProto]],
    graph_outputs: set[str],
    inits: set[str],
) -> str:
    """Why ORT left this float op unfused: what its inputs and outputs are connected to."""
    op = FUSED_FLOAT.get(node.op_type, node.op_type)

    def src(name: str) -> str:
        p = producers.get(name)
        if p is not None:
            return p.op_type
        return "an initializer" if name in inits else "a graph input"

    data_inputs = [i for i in node.input[:1] if i]
    from_dq = [src(i) == "DequantizeLinear" for i in data_inputs]
    outs = [c for o in node.output for c in consumers.get(o, [])]
    to_q = any(c.op_type == "QuantizeLinear" for c in outs)
    to_output = any(o in graph_outputs for o in node.output)
    where = "the graph output" if to_output else ", ".join(sorted({c.op_type for c in outs})) or "nothing"
    if op in ("Conv", "Gemm", "ConvTranspose", "MatMul"):
        weight = node.input[1] if len(node.input) > 1 else ""
        if not all(from_dq):
            return f"{op} input comes from {src(data_inputs[0])}, not a DequantizeLinear: float activations"
        if src(weight) != "DequantizeLinear":
            return f"{op} weight is a float {src(weight)}, not dequantized int8: not fused"
        bias = node.input[2] if len(node.input) > 2 and node.input[2] else None
        if not to_q and op == "MatMul":
            return (
                "MatMul between DequantizeLinear and a float consumer: ORT makes it MatMulIntegerToFloat "
                "only where its EP allows; here it stayed fp32"
            )
        if not to_q:
            detail = (
                (
                    " and its bias stays float (ORT quantizes a float bias to int32 only when the output "
                    "leads to a QuantizeLinear)"
                )
                if bias and src(bias) != "DequantizeLinear"
                else ""
            )
            return (
                f"{op} between DequantizeLinear and a float consumer ({where}), no QuantizeLinear on its "
                f"output{detail}: not fused into {ANCHORS[op]}; it dequantizes and runs fp32"
            )
        return (
            f"DequantizeLinear -> {op} -> QuantizeLinear not matched by ORT's QDQ fusion "
            "(operand types, axis or attributes it does not support)"
        )
    if data_inputs and not all(from_dq):
        return f"float input from {src(data_inputs[0])}: runs on float data"
    if op in ANCHORS:
        if not to_q:
            return (
                f"{op} between DequantizeLinear and a float consumer ({where}): not fused into "
                f"{ANCHORS[op]} (no QuantizeLinear on its output)"
            )
        return f"DequantizeLinear -> {op} -> QuantizeLinear not matched by ORT's QDQ fusion"
    return f"ORT's CPU EP has no int8 kernel for {op}: it runs on dequantized float data"


def precision_as_executed(model_path: str | Path, source_model_path: str | Path | None = None) -> dict[str, Any]:
    """Per node of ORT's optimised graph: precision (int8 | fp32 | conversion | other), role (compute |
    layout | conversion | shape), the fp32 reason, the source node it came from when its name says so
    (ORT names fused nodes <source>_token_<n>); and counts per precision."""
    import onnx

    model = onnx.load(str(model_path), load_external_data=False)
    g = model.graph
    types = infer_dtypes(model)
    producers = {o: n for n in g.node for o in n.output}
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for n in g.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    graph_outputs = {o.name for o in g.output}
    inits = {t.name for t in g.initializer}
    sources = set()
    if source_model_path is not None:
        sources = {n.name for n in onnx.load(str(source_model_path), load_external_data=False).graph.node}
    ops = []
    for i, n in enumerate(g.node):
        name = n.name or f"{n.op_type}_{i}"
        data = types.get(n.input[0]) if n.input else None
        row: dict[str, Any] = {"name": name, "opType": n.op_type}
        if n.domain and n.domain != "ai.onnx":
            row["domain"] = n.domain
        if n.op_type in INT8_KERNELS:
            row["precision"], row["role"] = "int8", "compute"
            row["dtypes"] = f"{data} -> {types.get(n.output[0])}"
        elif n.op_type in CONVERSIONS:
            row["precision"], row["role"] = "conversion", "conversion"
            row["dtypes"] = f"{data} -> {types.get(n.output[0])}"
        elif n.op_type in SHAPE_OPS or n.op_type == "Constant":
            row["precision"], row["role"] = "other", "shape"
        else:
            row["role"] = "layout" if n.op_type in LAYOUT else "compute"
            row["precision"] = _precision(data)
            row["dtypes"] = f"{data} -> {types.get(n.output[0]) if n.output else None}"
            if row["precision"] == "fp32":
                row["reason"] = _fp32_reason(n, producers, consumers, graph_outputs, inits)
        source = source_node_name(name)
        if source in sources:
            row["sourceNode"] = source
        ops.append(row)
    per: dict[str, int] = {}
    compute: dict[str, int] = {}
    anchors: dict[str, int] = {}
    for row in ops:
        per[row["precision"]] = per.get(row["precision"], 0) + 1
        if row["role"] == "compute":
            compute[row["precision"]] = compute.get(row["precision"], 0) + 1
        if row["opType"] in COMPUTE_ANCHORS:
            anchors[row["precision"]] = anchors.get(row["precision"], 0) + 1
    for d in (per, compute, anchors):
        d.setdefault("int8", 0)
        d.setdefault("fp32", 0)
    return {
        "ops": ops,
        "perPrecision": per,
        "computePerPrecision": compute,
        "convMatmulPerPrecision": anchors,
        "opTypes": _op_types(ops),
    }


def _op_types(ops: list[dict[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in ops:
        counts[row["opType"]] = counts.get(row["opType"], 0) + 1
    return dict(sorted(counts.items()))


def optimized_session(
    onnx_path: str | Path | bytes, optimized_path: str | Path, level: str = "all", threads: int | None = None
) -> ort.InferenceSession:
    """An InferenceSession on the CPU EP that also writes the graph it runs to `optimized_path`."""
    from qat_kernel.runtimes.ort.sessions import session

    return session(onnx_path, level, threads, optimized_path)


def quantize_static_twin(
    fp32_onnx: str | Path, out_path: str | Path, calibration: Sequence[Inputs | np.ndarray], per_channel: bool = True
) -> Path:
    """ORT's own PTQ of the FP32 ONNX (QDQ format, uint8 activations, int8 weights per channel,
    MinMax calibration on `calibration`, a list of input batches: the model's Inputs or single arrays)."""
    import onnx
    from onnxruntime.quantization import (
        CalibrationDataReader,
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    from qat_kernel.pipeline.model_io import as_inputs

    names = [i.name for i in onnx.load(str(fp32_onnx), load_external_data=False).graph.input]

    class Reader(CalibrationDataReader):
        def __init__(self):
            self._it = iter([as_inputs(b, names).feed(names) for b in calibration])

        # ORT annotates get_next -> dict, yet its __next__ stops on the None that ends the data
        def get_next(self) -> dict[str, Any] | None:  # pyright: ignore[reportIncompatibleMethodOverride] - ORT ends on None
            return next(self._it, None)

    out_path = Path(out_path)
    quantize_static(
        str(fp32_onnx),
        str(out_path),
        Reader(),
        quant_format=QuantFormat.QDQ,
        per_channel=per_channel,
        activation_type=QuantType.QUInt8,
        weight_type=QuantType.QInt8,
        calibrate_method=CalibrationMethod.MinMax,
    )
    return out_path


# Ops ORT inserts to move data between its blocked (NCHWc) layout and the model's own.
REORDERS = {"ReorderInput", "ReorderOutput"}


def executed_summary(model: str | Path | bytes, top: int = 5) -> dict[str, Any]:
    """What ORT's CPU EP runs for `model` (a path or serialized bytes), in brief, for comparing two builds of
    one model: nodes (each one kernel call per run), compute ops per precision, conversions (Quantize /
    DequantizeLinear, Cast), layout reorders, and the `top` op types that stayed fp32 among the compute ops
    with their count and the first reason given."""
    import tempfile
    from pathlib import Path

    from qat_kernel.runtimes.ort.sessions import session

    with tempfile.TemporaryDirectory() as tmp:
        optimized = Path(tmp) / "optimized.onnx"
        session(model, "all", None, optimized)
        executed = precision_as_executed(optimized)
    ops = executed["ops"]
    fp32: dict[str, dict[str, Any]] = {}
    for row in ops:
        if row["role"] == "compute" and row["precision"] == "fp32":
            entry = fp32.setdefault(
                row["opType"], {"opType": row["opType"], "count": 0, "reason": row.get("reason", "")}
            )
            entry["count"] += 1
    compute = executed["computePerPrecision"]
    return {
        "nodes": len(ops),
        "compute": {"int8": compute.get("int8", 0), "fp32": compute.get("fp32", 0)},
        "conversions": sum(1 for row in ops if row["role"] == "conversion"),
        "reorders": sum(1 for row in ops if row["opType"] in REORDERS),
        "fp32Ops": sorted(fp32.values(), key=lambda e: (-e["count"], e["opType"]))[:top],
    }
