"""QAT Studio helper kernel: JSON-RPC 2.0 over stdio (see protocol/kernel-rpc.schema.json)."""

__version__ = "0.1.0"

from pathlib import Path

# The package folder and python-helpers/ beside it: the kernel's own files are found from here.
PACKAGE_DIR = Path(__file__).resolve().parent
HELPERS_DIR = PACKAGE_DIR.parent
