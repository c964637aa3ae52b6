"""C text for the portable runner: <stem>_qparams.h (the layers, their scales, zero points, int8
weights, float and int32 biases, where each tensor lives in one static arena) and <stem>_runner.c
(runner.c with the stem filled in)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from qat_kernel.runtimes.c.layers import INPUT, Layer, QParams, UnsupportedForC

KINDS = {
    "conv2d": 1,
    "linear": 2,
    "maxpool2d": 3,
    "flatten": 4,
    "add": 5,
    "avgpool2d": 6,
    "globalavgpool": 7,
    "concat": 8,
}
RUNNER_TEMPLATE = Path(__file__).with_name("runner.c")
FLAGS = ["-std=c99", "-O2", "-ffp-contract=off", "-Wall", "-Wextra"]
FLT_MAX = "3.402823466e+38f"


def c_stem(stem: str) -> str:
    """A C identifier-safe file stem (digits.qat.yaml -> digits)."""
    s = re.sub(r"[^A-Za-z0-9_]", "_", stem)
    return s if s and not s[0].isdigit() else "m_" + s


def _f(v) -> str:
    """float32 literal that reads back to the same float32 (10 significant digits)."""
    v = float(np.float32(v))
    if np.isinf(v):
        return FLT_MAX if v > 0 else "-" + FLT_MAX
    return f"{v:.9e}f"


def _array(ctype: str, name: str, values, fmt, per_line: int = 16) -> str:
    values = list(np.asarray(values).reshape(-1))
    lines = [", ".join(fmt(v) for v in values[i : i + per_line]) for i in range(0, len(values), per_line)]
    return f"static const {ctype} {name}[{len(values)}] = {{\n    " + ",\n    ".join(lines) + "\n};\n"


def _shape3(shape: tuple) -> tuple:
    return tuple(shape) if len(shape) == 3 else (int(np.prod(shape)), 1, 1)


def _ident(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def _quantize(y: float, q: QParams) -> int:
    """runner.c's quantize() in float32: rint(y * (1/scale)) + zero point, clamped."""
    with np.errstate(over="ignore", invalid="ignore"):
        r = np.float32(np.rint(np.float32(y) * np.float32(1.0 / q.scale))) + np.float32(q.zero_point)
    return int(min(max(r, q.qmin), q.qmax)) if np.isfinite(r) else (q.qmax if r > 0 else q.qmin)


def output_range(layer: Layer) -> tuple[int, int]:
    """The quantized output's [qmin, qmax] with the layer's relu/hardtanh folded in: quantize is
    monotonic, so quantize(clamp(y, lo, hi)) == clamp(quantize(y), quantize(lo), quantize(hi))."""
    q = layer.output
    if layer.act is None:
        return q.qmin, q.qmax
    lo, hi = layer.act
    return max(q.qmin, _quantize(lo, q)), min(q.qmax, _quantize(hi, q))


def arena(input_shape: tuple, layers: list[Layer]) -> tuple[dict, int]:
    """Offsets (int32 elements) of every quantized tensor in one static arena, and its size: a tensor
    lives from the layer that writes it to the last layer that reads it, and two tensors share space
    only when their lives do not overlap (first fit, largest first)."""
    size = {INPUT: int(np.prod(input_shape))}
    start, end = {INPUT: -1}, {INPUT: -1}
    for i, layer in enumerate(layers):
        for name, _q, _s in layer.inputs:
            end[name] = i
        if layer.output is not None:
            size[layer.output_name] = int(np.prod(layer.out_shape))
            start[layer.output_name] = end[layer.output_name] = i
    placed: list = []  # (offset, size, start, end)
    offsets: dict = {}
    for name in sorted(size, key=lambda t: (-size[t], start[t])):
        overlapping = sorted((o, s) for o, s, a, b in placed if a <= end[name] and start[name] <= b)
        offset = 0
        for o, s in overlapping:
            if offset + size[name] <= o:
                break
            offset = max(offset, o + s)
        offsets[name] = offset
        placed.append((offset, size[name], start[name], end[name]))
    return offsets, max(o + s for o, s, _a, _b in placed)


