"""Silences known, harmless noise from torch/torchao/onnx so the kernel's stderr stays readable."""

from __future__ import annotations

import logging
import warnings

_WARNING_MESSAGES = [
    r".*torch\.ao\.quantization is deprecated.*",
    r".*reduce_range will be deprecated.*",
    r".*(quantize_per_tensor|quint8|qint8|quantized dtype).*deprecated.*",
    r".*is deprecated.*torchao.*",
    r".*_check_is_size.*deprecated.*",
    r".*LeafSpec.*is deprecated.*",  # torch pytree, raised from copyreg
    r"Exporting a model while it is in training mode.*",  # a converted PT2E graph keeps .training=True
    r"The input of \w+ is not quantized, skip annotate.*",  # x86 quantizer, next to a layer kept float
]
_WARNING_CATEGORIES = [DeprecationWarning, FutureWarning]

# (logger name, substring of messages to drop)
_LOG_NOISE = [
    ("torchao", "Failed to load"),  # CUDA-only extensions on a CPU build
    ("torch.utils._pytree", "is an Enum subclass"),  # torchao registers enums the old way
    ("torch.onnx._internal.exporter._registration", "torchvision is not installed"),
]


class _DropContaining(logging.Filter):
    def __init__(self, text: str):
        super().__init__()
        self.text = text

    def filter(self, record: logging.LogRecord) -> bool:
        return self.text not in record.getMessage()


def install() -> None:
    for message in _WARNING_MESSAGES:
        warnings.filterwarnings("ignore", message=message)
    for category in _WARNING_CATEGORIES:
        warnings.filterwarnings("ignore", category=category, module=r"(torch|torchao|onnx|onnxscript)(\.|$)")
    warnings.filterwarnings("ignore", message=r".*reduce_range.*")
    for name, text in _LOG_NOISE:
        logging.getLogger(name).addFilter(_DropContaining(text))
