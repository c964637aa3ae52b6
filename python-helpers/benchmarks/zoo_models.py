"""The model zoo: public architectures from timm, torchvision and Hugging Face transformers, with random weights and
small inputs, each written out as a user's workspace would be (model.py, data.py, <name>.qat.yaml) and taken
through every stage of the kernel. The zoo suite (test/zoo) asserts on it; `npm run bench zoo` times it.

Runs in the zoo environment (scripts/setup.sh zoo: torch 2.14.1 with torchvision, timm and transformers), which
also proves the kernel on a torch newer than its own pin. Nothing is downloaded: the models are built from their
definitions, and the data is synthetic but learnable (a class template under noise; token patterns)."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from pathlib import Path

NUM_CLASSES = 10
VOCAB = 512
SEQ = 16


@dataclass(frozen=True)
class ZooModel:
    name: str
    title: str  # what the table shows: the architecture and where it comes from
    family: str  # vision | sequence | causal_lm
    make: str  # the body of model.py's make_model(), after the imports in `imports`
    imports: str
    size: int = 32  # vision: the input's height and width
    ops: str = ""  # the op families the model brings to the stages
    config: dict = field(default_factory=dict)  # extra config keys (merged into the generated config)


def _timm(name: str, title: str, ops: str, size: int = 32, **kwargs) -> ZooModel:
    args = "".join(f", {k}={v!r}" for k, v in kwargs.items())
    return ZooModel(
        name,
        title,
        "vision",
        f"return timm.create_model({name!r}, pretrained=False, num_classes={NUM_CLASSES}{args})",
        "import timm",
        size,
        ops,
    )


BERT = (
    f"BertConfig(vocab_size={VOCAB}, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, "
    f"intermediate_size=128, max_position_embeddings=64, num_labels={NUM_CLASSES})"
)
LLAMA = (
    f"LlamaConfig(vocab_size={VOCAB}, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, "
    "num_key_value_heads=2, intermediate_size=128, max_position_embeddings=64)"
)

MODELS: dict[str, ZooModel] = {
    m.name: m
    for m in [
        _timm("resnet18", "timm ResNet-18", "conv+BN+ReLU, residual add, zero-initialised last BN γ"),
        _timm("regnetx_002", "timm RegNetX-200MF", "grouped conv, residual add, zero-initialised last BN γ"),
        _timm("mobilenetv3_small_050", "timm MobileNetV3-Small 0.5", "hardswish, SE (hardsigmoid × activation)"),
        _timm("efficientnet_b0", "timm EfficientNet-B0", "SiLU, SE (sigmoid × activation), depthwise conv"),
        ZooModel(
            "shufflenet_v2_x0_5",
            "torchvision ShuffleNetV2 0.5",
            "vision",
            f"return torchvision.models.shufflenet_v2_x0_5(num_classes={NUM_CLASSES})",
            "import torchvision",
            ops="channel split (chunk), channel shuffle (view/transpose), concat",
        ),
        _timm("ghostnet_050", "timm GhostNet 0.5", "cheap ops: slice, concat, depthwise, SE"),
        _timm(
            "densenet121",
            "timm DenseNet (121's blocks, growth 16, 2 layers a block)",
            "concat, BN + ReLU before conv (pre-activation)",
            growth_rate=16,
            block_config=(2, 2, 2, 2),
        ),
        _timm("convnext_atto", "timm ConvNeXt-Atto", "7×7 depthwise conv, LayerNorm over channels, GELU, layer scale"),
        _timm(
            "vit_tiny_patch16_224",
            "timm ViT-Tiny (patch 8, depth 4, 32×32)",
            "attention: LayerNorm, GELU, softmax, matmul of two activations, reshape/permute",
            img_size=32,
            patch_size=8,
            depth=4,
        ),
        _timm("mobilevit_xxs", "timm MobileViT-XXS", "hybrid conv + attention, SiLU, unfold/fold reshapes"),
        ZooModel(
            "bert",
            "transformers BERT-style encoder (2 layers, token ids + attention mask, ModelOutput)",
            "sequence",
            f"return BertForSequenceClassification({BERT})",
            "from transformers import BertConfig, BertForSequenceClassification",
            ops="embedding lookup of int64 token ids, attention mask, LayerNorm, GELU, softmax, ModelOutput",
        ),
        ZooModel(
            "llama",
            "transformers Llama-style decoder-only LM (2 layers, next-token loss)",
            "causal_lm",
            f"return LlamaForCausalLM({LLAMA})",
            "from transformers import LlamaConfig, LlamaForCausalLM",
            ops="RMSNorm, rotary embeddings, SiLU-gated MLP, causal attention, grouped KV heads",
        ),
    ]
}

# The vision data: a fixed template per class under noise, so a few steps learn something.
VISION_DATA = """\
import torch


