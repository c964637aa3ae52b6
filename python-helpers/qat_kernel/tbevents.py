"""TensorBoard event files without the tensorboard package: scalars only.

An event file is a sequence of TFRecords (little-endian uint64 length, masked CRC-32C of the length, the
payload, masked CRC-32C of the payload); each payload is an `Event` protobuf. The first event carries
`file_version: "brain.Event:2"`; each later one a `Summary` of `simple_value` scalars at a step. Only the
fields written here are encoded (tensorflow/core/util/event.proto, tensorflow/core/framework/summary.proto):

    Event   { double wall_time = 1; int64 step = 2; string file_version = 3; Summary summary = 5; }
    Summary { repeated Value value = 1; }
    Value   { string tag = 1; float simple_value = 2; }

`read_events` parses such a file back, checking every CRC, for tests and for tools that want the figures.
"""

from __future__ import annotations

import os
import socket
import struct
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

FILE_VERSION = "brain.Event:2"


def _crc32c_table() -> list[int]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc32c_table()


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli), as TFRecord framing uses it."""
    crc = 0xFFFFFFFF
    for b in data:
        crc = _TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data: bytes) -> int:
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _varint(value: int) -> bytes:
    if value < 0:
        value += 1 << 64  # int64 as protobuf encodes it: two's complement, ten bytes
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _key(field: int, wire: int) -> bytes:
    return _varint(field << 3 | wire)


def _length_delimited(field: int, payload: bytes) -> bytes:
    return _key(field, 2) + _varint(len(payload)) + payload


def encode_event(
    wall_time: float, step: int, *, file_version: str | None = None, scalars: Iterable[tuple[str, float]] | None = None
) -> bytes:
    """One Event message: the file-version header, or a Summary of (tag, value) scalars."""
    out = _key(1, 1) + struct.pack("<d", wall_time)
    if step:
        out += _key(2, 0) + _varint(int(step))
    if file_version is not None:
        out += _length_delimited(3, file_version.encode())
    if scalars:
        summary = b"".join(
            _length_delimited(1, _length_delimited(1, tag.encode()) + _key(2, 5) + struct.pack("<f", float(value)))
            for tag, value in scalars
        )
        out += _length_delimited(5, summary)
    return out


def frame(record: bytes) -> bytes:
    """A TFRecord: length, its masked CRC, the record, its masked CRC."""
    length = struct.pack("<Q", len(record))
    return length + struct.pack("<I", masked_crc32c(length)) + record + struct.pack("<I", masked_crc32c(record))


class EventWriter:
    """Writes scalars to `<logdir>/events.out.tfevents.<time>.<host>`; each `add_scalars` is flushed, so a
    TensorBoard watching the folder shows a run as it trains."""

    def __init__(self, logdir: Path):
        self.logdir = Path(logdir)
        self.logdir.mkdir(parents=True, exist_ok=True)
        now = time.time()
        self.path = self.logdir / f"events.out.tfevents.{int(now)}.{socket.gethostname()}.{os.getpid()}"
        self._file = open(self.path, "wb")  # closed by close() / the with block
        self._write(encode_event(now, 0, file_version=FILE_VERSION))

    def _write(self, record: bytes) -> None:
        self._file.write(frame(record))
        self._file.flush()

    def add_scalars(self, step: int, scalars: dict[str, float], wall_time: float | None = None) -> None:
        """Scalars at one step; non-finite values are kept (TensorBoard shows NaN / inf as such)."""
        if not scalars:
            return
        self._write(encode_event(time.time() if wall_time is None else wall_time, step, scalars=scalars.items()))

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()

    def __enter__(self) -> EventWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class CorruptEventFile(ValueError):
    pass


def _read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        if pos >= len(buf):
            raise CorruptEventFile("truncated varint")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7


def _fields(buf: bytes):
    """(field number, wire type, value) of a protobuf message; length-delimited values as bytes."""
    pos = 0
    while pos < len(buf):
        key, pos = _read_varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _read_varint(buf, pos)
        elif wire == 1:
            value, pos = buf[pos : pos + 8], pos + 8
        elif wire == 5:
            value, pos = buf[pos : pos + 4], pos + 4
        elif wire == 2:
            size, pos = _read_varint(buf, pos)
            value, pos = buf[pos : pos + size], pos + size
        else:
            raise CorruptEventFile(f"wire type {wire} not expected in an Event")
        if pos > len(buf):
            raise CorruptEventFile("truncated field")
        yield field, wire, value


def decode_event(record: bytes) -> dict[str, Any]:
    """{wall_time, step, file_version?, scalars?: {tag: value}} of one Event (the fields written here)."""
    event: dict[str, Any] = {"wall_time": 0.0, "step": 0}
    for field, wire, value in _fields(record):
        if field == 1 and wire == 1 and isinstance(value, bytes):
            event["wall_time"] = struct.unpack("<d", value)[0]
        elif field == 2 and wire == 0 and isinstance(value, int):
            event["step"] = value - (1 << 64) if value >= 1 << 63 else value
        elif field == 3 and wire == 2 and isinstance(value, bytes):
            event["file_version"] = value.decode()
        elif field == 5 and wire == 2 and isinstance(value, bytes):
            scalars = event.setdefault("scalars", {})
            for vfield, vwire, entry in _fields(value):
                if vfield != 1:
                    continue
                if not isinstance(entry, bytes):
                    raise CorruptEventFile(f"a summary value of wire type {vwire}")
                tag, number = None, None
                for f, w, v in _fields(entry):
                    if f == 1 and w == 2 and isinstance(v, bytes):
                        tag = v.decode()
                    elif f == 2 and w == 5 and isinstance(v, bytes):
                        number = struct.unpack("<f", v)[0]
                if tag is not None and number is not None:
                    scalars[tag] = number
    return event


def read_records(path: Path) -> list[bytes]:
    """The TFRecord payloads of a file, each CRC checked."""
    data = Path(path).read_bytes()
    records, pos = [], 0
    while pos < len(data):
        if pos + 12 > len(data):
            raise CorruptEventFile(f"truncated record header at byte {pos}")
        length_bytes = data[pos : pos + 8]
        (length,) = struct.unpack("<Q", length_bytes)
        (length_crc,) = struct.unpack("<I", data[pos + 8 : pos + 12])
        if masked_crc32c(length_bytes) != length_crc:
            raise CorruptEventFile(f"length CRC mismatch at byte {pos}")
        start, end = pos + 12, pos + 12 + length
        if end + 4 > len(data):
            raise CorruptEventFile(f"truncated record at byte {pos}")
        record = data[start:end]
        (record_crc,) = struct.unpack("<I", data[end : end + 4])
        if masked_crc32c(record) != record_crc:
            raise CorruptEventFile(f"record CRC mismatch at byte {pos}")
        records.append(record)
        pos = end + 4
    return records


def read_events(path: Path) -> list[dict[str, Any]]:
    return [decode_event(r) for r in read_records(path)]
