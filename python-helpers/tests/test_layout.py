"""The kernel's layout rules, read from its imports (module level and inside functions alike):
handlers (methods/) import services, never each other; nothing but the RPC server reaches into methods/;
the modules import each other without cycles."""

from __future__ import annotations

import ast
from pathlib import Path

from qat_kernel import PACKAGE_DIR

HANDLERS = "qat_kernel.methods"


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module(p): p for p in PACKAGE_DIR.rglob("*.py")}


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
