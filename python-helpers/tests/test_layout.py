"""The kernel's layout rules, read from its imports (module level and inside functions alike):
- layers, imports pointing down only: the top-level modules (atomic, reads, tbevents, packages, userpaths) < rpc/ <
  pipeline/ < analysis/ < runtimes/ < jobs/ < methods/, with the RPC server and __main__ the entry on top;
- runtimes/: a backend (ort, tvm, inductor, c, torchao) imports no other backend; onnx/ (the QDQ export and its
  rewrites) and the modules in runtimes/ itself (targets, parity, bench, cpu) import none;
- jobs/: a job imports no other job, only the helpers (opening, tvm_vs_ort, reports/), which import no job; a job's
  subprocess entry (<job>_worker) may import its job;
- methods/: a handler imports its own job (jobs/<its name>.py) and rpc.context, nothing else;
  nothing but the RPC server reaches into methods/;
- the modules import each other without cycles.
Each rule is shown able to fail on a planted import."""

from __future__ import annotations

import ast
import contextlib
from pathlib import Path

import pytest

from qat_kernel import PACKAGE_DIR

HANDLERS = "qat_kernel.methods"
JOBS = "qat_kernel.jobs"
# Lowest first; "" is the top-level modules (and the package itself).
LAYERS = ("", "rpc", "pipeline", "analysis", "runtimes", "jobs", "methods")
ENTRY = {"qat_kernel.__main__", "qat_kernel.rpc.server"}  # above every layer: they serve the handler table
BACKENDS = ("ort", "tvm", "inductor", "c", "torchao")  # runtimes/<backend>


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module(p): p for p in PACKAGE_DIR.rglob("*.py")}
# Shared by the jobs; they import no job. jobs/reports/ renders every job's report.
JOB_HELPERS = {f"{JOBS}.opening", f"{JOBS}.tvm_vs_ort"} | {m for m in MODULES if m.startswith(f"{JOBS}.reports")}


def _imports(path: Path) -> set[str]:
    """The qat_kernel modules `path` imports (a `from package import name` counts name when it is a module)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("qat_kernel"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("qat_kernel"):
            assert node.level == 0, f"{path}: relative import"
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if sub in MODULES else node.module)
    return found


GRAPH = {name: _imports(path) & set(MODULES) for name, path in MODULES.items()}


def test_the_walk_sees_the_kernel():
    assert len(MODULES) > 40 and "qat_kernel.jobs.build_tvm" in GRAPH["qat_kernel.methods.build_tvm"]


def test_handlers_never_import_each_other():
    for name, deps in GRAPH.items():
        if name.startswith(HANDLERS + "."):
            assert not {d for d in deps if d.startswith(HANDLERS)}, f"{name} imports a handler"


def test_only_the_server_reaches_into_the_handlers():
    for name, deps in GRAPH.items():
        if not name.startswith(HANDLERS) and name != "qat_kernel.rpc.server":
            assert not {d for d in deps if d.startswith(HANDLERS)}, f"{name} imports {HANDLERS}"


def _cycle():
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str):
        state[node] = 1
        stack.append(node)
        for dep in sorted(GRAPH[node]):
            if dep == node or (dep in ("qat_kernel",) and node.startswith("qat_kernel.")):
                continue
            if state.get(dep) == 1:
                return stack[stack.index(dep) :] + [dep]
            if dep not in state:
                found = visit(dep)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(GRAPH):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_no_import_cycles():
    assert _cycle() is None, " -> ".join(_cycle())


def _imported_names():
    """(file, module, name) of every `from qat_kernel... import name`, in functions too, in the kernel, its
    tests and the benchmarks."""
    helpers = PACKAGE_DIR.parent
    for path in [*MODULES.values(), *(helpers / "tests").glob("*.py"), *(helpers / "benchmarks").glob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("qat_kernel"):
                for alias in node.names:
                    yield path, node.module, alias.name


def test_every_imported_name_exists():
    """A function-local import of a name that moved fails only when the function runs: check them all here."""
    import importlib

    missing = []
    for path, module, name in _imported_names():
        if f"{module}.{name}" in MODULES:
            continue
        if not hasattr(importlib.import_module(module), name):
            missing.append(f"{path.relative_to(PACKAGE_DIR.parent)}: {module}.{name}")
    assert not missing, missing


def test_the_cycle_check_can_fail():
    GRAPH["qat_kernel.atomic"].add("qat_kernel.jobs.build_tvm")
    try:
        assert _cycle() is not None
    finally:
        GRAPH["qat_kernel.atomic"].discard("qat_kernel.jobs.build_tvm")


@contextlib.contextmanager
def _planted(module: str, imported: str):
    """GRAPH with one more import, for as long as the block runs."""
    had = imported in GRAPH[module]
    GRAPH[module].add(imported)
    try:
        yield
    finally:
        if not had:
            GRAPH[module].discard(imported)


def test_imports_inside_functions_count(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from qat_kernel.jobs import opening\n", encoding="utf-8")
    assert f"{JOBS}.opening" in _imports(source)


# ------------------------------------------------------------------------------------------- layers


def layer(name: str) -> int:
    """The layer of a kernel module (index in LAYERS; ENTRY above them all). ValueError for a folder that is
    in no layer."""
    if name in ENTRY:
        return len(LAYERS)
    parts = name.split(".")
    if len(parts) == 1 or (len(parts) == 2 and name in MODULES and MODULES[name].name != "__init__.py"):
        return 0
    if parts[1] not in LAYERS:
        raise ValueError(f"{name}: qat_kernel/{parts[1]}/ is in no layer")
    return LAYERS.index(parts[1])


def _upward():
    return sorted(f"{m} -> {d}" for m, deps in GRAPH.items() for d in deps if layer(d) > layer(m))


def test_every_module_has_a_layer():
    for name in GRAPH:
        layer(name)
    with pytest.raises(ValueError):
        layer("qat_kernel.plugins.extra")


def test_imports_point_down_the_layers():
    assert not _upward()


def test_the_layer_check_can_fail():
    with _planted("qat_kernel.pipeline.session", "qat_kernel.analysis.metrics"):
        assert _upward() == ["qat_kernel.pipeline.session -> qat_kernel.analysis.metrics"]
    with _planted("qat_kernel.atomic", "qat_kernel.rpc.errors"):  # the top-level modules sit below rpc/
        assert _upward() == ["qat_kernel.atomic -> qat_kernel.rpc.errors"]


# ----------------------------------------------------------------------------------------- backends


def backend(name: str) -> str | None:
    parts = name.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "runtimes" and parts[2] in BACKENDS else None


def _across_backends():
    """Imports from runtimes/ into a backend other than the importer's own (none for the shared modules)."""
    return sorted(
        f"{m} -> {d}"
        for m, deps in GRAPH.items()
        if m.startswith("qat_kernel.runtimes")
        for d in deps
        if backend(d) is not None and backend(d) != backend(m)
    )


