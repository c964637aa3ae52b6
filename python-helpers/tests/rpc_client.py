"""A small JSON-RPC client that starts the real kernel (`python -m qat_kernel`) and talks to it."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

HELPERS = Path(__file__).resolve().parents[1]


class RpcError(Exception):
    def __init__(self, error: dict):
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.code = error.get("code")
        self.message = error.get("message")
        self.data = error.get("data")


class KernelClient:
    def __init__(self, env: dict | None = None, preexec_fn=None):
        """`preexec_fn`: run in the kernel's process before it starts (e.g. to set a resource limit)."""
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "qat_kernel"],
            cwd=HELPERS,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **(env or {})},
            preexec_fn=preexec_fn,
        )
        self._next_id = 1
        self._responses: dict = {}
        self._notifications: list = []
        self._cond = threading.Condition()
        self._events: queue.Queue = queue.Queue()  # notifications in arrival order
        self.stderr_lines: list[str] = []
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    # --- wire ---------------------------------------------------------------
    def send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def _read_stdout(self) -> None:
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    with self._cond:
                        self._cond.notify_all()
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            message = json.loads(out.read(length))
            with self._cond:
                if "id" in message and "method" not in message:
                    self._responses[message["id"]] = message
                else:
                    self._notifications.append(message)
                    self._events.put(message)
                self._cond.notify_all()

    def _read_stderr(self) -> None:
        for line in self.proc.stderr:
            self.stderr_lines.append(line.decode(errors="replace"))

    # --- API ----------------------------------------------------------------
    def request_async(self, method: str, params=None) -> int:
        request_id = self._next_id
        self._next_id += 1
        message = {"id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return request_id

    def notify(self, method: str, params=None) -> None:
        self.send({"method": method, **({"params": params} if params is not None else {})})

    def wait_response(self, request_id: int, timeout: float = 300) -> dict:
        deadline = time.monotonic() + timeout
        with self._cond:
            while request_id not in self._responses:
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None and request_id not in self._responses:
                    raise TimeoutError(f"no response to {request_id}; stderr:\n{''.join(self.stderr_lines[-40:])}")
                self._cond.wait(min(left, 1.0))
            return self._responses.pop(request_id)

    def result(self, request_id: int, timeout: float = 300):
        response = self.wait_response(request_id, timeout)
        if "error" in response:
            raise RpcError(response["error"])
        return response["result"]

    def request(self, method: str, params=None, timeout: float = 300):
        return self.result(self.request_async(method, params), timeout)

    def progress(self, request_id: int) -> list[dict]:
        with self._cond:
            return [
                n["params"]
                for n in self._notifications
                if n.get("method") == "$/progress" and n["params"].get("token") == request_id
            ]

    def wait_progress(self, request_id: int, timeout: float = 120, where=None) -> dict:
        """The first $/progress of the request (for which `where(params)` holds, if given)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                found = [
                    n["params"]
                    for n in self._notifications
                    if n.get("method") == "$/progress"
                    and n["params"].get("token") == request_id
                    and (where is None or where(n["params"]))
                ]
                if found:
                    return found[0]
                if request_id in self._responses:
                    raise TimeoutError(f"request {request_id} finished without such progress")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("no progress notification")
                self._cond.wait(min(left, 1.0))

    def close(self, timeout: float = 15) -> int:
        if self.proc.poll() is None:
            try:
                self.request("shutdown", timeout=timeout)
                self.notify("exit")
            except (OSError, TimeoutError, RpcError):
                pass
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                stream.close()
            except OSError:
                pass
        return self.proc.returncode
