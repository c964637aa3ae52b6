"""`python -m qat_kernel`: serve JSON-RPC on stdin/stdout until EOF or `exit`."""

from qat_kernel.rpc.server import main

if __name__ == "__main__":
    raise SystemExit(main())
