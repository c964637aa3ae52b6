"""C text for the portable runner: <stem>_qparams.h (the layers, the tensors each reads and writes, their
scales and zero points, int8 weights, float and int32 biases, lookup tables, constants, where each
tensor lives in one static arena) and <stem>_runner.c (runner.c with the stem filled in)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, SupportsFloat, SupportsInt

import numpy as np
import numpy.typing as npt

from qat_kernel.runtimes.c.layers import (
    FUNCTIONS,
    INPUT,
    Layer,
    Network,
    QParams,
    Shape,
    Tensor,
    UnsupportedForC,
    num_elements,
    row_major_strides,
)

KINDS = {
    "conv2d": 1,
    "linear": 2,
    "maxpool2d": 3,
    "view": 4,
    "binary": 5,
    "avgpool2d": 6,
    "reduce": 7,
    "concat": 8,
    "unary": 9,
    "adaptiveavgpool2d": 10,
    "layernorm": 11,
    "softmax": 12,
    "matmul": 13,
    "batchnorm": 14,
    "attention": 15,
    "upsample": 16,
}
# The report's kind -> the runner's.
RUNNER_KIND = {
    "conv2d": "conv2d",
    "linear": "linear",
    "maxpool2d": "maxpool2d",
    "avgpool2d": "avgpool2d",
    "adaptiveavgpool2d": "adaptiveavgpool2d",
    "globalavgpool": "reduce",
    "mean": "reduce",
    "sum": "reduce",
    "amax": "reduce",
    "permute": "view",
    "slice": "view",
    "expand": "view",
    "add": "binary",
    "sub": "binary",
    "mul": "binary",
    "div": "binary",
    "concat": "concat",
    "elementwise": "unary",
    "quantize": "unary",
    "lut": "unary",
    "layernorm": "layernorm",
    "softmax": "softmax",
    "matmul": "matmul",
    "batchnorm": "batchnorm",
    "attention": "attention",
    "upsample": "upsample",
}
BINARY_OPS = {"add": 0, "sub": 1, "mul": 2, "div": 3}
REDUCE_OPS = {"mean": 0, "sum": 1, "amax": 2}
TYPES = {"q": "QAT_Q", "f": "QAT_F", "c": "QAT_C"}
RUNNER_TEMPLATE = Path(__file__).with_name("runner.c")
FLAGS = ["-std=c99", "-O2", "-ffp-contract=off", "-Wall", "-Wextra"]
FLT_MAX = "3.402823466e+38f"
NUM_PARAMS = 12


def c_stem(stem: str) -> str:
    """A C identifier-safe file stem (digits.qat.yaml -> digits)."""
    s = re.sub(r"[^A-Za-z0-9_]", "_", stem)
    return s if s and not s[0].isdigit() else "m_" + s


def _f(v: SupportsFloat) -> str:
    """float32 literal that reads back to the same float32 (10 significant digits)."""
    v = float(np.float32(v))
    if np.isinf(v):
        return FLT_MAX if v > 0 else "-" + FLT_MAX
    return f"{v:.9e}f"


def _array(ctype: str, name: str, values: npt.ArrayLike, fmt: Callable[[Any], str], per_line: int = 16) -> str:
    values = list(np.asarray(values).reshape(-1))
    lines = [", ".join(fmt(v) for v in values[i : i + per_line]) for i in range(0, len(values), per_line)]
    return f"static const {ctype} {name}[{max(1, len(values))}] = {{\n    " + ",\n    ".join(lines or ["0"]) + "\n};\n"


def _ident(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def _int(v: SupportsInt) -> str:
    return str(int(v))


def arena(input_shape: Shape, layers: Network) -> tuple[dict[str, int], int]:
    """Offsets (4-byte cells) of every arena buffer, by buffer name, and the arena's size: a buffer
    lives from the layer that writes it to the last layer that reads it (the network output to the
    end), and two buffers share space only when their lives do not overlap (first fit, largest first).
    Each tensor is at its buffer's offset (an alias shares its source's buffer)."""
    tensors = layers.tensors
    size = {INPUT: num_elements(tensors[INPUT].shape)}
    start, end = {INPUT: -1}, {INPUT: -1}
    for i, layer in enumerate(layers):
        for name, _q, _s in layer.inputs:
            t = tensors[name]
            if t.kind != "c":
                end[t.buffer] = i
        out = tensors[layer.output_name]
        size[out.buffer] = num_elements(out.shape)
        start[out.buffer] = i
        end.setdefault(out.buffer, i)
    end[tensors[layers.output].buffer] = len(layers)
    placed: list[tuple[int, int, int, int]] = []  # (offset, size, start, end)
    offsets: dict[str, int] = {}
    for name in sorted(size, key=lambda t: (-size[t], start[t])):
        overlapping = sorted((o, s) for o, s, a, b in placed if a <= end[name] and start[name] <= b)
        offset = 0
        for o, s in overlapping:
            if offset + size[name] <= o:
                break
            offset = max(offset, o + s)
        offsets[name] = offset
        placed.append((offset, size[name], start[name], end[name]))
    offsets = {name: offsets[t.buffer] for name, t in tensors.items() if t.buffer in offsets}
    return offsets, max(o + s for o, s, _a, _b in placed)


def _tensor_init(
    t: Tensor,
    offset: int,
    rank: int,
    shape: Sequence[int],
    stride: Sequence[int],
    base: int = 0,
    kstride: int = 0,
    const_name: str = "0",
) -> str:
    def pad(v: Sequence[int]) -> str:
        v = [int(x) for x in v]
        return "{" + ", ".join(str(x) for x in v + [0] * (rank - len(v))) + "}"

    q = t.q if t.kind == "q" else None
    return (
        f"{{{TYPES[t.kind]}, {offset if t.kind != 'c' else 0}, {const_name if t.kind == 'c' else '0'}, "
        f"{_f(q.scale) if q else _f(1.0)}, {q.zero_point if q else 0}, {q.qmin if q else 0}, "
        f"{len(shape)}, {pad(shape)}, {pad(stride)}, {int(base)}, {int(kstride)}}}"
    )


def _layer_inputs(
    layer: Layer, tensors: dict[str, Tensor], shape: Shape
) -> list[tuple[Tensor, Sequence[int], Sequence[int], int, int]]:
    """(tensor, shape, stride, base, kstride) per input, as the layer's kernel walks it (runner.c)."""
    kind = RUNNER_KIND[layer.kind]
    a = layer.attrs
    rows = []
    ins = [tensors[name] for name, _q, _s in layer.inputs]
    if kind == "view":
        rows.append((ins[0], ins[0].shape, a["strides"], a["base"], 0))
    elif kind == "binary":
        for t in ins:
            rows.append((t, t.shape, _broadcast(t.shape, shape), 0, 0))
    elif kind == "matmul":
        a_, b_ = ins
        sa, sb = a_.shape, b_.shape
        m, k, n = sa[-2], sa[-1], sb[-1]
        batch = tuple(shape[:-2])
        st_a = _broadcast(tuple(sa[:-2]), batch, m * k) + [k if m > 1 else 0, 0]
        st_b = _broadcast(tuple(sb[:-2]), batch, k * n) + [0, 1 if n > 1 else 0]
        rows += [(a_, sa, st_a, 0, 1), (b_, sb, st_b, 0, n)]
    elif kind == "concat":
        dim = a["dim"]
        out_st = row_major_strides(shape)
        at = 0
        for t in ins:
            if a.get("stack"):
                st = [s for d, s in enumerate(out_st) if d != dim]
                rows.append((t, t.shape, st, at * out_st[dim], 0))
                at += 1
            else:
                rows.append((t, t.shape, out_st, at * out_st[dim], 0))
                at += t.shape[dim]
    elif kind == "reduce":
        t = ins[0]
        dims = a["dims"]
        st = row_major_strides(t.shape)
        kept = [d for d in range(len(t.shape)) if d not in dims]
        order = kept + list(dims)
        rows.append((t, [t.shape[d] for d in order], [st[d] for d in order], 0, 0))
    elif kind == "conv2d" and a.get("conv1d"):
        t = ins[0]
        rows.append((t, (t.shape[0], t.shape[1], 1, t.shape[2]), [], 0, 0))
        rows += [(t2, t2.shape, row_major_strides(t2.shape), 0, 0) for t2 in ins[1:]]
    else:
        rows += [(t, t.shape, row_major_strides(t.shape), 0, 0) for t in ins]
    return rows


