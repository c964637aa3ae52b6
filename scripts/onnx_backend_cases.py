"""Writes every model of ONNX's own backend node test cases (built by the `onnx` wheel) into a folder,
with summary.json: what the onnx package itself reads from each file. The importer tests decode the same
files in TypeScript and must agree.
    python scripts/onnx_backend_cases.py OUT_DIR"""

import json
import sys
import warnings
from pathlib import Path

import onnx
from onnx.backend.test.case.node import collect_testcases


def subgraph_nodes(graph: onnx.GraphProto) -> int:
    count = 0
    for node in graph.node:
        for attr in node.attribute:
            for g in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                count += len(g.node) + subgraph_nodes(g)
    return count


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = [c for c in collect_testcases("") if c.model is not None]
    summary = {}
    for i, case in enumerate(cases):
        data = case.model.SerializeToString()
        model = onnx.load_from_string(data)
        name = f"{i:04d}_{case.name}.onnx"
        (out / name).write_bytes(data)
        summary[name] = {
            "ops": [n.op_type for n in model.graph.node],
            "opsets": {o.domain or "ai.onnx": o.version for o in model.opset_import},
            "ir_version": model.ir_version,
            "functions": len(model.functions),
            "initializer_types": sorted({t.data_type for t in model.graph.initializer}),
            "input_elem_types": [i.type.tensor_type.elem_type for i in model.graph.input],
            "subgraph_nodes": subgraph_nodes(model.graph),
        }
    (out / "summary.json").write_text(json.dumps(summary))
    print(len(summary))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
