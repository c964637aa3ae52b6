"""The kernels a TVM build runs, as the graph view's nodes (the `tvm` pane, out/<config name>.tvm.qatgraph.json,
which build/tvm writes): one node per kernel call of the compiled Relax main function (its fused TIR kernels
and the single ops left unfused), edges from that function's dataflow, and per kernel its op kind, the dtypes
it reads and writes, its precision, and the ONNX nodes and modules it came from.

Where each kernel comes from, by binding names, which the passes keep:
1. the module given to tvm.compile: each binding's ONNX nodes. The importer's bindings have their node
   (build.import_onnx's provenance); the fold's bindings stand for the original ones (FoldResult.renamed),
   and one that ends a folded group (an int8 conv and its epilogue) for every node of the group. Read on
   the module just before FuseOps (build.relax_pipeline_for keeps it), whose bindings keep those names: a
   binding with none (the fold's epilogue ops, a layout rewrite's, what LegalizeOps adds for one op)
   belongs with the next one that has, as they are emitted just before it.
2. after FuseOps (kept too): a call of a fused function covers the bindings inside it, which keep their
   names but for the last, named gv: that one is the binding before FuseOps that calls the same kernel on
   the same values; a call left alone keeps its own name.
3. the compiled main (after FuseTIR) calls each kernel from the same binding (the same variable) as in 2.
Names in 2 and 3 may repeat (FuseOps names each fused call's variable `lv`): the graph's ids are the names
made unique as TVM's printer does (lv, lv_1, ...)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from qat_kernel import userpaths
from qat_kernel.runtimes.onnx.fp16 import module_of
from qat_kernel.runtimes.tvm.failures import node_source
from qat_kernel.runtimes.tvm.fold import op_name, short_op

if TYPE_CHECKING:
    import onnx
    import tvm

CALL_TIR = ("relax.call_tir", "relax.call_tir_inplace", "relax.call_tir_with_grad")
# A kernel is named after its heaviest op; the epilogue's casts and arithmetic come after.
_OUR_KERNEL = re.compile(r"^(conv2d|matmul)_(?:vnni|avx2|depthwise|sdot)")  # the PrimFuncs our rewrites add
_MAIN_OP = re.compile(r"conv|matmul|dense|pool|softmax|norm|attention|gather|take|concat|resize")
_PRECISION = {"int8": "int8", "uint8": "int8", "float16": "fp16", "bfloat16": "bf16", "float32": "fp32"}


def imported_sources(provenance: dict[Any, str]) -> dict[str, list[str]]:
    """{binding name: [ONNX node]} of the importer's module, from build.import_onnx's {relax var: node}."""
    return {var.name: [node] for var, node in provenance.items()}


def folded_sources(renamed: dict[str, str], rows: list[dict[str, Any]]) -> dict[str, list[str]]:
    """{binding name of the folded module: its ONNX nodes}: the original binding's node, and every node of its
    group where the fold made one (`rows`: FoldResult.bindings, per original binding)."""
    groups: dict[str, list[str]] = {}
    for row in rows:
        if row.get("group") and row.get("onnx_node"):
            nodes = groups.setdefault(row["group"], [])
            if row["onnx_node"] not in nodes:
                nodes.append(row["onnx_node"])
    by_var = {row["var"]: row for row in rows}
    out: dict[str, list[str]] = {}
    for new, old in renamed.items():
        row = by_var.get(old)
        if row is None:
            continue
        nodes = [row["onnx_node"]] if row.get("onnx_node") else []
        nodes += [n for n in groups.get(row.get("group") or "", []) if n not in nodes]
        if nodes:
            out[new] = nodes
    return out


def binding_ops(func: Any) -> dict[str, str]:
    """{binding name: its Relax op} of the function given to tvm.compile (nn.conv2d, astype, ...). A call_tir of
    one of our kernels (a conv2d / matmul that vnni.py, depthwise.py or dotprod.py wrote) is the op it stands in
    for, so its fused kernel is named after it as the plain build's is."""
    return {b.var.name: _binding_op(b.value) for block in func.body.blocks for b in block.bindings}


def _binding_op(value: Any) -> str:
    name = op_name(value)
    if name in CALL_TIR:
        callee = str(getattr(value.args[0], "name_hint", ""))
        kernel = _OUR_KERNEL.match(callee)
        return {"conv2d": "nn.conv2d", "matmul": "matmul"}[kernel.group(1)] if kernel else "call_tir"
    return short_op(name) if name else type(value).__name__


