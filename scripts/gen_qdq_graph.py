"""Writes a synthetic QDQ ONNX graph of about N nodes, shaped the way a quantizer leaves a CNN: per block
Q -> DQ -> Conv (int8 weights through a per-channel DQ) -> Relu, with a residual Add every other block,
and torch-exporter-style `pkg.torch.onnx.name_scopes` metadata so module groups exist.
    python scripts/gen_qdq_graph.py --nodes 10000 --out /tmp/g10k.onnx"""

import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def scopes(*parts: str) -> list:
    return [onnx.StringStringEntryProto(key="pkg.torch.onnx.name_scopes", value=str(["", *parts]))]


def build(target_nodes: int, channels: int = 8) -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    nodes, inits = [], []
    scale = numpy_helper.from_array(np.array(0.02, dtype=np.float32), "act_scale")
    zp = numpy_helper.from_array(np.array(0, dtype=np.uint8), "act_zp")
    inits += [scale, zp]
    x = "input"
    block = 0
    skip = None
    while len(nodes) < target_nodes:
        stage, idx = block // 16, block % 16
        mod = f"layer{stage}.{idx}"
        w = numpy_helper.from_array(rng.integers(-127, 127, (channels, channels, 3, 3), dtype=np.int8), f"{mod}.w_q")
        ws = numpy_helper.from_array((rng.random(channels, dtype=np.float32) * 0.01 + 0.001), f"{mod}.w_scale")
        wz = numpy_helper.from_array(np.zeros(channels, dtype=np.int8), f"{mod}.w_zp")
        inits += [w, ws, wz]
        q, dq, wdq, conv, relu = (f"{mod}.{s}" for s in ("q", "dq", "wdq", "conv", "relu"))
        made = [
            helper.make_node("QuantizeLinear", [x, "act_scale", "act_zp"], [q], name=q),
            helper.make_node("DequantizeLinear", [q, "act_scale", "act_zp"], [dq], name=dq),
            helper.make_node("DequantizeLinear", [w.name, ws.name, wz.name], [wdq], name=wdq, axis=0),
            helper.make_node("Conv", [dq, wdq], [conv], name=conv, pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
            helper.make_node("Relu", [conv], [relu], name=relu),
        ]
        for n in made[3:]:
            n.metadata_props.extend(scopes(f"layer{stage}", mod, n.op_type.lower()))
        nodes += made
        out = relu
        if skip is not None:
            add = f"{mod}.add"
            n = helper.make_node("Add", [relu, skip], [add], name=add)
            n.metadata_props.extend(scopes(f"layer{stage}", mod, "add"))
            nodes.append(n)
            out, skip = add, None
        else:
            skip = out
        x = out
        block += 1
    graph = helper.make_graph(
        nodes,
        "synthetic_qdq",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, channels, 8, 8])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, channels, 8, 8])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    model = build(args.nodes)
    onnx.save(model, args.out)
    print(len(model.graph.node))
