"""A request's params against the method's params definition in the RPC schema: checked, then completed
with the schema's defaults."""

from __future__ import annotations

from typing import Any

from qat_kernel.rpc import errors, protocol


def with_defaults(method: str, params: Any) -> Any:
    """`params` (the request's JSON: an object when the schema took it) with the schema's `default` of each
    top-level property it leaves out: the one home of the methods' defaults (the TypeScript types carry them
    as documentation)."""
    name = protocol.params_definition(method)
    if name is None or not isinstance(params, dict):
        return params
    props = protocol.rpc_schema()["definitions"][name].get("properties", {})
    filled = dict(params)
    for key, prop in props.items():
        if key not in filled and "default" in prop:
            filled[key] = prop["default"]
    return filled


def validate(method: str, params: dict[str, Any]) -> None:
    """-32602 when params do not match the method's params definition in the RPC schema."""
    try:
        name = protocol.params_definition(method)
    except OSError:
        name = None  # no schema on disk: the method checks what it needs
    if name is None:
        return
    try:
        import jsonschema
        from jsonschema.exceptions import best_match
    except ImportError:
        return  # kernel/info must answer on a bare interpreter; compare/layers reports it missing

    error = best_match(jsonschema.Draft7Validator(protocol.definition_schema(name)).iter_errors(params))
    if error is not None:
        where = ".".join(str(p) for p in error.absolute_path) or "params"
        raise errors.ProtocolError(errors.INVALID_PARAMS, f"Invalid params ({where}): {error.message}")
