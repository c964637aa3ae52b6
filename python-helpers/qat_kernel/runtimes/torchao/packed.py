"""A torchao-flow language model deployed to PyTorch's own int4/int8 CPU kernels: each quantized nn.Linear swapped
for a PackedLinear that holds its weight in the kernel's packed format and calls that kernel, nothing float kept.

What runs on an x86 CPU with torch 2.13 (CPU build) and torchao 0.18, by deployed format:
- 8da4w: aten._dyn_quant_pack_4bit_weight / _dyn_quant_matmul_4bit. Activations are quantized per row to int8
  (asymmetric) inside the op and multiplied with the int4 weights in integer dot products, one int32 sum per group
  scaled by the group's scale: the arithmetic torchao's 8da4w emulates. On x86 (no KleidiAI) it is PyTorch's scalar
  reference kernel, and its packed buffer is a float32 tensor holding the packed bytes (two int4 values a byte, one
  byte a float32 element) and the scales: 2 bytes a weight as stored. Group sizes: a multiple of 32, or per channel.
- int4-weight-only: aten._convert_weight_to_int4pack_for_cpu / _weight_int4pack_mm_for_cpu: int4 weights packed two
  a byte with a float scale and zero per group, unpacked in registers inside a vectorized fp32 GEMM (activations stay
  fp32). Group sizes 32, 64, 128, 256.
- int8-weight-only: aten._weight_int8pack_mm: int8 weights (one scale a row) converted in the kernel, fp32
  activations. Per channel only.
- 8da8w: torch._int_mm: activations quantized per token to int8 with torchao's own qparams (asymmetric), an int8 x
  int8 -> int32 GEMM, the zero point's term subtracted and the result scaled. Per channel only.

torchao's packed CPU formats (IntxOpaqueTensor, intx_packing_format opaque_torchao_* / opaque_aten_kleidiai) need the
torchao kernel library or KleidiAI, which this x86 wheel has neither of: they are not used."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from qat_kernel.pipeline.torchao_flow import SCHEMES, Choice, Scheme
from qat_kernel.rpc.errors import ConfigInvalid, Unsupported

if TYPE_CHECKING:
    import torch

INT4_PACK_GROUPS = (32, 64, 128, 256)

KERNELS = {
    "8da4w": "aten._dyn_quant_matmul_4bit (int8 activations x int4 weights, integer dot products)",
    "int4-weight-only": "aten._weight_int4pack_mm_for_cpu (int4 packed weights, fp32 GEMM)",
    "int8-weight-only": "aten._weight_int8pack_mm (int8 weights, fp32 GEMM)",
    "8da8w": "torch._int_mm (int8 x int8 -> int32 GEMM)",
}


@dataclass(frozen=True)
class Format:
    """A deployed weight format: a scheme name and its group size (None: one scale per output row)."""

    scheme: str
    group_size: int | None

    @property
    def bits(self) -> int:
        return 4 if "4" in self.scheme else 8

    @property
    def dynamic_activations(self) -> bool:
        return "weight-only" not in self.scheme

    @property
    def label(self) -> str:
        return f"{self.scheme} ({f'group {self.group_size}' if self.group_size else 'per channel'})"

    def as_dict(self) -> dict[str, Any]:
        return {
            "scheme": self.scheme,
            "bits": self.bits,
            "groupSize": self.group_size,
            "dynamicActivations": self.dynamic_activations,
        }

    @staticmethod
    def of(scheme: Scheme) -> Format:
        return Format(scheme.name, scheme.group_size)


def trained_format(choice: Choice) -> Format:
    """The format a quantized module was trained in."""
    assert choice.scheme is not None
    return Format.of(choice.scheme)


def requested(spec: dict[str, Any] | None) -> Format | None:
    """The request's `format` ({scheme, groupSize}), checked; None: each module's trained scheme."""
    if not spec:
        return None
    scheme = spec.get("scheme")
    if scheme not in SCHEMES:
        raise ConfigInvalid(f"format.scheme: {scheme!r} is not one of {', '.join(SCHEMES)}", path="format.scheme")
    group = spec.get("groupSize", 32 if "4" in scheme else "per_channel")
    return Format(scheme, None if group == "per_channel" else int(group))


def check_fits(fmt: Format, module: str, in_features: int) -> None:
    """Unsupported when the runtime has no kernel for `fmt` on a Linear of this width, naming the module."""
    g = fmt.group_size
    why = ""
    if g is not None and in_features % g:
        why = f"group size {g} does not divide its in_features ({in_features})"
    elif fmt.scheme == "8da4w" and g is not None and g % 32:
        why = f"{KERNELS['8da4w']} takes groups that are a multiple of 32, not {g}"
    elif fmt.scheme == "int4-weight-only" and g not in INT4_PACK_GROUPS:
        why = f"{KERNELS['int4-weight-only']} takes group sizes {', '.join(map(str, INT4_PACK_GROUPS))}, not {g}"
    elif fmt.scheme == "int4-weight-only" and in_features % 2:
        why = "int4 packing needs an even in_features"
    elif fmt.bits == 8 and g is not None:
        why = f"{KERNELS[fmt.scheme]} takes one scale per output row (per_channel), not groups of {g}"
    elif fmt.scheme == "8da4w" and in_features % 2:
        why = "int4 packing needs an even in_features"
    if why:
        raise Unsupported(
            f"{module}: the CPU runtime cannot run {fmt.label}: {why}; choose another format.groupSize (or leave "
            "format out to deploy the trained scheme)",
            unsupported=[{"op": "Linear", "node": module, "module": module, "reason": why}],
        )


def _quantize(weight: torch.Tensor, fmt: Format) -> tuple[torch.Tensor, torch.Tensor]:
    """(qdata int8 in the format's range, scale per row group) of a float weight, symmetric, with torchao's own
    qparams and rounding (the base configs' choose_qparams_affine / quantize_affine)."""
    import torch
    from torchao.quantization.quant_primitives import MappingType, choose_qparams_affine, quantize_affine

    dtype = torch.int4 if fmt.bits == 4 else torch.int8  # pyright: ignore[reportAttributeAccessIssue] - exists at run time
    qmin, qmax = (-8, 7) if fmt.bits == 4 else (-128, 127)
    block: Any = [1, fmt.group_size or weight.shape[1]]  # torchao's stubs say Tuple[int]; it takes any length
    scale, zero = choose_qparams_affine(
        weight, MappingType.SYMMETRIC, block, dtype, quant_min=qmin, quant_max=qmax, zero_point_dtype=torch.int8
    )
    qdata = quantize_affine(weight, block, scale, zero, torch.int8, qmin, qmax)
    return qdata, scale.reshape(weight.shape[0], -1).float()


def _trained_qdata(weight: Any, fmt: Format) -> tuple[torch.Tensor, torch.Tensor] | None:
    """(qdata, scale) of a converted IntxUnpackedToInt8Tensor when it already is in `fmt` (symmetric), else None."""
    import torch

    qdata = getattr(weight, "qdata", None)
    if qdata is None or getattr(weight, "target_dtype", None) != (torch.int4 if fmt.bits == 4 else torch.int8):  # pyright: ignore[reportAttributeAccessIssue]
        return None
    group = int(weight.block_size[1])
    if group != (fmt.group_size or qdata.shape[1]) or bool(weight.zero_point.any()):
        return None
    return qdata, weight.scale.reshape(qdata.shape[0], -1).float()


def _act_qparams(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(qdata int8, scale, zero point) of activations per token, as torchao's 8da* quantizes them."""
    import torch
    from torchao.quantization.quant_primitives import MappingType, choose_qparams_affine, quantize_affine

    block: Any = [1] * (x.dim() - 1) + [x.shape[-1]]
    scale, zero = choose_qparams_affine(
        x, MappingType.ASYMMETRIC, block, torch.int8, quant_min=-128, quant_max=127, zero_point_dtype=torch.int8
    )
    q = quantize_affine(x, block, scale, zero, torch.int8, -128, 127)
    return q, scale, zero


def _module_base() -> type:
    import torch

    return torch.nn.Module


class PackedLinear(_module_base()):  # pyright: ignore[reportUntypedBaseClass] - torch.nn.Module, imported lazily
    """nn.Linear replaced by one of the CPU kernels (see the module docstring); its buffers are all it stores."""

    def __init__(self, fmt: Format, qdata: torch.Tensor, scale: torch.Tensor, bias: torch.Tensor | None) -> None:
        import torch

        super().__init__()
        self.fmt = fmt
        self.out_features, self.in_features = (int(s) for s in qdata.shape)
        n, k = self.out_features, self.in_features
        self.group = fmt.group_size or k
        self.register_buffer("bias", None if bias is None else bias.detach().float().clone())
        if fmt.scheme == "8da4w":
            u = (qdata.to(torch.int32) + 8).to(torch.uint8)
            nibbles = (u[:, 0::2] | (u[:, 1::2] << 4)).contiguous()
            packed = torch.ops.aten._dyn_quant_pack_4bit_weight(nibbles, scale.contiguous(), None, self.group, k, n)
            self.register_buffer("packed", packed)
        elif fmt.scheme == "int4-weight-only":
            packed = torch.ops.aten._convert_weight_to_int4pack_for_cpu((qdata.to(torch.int32) + 8).contiguous(), 1)
            self.register_buffer("packed", packed)
            # tinygemm's dequantization: (q - 8) * scale + zero; the trained scheme is symmetric, zero = 0
            self.register_buffer("scales_zeros", torch.stack([scale, torch.zeros_like(scale)], -1).transpose(0, 1))
            self.scales_zeros = self.scales_zeros.contiguous()
        elif fmt.scheme == "int8-weight-only":
            self.register_buffer("qweight", qdata.to(torch.int8).contiguous())
            self.register_buffer("scale", scale.reshape(n).contiguous())
        else:  # 8da8w
            self.register_buffer("qweight_t", qdata.to(torch.int8).t().contiguous())  # (k, n) for _int_mm
            self.register_buffer("scale", scale.reshape(1, n).contiguous())
            self.register_buffer("col_sums", qdata.to(torch.int32).sum(1).reshape(1, n))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        import torch

        shape = x.shape
        x2 = x.reshape(-1, self.in_features).float().contiguous()
        s = self.fmt.scheme
        if s == "8da4w":
            y = torch.ops.aten._dyn_quant_matmul_4bit(x2, self.packed, self.group, self.in_features, self.out_features)
        elif s == "int4-weight-only":
            y = torch.ops.aten._weight_int4pack_mm_for_cpu(x2, self.packed, self.group, self.scales_zeros)
        elif s == "int8-weight-only":
            y = torch.ops.aten._weight_int8pack_mm(x2, self.qweight, self.scale)
        else:
            q, scale, zero = _act_qparams(x2)
            int_mm: Any = torch._int_mm  # pyright: ignore[reportPrivateUsage, reportPrivateImportUsage] - the int8 GEMM
            acc = int_mm(q, self.qweight_t) - zero.reshape(-1, 1).to(torch.int32) * self.col_sums
            y = acc.float() * scale.reshape(-1, 1) * self.scale
        if self.bias is not None:
            y = y + self.bias
        return y.reshape(*shape[:-1], self.out_features).to(x.dtype)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, format={self.fmt.label}"


@dataclass
class Deployed:
    model: Any  # the converted model's copy with PackedLinear modules
    formats: dict[str, Format]  # module path -> deployed format
    requantized: list[str]  # modules whose deployed weights were quantized again from the QAT-trained float weights
    # quantized nn.Embedding modules stay torchao's converted ones (IntxUnpackedToInt8Tensor, dequantized per lookup)


def deploy(
    converted: torch.nn.Module, qat_model: torch.nn.Module, quantized: list[Choice], fmt: Format | None
) -> Deployed:
    """A copy of the converted model (its quantized Linears' weights never copied) with every quantized Linear a
    PackedLinear in `fmt` (None: its trained scheme); everything else (norms, float layers, quantized embeddings)
    is the converted model's. The trained scheme's weights are the converted model's as they are (the same int values
    and scales); another format's are the QAT-trained float weights quantized with torchao's qparams and rounding."""
    import torch

    modules = dict(converted.named_modules())
    qat_modules: dict[str, Any] = dict(qat_model.named_modules())
    linears = [c for c in quantized if c.kind == "linear" and c.scheme is not None]
    if not linears:
        raise Unsupported(
            "the model has no quantized nn.Linear to deploy (its torchao recipe quantizes embeddings only)",
            unsupported=[],
        )
    replaced = {c.module for c in linears}
    shared = {id(p) for name, m in modules.items() if name not in replaced for p in m.parameters(recurse=False)}
    # deepcopy with the replaced weights mapped to empty tensors: they are never copied
    memo: dict[int, Any] = {}
    for c in linears:
        weight = modules[c.module].weight
        if id(weight) not in shared:  # a weight tied to a module that stays is copied with it
            memo[id(weight)] = torch.empty(0)
    model = copy.deepcopy(converted, memo).eval()
    formats: dict[str, Format] = {}
    requantized: list[str] = []
    for c in linears:
        assert c.scheme is not None
        want = fmt or Format.of(c.scheme)
        source: Any = modules[c.module]
        check_fits(want, c.module, int(source.in_features))
        found = _trained_qdata(source.weight, want) if Format.of(c.scheme) == want else None
        if found is None:
            requantized.append(c.module)
            with torch.no_grad():
                found = _quantize(qat_modules[c.module].weight.detach().float(), want)
        parent, _, name = c.module.rpartition(".")
        setattr(
            model.get_submodule(parent) if parent else model, name, PackedLinear(want, found[0], found[1], source.bias)
        )
        formats[c.module] = want
    return Deployed(model, formats, requantized)
