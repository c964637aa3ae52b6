"""C text for the portable runner: <stem>_qparams.h (the layers, their scales, zero points, int8
weights, float and int32 biases) and <stem>_runner.c (runner.c with the stem filled in)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from qat_kernel.runtimes.c.layers import Layer, QParams, UnsupportedForC

KINDS = {"conv2d": 1, "linear": 2, "maxpool2d": 3, "flatten": 4}
RUNNER_TEMPLATE = Path(__file__).with_name("runner.c")
FLAGS = ["-std=c99", "-O2", "-ffp-contract=off", "-Wall", "-Wextra"]


def c_stem(stem: str) -> str:
    """A C identifier-safe file stem (digits.qat.yaml -> digits)."""
    s = re.sub(r"[^A-Za-z0-9_]", "_", stem)
    return s if s and not s[0].isdigit() else "m_" + s


def _f(v) -> str:
    """float32 literal that reads back to the same float32 (10 significant digits)."""
    return f"{float(np.float32(v)):.9e}f"


def _array(ctype: str, name: str, values, fmt, per_line: int = 16) -> str:
    values = list(np.asarray(values).reshape(-1))
    lines = [", ".join(fmt(v) for v in values[i : i + per_line]) for i in range(0, len(values), per_line)]
    return f"static const {ctype} {name}[{len(values)}] = {{\n    " + ",\n    ".join(lines) + "\n};\n"


def _shape3(shape: tuple) -> tuple:
    return tuple(shape) if len(shape) == 3 else (int(np.prod(shape)), 1, 1)


def _ident(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def header(stem: str, source: str, input_q: QParams, input_shape: tuple, layers: list[Layer]) -> str:
    for layer in layers[:-1]:
        if layer.output is None:
            raise UnsupportedForC(f"layer {layer.name} has a float output but is not the last layer")
    out_size = int(np.prod(layers[-1].out_shape))
    max_act = max([int(np.prod(input_shape))] + [int(np.prod(la.out_shape)) for la in layers])
    c, h, w = _shape3(input_shape)
    guard = f"QAT_{c_stem(stem).upper()}_QPARAMS_H"
    out = [
        f"/* {stem}_qparams.h: the INT8 network of {source} (torchao PT2E, converted), for {stem}_runner.c.",
        " * Written by QAT Studio (deploy/c-artifact) from the converted model: regenerate it rather than edit it.",
        " * real = scale * (q - zero_point). Weights are int8 per output channel (axis 0), row-major",
        " * [out][in][kh][kw]; bias is float (what PyTorch adds), bias_int32 = round(bias / acc_scale) (what",
        " * integer-only kernels add); acc_scale = input scale x weight scale, one unit of the int32 accumulator. */",
        f"#ifndef {guard}",
        f"#define {guard}",
        "",
        "#include <stdint.h>",
        "",
        *[f"#define QAT_KIND_{k.upper()} {v}" for k, v in KINDS.items()],
        "",
        "typedef struct {",
        "    const char *name;",
        "    int kind;",
        "    int in_c, in_h, in_w;      /* linear: in_c features, in_h = in_w = 1 */",
        "    int out_c, out_h, out_w;",
        "    int kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w, groups;",
        "    int relu;",
        "    float in_scale;",
        "    int32_t in_zero_point;",
        "    int quantized_output;      /* 0: float output (the network's logits) */",
        "    float out_scale, out_inv_scale;",
        "    int32_t out_zero_point, out_qmin, out_qmax;",
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
        f"#define QAT_INPUT_SCALE {_f(input_q.scale)}",
        f"#define QAT_INPUT_INV_SCALE {_f(1.0 / input_q.scale)}",
        f"#define QAT_INPUT_ZERO_POINT {input_q.zero_point}",
        f"#define QAT_INPUT_QMIN {input_q.qmin}",
        f"#define QAT_INPUT_QMAX {input_q.qmax}",
        f"#define QAT_OUTPUT_SIZE {out_size}",
        f"#define QAT_MAX_ACTIVATION {max_act}",
        f"#define QAT_NUM_LAYERS {len(layers)}",
        "",
    ]
    entries = []
    for layer in layers:
        ic, ih, iw = _shape3(layer.in_shape)
        oc, oh, ow = _shape3(layer.out_shape)
        name = "qat_" + _ident(layer.name)
        desc = (
            f"{layer.name}: {layer.kind} {'x'.join(map(str, layer.in_shape))} -> {'x'.join(map(str, layer.out_shape))}"
        )
        a = layer.attrs
        if layer.kind == "conv2d":
            desc += (
                f", kernel {a['kernel'][0]}x{a['kernel'][1]}, stride {a['stride'][0]}, padding {a['padding'][0]}"
                f", groups {a['groups']}"
            )
        desc += (", relu" if layer.relu else "") + f"; input scale {layer.input.scale:.6g} zp {layer.input.zero_point}"
        desc += (
            f", output scale {layer.output.scale:.6g} zp {layer.output.zero_point} ({layer.output.dtype})"
            if layer.output
            else ", float output"
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
        entries.append(
            f'    {{"{layer.name}", QAT_KIND_{layer.kind.upper()}, {ic}, {ih}, {iw}, {oc}, {oh}, {ow}, '
            f"{kh}, {kw}, {sh}, {sw}, {ph}, {pw}, {dh}, {dw}, {a.get('groups', 1)}, {int(layer.relu)}, "
            f"{_f(layer.input.scale)}, {layer.input.zero_point}, {int(q is not None)}, "
            f"{_f(q.scale if q else 1.0)}, {_f(1.0 / q.scale if q else 1.0)}, {q.zero_point if q else 0}, "
            f"{q.qmin if q else 0}, {q.qmax if q else 0}, "
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