def _broadcast(shape: Sequence[int], out: Sequence[int], inner: int = 1) -> list[int]:
    """Element strides of a tensor of `shape` (times `inner` values per element) over `out`'s dimensions,
    0 where it is broadcast."""
    strides = [s * inner for s in row_major_strides(shape)]
    lead = len(out) - len(shape)
    return [0] * lead + [strides[d] if size == out[lead + d] and size > 1 else 0 for d, size in enumerate(shape)]


def _params(layer: Layer, tensors: dict[str, Tensor]) -> list[int]:
    kind = RUNNER_KIND[layer.kind]
    a = layer.attrs
    if kind == "conv2d":
        return [*a["kernel"], *a["stride"], *a["padding"], *a["dilation"], a["groups"]]
    if kind in ("maxpool2d", "avgpool2d"):
        d = a.get("dilation", (1, 1))
        return [
            *a["kernel"],
            *a["stride"],
            *a["padding"],
            *d,
            int(a.get("count_include_pad", True)),
            a.get("divisor", 0),
        ]
    if kind == "linear":
        return [layer.weights().shape[1]]
    if kind == "binary":
        return [BINARY_OPS[layer.kind]]
    if kind == "reduce":
        t = tensors[layer.inputs[0][0]]
        dims = a["dims"]
        kept = len(t.shape) - len(dims)
        # PyTorch sums a contiguous innermost block in vector lanes, anything else in order
        inner = list(dims) == list(range(len(t.shape) - len(dims), len(t.shape)))
        return [REDUCE_OPS[a["op"]], kept, int(inner)]
    if kind == "layernorm":
        return [a["size"]]
    if kind == "batchnorm":
        return [a["channels"], a["inner"]]
    if kind == "softmax":
        t = tensors[layer.inputs[0][0]]
        return [t.shape[a["dim"]], num_elements(t.shape[a["dim"] + 1 :])]
    if kind == "matmul":
        return [a["k"]]
    if kind == "attention":
        q, k, v = (tensors[name].shape for name, _q, _s in layer.inputs)
        return [q[-2], k[-2], q[-1], v[-1], num_elements(q[:-2])]
    if kind == "upsample":
        return [int(a["mode"] == "bilinear"), int(a["align_corners"])]
    return []


