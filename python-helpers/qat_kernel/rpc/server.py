"""JSON-RPC 2.0 server over stdio.

The main thread only reads, so `$/cancelRequest` is seen while a request runs; requests run one at a
time on a worker thread. stdout is reserved for RPC: the real stdout fd is duplicated for our writer
and fd 1 is pointed at stderr, so prints from user code or libraries (even from C) land in the log."""

from __future__ import annotations

import logging
import os
import queue
import sys
import threading
from typing import BinaryIO

from qat_kernel.rpc import errors, quiet
from qat_kernel.rpc import params as request_params
from qat_kernel.rpc.context import RequestContext
from qat_kernel.rpc.errors import ProtocolError
from qat_kernel.rpc.framing import FramingError, MessageWriter, read_message

log = logging.getLogger("qat_kernel")


class Server:
    def __init__(self, reader: BinaryIO, writer: MessageWriter, methods: dict):
        self._reader = reader
        self._writer = writer
        self._methods = methods
        self._queue: queue.Queue = queue.Queue()
        self._active: dict = {}  # id -> RequestContext, queued or running
        self._lock = threading.Lock()
        self._shutdown = False
        self.exit_code = 0

    # --- output -------------------------------------------------------------
    def notify(self, method: str, params: dict) -> None:
        self._writer.send({"jsonrpc": "2.0", "method": method, "params": params})

    def _reply(self, request_id, result=None, error=None) -> None:
        message = {"jsonrpc": "2.0", "id": request_id}
        if error is not None:
            message["error"] = error
        else:
            message["result"] = result
        self._writer.send(message)

    # --- reading ------------------------------------------------------------
    def serve(self) -> int:
        worker = threading.Thread(target=self._work, name="qat-kernel-worker", daemon=True)
        worker.start()
        while True:
            try:
                message = read_message(self._reader)
            except FramingError as exc:
                self._reply(None, error=ProtocolError(errors.PARSE_ERROR, str(exc)).to_rpc())
                continue
            if message is None:
                log.info("stdin closed; exiting")
                break
            if not self._dispatch(message):
                break
        with self._lock:
            for ctx in self._active.values():
                ctx.cancel()
        self._queue.put(None)
        # A request stuck in a long library call cannot be interrupted; do not wait for it forever.
        worker.join(timeout=5)
        return self.exit_code

    def _dispatch(self, message) -> bool:
        """Handle one incoming message; False ends the read loop."""
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            request_id = message.get("id") if isinstance(message, dict) else None
            self._reply(request_id, error=ProtocolError(errors.INVALID_REQUEST, "Not a JSON-RPC 2.0 message").to_rpc())
            return True
        method = message.get("method")
        if method is None:
            return True  # a response to something we never send: ignore
        is_request = "id" in message
        params = message.get("params")
        if method == "exit":
            self.exit_code = 0 if self._shutdown else 1
            return False
        if method == "$/cancelRequest":
            self._cancel((params or {}).get("id") if isinstance(params, dict) else None)
            return True
        if not is_request:
            return True  # unknown notification: JSON-RPC says ignore
        request_id = message["id"]
        if method == "shutdown":
            self._shutdown = True
            self._reply(request_id, result=None)
            return True
        if self._shutdown:
            self._reply(request_id, error=ProtocolError(errors.INVALID_REQUEST, "Kernel is shutting down").to_rpc())
        elif method not in self._methods:
            self._reply(
                request_id, error=ProtocolError(errors.METHOD_NOT_FOUND, f"Method not found: {method}").to_rpc()
            )
        else:
            ctx = RequestContext(request_id, method, params if params is not None else {}, self.notify)
            with self._lock:
                self._active[request_id] = ctx
            self._queue.put(ctx)
        return True

    def _cancel(self, request_id) -> None:
        with self._lock:
            ctx = self._active.get(request_id)
        if ctx is not None:
            log.info("cancelling request %r", request_id)
            ctx.cancel()

    # --- working ------------------------------------------------------------
    def _work(self) -> None:
        while True:
            ctx = self._queue.get()
            if ctx is None:
                return
            try:
                result, error = self._run(ctx), None
            except BaseException as exc:  # noqa: BLE001 - user code may even raise SystemExit
                kernel_error = errors.from_exception(exc, ctx.workspace)
                if kernel_error.code == errors.InternalError.code:
                    log.error("%s failed:\n%s", ctx.method, errors.format_traceback(exc))
                result, error = None, kernel_error.to_rpc()
            finally:
                with self._lock:
                    self._active.pop(ctx.id, None)
            try:
                self._reply(ctx.id, result=result, error=error)
            except (TypeError, ValueError) as exc:  # a result that is not JSON: still answer
                log.error("cannot encode the reply to %s: %s", ctx.method, exc)
                self._reply(ctx.id, error=errors.InternalError(f"Cannot encode the result: {exc}").to_rpc())
            except OSError as exc:  # the client went away; the reader will see EOF and stop us
                log.error("cannot send the reply to %s: %s", ctx.method, exc)

    def _run(self, ctx: RequestContext):
        ctx.check_cancelled()  # cancelled while queued
        request_params.validate(ctx.method, ctx.params)
        ctx.params = request_params.with_defaults(ctx.method, ctx.params)
        return self._methods[ctx.method](ctx)


def _claim_stdio() -> tuple[BinaryIO, BinaryIO]:
    """Private handles on the real stdin/stdout; fds 0/1 no longer reach the RPC pipes."""
    rpc_in = os.fdopen(os.dup(sys.stdin.fileno()), "rb")
    rpc_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), 1)  # C-level writes to fd 1 now go to stderr
    sys.stdout = sys.stderr  # Python-level prints too
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)  # user code calling input() gets EOF instead of our messages
    os.close(devnull)
    sys.stdin = open(os.devnull, encoding="utf-8")
    return rpc_in, rpc_out


def main() -> int:
    rpc_in, rpc_out = _claim_stdio()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("[qat-kernel] %(levelname)s %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    quiet.install()

    from qat_kernel import methods

    log.info("ready (python %s, pid %d)", sys.version.split()[0], os.getpid())
    server = Server(rpc_in, MessageWriter(rpc_out), methods.table())
    code = server.serve()
    sys.stderr.flush()
    return code
