"""Shared fixtures: one real kernel process for the session and one compare/layers run on a temp
copy of examples/digits (QAT takes seconds; every compare test reads the same result)."""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import jsonschema
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rpc_client import KernelClient  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
PROTOCOL = REPO / "protocol"
EXAMPLE = REPO / "examples" / "digits"


@pytest.fixture(scope="session")
def rpc_schema() -> dict:
    return json.loads((PROTOCOL / "kernel-rpc.schema.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def validate(rpc_schema):
    """validate("ProgressParams", obj): raises jsonschema.ValidationError when obj does not match."""
    def check(definition: str, instance) -> None:
        schema = {"$ref": f"#/definitions/{definition}", "definitions": rpc_schema["definitions"]}
        jsonschema.Draft7Validator(schema).validate(instance)
    return check


@pytest.fixture(scope="session")
def kernel():
    client = KernelClient()
    yield client
    assert client.close() == 0, "".join(client.stderr_lines[-40:])


def copy_example(dest: Path) -> Path:
    """A copy of examples/digits (without outputs); returns its .qat.yaml."""
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns("out", "__pycache__"))
    return dest / "digits.qat.yaml"


@pytest.fixture(scope="session")
def compare_run(kernel, tmp_path_factory):
    """(request id, result, config path) of one compare/layers run on a copy of the example."""
    config = copy_example(tmp_path_factory.mktemp("compare") / "digits")
    request_id = kernel.request_async("compare/layers", {"config": str(config)})
    result = kernel.result(request_id, timeout=300)
    return request_id, result, config