def _fparams(layer: Layer) -> list[float]:
    """Kind-specific floats: layernorm/batchnorm epsilon, attention scale, upsample source scales."""
    a = layer.attrs
    if layer.kind == "upsample":
        return list(a["scales"])
    if "eps" in a:
        return [a["eps"]]
    if "scale" in a:
        return [a["scale"]]
    return []


def header(stem: str, source: str, input_q: QParams, input_shape: Shape, layers: Network) -> str:
    tensors = layers.tensors
    offsets, arena_size = arena(input_shape, layers)
    out_t = tensors[layers.output]
    if out_t.kind == "c":
        raise UnsupportedForC("The network output is a constant")
    shapes = [tensors[la.output_name].shape for la in layers] + [tensors[INPUT].shape]
    rank = max(4, max(len(s) for s in shapes), *(len(tensors[n].shape) for la in layers for n, _q, _s in la.inputs))
    guard = f"QAT_{c_stem(stem).upper()}_QPARAMS_H"
    out = [
        f"/* {stem}_qparams.h: the INT8 network of {source} (torchao PT2E, converted), for {stem}_runner.c.",
        " * Written by QAT Studio (deploy/c-artifact) from the converted model: regenerate it rather than edit it.",
        " * real = scale * (q - zero_point). Weights are int8 per output channel (axis 0), row-major",
        " * [out][in/groups][kh][kw]; bias is float (what PyTorch adds), bias_int32 = round(bias / acc_scale)",
        " * (what integer-only kernels add); acc_scale = input scale x weight scale, one unit of the int32",
        " * accumulator. Tensors are N-d, batch 1, row-major: quantized (QAT_Q, int32 cells of the arena),",
        " * float (QAT_F, float cells of the arena, where PyTorch computes in float between quantize nodes)",
        " * or constant (QAT_C, const float arrays here). Every arena tensor lives at the offset its layer names. */",
        f"#ifndef {guard}",
        f"#define {guard}",
        "",
        "#include <stdint.h>",
        "",
        *[f"#define QAT_KIND_{k.upper()} {v}" for k, v in KINDS.items()],
        *[f"#define QAT_FN_{k.upper()} {v}" for k, v in FUNCTIONS.items()],
        "#define QAT_Q 0 /* quantized values in the arena */",
        "#define QAT_F 1 /* float values in the arena */",
        "#define QAT_C 2 /* constant floats in this header */",
        f"#define QAT_MAX_RANK {rank}",
        f"#define QAT_NUM_PARAMS {NUM_PARAMS}",
        "",
        "typedef struct {",
        "    int type;                      /* QAT_Q, QAT_F or QAT_C */",
        "    long offset;                   /* arena offset (QAT_Q, QAT_F) */",
        "    const float *data;             /* QAT_C */",
        "    float scale;                   /* QAT_Q: real = scale x (q - zero_point) */",
        "    int32_t zero_point, qmin;",
        "    int rank;",
        "    long shape[QAT_MAX_RANK];      /* the shape the kernel walks it in (batch 1) */",
        "    long stride[QAT_MAX_RANK];     /* element step per dimension of the layer's walk (0: broadcast) */",
        "    long base;                     /* first element read (a slice), or written (a concat input) */",
        "    long kstride;                  /* matmul: element step along the contracted dimension */",
        "} qat_tensor;",
        "",
        "typedef struct {",
        "    int fn;                        /* QAT_FN_* */",
        "    float a, b;                    /* its parameters (clamp: min, max; add_scalar: the scalar; ...) */",
        "} qat_fn;",
        "",
        "typedef struct {",
        "    const char *name;",
        "    int kind;",
        "    int n_inputs;",
        "    const qat_tensor *in;",
        "    int out_type;                  /* QAT_Q or QAT_F */",
        "    long output;                   /* arena offset of the output */",
        "    int rank;",
        "    long shape[QAT_MAX_RANK];      /* the output's shape (batch 1) as the kernel computes it */",
        "    long out_size;",
        "    float out_scale, out_inv_scale;",
        "    int32_t out_zero_point, out_qmin, out_qmax;",
        "    int traced;                    /* its quantized output is a quantize node's (TRACE/REPLAY) */",
        "    int n_fns;",
        "    const qat_fn *fns;             /* applied in turn to each float value before it is stored */",
        "    long p[QAT_NUM_PARAMS];        /* kind-specific integers (runner.c) */",
        "    float f[4];                    /* kind-specific floats (runner.c) */",
        "    const int8_t *weight;",
        "    const float *weight_scale;",
        "    const int32_t *weight_zero_point;",
        "    const float *bias;",
        "    const int32_t *bias_int32;",
        "    const float *acc_scale;",
        "    const float *float_weight;      /* conv2d/linear computed in float (a layer kept float) */",
        "    const int32_t *table;          /* lut: the stored output per stored input value - qmin */",
        "    const float *gamma, *beta;     /* layernorm weight and bias; batchnorm per-channel alpha, beta */",
        "} qat_layer;",
        "",
        f"#define QAT_INPUT_SIZE {num_elements(tensors[INPUT].shape)}",
        f"#define QAT_INPUT_TYPE {TYPES[tensors[INPUT].kind]} /* QAT_F: the graph reads the input in float */",
        f"#define QAT_INPUT_OFFSET {offsets[INPUT]}",
        f"#define QAT_INPUT_SCALE {_f(input_q.scale)}",
        f"#define QAT_INPUT_INV_SCALE {_f(1.0 / input_q.scale)}",
        f"#define QAT_INPUT_ZERO_POINT {input_q.zero_point}",
        f"#define QAT_INPUT_QMIN {input_q.qmin}",
        f"#define QAT_INPUT_QMAX {input_q.qmax}",
        f"#define QAT_OUTPUT_SIZE {num_elements(out_t.shape)}",
        f"#define QAT_OUTPUT_OFFSET {offsets[layers.output]}",
        f"#define QAT_OUTPUT_TYPE {TYPES[out_t.kind]}",
        f"#define QAT_OUTPUT_SCALE {_f(out_t.q.scale if out_t.q else 1.0)}",
        f"#define QAT_OUTPUT_ZERO_POINT {out_t.q.zero_point if out_t.q else 0}",
        f"#define QAT_ARENA_SIZE {arena_size} /* 4-byte cells: {arena_size * 4} bytes */",
        f"#define QAT_NUM_LAYERS {len(layers)}",
        "",
    ]
    consts: dict[str, str] = {}
    for la in layers:
        for name, _q, _s in la.inputs:
            t = tensors[name]
            if t.kind == "c" and name not in consts:
                consts[name] = f"qat_const_{_ident(name)}"
                out.append(f"/* constant {name}: {'x'.join(map(str, t.shape)) or 'scalar'} */")
                out.append(_array("float", consts[name], t.values(), _f, 4))
    seen: dict[str, int] = {}
    entries = []
    for la in layers:
        ident = "qat_" + _ident(la.name)
        seen[ident] = seen.get(ident, 0) + 1
        if seen[ident] > 1:  # several layers of one module (an attention block's matmuls, softmax, ...)
            ident = f"{ident}_{seen[ident]}"
        out += _layer_arrays(la, tensors, ident, offsets, rank)
        entries.append(_layer_entry(la, tensors, ident, offsets, rank))
    out += [
        "static const qat_layer qat_layers[QAT_NUM_LAYERS] = {",
        ",\n".join(entries),
        "};",
        "",
        f"#endif /* {guard} */",
        "",
    ]
    return "\n".join(out)


