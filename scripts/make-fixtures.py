"""Regenerates test/fixtures/digits/: a real QDQ ONNX export of the example and its compare/layers result,
made by the real kernel on a temp copy of examples/digits. Run with the kernel's Python:
    ~/.cache/qat-studio/venv/bin/python scripts/make-fixtures.py"""

import collections
import json
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python-helpers"))
import onnx  # noqa: E402
from tests.rpc_client import KernelClient  # noqa: E402

out = ROOT / "test" / "fixtures" / "digits"
out.mkdir(parents=True, exist_ok=True)
with tempfile.TemporaryDirectory() as tmp:
    ws = Path(tmp) / "digits"
    shutil.copytree(ROOT / "examples" / "digits", ws, ignore=shutil.ignore_patterns("out", "__pycache__"))
    client = KernelClient()
    try:
        result = client.request("compare/layers", {"config": str(ws / "digits.qat.yaml")})
    finally:
        client.close()
    shutil.copyfile(result["onnx"]["path"], out / "digits.qdq.onnx")
    result["onnx"]["path"] = "digits.qdq.onnx"
    for layer in result["layers"]:
        if "source" in layer:
            layer["source"]["file"] = Path(layer["source"]["file"]).name
    (out / "compare-layers.json").write_text(json.dumps(result, indent=2) + "\n")

model = onnx.load(str(out / "digits.qdq.onnx"))
ops = collections.Counter(n.op_type for n in model.graph.node)
summary = {
    "ops": dict(sorted(ops.items())),
    "opset": {o.domain or "ai.onnx": o.version for o in model.opset_import},
    "inputs": [i.name for i in model.graph.input],
    "outputs": [o.name for o in model.graph.output],
}
(out / "onnx-summary.json").write_text(json.dumps(summary, indent=2) + "\n")

# The ONNX Runtime and TVM panes of the same export, as graph/export's ort stage and build/tvm write them: ORT's
# optimised graph (for this machine's CPU) and the x86-64 build's kernels, with the modules of the INT8 graph.
from qat_kernel.runtimes.ort.executed_graph import write_executed_graph  # noqa: E402
from qat_kernel.runtimes.tvm.build import build_tvm  # noqa: E402

write_executed_graph(out / "digits.qdq.onnx", out / "digits.ort.onnx")
with tempfile.TemporaryDirectory() as tmp:
    kernels = build_tvm(out / "digits.qdq.onnx", "x86-64", Path(tmp) / "tvm")["kernel_graph"]
converted = json.loads((out / "digits.converted.qatgraph.json").read_text())
tvm_graph = {
    **{k: converted[k] for k in ("format", "name", "flow")},
    "stage": "tvm",
    "nodes": kernels["nodes"],
    "tensors": kernels["tensors"],
    "modules": converted["modules"],
}
(out / "digits.tvm.qatgraph.json").write_text(json.dumps(tvm_graph, indent=2) + "\n")
print(f"wrote {out}")
