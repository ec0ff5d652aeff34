"""Read a file a person named (a spec, its tables and extraction files, an approval, a JSON argument) without
hanging or filling memory: opened without blocking (a FIFO with no writer must not block the open), read
only when fstat says it is a regular file (never a device, pipe, socket or directory), and at most `limit`
bytes. Callers turn FileRefused into their own error, with their code, the file and the fix."""
from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

MAX_BYTES = 64 * 2**20  # no spec, table, approval or argument file is near this

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


class FileRefused(Exception):
    """Why a file was not read (`why`, one phrase: "cannot read it: ...", "not a regular file (...)...") and how
    to give one that is (`fix`); `kind` says which: "unreadable" (the system's `strerror`), "link" (a symbolic link
    where none is followed), "special" (not a regular file), "large" (over the limit)."""

    def __init__(self, why: str, fix: str, kind: str = "unreadable", strerror: str = "") -> None:
        super().__init__(why)
        self.why, self.fix, self.kind, self.strerror = why, fix, kind, strerror


def read_regular_file(path: str | Path, limit: int | None = MAX_BYTES, *, follow_links: bool = True) -> bytes:
    """The bytes of the regular file at `path`, of at most `limit` bytes (None: any size); FileRefused otherwise."""
    return read_regular_file_and_mode(path, limit, follow_links=follow_links)[0]


def read_regular_file_and_mode(path: str | Path, limit: int | None = MAX_BYTES, *,
                               follow_links: bool = True) -> tuple[bytes, int]:
    """The bytes of the regular file at `path` and its mode, read once from one descriptor (`follow_links` false:
    a symbolic link is refused, not followed); FileRefused otherwise."""
    data, st = read_regular_file_and_stat(path, limit, follow_links=follow_links)
    return data, st.st_mode


def read_regular_file_and_stat(path: str | Path, limit: int | None = MAX_BYTES, *,
                               follow_links: bool = True) -> tuple[bytes, os.stat_result]:
    """read_regular_file_and_mode, with the whole fstat of the descriptor the bytes were read from."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags if follow_links else flags | os.O_NOFOLLOW)
    except OSError as e:
        if not follow_links and e.errno == errno.ELOOP:
            raise FileRefused("a symbolic link: not followed", "name the file itself", "link", e.strerror) from None
        raise _unreadable(e) from None
    try:
        st = os.fstat(fd)
        mode = st.st_mode
        data = _read(fd, None if limit is None else limit + 1) if stat.S_ISREG(mode) else b""
    except OSError as e:   # a regular file that cannot be read: /proc/self/mem, a failing disk
        raise _unreadable(e) from None
    finally:
        os.close(fd)
    if not stat.S_ISREG(mode):
        raise FileRefused(f"not a regular file ({_kind(mode)}): not read",
                          "write the data to a regular file and name that", "special")
    if limit is not None and len(data) > limit:
        raise FileRefused(f"larger than {limit:,} bytes: not read", f"keep the file to at most {limit // 2**20} MiB",
                          "large")
    return data, st


def writable_from_outside(st: os.stat_result, folder: os.stat_result | None = None) -> str:
    """Why the file whose fstat is `st` can be changed by whoever cannot write the folder that holds it ('' when it
    cannot): a second name (a hard link: the other name, perhaps outside the folder, writes the same bytes, at any
    later time), or write permission for every user; with `folder` (the stat of that folder), an owner other than
    root and the folder's owner (who may write the file whatever its mode), or write permission for a group that may
    not write the folder."""
    if st.st_nlink > 1:
        return (f"it has {st.st_nlink} names (hard links): whoever can write another of them changes these bytes, "
                "from outside this folder")
    if st.st_mode & 0o002:
        return f"every user may write it (mode {stat.S_IMODE(st.st_mode):o})"
    return "" if folder is None else other_writers(st, folder)


def other_writers(st: os.stat_result, folder: os.stat_result) -> str:
    """Why a file or folder whose stat is `st` may be written by someone who may not write the folder holding it,
    whose stat is `folder` ('' when no one may): an owner other than root and the folder's owner (an owner may
    rewrite it whatever its mode), or a group that may not write the folder (a sticky folder's group may only add
    entries, which the build's checks refuse)."""
    if st.st_uid not in (0, folder.st_uid):
        return (f"it is owned by user {st.st_uid}, who may rewrite it (chmod it back too), and the folder holding it "
                f"by user {folder.st_uid}")
    sticky = stat.S_ISDIR(st.st_mode) and st.st_mode & stat.S_ISVTX   # its group may add entries, not replace them
    if st.st_mode & 0o020 and not sticky and not (folder.st_mode & 0o020 and folder.st_gid == st.st_gid):
        return (f"its group {st.st_gid} may write it (mode {stat.S_IMODE(st.st_mode):o}), and may not write the folder "
                "holding it")
    return ""


def folder_open_to_all(st: os.stat_result) -> str:
    """Why every user may replace the entries of the folder whose stat is `st` ('' when they may not): o+w without
    the sticky bit lets anyone rename a file away and put another in its place."""
    if st.st_mode & 0o002 and not st.st_mode & stat.S_ISVTX:
        return f"every user may replace what it holds (mode {stat.S_IMODE(st.st_mode):o}, no sticky bit)"
    return ""


def open_folder_above(folder: Path) -> tuple[Path, str] | None:
    """The first folder above `folder` (on its absolute path as given, then on the path once links are resolved) that
    lets every user replace what it holds, and why; None when there is none. Whoever may rename entries there may put
    a whole folder of their own in the build's place, whatever the build's own modes say."""
    given, resolved = Path(os.path.abspath(folder)), folder.resolve()
    for parent in dict.fromkeys([*given.parents, *resolved.parents]):   # each folder stat'ed once
        try:
            problem = folder_open_to_all(os.stat(parent))
        except OSError:   # a folder that cannot be read cannot be checked; the build's own reads fail there
            continue
        if problem:
            return parent, problem
    return None


def _unreadable(e: OSError) -> FileRefused:
    return FileRefused(f"cannot read it: {e.strerror or e}", "check the path", "unreadable", e.strerror or str(e))


def _read(fd: int, size: int | None) -> bytes:
    """Up to `size` bytes from `fd` (None: all), to its end."""
    parts: list[bytes] = []
    left = size
    while left is None or left > 0:
        part = os.read(fd, 2**20 if left is None else min(left, 2**20))
        if not part:
            break
        parts.append(part)
        left = None if left is None else left - len(part)
    return b"".join(parts)


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a plain file")