def header(stem: str, source: str, input_q: QParams, input_shape: tuple, layers: list[Layer]) -> str:
    for layer in layers[:-1]:
        if layer.output is None:
            raise UnsupportedForC(f"layer {layer.name} has a float output but is not the last layer")
    out_size = int(np.prod(layers[-1].out_shape))
    offsets, arena_size = arena(input_shape, layers)
    max_inputs = max(2, max(len(la.inputs) for la in layers))
    c, h, w = _shape3(input_shape)
    guard = f"QAT_{c_stem(stem).upper()}_QPARAMS_H"
    out = [
        f"/* {stem}_qparams.h: the INT8 network of {source} (torchao PT2E, converted), for {stem}_runner.c.",
        " * Written by QAT Studio (deploy/c-artifact) from the converted model: regenerate it rather than edit it.",
        " * real = scale * (q - zero_point). Weights are int8 per output channel (axis 0), row-major",
        " * [out][in/groups][kh][kw]; bias is float (what PyTorch adds), bias_int32 = round(bias / acc_scale)",
        " * (what integer-only kernels add); acc_scale = input scale x weight scale, one unit of the int32",
        " * accumulator. Every quantized tensor lives in one int32 arena at the offset its layer names. */",
        f"#ifndef {guard}",
        f"#define {guard}",
        "",
        "#include <stdint.h>",
        "",
        *[f"#define QAT_KIND_{k.upper()} {v}" for k, v in KINDS.items()],
        f"#define QAT_MAX_INPUTS {max_inputs}",
        "",
        "typedef struct {",
        "    const char *name;",
        "    int kind;",
        "    int n_inputs;                        /* conv2d/linear: 2 with a fused residual add (input 1) */",
        "    long input[QAT_MAX_INPUTS];          /* arena offsets of the inputs */",
        "    long output;                         /* arena offset of the output (-1: the float logits) */",
        "    int in_c, in_h, in_w;                /* input 0; linear: in_c features, in_h = in_w = 1 */",
        "    int in_channels[QAT_MAX_INPUTS];     /* concat: channels of each input */",
        "    int out_c, out_h, out_w;",
        "    int kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w, groups;",
        "    int count_include_pad;               /* avgpool2d */",
        "    int global_pool;                     /* conv2d: its float output average-pooled to 1x1 */",
        "    long out_size;                       /* values written (out_c x out_h x out_w, or out_c pooled) */",
        "    float act_min, act_max;              /* relu/hardtanh in float: float or pooled outputs */",
        "    float in_scale[QAT_MAX_INPUTS];",
        "    int32_t in_zero_point[QAT_MAX_INPUTS];",
        "    int quantized_output;                /* 0: float output (the network's logits) */",
        "    float out_scale, out_inv_scale;",
        "    int32_t out_zero_point, out_qmin, out_qmax; /* the activation's clamp folded into qmin/qmax */",
        "    const int8_t *weight;",
        "    const float *weight_scale;",
        "    const int32_t *weight_zero_point;",
        "    const float *bias;",
        "    const int32_t *bias_int32;",
        "    const float *acc_scale;",
        "} qat_layer;",
        "",
        f"#define QAT_INPUT_C {c}",
        f"#define QAT_INPUT_H {h}",
        f"#define QAT_INPUT_W {w}",
        f"#define QAT_INPUT_SIZE {c * h * w}",
        f"#define QAT_INPUT_OFFSET {offsets[INPUT]}",
        f"#define QAT_INPUT_SCALE {_f(input_q.scale)}",
        f"#define QAT_INPUT_INV_SCALE {_f(1.0 / input_q.scale)}",
        f"#define QAT_INPUT_ZERO_POINT {input_q.zero_point}",
        f"#define QAT_INPUT_QMIN {input_q.qmin}",
        f"#define QAT_INPUT_QMAX {input_q.qmax}",
        f"#define QAT_OUTPUT_SIZE {out_size}",
        f"#define QAT_ARENA_SIZE {arena_size} /* int32 values: {arena_size * 4} bytes */",
        f"#define QAT_NUM_LAYERS {len(layers)}",
        "",
    ]
    entries = []
    for layer in layers:
        ic, ih, iw = _shape3(layer.in_shape)
        oc, oh, ow = _shape3(layer.attrs.get("conv_out", layer.out_shape))  # a pooled conv: the conv's
        out_size = int(np.prod(layer.out_shape))
        name = "qat_" + _ident(layer.name)
        a = layer.attrs
        desc = f"{layer.name}: {layer.kind} "
        desc += " + ".join("x".join(map(str, s)) for _n, _q, s in layer.inputs)
        desc += f" -> {'x'.join(map(str, layer.out_shape))}"
        if layer.kind == "conv2d":
            desc += (
                f", kernel {a['kernel'][0]}x{a['kernel'][1]}, stride {a['stride'][0]}, padding {a['padding'][0]}"
                f", groups {a['groups']}"
            )
        if layer.kind in ("conv2d", "linear") and len(layer.inputs) > 1:
            desc += ", + residual"
        pool = bool(a.get("global_pool"))
        if layer.act is not None:
            desc += ", relu" if layer.relu else f", clamp [{layer.act[0]:g}, {layer.act[1]:g}]"
        if pool:
            desc += ", global average pool"
        desc += "; input " + ", ".join(f"scale {q.scale:.6g} zp {q.zero_point}" for _n, q, _s in layer.inputs)
        desc += (
            f"; output scale {layer.output.scale:.6g} zp {layer.output.zero_point} ({layer.output.dtype})"
            if layer.output
            else "; float output"
        )
        out.append(f"/* {desc} */")
        ptrs = {k: "0" for k in ("weight", "weight_scale", "weight_zero_point", "bias", "bias_int32", "acc_scale")}
        if layer.weight is not None:
            acc_scale = np.float64(layer.input.scale) * layer.weight_scale.astype(np.float64)
            out.append(_array("int8_t", f"{name}_weight", layer.weight, lambda v: str(int(v))))
            out.append(_array("float", f"{name}_weight_scale", layer.weight_scale, _f, 4))
            out.append(_array("int32_t", f"{name}_weight_zero_point", layer.weight_zero_point, lambda v: str(int(v))))
            out.append(_array("float", f"{name}_bias", layer.bias, _f, 4))
            out.append(_array("int32_t", f"{name}_bias_int32", layer.bias_int32(), lambda v: str(int(v)), 8))
            out.append(_array("float", f"{name}_acc_scale", acc_scale, _f, 4))
            ptrs = {k: f"{name}_{k}" for k in ptrs}
        kh, kw = a.get("kernel", (1, 1))
        sh, sw = a.get("stride", (1, 1))
        ph, pw = a.get("padding", (0, 0))
        dh, dw = a.get("dilation", (1, 1))
        q = layer.output
        pad = [0] * (max_inputs - len(layer.inputs))
        ins = [offsets[n] for n, _q, _s in layer.inputs] + pad
        chans = [int(np.prod(s)) // (oh * ow) for _n, _q, s in layer.inputs] + pad  # per input, NCHW
        scales = [_f(iq.scale) for _n, iq, _s in layer.inputs] + [_f(1.0)] * len(pad)
        zps = [iq.zero_point for _n, iq, _s in layer.inputs] + pad
        qmin, qmax = output_range(layer) if q else (0, 0)
        lo, hi = layer.act if (layer.act and (q is None or pool)) else (-np.inf, np.inf)

        def brace(values) -> str:
            return "{" + ", ".join(str(v) for v in values) + "}"

        entries.append(
            f'    {{"{layer.name}", QAT_KIND_{layer.kind.upper()}, {len(layer.inputs)}, {brace(ins)}, '
            f"{offsets[layer.output_name] if q else -1},\n     {ic}, {ih}, {iw}, {brace(chans)}, {oc}, {oh}, {ow}, "
            f"{kh}, {kw}, {sh}, {sw}, {ph}, {pw}, {dh}, {dw}, {a.get('groups', 1)}, "
            f"{int(a.get('count_include_pad', True))}, {int(pool)}, {out_size}, {_f(lo)}, {_f(hi)},\n     "
            f"{brace(scales)}, {brace(zps)}, "
            f"{int(q is not None)}, {_f(q.scale if q else 1.0)}, {_f(1.0 / q.scale if q else 1.0)}, "
            f"{q.zero_point if q else 0}, {qmin}, {qmax},\n     "
            f"{ptrs['weight']}, {ptrs['weight_scale']}, {ptrs['weight_zero_point']}, {ptrs['bias']}, "
            f"{ptrs['bias_int32']}, {ptrs['acc_scale']}}}"
        )
    out += [
        "static const qat_layer qat_layers[QAT_NUM_LAYERS] = {",
        ",\n".join(entries),
        "};",
        "",
        f"#endif /* {guard} */",
        "",
    ]
    return "\n".join(out)


def runner(stem: str) -> str:
    return RUNNER_TEMPLATE.read_text(encoding="utf-8").replace("@STEM@", stem)
