"""Finds each quantized layer's fused group in exported FX graphs and captures values there.

Group: a conv/linear followed by the single-user chain of batch_norm / relu / hardtanh nodes. In the
INT8 graph BN is folded into the conv and the group output is quantized: its value is taken after the
dequantize, i.e. what the next layer really receives. Layers are matched across graphs by module path
from node.meta["nn_module_stack"] (kept by torch.export, prepare_qat_pt2e and convert_pt2e)."""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable

    import torch
    from torch.fx import Node

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


def op_name(node: torch.fx.Node) -> str:
    """aten op name without overload (`conv2d`), or the function name for other call targets."""
    if getattr(node, "op", None) != "call_function":
        return ""
    target = node.target
    packet = getattr(target, "_overloadpacket", None)
    return getattr(packet if packet is not None else target, "__name__", str(target))


def attr(gm: torch.fx.GraphModule, target: str) -> Any:
    """The module attribute a get_attr node's `target` names (dotted path): a tensor, a module or a
    constant."""
    value: Any = gm
    for part in target.split("."):
        value = getattr(value, part)
    return value


def module_path(node: torch.fx.Node) -> str | None:
    """Path of the innermost module that produced `node`, e.g. `features.0`."""
    stack = node.meta.get("nn_module_stack")
    if not stack:
        return None
    return list(stack.values())[-1][0]


@dataclass
class Group:
    module: str
    op: str
    anchor: Node  # the conv/linear fx.Node
    output: Node  # fx.Node whose value is compared
    ops: list[str] = field(default_factory=list)  # reported op names, anchor first
    nodes: list[Node] = field(default_factory=list)  # fx.Nodes from the anchor to the output

    @property
    def input(self) -> Node:
        """The anchor's activation input: the first argument of the conv/linear, always a node."""
        import torch.fx

        value = self.anchor.args[0]
        assert isinstance(value, torch.fx.Node), f"{self.anchor.name} takes {value!r} as its input"
        return value


def _single_user(node: torch.fx.Node) -> Node | None:
    users = list(node.users)
    return users[0] if len(users) == 1 else None


def _follow(anchor: torch.fx.Node, skip_bn_arithmetic: bool = False) -> Group:
    group = Group(module=module_path(anchor) or anchor.name, op=ANCHORS[op_name(anchor)], anchor=anchor, output=anchor)
    group.ops.append(group.op)
    group.nodes.append(anchor)
    node = anchor
    while (nxt := _single_user(node)) is not None:
        name = op_name(nxt)
        if name in FOLLOW:
            group.ops.append(FOLLOW[name])
            group.nodes.append(nxt)
            node = nxt
            if name.startswith("_native_batch_norm"):  # returns a tuple: step onto getitem(…, 0)
                item = _single_user(node)
                if item is None or op_name(item) != "getitem":
                    break
                group.nodes.append(item)
                node = item
        elif skip_bn_arithmetic and _qat_bn_prefix(nxt):
            # prepare_qat_pt2e rewrites conv+BN as conv(x, w*bn_scale) / bn_scale [+ bias] -> BN
            while nxt is not None and op_name(nxt) in ("div", "add"):
                group.nodes.append(nxt)
                node, nxt = nxt, _single_user(nxt)
        else:
            break
    group.output = node
    return group


def _qat_bn_prefix(node: torch.fx.Node) -> bool:
    """`node` starts the div [-> add] -> batch_norm chain of a QAT conv+BN pattern."""
    for _ in range(2):
        if op_name(node) not in ("div", "add"):
            return False
        user = _single_user(node)
        if user is None:
            return False
        node = user
        if op_name(node) in FOLLOW and "batch_norm" in op_name(node):
            return True
    return False


def _is_quant_node(node: torch.fx.Node, kind: str) -> bool:
    return op_name(node).startswith(kind)


def _after_qdq(node: Node) -> Node:
    """The dequantize after `node`'s quantize if its output is quantized, else `node`."""
    q = _single_user(node)
    if q is None or not _is_quant_node(q, "quantize_per_"):
        return node
    for dq in q.users:
        if _is_quant_node(dq, "dequantize_per_"):
            return dq
    return node


def _weight_is_quantized(anchor: torch.fx.Node) -> bool:
    import torch.fx

    weight = anchor.args[1] if len(anchor.args) > 1 else anchor.kwargs.get("weight")
    return isinstance(weight, torch.fx.Node) and _is_quant_node(weight, "dequantize_per_")


def fp32_groups(gm: torch.fx.GraphModule) -> list[Group]:
    return [_follow(n) for n in gm.graph.nodes if op_name(n) in ANCHORS]


def int8_groups(gm: torch.fx.GraphModule) -> list[Group]:
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


def graph_output(gm: torch.fx.GraphModule) -> Node:
    """The node a graph returns (its first output when it returns several)."""
    import torch.fx

    value = next(n for n in gm.graph.nodes if n.op == "output").args[0]
    while isinstance(value, (tuple, list)) and value:
        value = value[0]
    assert isinstance(value, torch.fx.Node), f"the graph returns {value!r}, not a node's value"
    return value


def tapped(gm: torch.fx.GraphModule, nodes: Iterable[torch.fx.Node]) -> torch.fx.GraphModule:
    """A GraphModule running gm's graph and returning the values of `nodes` (a tuple): one compiled
    forward, where an fx.Interpreter would step through every node in Python (3x two forwards on the
    digits CNN). Kept per (gm, nodes); submodules are shared with gm, so observer and fake-quant
    switches on gm apply."""
    import torch.fx

    key = tuple(n.name for n in nodes)
    taps = _TAPS.setdefault(gm, {})
    if key not in taps:
        graph = torch.fx.Graph()
        val_map: dict[Node, Node] = {}
        graph.graph_copy(gm.graph, val_map)
        graph.output(tuple(val_map[n] for n in nodes))
        taps[key] = torch.fx.GraphModule(gm, graph)
    return taps[key]


