"""QDQ ONNX export of a PT2E-converted INT8 graph with the dynamo exporter.

One self-contained file (external_data=False), written to a temp file in the target folder and
moved into place, so a viewer watching the path never reads a half-written model.

What links ONNX nodes back to modules (torch 2.13 dynamo exporter, onnxscript 0.7.2): node names
are `node_<fx name>` of the exporter's own re-export (node_conv2d, node_linear_1; not the kernel's FX
names), and each node's metadata_props hold `pkg.torch.onnx.name_scopes`, a Python-literal list of
the module nesting, one *full* path per level plus the FX node name last:
  "['', 'layer1', 'layer1.0', 'layer1.0.conv', 'conv2d_1']"  -> module path = entry [-2]
plus `namespace` (the same chain with classes), `pkg.torch.onnx.class_hierarchy`,
`pkg.torch.onnx.stack_trace` and `pkg.torch.onnx.fx_node`. Quantize/DequantizeLinear nodes carry no
module scope (name_scopes "['', 'quantize_per_tensor_1']"): attach them to their producer/consumer
through the graph edges. Weights are INT8 initializers `_frozen_paramN` feeding a DequantizeLinear.
"""

from __future__ import annotations

from pathlib import Path

from qat_kernel import atomic


def export_qdq(converted, example, path: Path, opset: int, dynamic_shapes=None) -> Path:
    import torch

    with atomic.replacing(path) as tmp:
        torch.onnx.export(
            converted,
            (example,),
            str(tmp),
            dynamo=True,
            opset_version=opset,
            external_data=False,
            dynamic_shapes=dynamic_shapes,
        )
    return path