def _shape_of(la: Layer, tensors: dict[str, Tensor]) -> Shape:
    """The shape the layer's kernel computes (its own, kept through fusions; a conv1d as height 1)."""
    shape = la.shape or tensors[la.output_name].shape
    if la.kind == "conv2d" and la.attrs.get("conv1d"):
        shape = (shape[0], shape[1], 1, shape[2])
    return tuple(shape)


def _describe(la: Layer, tensors: dict[str, Tensor]) -> str:
    a = la.attrs
    desc = f"{la.name}: {la.kind} "
    desc += " + ".join(
        ("x".join(map(str, tensors[n].shape)) or "scalar") + (" (float)" if q is None else "") for n, q, _s in la.inputs
    )
    desc += f" -> {'x'.join(map(str, tensors[la.output_name].shape))}"
    if la.kind == "conv2d":
        desc += (
            f", kernel {a['kernel'][0]}x{a['kernel'][1]}, stride {a['stride'][0]}, padding {a['padding'][0]}"
            f", groups {a['groups']}"
        )
    if la.kind in ("conv2d", "linear") and len(la.inputs) > 1:
        desc += ", + residual"
    if la.epilogue:
        desc += ", then " + ", ".join(
            "relu"
            if fn == ("clamp", 0.0, float("inf"))
            else fn[0] + (f"({', '.join(f'{v:g}' for v in fn[1:])})" if len(fn) > 1 else "")
            for fn in la.epilogue
        )
    if la.table is not None:
        desc += ", as a lookup table"
    desc += "; input " + ", ".join(
        f"scale {q.scale:.6g} zp {q.zero_point}" if q else "float" for _n, q, _s in la.inputs
    )
    desc += (
        f"; output scale {la.output.scale:.6g} zp {la.output.zero_point} ({la.output.dtype})"
        if la.output
        else "; float output"
    )
    return f"/* {desc} */"


