"""Locates and loads the JSON Schemas in protocol/ (the single source of truth for messages and config).

The folder is `<repo>/protocol` next to python-helpers/, or $QAT_STUDIO_PROTOCOL_DIR when set (the
packaged extension may lay files out differently)."""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

from qat_kernel import HELPERS_DIR
from qat_kernel.rpc import errors

ENV_VAR = "QAT_STUDIO_PROTOCOL_DIR"


def protocol_dir() -> Path:
    override = os.environ.get(ENV_VAR)
    if override:
        return Path(override)
    return HELPERS_DIR.parent / "protocol"


@functools.cache
def load_schema(name: str) -> dict:
    with open(protocol_dir() / name, encoding="utf-8") as f:
        return json.load(f)


def rpc_schema() -> dict:
    return load_schema("kernel-rpc.schema.json")


def config_schema() -> dict:
    return load_schema("qat-config.schema.json")


def definition_schema(name: str) -> dict:
    """A schema validating one `#/definitions/<name>` of the RPC schema, refs resolvable."""
    defs = rpc_schema()["definitions"]
    return {"$ref": f"#/definitions/{name}", "definitions": defs}


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


def with_defaults(method: str, params: dict) -> dict:
    """`params` with the schema's `default` of each top-level property it leaves out: the one home of the
    methods' defaults (the TypeScript types carry them as documentation)."""
    name = params_definition(method)
    if name is None or not isinstance(params, dict):
        return params
    props = rpc_schema()["definitions"][name].get("properties", {})
    filled = dict(params)
    for key, prop in props.items():
        if key not in filled and "default" in prop:
            filled[key] = prop["default"]
    return filled


def validate_params(method: str, params) -> None:
    """-32602 when params do not match the method's params definition in the RPC schema."""
    try:
        name = params_definition(method)
    except OSError:
        name = None  # no schema on disk: the method checks what it needs
    if name is None:
        return
    try:
        import jsonschema
    except ImportError:
        return  # kernel/info must answer on a bare interpreter; compare/layers reports it missing

    error = jsonschema.exceptions.best_match(jsonschema.Draft7Validator(definition_schema(name)).iter_errors(params))
    if error is not None:
        where = ".".join(str(p) for p in error.absolute_path) or "params"
        raise errors.ProtocolError(errors.INVALID_PARAMS, f"Invalid params ({where}): {error.message}")
