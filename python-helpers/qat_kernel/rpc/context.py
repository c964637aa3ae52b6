"""Per-request state handed to a method: progress reporting and cooperative cancellation."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from qat_kernel.rpc.errors import Cancelled

# A JSON-RPC request id: a string, a number or null.
RequestId = str | int | float | None


class RequestContext:
    def __init__(
        self,
        request_id: RequestId,
        method: str,
        params: dict[str, Any],
        notify: Callable[[str, dict[str, Any]], None],
    ):
        self.id = request_id
        self.method = method
        self.params = params
        self._notify = notify
        self._cancelled = threading.Event()
        self.finished = threading.Event()  # set by the server once the request has ended
        # Folder of the user's workspace once known: errors are located in files under it.
        self.workspace: str | None = None
        self.stage: str | None = None  # of the last progress: a failed write names it

    def cancel(self) -> None:
        self._cancelled.set()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def check_cancelled(self) -> None:
        """Called at every training step and stage boundary."""
        if self._cancelled.is_set():
            raise Cancelled("Request cancelled")

    def progress(self, stage: str, message: str, fraction: float | None = None, **data: Any) -> None:
        """data: optional structured fields of ProgressParams (e.g. train={epoch, step, loss, ...})."""
        self.stage = stage
        params = {"token": self.params.get("progressToken", self.id), "stage": stage, "message": message}
        if fraction is not None:
            params["fraction"] = min(max(float(fraction), 0.0), 1.0)
        params.update({k: v for k, v in data.items() if v is not None})
        self._notify("$/progress", params)
