"""The star-import table the language server resolves names with, and the torchao PT2E names QAT014 checks its
fixes against, are what the pinned libraries export."""

import importlib.util
import json

from conftest import KNOWLEDGE, ROOT


def test_module_exports_match_the_pinned_libraries():
    spec = importlib.util.spec_from_file_location("gen", ROOT / "scripts" / "gen_module_exports.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    stored = json.loads((KNOWLEDGE / "module-exports.json").read_text())
    assert stored == gen.exports(), "run scripts/gen_module_exports.py"
