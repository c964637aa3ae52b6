"""Every sample message in protocol/fixtures/rpc matches its definition in the RPC schema."""
import json

import pytest

from conftest import PROTOCOL

DEFINITIONS = {
    "kernel-info.result": "KernelInfoResult",
    "compare-layers.params": "CompareLayersParams",
    "compare-layers.result": "CompareLayersResult",
    "progress": "ProgressParams",
}
FIXTURES = sorted((PROTOCOL / "fixtures" / "rpc").glob("*.json"))


def _definition(stem: str) -> str:
    return "KernelErrorData" if stem.startswith("error-") else DEFINITIONS[stem]


def test_fixtures_exist():
    assert FIXTURES


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_fixture_validates(path, validate):
    validate(_definition(path.stem), json.loads(path.read_text(encoding="utf-8")))
