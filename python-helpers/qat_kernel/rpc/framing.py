"""LSP-style framing: `Content-Length: N\r\n\r\n` followed by N bytes of UTF-8 JSON."""

from __future__ import annotations

import json
import math
import threading
from typing import Any, BinaryIO


class FramingError(Exception):
    """The stream held something that is not a well-formed message (answered with -32700)."""


def read_message(stream: BinaryIO) -> Any:
    """The next decoded message, or None at end of stream."""
    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            if length is not None:
                break
            continue  # tolerate stray blank lines between messages
        name, _, value = line.decode("ascii", "replace").partition(":")
        if name.strip().lower() == "content-length":
            try:
                length = int(value.strip())
            except ValueError as exc:
                raise FramingError(f"Bad Content-Length: {value.strip()!r}") from exc
    body = stream.read(length)
    if len(body) < length:
        return None
    try:
        return json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise FramingError(f"Invalid JSON: {exc}") from exc


def _finite(value: Any) -> Any:
    """JSON has no NaN/Infinity: NaN becomes null, infinities the largest finite doubles."""
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else math.copysign(1.7976931348623157e308, value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


class MessageWriter:
    """Writes framed messages; the lock keeps progress from the worker and replies from interleaving."""

    def __init__(self, stream: BinaryIO):
        self._stream = stream
        self._lock = threading.Lock()

    def send(self, message: dict) -> None:
        body = json.dumps(_finite(message), allow_nan=False, separators=(",", ":")).encode("utf-8")
        with self._lock:
            self._stream.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self._stream.flush()
