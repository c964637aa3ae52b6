"""Locates and loads the JSON Schemas in protocol/ (the single source of truth for messages and config).

The folder is `<repo>/protocol` next to python-helpers/, or $QAT_STUDIO_PROTOCOL_DIR when set (the
packaged extension may lay files out differently)."""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

from qat_kernel import HELPERS_DIR

ENV_VAR = "QAT_STUDIO_PROTOCOL_DIR"


def protocol_dir() -> Path:
    override = os.environ.get(ENV_VAR)
    if override:
        return Path(override)
    return HELPERS_DIR.parent / "protocol"


@functools.cache
def load_schema(name: str) -> dict[str, Any]:
    with open(protocol_dir() / name, encoding="utf-8") as f:
        return json.load(f)


def rpc_schema() -> dict[str, Any]:
    return load_schema("kernel-rpc.schema.json")


def config_schema() -> dict[str, Any]:
    return load_schema("qat-config.schema.json")


def definition_schema(name: str) -> dict[str, Any]:
    """A schema validating one `#/definitions/<name>` of the RPC schema, refs resolvable."""
    defs = rpc_schema()["definitions"]
    return {"$ref": f"#/definitions/{name}", "definitions": defs}


def error_codes() -> dict[str, int]:
    """KernelErrorData kind -> JSON-RPC error code (the schema's x-codes)."""
    return rpc_schema()["definitions"]["KernelErrorData"]["properties"]["kind"]["x-codes"]


def method_names() -> list[str]:
    """Every method the RPC schema declares, in its order."""
    return list(rpc_schema()["properties"]["methods"]["properties"])


def params_definition(method: str) -> str | None:
    """Name of the params definition of `method` in the RPC schema, e.g. CompareLayersParams."""
    try:
        ref = rpc_schema()["properties"]["methods"]["properties"][method]["properties"]["params"]["$ref"]
    except (KeyError, OSError):
        return None
    return ref.rsplit("/", 1)[-1]