def binding_sources(func: Any, known: dict[str, list[str]]) -> dict[str, list[str]]:
    """Step 1 on the main function before FuseOps: {binding name: ONNX nodes}."""
    sources: dict[str, list[str]] = {}
    pending: list[str] = []
    last: list[str] = []
    for block in func.body.blocks:
        for b in block.bindings:
            name = b.var.name
            if name not in known:
                pending.append(name)
                continue
            last = known[name]
            for p in pending + [name]:
                sources[p] = last
            pending = []
    for p in pending:
        sources[p] = last
    return sources


def _calls(func: Any) -> list[tuple[str, str, set[str]]]:
    """(binding name, kernel, names of the variables it reads) of each kernel call of `func`."""
    out = []
    for block in func.body.blocks:
        for b in block.bindings:
            call = _kernel_call(b.value)
            if call is not None:
                out.append((b.var.name, call[0], {a.name for a in call[1] if hasattr(a, "name")}))
    return out


def kernel_sources(
    fused: Any, legalized: Any, sources: dict[str, list[str]], ops: dict[str, str]
) -> dict[Any, tuple[list[str], list[str]]]:
    """Step 2: {binding variable of the main after FuseOps: (its ONNX nodes, the ops it computes)}."""
    from tvm import relax

    before = _calls(legalized["main"])
    out: dict[Any, tuple[list[str], list[str]]] = {}
    for block in fused["main"].body.blocks:
        for b in block.bindings:
            names = [b.var.name]
            callee = getattr(b.value, "op", None)
            if isinstance(callee, relax.GlobalVar) and isinstance(fused[callee], relax.Function):
                inner = [ib for ib_block in fused[callee].body.blocks for ib in ib_block.bindings]
                names = [ib.var.name for ib in inner[:-1]]
                last = _kernel_call(inner[-1].value) if inner else None
                if last is not None:  # the group's last binding, renamed gv: the same call before FuseOps
                    reads = {a.name for a in last[1] if hasattr(a, "name")} & set(names)
                    names += [n for n, k, r in before if k == last[0] and reads <= r and n not in names][:1]
            nodes: list[str] = []
            for n in names:
                nodes += [s for s in sources.get(n, []) if s not in nodes]
            out[b.var] = (nodes, [ops[n] for n in names if n in ops])
    return out


def kernel_graph(
    compiled: tvm.IRModule,
    fused: tvm.IRModule | None,
    legalized: tvm.IRModule,
    sources: dict[str, list[str]],
    ops: dict[str, str],
    model: onnx.ModelProto,
    kernels: list[dict[str, Any]],
    workspace: str | None = None,
) -> dict[str, Any]:
    """{"nodes", "tensors", "modules"} of the graph view's format (protocol ModelGraph) for the compiled main
    function `compiled` (the module after FuseTIR), `fused` and `legalized` the modules after and before FuseOps,
    `sources` from binding_sources, `ops` from binding_ops, `kernels` build.lowered_kernels' list, `workspace`
    the folder whose files are the user's."""
    from tvm import relax

    by_kernel = kernel_sources(fused, legalized, sources, ops) if fused is not None else {}
    onnx_nodes = {n.name or f"{n.op_type}_{i}": (i, n) for i, n in enumerate(model.graph.node)}
    lowered = {k["name"]: k for k in kernels}
    func = compiled["main"]
    nodes: list[dict[str, Any]] = []
    tensors: dict[str, dict[str, Any]] = {}
    alias: dict[Any, list[str]] = {}  # a tuple, an item of one, a var: the values it stands for
    modules: dict[str, str] = {}
    ids: dict[Any, str] = {}
    taken: set[str] = set()

    def unique(var: Any) -> str:
        name, k = var.name, 0
        while name in taken:
            k += 1
            name = f"{var.name}_{k}"
        taken.add(name)
        ids[var] = name
        return name

    def values(expr: Any) -> list[str]:
        """The produced values an argument reads (a tuple's fields, through aliases)."""
        if isinstance(expr, relax.Tuple):
            return [v for f in expr.fields for v in values(f)]
        if isinstance(expr, relax.TupleGetItem):
            return values(expr.tuple_value)
        if isinstance(expr, relax.Var):
            return alias[expr] if expr in alias else [ids[expr]] if expr in ids else []
        return []

    for p in func.params:
        name = unique(p)
        nodes.append({"id": name, "name": name, "op": "placeholder", "kind": "input", "inputs": [], "outputs": [name]})
        _tensor(tensors, name, p)
    for block in func.body.blocks:
        for b in block.bindings:
            value = b.value
            call = _kernel_call(value)
            if call is None:
                alias[b.var] = values(value)
                continue
            name = unique(b.var)
            kernel, args = call
            found, kernel_ops = by_kernel.get(b.var, ([], []))
            onnx_list = sorted(found, key=lambda n: onnx_nodes[n][0] if n in onnx_nodes else len(onnx_nodes))
            entry: dict[str, Any] = {
                "id": name,
                "name": kernel,
                "op": _main_op(kernel_ops) or kernel,
                "kind": "op",
                "inputs": list(dict.fromkeys(v for a in args for v in values(a))),
                "outputs": [name],
            }
            covered = _modules(onnx_list, onnx_nodes, modules)
            if covered:
                entry["module"], entry["modules"] = covered[0], covered
                source = _source(onnx_list, onnx_nodes, workspace)
                if source:
                    entry["source"] = source
            if onnx_list:
                entry["onnx_nodes"] = onnx_list
            info = lowered.get(kernel)
            if info is not None:
                entry["attributes"] = {"dtypes": f"{', '.join(info['inputs'])} -> {info['output']}"}
                precision = _PRECISION.get(info["inputs"][0] if info["inputs"] else info["output"])
                if precision:
                    entry["precision"] = precision
            if kernel_ops:
                entry.setdefault("attributes", {})["ops"] = ", ".join(kernel_ops)
            nodes.append(entry)
            _tensor(tensors, name, b.var)
    nodes.append(
        {
            "id": "output",
            "name": "output",
            "op": "output",
            "kind": "output",
            "inputs": values(func.body.body),
            "outputs": [],
        }
    )
    return {"nodes": nodes, "tensors": tensors, "modules": [{"path": p, "type": t} for p, t in modules.items()]}