_TAPS: weakref.WeakKeyDictionary[torch.fx.GraphModule, dict[tuple[str, ...], torch.fx.GraphModule]] = (
    weakref.WeakKeyDictionary()
)


def capture(gm: torch.fx.GraphModule, inputs: Iterable[Any], nodes: Iterable[torch.fx.Node]) -> dict[str, Any]:
    """Values of `nodes` when `gm` runs on each batch of `inputs` (model_io.Inputs, or single tensors),
    concatenated along dim 0."""
    import torch

    from qat_kernel.pipeline.model_io import as_inputs

    wanted = list({n.name: n for n in nodes}.values())
    module = tapped(gm, wanted)
    parts: dict[str, list[torch.Tensor]] = {n.name: [] for n in wanted}
    with torch.no_grad():
        for x in inputs:
            for n, value in zip(wanted, module(*as_inputs(x))):
                parts[n.name].append(value.detach().float())
    return {name: values[0] if len(values) == 1 else torch.cat(values) for name, values in parts.items() if values}


# --- prepared (fake-quant) graphs -----------------------------------------------------------------

# Ops that move values without computing new ones: fake quantizers on either side of them belong to
# the layer that consumes their output (the x86 recipe quantizes max_pool/flatten in int8).
PASSTHROUGH = {
    "max_pool2d",
    "avg_pool2d",
    "adaptive_avg_pool2d",
    "flatten",
    "reshape",
    "view",
    "permute",
    "transpose",
    "contiguous",
    "clone",
    "dropout",
    "squeeze",
    "unsqueeze",
}


def fake_quant_module(gm: torch.fx.GraphModule, node: torch.fx.Node):
    """The fake-quant module a call_module node runs, else None."""
    if getattr(node, "op", None) != "call_module":
        return None
    module = gm.get_submodule(str(node.target))
    return module if hasattr(module, "fake_quant_enabled") else None


def prepared_groups(gm: torch.fx.GraphModule) -> list[Group]:
    """Groups of a prepare_qat_pt2e graph, output before the output fake quantizer."""
    return [_follow(n, skip_bn_arithmetic=True) for n in gm.graph.nodes if op_name(n) in ANCHORS]


@dataclass
class FakeQuants:
    """Names (module targets) of the fake quantizers that make one layer INT8."""

    weight: list[str] = field(default_factory=list)
    input: list[str] = field(default_factory=list)

    @property
    def all(self) -> list[str]:
        return self.weight + self.input


def layer_fake_quants(gm: torch.fx.GraphModule, group: Group) -> FakeQuants:
    """Weight fake quantizer of the anchor, and those on its activation input back to the producer."""
    import torch.fx

    found = FakeQuants()
    anchor = group.anchor
    weight = anchor.args[1] if len(anchor.args) > 1 else anchor.kwargs.get("weight")
    if isinstance(weight, torch.fx.Node) and fake_quant_module(gm, weight) is not None:
        found.weight.append(str(weight.target))
    node = group.input
    seen = set()
    while isinstance(node, torch.fx.Node) and node not in seen:
        seen.add(node)
        if fake_quant_module(gm, node) is not None:
            if node.target not in found.input:
                found.input.append(str(node.target))
        elif op_name(node) not in PASSTHROUGH:
            break
        node = node.args[0] if node.args else None
    return found


# --- converted (INT8) graphs: one layer fed another input ----------------------------------------


def _is_qdq(node: torch.fx.Node) -> bool:
    return _is_quant_node(node, "quantize_per_") or _is_quant_node(node, "dequantize_per_")


def _ancestors(node: torch.fx.Node) -> set[Node]:
    seen: set[Node] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        stack.extend(n.all_input_nodes)
    return seen


@dataclass
class Region:
    """The INT8 nodes that turn `entry`'s value into the group output: input Q/DQ, the layer, output
    Q/DQ. Re-running them with another value for `entry` gives the layer's "local" output."""

    entry: Node
    nodes: list[Node]  # in graph order, entry excluded
    weight: list[Node]  # weight dequantize chain (not fed by entry), for reporting


def int8_region(group: Group) -> Region:
    import torch.fx

    entry = group.input
    while _is_qdq(entry) and entry.args and isinstance(entry.args[0], torch.fx.Node):
        entry = entry.args[0]
    ancestors = _ancestors(group.output)
    downstream, stack = set(), [entry]
    while stack:
        n = stack.pop()
        for user in n.users:
            if user in ancestors and user not in downstream:
                downstream.add(user)
                stack.append(user)
    order = {n: i for i, n in enumerate(group.output.graph.nodes)}
    nodes = sorted(downstream, key=order.__getitem__)
    weight = sorted((n for n in ancestors - downstream - _ancestors(entry) if _is_qdq(n)), key=order.__getitem__)
    return Region(entry=entry, nodes=nodes, weight=weight)


def run_region(interpreter: torch.fx.Interpreter, env: dict[Node, Any], region: Region, value: Any):
    """The group output when `region.entry` takes `value`; every other input comes from `env`."""
    import torch.fx

    local = {region.entry: value}

    def lookup(n: torch.fx.Node):
        return local[n] if n in local else env[n]

    for n in region.nodes:
        args = torch.fx.map_arg(n.args, lookup)
        kwargs = torch.fx.map_arg(n.kwargs, lookup)
        local[n] = getattr(interpreter, n.op)(n.target, args, kwargs)
    return local[region.nodes[-1]] if region.nodes else value
