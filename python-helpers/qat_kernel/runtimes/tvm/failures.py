"""A model build/tvm cannot build: one typed error that says where (the stage, the ONNX node, its op, the module
and the user's source line, from the dynamo export's node metadata) and what to do, instead of a bare
"Internal error: <exception>".

The ONNX importer converts node by node in graph order and records each converted output, so the first node
whose outputs it has not recorded is the one it failed on; TVM's up-front check of unsupported ops names their
op types. Where a later stage fails (the Relax passes, code generation) the op is not known: the error still
names the stage and what TVM said."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import TYPE_CHECKING

from qat_kernel.rpc.errors import TvmBuildError

if TYPE_CHECKING:
    import onnx
    from tvm.relax.frontend.onnx.onnx_frontend import ONNXGraphImporter

    from qat_kernel.userpaths import SourceLocation

SCOPES_KEY = "pkg.torch.onnx.name_scopes"
STACK_KEY = "pkg.torch.onnx.stack_trace"
CLASSES_KEY = "pkg.torch.onnx.class_hierarchy"

STAGES = {
    "import": "TVM's ONNX importer",
    "compile": "TVM's compilation (Relax passes and code generation)",
    "export": "writing the library",
}
ADVICE = {
    "import": (
        "What to do: write that part of the model with ops TVM imports or keep it out of the exported graph; or "
        "deploy with build/ort, which runs every ONNX op."
    ),
    "compile": (
        "What to do: this is a TVM limitation or bug, not your model's: deploy with build/ort meanwhile, and report "
        "it with this message and the QDQ ONNX file."
    ),
    "export": "What to do: check that the target's C++ toolchain works (it linked nothing), or deploy with build/ort.",
}


class BuildFailure(TvmBuildError):
    """build/tvm cannot build this model. data: location (the user's source line of the failing op, when known)
    and traceback; `node` holds the ONNX node's name, op, module and class where known. Of kind unsupported:
    the model has something this target cannot build, which the message names with what to do."""

    kind = "unsupported"

    def __init__(
        self,
        message: str,
        node: dict[str, str] | None = None,
        location: SourceLocation | None = None,
        traceback: str = "",
    ):
        super().__init__(message, location=location, traceback=traceback or None)
        self.node = node or {}


def _prop(node: onnx.NodeProto, key: str) -> str | None:
    return next((p.value for p in node.metadata_props if p.key == key), None)


def node_source(node: onnx.NodeProto, index: int = 0) -> dict[str, str]:
    """{onnx_node, op_type, module, module_class, stack_trace} of an ONNX node of the dynamo export."""
    info = {"onnx_node": node.name or f"{node.op_type}_{index}", "op_type": node.op_type}
    for key, field, pick in ((SCOPES_KEY, "module", -2), (CLASSES_KEY, "module_class", -2)):
        text = _prop(node, key)
        try:
            chain = ast.literal_eval(text) if text else None
        except (ValueError, SyntaxError):
            chain = None
        if isinstance(chain, (list, tuple)) and len(chain) >= 2:
            info[field] = str(chain[pick])
    trace = _prop(node, STACK_KEY)
    if trace:
        info["stack_trace"] = trace
    return info


def failed_import_node(
    model: onnx.ModelProto, importer: ONNXGraphImporter | None, exc: BaseException
) -> onnx.NodeProto | None:
    """The ONNX node the importer failed on: one of the op types its up-front check names, else the first node
    (graph order) with an output the importer has not converted; None when neither is known."""
    text = str(exc)
    marker = "not supported for frontend ONNX:"
    if marker in text:
        names = {n.strip() for n in text.split(marker, 1)[1].split(",")}
        return next((n for n in model.graph.node if n.op_type in names), None)
    converted = getattr(importer, "_nodes", None) if importer is not None else None
    if not converted:
        return None
    for node in model.graph.node:
        if node.op_type == "Constant":
            continue
        if any(o and o not in converted for o in node.output):
            return node
    return None


def first_line(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).strip().splitlines() if ln.strip()]
    # TVM's C++ errors put the check that failed last, after a backtrace
    check = next((ln for ln in reversed(lines) if "Check failed" in ln or "Error" in ln), None)
    text = check or (lines[0] if lines else "")
    return f"{type(exc).__name__}: {text[:300]}" if text else type(exc).__name__


def build_failure(
    stage: str,
    exc: BaseException,
    node: onnx.NodeProto | None = None,
    workspace: str | Path | None = None,
    tried: str = "",
) -> BuildFailure:
    """The typed error for `exc` raised in `stage` (a STAGES key), on ONNX `node` when known."""
    from qat_kernel import userpaths
    from qat_kernel.rpc.errors import format_traceback

    where = ""
    info = None
    location = None
    if node is not None:
        info = node_source(node)
        module = info.get("module")
        cls = info.get("module_class")
        where = f" on {info['op_type']} node {info['onnx_node']}"
        if module:
            where += f" of module {module}" + (f" ({cls.rsplit('.', 1)[-1]})" if cls else "")
        if workspace is not None:
            location = userpaths.stack_trace_location(info.get("stack_trace"), str(workspace))
        library = userpaths.model_code_location(info.get("stack_trace")) if location is None else None
        if library is not None:
            where += f", made at {library['file']}:{library['line']}"
        elif location is not None:
            where += f" ({location['file']}:{location['line']})"
    tried_text = f" {tried}" if tried else ""
    advice = ADVICE.get(stage, ADVICE["compile"])
    message = f"build/tvm failed in {STAGES.get(stage, stage)}{where}: {first_line(exc)}.{tried_text} {advice}"
    return BuildFailure(message, node=info, location=location, traceback=format_traceback(exc))
