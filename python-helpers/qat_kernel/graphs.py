"""Finds each quantized layer's fused group in exported FX graphs and captures values there.

Group: a conv/linear followed by the single-user chain of batch_norm / relu / hardtanh nodes. In the
INT8 graph BN is folded into the conv and the group output is quantized: its value is taken after the
dequantize, i.e. what the next layer really receives. Layers are matched across graphs by module path
from node.meta["nn_module_stack"] (kept by torch.export, prepare_qat_pt2e and convert_pt2e)."""
from __future__ import annotations

from dataclasses import dataclass, field

ANCHORS = {"conv1d": "conv1d", "conv2d": "conv2d", "conv3d": "conv3d", "linear": "linear"}
# Ops absorbed into the group, with the name reported for them.
FOLLOW = {
    "batch_norm": "batch_norm",
    "_native_batch_norm_legit_no_training": "batch_norm",
    "relu": "relu",
    "relu_": "relu",
    "hardtanh": "hardtanh",
    "hardtanh_": "hardtanh",
}


def op_name(node) -> str:
    """aten op name without overload (`conv2d`), or the function name for other call targets."""
    if getattr(node, "op", None) != "call_function":
        return ""
    target = node.target
    packet = getattr(target, "_overloadpacket", None)
    return getattr(packet if packet is not None else target, "__name__", str(target))


def module_path(node) -> str | None:
    """Path of the innermost module that produced `node`, e.g. `features.0`."""
    stack = node.meta.get("nn_module_stack")
    if not stack:
        return None
    return list(stack.values())[-1][0]


@dataclass
class Group:
    module: str
    op: str
    ops: list = field(default_factory=list)   # reported op names, anchor first
    output: object = None                       # fx.Node whose value is compared
    anchor: object = None                       # the conv/linear fx.Node


def _single_user(node):
    users = list(node.users)
    return users[0] if len(users) == 1 else None


def _follow(anchor) -> Group:
    group = Group(module=module_path(anchor) or anchor.name, op=ANCHORS[op_name(anchor)], anchor=anchor)
    group.ops.append(group.op)
    node = anchor
    while (nxt := _single_user(node)) is not None:
        name = op_name(nxt)
        if name in FOLLOW:
            group.ops.append(FOLLOW[name])
            node = nxt
            if name.startswith("_native_batch_norm"):  # returns a tuple: step onto getitem(…, 0)
                item = _single_user(node)
                if item is None or op_name(item) != "getitem":
                    break
                node = item
        else:
            break
    group.output = node
    return group


def _is_quant_node(node, kind: str) -> bool:
    return op_name(node).startswith(kind)


def _after_qdq(node):
    """The dequantize after `node`'s quantize if its output is quantized, else `node`."""
    q = _single_user(node)
    if q is None or not _is_quant_node(q, "quantize_per_"):
        return node
    for dq in q.users:
        if _is_quant_node(dq, "dequantize_per_"):
            return dq
    return node


def _weight_is_quantized(anchor) -> bool:
    weight = anchor.args[1] if len(anchor.args) > 1 else anchor.kwargs.get("weight")
    return hasattr(weight, "op") and _is_quant_node(weight, "dequantize_per_")


def fp32_groups(gm) -> list[Group]:
    return [_follow(n) for n in gm.graph.nodes if op_name(n) in ANCHORS]


def int8_groups(gm) -> list[Group]:
    """Groups of the layers whose weights were quantized, output after their Q/DQ pair."""
    groups = []
    for n in gm.graph.nodes:
        if op_name(n) in ANCHORS and _weight_is_quantized(n):
            group = _follow(n)
            group.output = _after_qdq(group.output)
            groups.append(group)
    return groups


def pair_groups(fp32: list[Group], int8: list[Group]) -> list[tuple[Group, Group]]:
    """(FP32 group, INT8 group) by module path; repeated calls of one module pair up in order."""
    pending: dict[str, list[Group]] = {}
    for g in fp32:
        pending.setdefault(g.module, []).append(g)
    pairs = []
    for g in int8:
        candidates = pending.get(g.module)
        if candidates:
            pairs.append((candidates.pop(0), g))
    return pairs


def capture(gm, inputs, nodes) -> dict:
    """Values of `nodes` when `gm` runs on each tensor of `inputs`, concatenated along dim 0."""
    import torch
    import torch.fx

    wanted = {n.name for n in nodes}

    class Recorder(torch.fx.Interpreter):
        def __init__(self, module):
            super().__init__(module)
            self.values = {}

        def run_node(self, n):
            out = super().run_node(n)
            if n.name in wanted:
                self.values[n.name] = out.detach().float().clone()
            return out

    parts: dict[str, list] = {name: [] for name in wanted}
    with torch.no_grad():
        for x in inputs:
            recorder = Recorder(gm)
            recorder.run(x)
            for name, value in recorder.values.items():
                parts[name].append(value)
    return {name: torch.cat(values) for name, values in parts.items() if values}