def loaders(batch_size: int = 16):
    g = torch.Generator().manual_seed(0)
    templates = torch.randn({classes}, 3, {size}, {size}, generator=g)

    def split(n):
        y = torch.randint(0, {classes}, (n,), generator=g)
        x = 0.7 * templates[y] + 0.7 * torch.randn(n, 3, {size}, {size}, generator=g)
        return [(x[i : i + batch_size], y[i : i + batch_size]) for i in range(0, n, batch_size)]

    return split(96), split(64)
"""

# Token sequences, Hugging Face style dict batches: the class picks which band of the vocabulary the tokens come
# from; the language model's sequences count up from a random start (next token = this one + 1).
SEQUENCE_DATA = """\
import torch


def loaders(batch_size: int = 16):
    g = torch.Generator().manual_seed(0)

    def split(n):
        batches = []
        for i in range(0, n, batch_size):
            labels = torch.randint(0, {classes}, (batch_size,), generator=g)
            band = {vocab} // {classes}
            ids = labels[:, None] * band + torch.randint(0, band, (batch_size, {seq}), generator=g)
            batches.append({{"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": labels}})
        return batches

    return split(96), split(64)
"""

CAUSAL_DATA = """\
import torch


def loaders(batch_size: int = 16):
    g = torch.Generator().manual_seed(0)

    def split(n):
        batches = []
        for i in range(0, n, batch_size):
            start = torch.randint(0, {vocab}, (batch_size, 1), generator=g)
            ids = (start + torch.arange({seq})) % {vocab}
            batches.append({{"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": ids}})
        return batches

    return split(96), split(64)
"""

QCONFIG = """\
qconfig:
  activation: {observer: MovingAverageMinMaxObserver, dtype: quint8, qscheme: per_tensor_affine, quant_min: 0,
               quant_max: 255, averaging_constant: 0.01}
  weight: {observer: PerChannelMinMaxObserver, dtype: qint8, qscheme: per_channel_symmetric, quant_min: -128,
           quant_max: 127, ch_axis: 0}
"""


def write_workspace(name: str, folder: Path) -> Path:
    """The model's workspace in `folder` (created); returns its config. Vision configs give example_input as a
    shape; the token models leave it out (the example comes from the first batch, as dicts)."""
    model = MODELS[name]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model.py").write_text(
        f'"""{model.title}: random weights."""\n{model.imports}\n\n\ndef make_model():\n    {model.make}\n',
        encoding="utf-8",
    )
    fill = {"classes": NUM_CLASSES, "size": model.size, "vocab": VOCAB, "seq": SEQ}
    data = {"vision": VISION_DATA, "sequence": SEQUENCE_DATA, "causal_lm": CAUSAL_DATA}[model.family]
    (folder / "data.py").write_text(data.format(**fill), encoding="utf-8")
    example = f", example_input: [2, 3, {model.size}, {model.size}]" if model.family == "vision" else ""
    config = textwrap.dedent(
        f"""\
        # {model.title}: {model.ops}
        version: 1
        model: {{entry: "model.py:make_model"{example}}}
        data: {{entry: "data.py:loaders"}}
        flow: pt2e
        backend: x86
        """
    )
    config += QCONFIG
    config += "train: {fp32_epochs: 0, epochs: 1, steps: 4, lr: 0.001, optimizer: adam}\n"
    config += "compare: {samples: 16, metrics: [cosine, sqnr, mse, max_abs], threshold: {cosine: 0.99}}\n"
    path = folder / f"{name}.qat.yaml"
    path.write_text(config, encoding="utf-8")
    return path


# Every stage, in the order a user meets them, with the params that keep the zoo's runs small: few bench runs
# and samples, and deploy/c-artifact without TVM's library (build/tvm builds it in its own stage).
STAGES: list[tuple[str, dict]] = [
    ("graph/export", {}),
    ("qat/train", {}),
    ("compare/layers", {}),
    ("export/onnx", {}),
    ("build/ort", {"quantizeStatic": False, "benchRuns": 3, "samples": 32}),
    ("build/tvm", {"target": "x86-64", "benchRuns": 3}),
    ("deploy/c-artifact", {"tvm": False, "samples": 64}),
    ("verify/parity", {}),
    ("analyze/sensitivity", {"samples": 16}),
    ("search/mixed-precision", {"budget": {"candidates": 2, "seconds": 30}, "samples": 16}),
]