def test_no_backend_imports_another():
    assert {backend(m) for m in GRAPH} == {None, *BACKENDS}
    assert not _across_backends()


def test_the_backend_check_can_fail():
    with _planted("qat_kernel.runtimes.ort.candidates", "qat_kernel.runtimes.tvm.mixed"):
        assert _across_backends() == ["qat_kernel.runtimes.ort.candidates -> qat_kernel.runtimes.tvm.mixed"]
    with _planted("qat_kernel.runtimes.onnx.qdq_export", "qat_kernel.runtimes.ort.sessions"):
        assert _across_backends() == ["qat_kernel.runtimes.onnx.qdq_export -> qat_kernel.runtimes.ort.sessions"]


# --------------------------------------------------------------------------------------------- jobs


def _between_jobs():
    """Imports from one module of jobs/ to another that are not a helper, nor a worker's own job."""
    return sorted(
        f"{m} -> {d}"
        for m, deps in GRAPH.items()
        if m.startswith(JOBS + ".")
        for d in deps
        if d.startswith(JOBS + ".") and d not in JOB_HELPERS and m != d + "_worker"
    )


def test_jobs_import_only_the_helpers():
    assert JOB_HELPERS <= set(GRAPH)
    assert not _between_jobs()


def test_the_job_check_can_fail():
    with _planted(f"{JOBS}.bench_run", f"{JOBS}.build_tvm"):
        assert _between_jobs() == [f"{JOBS}.bench_run -> {JOBS}.build_tvm"]
    with _planted(f"{JOBS}.opening", f"{JOBS}.qat_train"):  # a helper imports no job
        assert _between_jobs() == [f"{JOBS}.opening -> {JOBS}.qat_train"]


# ----------------------------------------------------------------------------------------- handlers


def _handler_faults():
    """A handler (methods/<name>.py) must import its job, jobs/<name>.py, and nothing but it and rpc.context."""
    faults = []
    for name, deps in GRAPH.items():
        if not name.startswith(HANDLERS + "."):
            continue
        job = f"{JOBS}.{name.rsplit('.', 1)[1]}"
        if job not in deps:
            faults.append(f"{name} does not call {job}")
        faults += [f"{name} -> {d}" for d in sorted(deps - {job, "qat_kernel.rpc.context"})]
    return faults


def test_each_handler_calls_its_own_job():
    assert not _handler_faults()


def test_the_handler_check_can_fail():
    with _planted(f"{HANDLERS}.build_ort", f"{JOBS}.build_tvm"):
        assert _handler_faults() == [f"{HANDLERS}.build_ort -> {JOBS}.build_tvm"]
    GRAPH[f"{HANDLERS}.build_ort"].discard(f"{JOBS}.build_ort")
    try:
        assert _handler_faults() == [f"{HANDLERS}.build_ort does not call {JOBS}.build_ort"]
    finally:
        GRAPH[f"{HANDLERS}.build_ort"].add(f"{JOBS}.build_ort")


def _unresolved(paths) -> list[str]:
    """Imports of the kernel (top-level or inside a function, where a move shows only when that line runs) that
    name a module or a name the kernel does not have."""
    import importlib

    bad = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("qat_kernel"):
                wanted = [(node.module, a.name) for a in node.names]
            elif isinstance(node, ast.Import):
                wanted = [(a.name, None) for a in node.names if a.name.startswith("qat_kernel")]
            else:
                continue
            for module, name in wanted:
                if module not in MODULES:
                    bad.append(f"{path.name}:{node.lineno} {module}")
                    continue
                if name is None or f"{module}.{name}" in MODULES:
                    continue
                if name not in vars(importlib.import_module(module)):
                    bad.append(f"{path.name}:{node.lineno} {module}.{name}")
    return bad


def test_every_import_of_the_kernel_resolves():
    """Also the imports inside functions, for the kernel, its tests and benchmarks."""
    helpers = PACKAGE_DIR.parent
    paths = [*MODULES.values(), *(helpers / "tests").glob("*.py"), *(helpers / "benchmarks").glob("*.py")]
    assert _unresolved(paths) == []


def test_a_moved_module_imported_inside_a_function_is_found(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from qat_kernel.pipeline import userpaths\n", encoding="utf-8")
    assert _unresolved([source]) == ["m.py:2 qat_kernel.pipeline.userpaths"]