def _kernel_call(value: Any) -> tuple[str, list[Any]] | None:
    """(kernel name, its arguments) of a binding that calls one, else None (a tuple, an item of one, a var)."""
    import tvm
    from tvm import relax

    if not isinstance(value, tvm.ir.Call):
        return None
    name = op_name(value)
    if name in CALL_TIR:
        callee, args = value.args[0], value.args[1]
        fields = list(args.fields) if isinstance(args, relax.Tuple) else [args]
        return str(getattr(callee, "name_hint", callee)), fields
    if isinstance(value.op, relax.GlobalVar):
        return value.op.name_hint, list(value.args)
    return short_op(name) if name else "call", list(value.args)


def _main_op(ops: list[str]) -> str | None:
    return next((o for o in ops if _MAIN_OP.search(o)), ops[0] if ops else None)


def _modules(onnx_list: list[str], onnx_nodes: dict[str, tuple[int, Any]], seen: dict[str, str]) -> list[str]:
    """The modules the ONNX nodes belong to, in graph order; each one's class goes into `seen`."""
    found: list[tuple[int, str]] = []
    for n in onnx_list:
        if n not in onnx_nodes:
            continue
        index, node = onnx_nodes[n]
        module = module_of(node)
        if module and module not in [m for _, m in found]:
            found.append((index, module))
            seen.setdefault(module, (node_source(node, index).get("module_class") or "").rsplit(".", 1)[-1])
    return [m for _, m in sorted(found)]


def _source(onnx_list: list[str], onnx_nodes: dict[str, tuple[int, Any]], workspace: str | None) -> Any:
    """The user's line of the first of the nodes with one in the user's files."""
    if workspace is None:
        return None
    for n in onnx_list:
        if n in onnx_nodes:
            index, node = onnx_nodes[n]
            found = userpaths.stack_trace_location(node_source(node, index).get("stack_trace"), workspace)
            if found:
                return found
    return None


def _tensor(tensors: dict[str, dict[str, Any]], name: str, var: Any) -> None:
    """The value's dtype and dims when it is one tensor (a symbolic dim is -1)."""
    import tvm

    ty = getattr(var, "ty", None)
    dtype = getattr(ty, "dtype", None)
    dims = getattr(getattr(ty, "shape", None), "values", None)
    if dtype is None or dims is None:
        return
    tensors[name] = {
        "dtype": str(dtype),
        "dims": [int(d) if isinstance(d, tvm.tirx.IntImm | int) else -1 for d in dims],
    }
