"""Read a file a person named (a spec, its tables and extraction files, an approval, a JSON argument) without
hanging or filling memory: opened without blocking (a FIFO with no writer must not block the open), read
only when fstat says it is a regular file (never a device, pipe, socket or directory), and at most `limit`
bytes. Callers turn FileRefused into their own error, with their code, the file and the fix."""
from __future__ import annotations

import errno
import os
import stat
from pathlib import Path, PurePosixPath
from typing import Iterable

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
    return read_regular_file_and_stat(path, limit, follow_links=follow_links)[0]


def read_regular_file_and_stat(path: str | Path, limit: int | None = MAX_BYTES, *,
                               follow_links: bool = True) -> tuple[bytes, os.stat_result]:
    """The bytes of the regular file at `path` and the fstat of the one descriptor they were read from (`follow_links`
    false: a symbolic link is refused, not followed); FileRefused otherwise."""
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


def replaceable_above(folder: Path, st: os.stat_result | None = None, *,
                      walked: os.stat_result | None = None) -> tuple[Path, str] | None:
    """The first folder above `folder` (on its absolute path as given, then once links are resolved), or link on the
    way, through which someone who may not write `folder` (its owner, root, and its group when that group may write
    it; `st` is its stat) may put another folder in its place, and why; None when there is none. Such a folder lets
    every user rename its entries (o+w without the sticky bit), is owned by another user (who may do so whatever its
    mode), or lets a group rename them (g+w without the sticky bit) that may not write `folder`; such a link sits in
    a sticky folder (/tmp) and is owned by another user, who may point it elsewhere. A folder that cannot be read
    cannot be checked, and is said so. `walked`: the stat of the folder holding `folder`, whose own check walked the
    folders above it already: only that folder is asked (and named, as the parent of `folder`'s absolute path)."""
    given = Path(os.path.abspath(folder))
    try:
        own = os.stat(given) if st is None else st
    except OSError as e:
        return given, f"it cannot be read ({e.strerror})"
    if walked is not None:
        problem = _replaces_entries(walked, own)
        return (given.parent, problem) if problem else None
    resolved = folder.resolve()
    for path in dict.fromkeys([*given.parents, *resolved.parents]):   # each folder stat'ed once
        try:
            problem = _replaces_entries(os.stat(path), own)
        except OSError as e:
            problem = f"it cannot be read ({e.strerror})"
        if problem:
            return path, problem
    if resolved == given:   # no part of the path is a link (own was stat'ed, so it resolved whole)
        return None
    for path in (given, *given.parents):   # links on the path as given: a sticky folder's link is its owner's
        try:
            link = os.lstat(path)
            sticky = stat.S_ISLNK(link.st_mode) and os.stat(path.parent).st_mode & stat.S_ISVTX
        except OSError:
            continue   # each folder on the way was stat'ed above
        if sticky and link.st_uid not in (0, own.st_uid):
            return path, (f"it is a symbolic link owned by user {link.st_uid} in a sticky folder: they may point it "
                          "elsewhere")
    return None


def _replaces_entries(st: os.stat_result, own: os.stat_result) -> str:
    """Why someone who may not write the folder whose stat is `own` may rename the entries of the folder above it whose
    stat is `st` ('' when no one may)."""
    if open_to_all := folder_open_to_all(st):
        return open_to_all
    if st.st_uid not in (0, own.st_uid):
        return f"it is owned by user {st.st_uid}, who may rename what it holds, and the folder below by user {own.st_uid}"
    group_writes = st.st_mode & 0o020 and not st.st_mode & stat.S_ISVTX
    if group_writes and not (own.st_mode & 0o020 and own.st_gid == st.st_gid) and not _private_group(st):
        return (f"its group {st.st_gid} may rename what it holds (mode {stat.S_IMODE(st.st_mode):o}, no sticky bit), and "
                "may not write the folder below")
    return ""


def _private_group(st: os.stat_result) -> bool:
    """Whether the group of the file whose stat is `st` is its owner's own (a user private group, as `useradd` makes
    under USERGROUPS_ENAB: named as the user, no other member listed), so that g+w adds no one: umask 002 makes every
    folder a user creates g+w, and `synth --out build` under it left build/ writable by alice's group, which is alice."""
    import grp
    import pwd

    try:
        owner, group = pwd.getpwuid(st.st_uid).pw_name, grp.getgrgid(st.st_gid)
    except KeyError:   # an owner or group this machine does not name: nothing tells who is in it
        return False
    return group.gr_name == owner and set(group.gr_mem) <= {owner}


def build_folders_exposed(d: Path, files: Iterable[str]) -> list[tuple[Path, str]]:
    """Each folder through which someone who may not write the build in `d` could swap a file of it, or the build, for
    their own, and why: a folder above it (replaceable_above), or a folder of it (d, or one on the way to a certified
    file, `files` naming them by path in the build) that every user may replace entries in, or, inside d, one owned
    or group-writable by who may not write the folder holding it. The loader and the audit's files check both ask
    this (the audit checked only the folders holding files, not those between, nor a folder above owned by another)."""
    out: list[tuple[Path, str]] = []
    try:
        own = os.stat(d)
    except OSError as e:
        return [(d, f"it cannot be read ({e.strerror})")]
    above = replaceable_above(d, own)
    if above:
        out.append((above[0], f"a folder above the build: {above[1]}"))
    for folder in sorted({d / parent for rel in files for parent in PurePosixPath(rel).parents}):
        try:
            st = own if folder == d else os.stat(folder)
            problem = folder_open_to_all(st) or ("" if folder == d else other_writers(st, os.stat(folder.parent)))
        except OSError as e:
            problem = f"it cannot be read ({e.strerror})"
        if problem:
            out.append((folder, problem))
    return out


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
