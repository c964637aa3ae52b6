"""JSON-RPC 2.0 server over stdio.

The main thread only reads, so `$/cancelRequest` is seen while a request runs; requests run one at a
time on a worker thread. stdout is reserved for RPC: the real stdout fd is duplicated for our writer
and fd 1 is pointed at stderr, so prints from user code or libraries (even from C) land in the log."""

from __future__ import annotations

import ctypes
import logging
import os
import queue
import sys
import threading
from collections.abc import Callable
from typing import Any, BinaryIO

from qat_kernel.rpc import errors, quiet
from qat_kernel.rpc import params as request_params
from qat_kernel.rpc.context import RequestContext, RequestId
from qat_kernel.rpc.errors import ProtocolError
from qat_kernel.rpc.framing import EndOfStream, FramingError, MessageWriter, read_message

log = logging.getLogger("qat_kernel")

INTERRUPT_AFTER = 2.0  # seconds a cancelled request has to stop by itself before it is interrupted


class Interrupted(BaseException):
    """Raised in the worker thread to stop a cancelled request; a BaseException, so that user code catching
    Exception does not swallow it."""


class Server:
    def __init__(self, reader: BinaryIO, writer: MessageWriter, methods: dict[str, Callable[[RequestContext], Any]]):
        self._reader = reader
        self._writer = writer
        self._methods = methods
        self._queue: queue.Queue[RequestContext | None] = queue.Queue()
        self._active: dict[RequestId, RequestContext] = {}  # id -> RequestContext, queued or running
        self._lock = threading.Lock()
        self._shutdown = False
        self._worker: threading.Thread | None = None
        self._running: RequestContext | None = None
        self._running_lock = threading.Lock()
        self.exit_code = 0

    # --- output -------------------------------------------------------------
    def notify(self, method: str, params: dict[str, Any]) -> None:
        self._writer.send({"jsonrpc": "2.0", "method": method, "params": params})

    def _reply(self, request_id: RequestId, result: Any = None, error: dict[str, Any] | None = None) -> None:
        message = {"jsonrpc": "2.0", "id": request_id}
        if error is not None:
            message["error"] = error
        else:
            message["result"] = result
        self._writer.send(message)

    # --- reading ------------------------------------------------------------
    def serve(self) -> int:
        worker = self._worker = threading.Thread(target=self._work, name="qat-kernel-worker", daemon=True)
        worker.start()
        while True:
            try:
                message = read_message(self._reader)
            except EndOfStream:
                log.info("stdin closed; exiting")
                break
            except FramingError as exc:
                log.warning("bad frame: %s", exc)
                self._reply(None, error=ProtocolError(errors.PARSE_ERROR, str(exc)).to_rpc())
                continue
            try:
                go_on = self._dispatch(message)
            except Exception as exc:  # noqa: BLE001 - a message we did not foresee must not end the kernel
                log.error("cannot handle a message: %s", errors.format_traceback(exc))
                go_on = True
            if not go_on:
                break
        with self._lock:
            for ctx in self._active.values():
                ctx.cancel()
        self._queue.put(None)
        # A request stuck in a long library call cannot be interrupted; do not wait for it forever.
        worker.join(timeout=5)
        return self.exit_code

    def _invalid(self, request_id: Any, text: str) -> bool:
        log.warning("invalid request: %s", text)
        self._reply(
            request_id if _valid_id(request_id) else None, error=ProtocolError(errors.INVALID_REQUEST, text).to_rpc()
        )
        return True

    def _dispatch(self, message: Any) -> bool:
        """Handle one incoming message; False ends the read loop."""
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return self._invalid(message.get("id") if isinstance(message, dict) else None, "Not a JSON-RPC 2.0 message")
        method = message.get("method")
        if method is None:
            return True  # a response to something we never send: ignore
        is_request = "id" in message
        if not isinstance(method, str):
            return self._invalid(message.get("id"), "The method must be a string")
        if is_request and not _valid_id(message["id"]):
            return self._invalid(None, "A request id must be a string, a number or null")
        params = message.get("params")
        if method == "exit":
            self.exit_code = 0 if self._shutdown else 1
            return False
        if method == "$/cancelRequest":
            target = params.get("id") if isinstance(params, dict) else None
            if _valid_id(target):
                self._cancel(target)
            else:
                log.warning("$/cancelRequest without a valid id: dropped")
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
        elif request_id in self._active:
            self._invalid(request_id, f"Request id {request_id!r} is already in use")
        else:
            ctx = RequestContext(request_id, method, params if params is not None else {}, self.notify)
            with self._lock:
                self._active[request_id] = ctx
            self._queue.put(ctx)
        return True

    def _cancel(self, request_id: RequestId) -> None:
        with self._lock:
            ctx = self._active.get(request_id)
        if ctx is not None:
            log.info("cancelling request %r", request_id)
            ctx.cancel()
            threading.Thread(target=self._interrupt, args=(ctx,), name="qat-kernel-interrupt", daemon=True).start()

    def _interrupt(self, ctx: RequestContext) -> None:
        """Cancel reaches code that never calls check_cancelled (a user's model or data entry in a loop): when
        the request has not ended INTERRUPT_AFTER seconds after the cancel, Interrupted is raised in the worker
        thread (as Ctrl+C in a Jupyter kernel), again each interval until it ends. Python code is stopped
        between two bytecodes; a single C call that never returns is not (restart the kernel then)."""
        while not ctx.finished.wait(INTERRUPT_AFTER):
            with self._running_lock:  # the worker cannot leave the request while we aim at it
                worker = self._worker
                if worker is None or worker.ident is None or self._running is not ctx:
                    continue
                log.warning("request %r still runs %.0f s after its cancel: interrupting it", ctx.id, INTERRUPT_AFTER)
                _async_raise(worker.ident, Interrupted)

    # --- working ------------------------------------------------------------
    def _work(self) -> None:
        while True:
            ctx = self._queue.get()
            if ctx is None:
                return
            try:
                result, error = self._outcome(ctx)
            except Interrupted:  # arrived after the request's own handlers: it was cancelled all the same
                result, error = None, errors.Cancelled("Request cancelled (interrupted)").to_rpc()
            with self._running_lock:
                self._running = None
                _async_raise(threading.get_ident(), None)  # drop an interrupt aimed at the request just ended
            ctx.finished.set()
            with self._lock:
                self._active.pop(ctx.id, None)
            try:
                self._reply(ctx.id, result=result, error=error)
            except (TypeError, ValueError) as exc:  # a result that is not JSON: still answer
                log.error("cannot encode the reply to %s: %s", ctx.method, exc)
                self._reply(ctx.id, error=errors.InternalError(f"Cannot encode the result: {exc}").to_rpc())
            except OSError as exc:  # the client went away; the reader will see EOF and stop us
                log.error("cannot send the reply to %s: %s", ctx.method, exc)

    def _outcome(self, ctx: RequestContext) -> tuple[Any, dict[str, Any] | None]:
        """(result, None) or (None, the error as JSON-RPC) of one request."""
        try:
            self._running = ctx
            return self._run(ctx), None
        except Interrupted:
            return None, errors.Cancelled("Request cancelled (interrupted)").to_rpc()
        except BaseException as exc:  # noqa: BLE001 - user code may even raise SystemExit
            kernel_error = errors.from_exception(exc, ctx.workspace, ctx.method, ctx.stage)
            # what the cancel made the code raise; a protocol error (bad params) is the request's own
            if ctx.cancelled and isinstance(kernel_error, errors.KernelError) and kernel_error.kind != "cancelled":
                kernel_error = errors.Cancelled(f"Request cancelled ({kernel_error.message})")
            if kernel_error.code == errors.InternalError.code:
                log.error("%s failed:\n%s", ctx.method, errors.format_traceback(exc))
            return None, kernel_error.to_rpc()

    def _run(self, ctx: RequestContext):
        ctx.check_cancelled()  # cancelled while queued
        request_params.validate(ctx.method, ctx.params)
        ctx.params = request_params.with_defaults(ctx.method, ctx.params)
        return self._methods[ctx.method](ctx)


def _async_raise(thread_id: int, exc_type: type[BaseException] | None) -> None:
    """Raise exc_type in the thread at its next bytecode (None: drop one that is pending)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread_id), ctypes.py_object(exc_type) if exc_type else None
    )


def _valid_id(value: object) -> bool:
    """JSON-RPC ids are strings, numbers or null (a bool is not a number here)."""
    return value is None or isinstance(value, str) or (isinstance(value, (int, float)) and not isinstance(value, bool))


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
