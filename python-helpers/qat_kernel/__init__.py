"""QAT Studio helper kernel: JSON-RPC 2.0 over stdio (see protocol/kernel-rpc.schema.json)."""

__version__ = "0.1.0"