def _layer_arrays(la: Layer, tensors: dict[str, Tensor], ident: str, offsets: dict[str, int], rank: int) -> list[str]:
    out = [_describe(la, tensors)]
    if la.weight is not None:
        # an int8 weight comes with its scales, zero points and bias
        assert la.weight_scale is not None and la.weight_zero_point is not None and la.bias is not None
        acc_scale = la.acc_scale()
        out.append(_array("int8_t", f"{ident}_weight", la.weight, _int))
        out.append(_array("float", f"{ident}_weight_scale", la.weight_scale, _f, 4))
        out.append(_array("int32_t", f"{ident}_weight_zero_point", la.weight_zero_point, _int))
        out.append(_array("float", f"{ident}_bias", la.bias, _f, 4))
        out.append(_array("int32_t", f"{ident}_bias_int32", la.bias_int32(), _int, 8))
        out.append(_array("float", f"{ident}_acc_scale", acc_scale, _f, 4))
    if la.float_weight is not None:
        assert la.bias is not None  # a float weight comes with its bias
        out.append(_array("float", f"{ident}_float_weight", la.float_weight, _f, 4))
        out.append(_array("float", f"{ident}_bias", la.bias, _f, 4))
    if la.table is not None:
        out.append(_array("int32_t", f"{ident}_table", la.table, _int))
    for key in ("gamma", "beta"):
        if la.attrs.get(key) is not None:
            out.append(_array("float", f"{ident}_{key}", la.attrs[key], _f, 4))
    if la.epilogue:
        fns = [
            f"{{QAT_FN_{fn[0].upper()}, {_f(fn[1] if len(fn) > 1 else 0.0)}, {_f(fn[2] if len(fn) > 2 else 0.0)}}}"
            for fn in la.epilogue
        ]
        out.append(f"static const qat_fn {ident}_fns[{len(fns)}] = {{{', '.join(fns)}}};\n")
    shape = _shape_of(la, tensors)
    rows = []
    consts = {name: f"qat_const_{_ident(name)}" for name, _q, _s in la.inputs if tensors[name].kind == "c"}
    for t, tshape, stride, base, kstride in _layer_inputs(la, tensors, shape):
        rows.append(
            "    "
            + _tensor_init(t, offsets.get(t.name, 0), rank, tshape, stride, base, kstride, consts.get(t.name, "0"))
        )
    out.append(
        f"static const qat_tensor {ident}_in[{max(1, len(rows))}] = {{\n" + ",\n".join(rows or ["    {0}"]) + "\n};\n"
    )
    return out


