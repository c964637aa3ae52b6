"""Every sample message in protocol/fixtures/rpc matches its definition in the RPC schema."""

import json

import pytest
from conftest import PROTOCOL

FIXTURES = sorted((PROTOCOL / "fixtures" / "rpc").glob("*.json"))


def _definition(path) -> str:
    """A fixture is named after the definition it is a sample of: <Definition>.json or <Definition>.<case>.json."""
    return path.name.split(".")[0]


def test_fixtures_exist():
    assert FIXTURES


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_fixture_validates(path, validate):
    validate(_definition(path), json.loads(path.read_text(encoding="utf-8")))


def test_every_method_has_params_and_result_fixtures(rpc_schema):
    """Each method's params/result definitions are exercised by a fixture."""
    covered = {_definition(p) for p in FIXTURES}
    for method, spec in rpc_schema["properties"]["methods"]["properties"].items():
        for part in ("params", "result"):
            name = spec["properties"][part]["$ref"].rsplit("/", 1)[-1]
            assert name in covered or name == "KernelInfoParams", f"{method} {part}: no fixture for {name}"


def test_fixture_names_are_definitions(rpc_schema):
    for path in FIXTURES:
        assert _definition(path) in rpc_schema["definitions"], path.name


def test_methods_in_schema_are_served():
    """Each method of the schema has its handler module, and each handler module a method."""
    import importlib
    import pkgutil

    from qat_kernel import methods

    schema = json.loads((PROTOCOL / "kernel-rpc.schema.json").read_text(encoding="utf-8"))
    declared = list(schema["properties"]["methods"]["properties"])
    assert set(methods.table()) == set(declared)
    for method in declared:
        assert callable(importlib.import_module(methods.module_name(method)).run), method
    modules = {f"qat_kernel.methods.{m.name}" for m in pkgutil.iter_modules(methods.__path__)}
    assert modules == {methods.module_name(m) for m in declared}
