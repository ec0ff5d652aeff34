"""Read a file a person named (a spec, its tables and extraction files, an approval, a JSON argument) without
hanging or filling memory: opened without blocking (a FIFO with no writer must not block the open), read
only when fstat says it is a regular file (never a device, pipe, socket or directory), and at most `limit`
bytes. Callers turn FileRefused into their own error, with their code, the file and the fix."""
from __future__ import annotations

import os
import stat
from pathlib import Path

MAX_BYTES = 64 * 2**20  # no spec, table, approval or argument file is near this

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


class FileRefused(Exception):
    """Why a file was not read (`why`, one phrase: "cannot read it: ...", "not a regular file (...)...") and how
    to give one that is (`fix`)."""

    def __init__(self, why: str, fix: str) -> None:
        super().__init__(why)
        self.why, self.fix = why, fix


def read_regular_file(path: str | Path, limit: int = MAX_BYTES) -> bytes:
    """The bytes of the regular file at `path`, of at most `limit` bytes; FileRefused otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        try:
            mode = os.fstat(fd).st_mode
            data = _read(fd, limit + 1) if stat.S_ISREG(mode) else b""
        finally:
            os.close(fd)
    except OSError as e:
        raise FileRefused(f"cannot read it: {e.strerror or e}", "check the path") from None
    if not stat.S_ISREG(mode):
        raise FileRefused(f"not a regular file ({_kind(mode)}): not read",
                          "write the data to a regular file and name that")
    if len(data) > limit:
        raise FileRefused(f"larger than {limit:,} bytes: not read", f"keep the file to at most {limit // 2**20} MiB")
    return data


def _read(fd: int, size: int) -> bytes:
    """Up to `size` bytes from `fd`, to its end."""
    parts, left = [], size
    while left > 0:
        part = os.read(fd, min(left, 2**20))
        if not part:
            break
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a plain file")
