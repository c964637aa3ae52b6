"""LSP-style framing: `Content-Length: N\r\n\r\n` followed by N bytes of UTF-8 JSON."""

from __future__ import annotations

import json
import math
import re
import threading
from typing import Any, BinaryIO

# Largest body accepted (the kernel's messages are small; a model never travels over RPC).
MAX_BODY = 64 * 1024 * 1024
_LENGTH = re.compile(rb"content-length\s*:\s*(\S*)", re.IGNORECASE)


class FramingError(Exception):
    """The stream held something that is not a well-formed message (answered with -32700)."""


class EndOfStream(Exception):
    """stdin closed: the client is gone."""


def read_message(stream: BinaryIO) -> Any:
    """The next decoded message (any JSON value, `null` included). Raises EndOfStream at the end of the
    stream and FramingError on a bad header or body, after which reading goes on with the next header: the
    Content-Length is looked for anywhere in a line, so a body that had no length lets the next frame through."""
    length = None
    while True:
        line = stream.readline(MAX_BODY)
        if not line:
            raise EndOfStream
        found = _LENGTH.findall(line)
        if found:
            value = found[-1].decode("ascii", "replace")
            if not value.isdigit():
                raise FramingError(f"Bad Content-Length: {value[:40]!r}")
            # More digits than any accepted length (and than int() converts: Python refuses over 4,300).
            if len(value.lstrip("0")) > len(str(MAX_BODY)):
                raise FramingError(f"Content-Length of {len(value)} digits is over the {MAX_BODY}-byte limit")
            length = int(value.lstrip("0") or "0")
            if length > MAX_BODY:
                raise FramingError(f"Content-Length {length} is over the {MAX_BODY}-byte limit")
            continue
        if not line.strip() and length is not None:
            break  # the blank line after the headers; stray blank lines before them are tolerated
    body = stream.read(length)
    if len(body) < length:
        raise EndOfStream
    try:
        return json.loads(body.decode("utf-8"))
    except RecursionError as exc:  # JSON nested deeper than the interpreter's stack
        raise FramingError("Invalid JSON: nested too deeply") from exc
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

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(_finite(message), allow_nan=False, separators=(",", ":")).encode("utf-8")
        with self._lock:
            self._stream.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self._stream.flush()
