"""Regenerates test/fixtures/cifar/: the QDQ ONNX export of examples/cifar's MobileNetV2 (about 300 nodes, as a
new user meets it) and its compare/layers result, for the graph view's readability tests. The kernel runs on a
temp copy of the example (it pre-trains the FP32 model first, minutes on a laptop), or `--result` names the
compare/layers result of a run made already. What the view does not read is left out to keep the files small:
node metadata other than the module scopes, the graph's export metadata, and the payload of tensors over 1 KiB
(as the extension host leaves out large weights before it sends a model to the view); the layers lose their FX
node lists and the observer drift. Run with the kernel's Python:
    ~/.cache/qat-studio/venv/bin/python scripts/make-cifar-fixture.py [--result compare.json]"""

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python-helpers"))
import onnx  # noqa: E402

KEEP_METADATA = {"pkg.torch.onnx.name_scopes"}
MAX_PAYLOAD = 1024


def compare(config_name: str) -> dict:
    from tests.rpc_client import KernelClient

    tmp = Path(tempfile.mkdtemp())
    ws = tmp / "cifar"
    shutil.copytree(ROOT / "examples" / "cifar", ws, ignore=shutil.ignore_patterns("out", "__pycache__"))
    client = KernelClient()
    try:
        return client.request("compare/layers", {"config": str(ws / config_name)}, timeout=6 * 3600)
    finally:
        client.close()


def slim(model: onnx.ModelProto) -> None:
    del model.graph.metadata_props[:]
    for node in model.graph.node:
        kept = [p for p in node.metadata_props if p.key in KEEP_METADATA]
        del node.metadata_props[:]
        node.metadata_props.extend(kept)
        node.doc_string = ""
    for t in model.graph.initializer:
        if t.ByteSize() > MAX_PAYLOAD:
            for field in ("raw_data", "float_data", "int32_data", "int64_data", "double_data"):
                t.ClearField(field)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--result", help="compare/layers result (JSON) of a run made already")
    ap.add_argument("--config", default="mobilenetv2.qat.yaml")
    args = ap.parse_args()
    result = json.loads(Path(args.result).read_text()) if args.result else compare(args.config)
    out = ROOT / "test" / "fixtures" / "cifar"
    out.mkdir(parents=True, exist_ok=True)
    model = onnx.load(result["onnx"]["path"])
    slim(model)
    onnx.save(model, str(out / "mobilenetv2.qdq.onnx"))
    result["onnx"]["path"] = "mobilenetv2.qdq.onnx"
    result.pop("drift", None)
    for layer in result["layers"]:
        layer.pop("nodes", None)
        if "source" in layer:
            layer["source"]["file"] = Path(layer["source"]["file"]).name
    (out / "compare-layers.json").write_text(json.dumps(result, indent=1) + "\n")
    print(len(model.graph.node), "nodes,", (out / "mobilenetv2.qdq.onnx").stat().st_size, "bytes")


if __name__ == "__main__":
    main()