def _layer_entry(la: Layer, tensors: dict[str, Tensor], ident: str, offsets: dict[str, int], rank: int) -> str:
    shape = _shape_of(la, tensors)
    out_t = tensors[la.output_name]
    q = out_t.q if out_t.kind == "q" else None
    params = [int(v) for v in _params(la, tensors)]
    params += [0] * (NUM_PARAMS - len(params))
    ptrs = {k: "0" for k in ("weight", "weight_scale", "weight_zero_point", "bias", "bias_int32", "acc_scale")}
    if la.weight is not None:
        ptrs = {k: f"{ident}_{k}" for k in ptrs}
    elif la.float_weight is not None:
        ptrs["bias"] = f"{ident}_bias"
    float_weight = f"{ident}_float_weight" if la.float_weight is not None else "0"
    table = f"{ident}_table" if la.table is not None else "0"
    floats = [_f(v) for v in _fparams(la)]
    floats += [_f(0.0)] * (4 - len(floats))
    gamma = f"{ident}_gamma" if la.attrs.get("gamma") is not None else "0"
    beta = f"{ident}_beta" if la.attrs.get("beta") is not None else "0"

    def brace(values: Sequence[int]) -> str:
        return "{" + ", ".join(str(int(v)) for v in list(values) + [0] * (rank - len(values))) + "}"

    return (
        f'    {{"{la.name}", QAT_KIND_{RUNNER_KIND[la.kind].upper()}, {len(la.inputs)}, {ident}_in, '
        f"{TYPES[out_t.kind]}, {offsets[la.output_name]}, {len(shape)}, {brace(shape)}, {num_elements(shape)},\n     "
        f"{_f(q.scale if q else 1.0)}, {_f(1.0 / q.scale if q else 1.0)}, {q.zero_point if q else 0}, "
        f"{q.qmin if q else 0}, {q.qmax if q else 0}, {int(bool(la.attrs.get('quantize_node')) and q is not None)}, "
        f"{len(la.epilogue)}, {ident + '_fns' if la.epilogue else '0'},\n     "
        f"{{{', '.join(map(str, params))}}}, {{{', '.join(floats)}}},\n     "
        f"{ptrs['weight']}, {ptrs['weight_scale']}, {ptrs['weight_zero_point']}, {ptrs['bias']}, "
        f"{ptrs['bias_int32']}, {ptrs['acc_scale']}, {float_weight}, {table}, "
        f"{gamma}, {beta}}}"
    )


def runner(stem: str) -> str:
    return RUNNER_TEMPLATE.read_text(encoding="utf-8").replace("@STEM@", stem)
