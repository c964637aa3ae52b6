"""The graph ONNX Runtime runs for a QDQ export, as a file the graph view opens beside the PyTorch stages
(graph/export's `ort` stage, out/<config name>.ort.onnx): the session's own optimised graph
(SessionOptions.optimized_model_filepath, at sessions.session's default level, the one every ORT run of
the kernel uses), with each node's provenance written into its metadata_props.

ORT keeps no metadata of the export's nodes and renames what it fuses (node_conv2d -> QLinearConv
node_conv2d_token_1; a ReLU and the Q/DQ around a conv disappear into it). A node of the optimised graph
comes from the export's node its name names, less the `_token_<n>` suffixes ORT adds to keep names unique:
that node's own name (a QDQ fusion), the same after "fused " (FusedGemm, FusedConv), or for a node of ORT's
blocked layout (<output>_nchwc) the node that wrote that output. An export node that is gone was fused
into a neighbour: a DequantizeLinear, or a conv or matmul whose fused node is named after its activation
(ReLU's output: relu_nchwc), into the nearest node that reads it; anything else (an activation, a
QuantizeLinear) into the nearest node it reads from; each the other way where that way finds none. Each
node then gets:
- `pkg.torch.onnx.name_scopes`: the exporter's scopes of its first node with a module (what the view
  reads as the node's module);
- `qat_studio.modules`: every module its nodes belong to, a JSON list (QLinearConv: ["conv1", "relu1"]);
- `qat_studio.onnx_nodes`: the export's nodes it came from, a JSON list;
- `qat_studio.precision`: int8, fp32, fp16 or bf16, what it runs in (as_executed.precision_as_executed; ORT's
  fused int8 ops have no Q/DQ around them for the view to judge by)."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from qat_kernel import atomic
from qat_kernel.runtimes.onnx.fp16 import SCOPES_KEY, module_of
from qat_kernel.runtimes.ort.as_executed import precision_as_executed, source_node_name
from qat_kernel.runtimes.ort.sessions import session

if TYPE_CHECKING:
    import onnx

MODULES_KEY = "qat_studio.modules"
NODES_KEY = "qat_studio.onnx_nodes"
PRECISION_KEY = "qat_studio.precision"
STAGE_KEY = "qat_studio.stage"
# Export nodes ORT folds into the node that reads them when they are gone (see the module's doc).
_ABSORBED_BY_CONSUMER = {"DequantizeLinear", "Conv", "ConvTranspose", "Gemm", "MatMul"}


def write_executed_graph(qdq: Path, dest: Path) -> tuple[int, list[str]]:
    """ORT's optimised graph of the QDQ export `qdq`, annotated, written atomically to `dest`: its node count
    and the modules its nodes cover, in graph order."""
    import onnx
    import onnxruntime

    with tempfile.TemporaryDirectory() as tmp:
        optimized = Path(tmp) / "optimized.onnx"
        session(qdq, optimized_path=optimized)
        model = onnx.load(str(optimized))
        executed = {op["name"]: op["precision"] for op in precision_as_executed(optimized, qdq)["ops"]}
    source = onnx.load(str(qdq), load_external_data=False)
    covered = annotate(model, source)
    for node in model.graph.node:
        if executed.get(node.name) in ("int8", "fp32", "fp16", "bf16"):
            _set(node, PRECISION_KEY, executed[node.name])
    for key, value in (
        (STAGE_KEY, "ort"),
        ("qat_studio.source", qdq.name),
        ("qat_studio.runtime", f"onnxruntime {onnxruntime.__version__}, CPUExecutionProvider"),
    ):
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    atomic.write_bytes(dest, model.SerializeToString())
    return len(model.graph.node), covered


def annotate(model: onnx.ModelProto, source: onnx.ModelProto) -> list[str]:
    """Writes each node's provenance (see the module's doc) into `model`, ORT's optimised graph of `source`;
    returns the modules covered, in graph order."""
    sources = {n.name: n for n in source.graph.node if n.name}
    writer = {o: n.name for n in source.graph.node for o in n.output if o and n.name}
    origin: dict[str, list[str]] = {}  # export node -> the optimised nodes named after it
    for node in model.graph.node:
        name = _own_source(node.name, sources, writer)
        if name is not None:
            origin.setdefault(name, []).append(node.name)
    owner = _fused_into(source, set(origin))
    covers: dict[str, list[str]] = {n.name: [] for n in model.graph.node}
    for src in source.graph.node:  # export order, so a kernel's own node comes before what it absorbed
        for target in origin.get(src.name) or origin.get(owner.get(src.name, ""), [])[:1]:
            covers[target].append(src.name)
    seen: list[str] = []
    for node in model.graph.node:
        nodes = covers.get(node.name) or []
        if not nodes:
            continue
        modules = list(dict.fromkeys(m for m in (module_of(sources[n]) for n in nodes) if m))
        _set(node, NODES_KEY, json.dumps(nodes))
        if not modules:
            continue
        _set(node, MODULES_KEY, json.dumps(modules))
        first = next(sources[n] for n in nodes if module_of(sources[n]))
        _set(node, SCOPES_KEY, next(p.value for p in first.metadata_props if p.key == SCOPES_KEY))
        seen += [m for m in modules if m not in seen]
    return seen


def _own_source(name: str, sources: dict[str, onnx.NodeProto], writer: dict[str, str]) -> str | None:
    """The export node an optimised node's name names (see the module's doc), or None (a layout helper ORT added:
    Transpose, ReorderInput/ReorderOutput)."""
    base = source_node_name(name)
    while base.startswith("fused "):
        base = base.removeprefix("fused ")
    if base in sources:
        return base
    if base.endswith("_nchwc"):
        return writer.get(base.removesuffix("_nchwc"))
    return None


def _fused_into(source: onnx.ModelProto, kept: set[str]) -> dict[str, str]:
    """{export node ORT removed: the kept export node it was fused into}, for those that have one."""
    graph = source.graph
    producer = {o: n for n in graph.node for o in n.output if o}
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for n in graph.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)

    def up(n: onnx.NodeProto) -> Iterable[onnx.NodeProto]:
        return (producer[i] for i in n.input if i in producer)

    def down(n: onnx.NodeProto) -> Iterable[onnx.NodeProto]:
        return (c for o in n.output for c in consumers.get(o, []))

    owner: dict[str, str] = {}
    for n in graph.node:
        if not n.name or n.name in kept:
            continue
        ways = (down, up) if n.op_type in _ABSORBED_BY_CONSUMER else (up, down)
        found = next((k for way in ways if (k := _nearest(n, way, kept)) is not None), None)
        if found is not None:
            owner[n.name] = found
    return owner


def _nearest(
    start: onnx.NodeProto, step: Callable[[onnx.NodeProto], Iterable[onnx.NodeProto]], kept: set[str]
) -> str | None:
    """The first kept node reached from `start` going one way (`step`: a node -> its neighbours), breadth first."""
    frontier, visited = [start], {id(start)}
    while frontier:
        after: list[onnx.NodeProto] = []
        for n in frontier:
            for m in step(n):
                if id(m) in visited:
                    continue
                if m.name in kept:
                    return m.name
                visited.add(id(m))
                after.append(m)
        frontier = after
    return None


def _set(node: onnx.NodeProto, key: str, value: str) -> None:
    for prop in node.metadata_props:
        if prop.key == key:
            prop.value = value
            return
    prop = node.metadata_props.add()
    prop.key, prop.value = key, value
