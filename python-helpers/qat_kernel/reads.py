"""How the kernel reads a file a workspace holds (a config, a build or deploy report): a workspace is input like any
other, and a `*.qat.yaml` or a `build-report.json` may be a FIFO that never yields, a symlink to /dev/zero or
gigabytes. The file is opened without blocking, only a regular file is read, and never more than a size limit,
checked before reading and again while reading (a file that grows)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

CONFIG_BYTES = 2 * 1024 * 1024
REPORT_BYTES = 16 * 1024 * 1024


def read_regular_text(path: Path | str, max_bytes: int) -> str:
    """The file's text (UTF-8); OSError with a plain strerror when it is no regular file, is over max_bytes, or
    cannot be read."""
    return read_regular_bytes(path, max_bytes).decode("utf-8")


def read_regular_bytes(path: Path | str, max_bytes: int) -> bytes:
    """The file's bytes; OSError with a plain strerror when it is no regular file, is over max_bytes, or cannot be
    read."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file (a FIFO, device, socket or folder): not read", str(path))
        if info.st_size > max_bytes:
            raise OSError(errno.EFBIG, f"{info.st_size} bytes, over the {max_bytes}-byte limit: not read", str(path))
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, min(1 << 20, max_bytes + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:
                raise OSError(errno.EFBIG, f"over the {max_bytes}-byte limit: not read", str(path))
        return b"".join(chunks)
    finally:
        os.close(fd)
