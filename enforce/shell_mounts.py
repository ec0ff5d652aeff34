"""The project's symbolic links that lead elsewhere, for the shell analysis (`follow_links`).

A link in the project to a folder the agent may write elsewhere (`ln -s /tmp/x sub`, a workspace write) makes a
later write of `/tmp/x/.envrc` land at `sub/.envrc`, where direnv, VS Code and git read it. The zone map then zones a
path under where such a link leads as the path under the link as well (`ZoneMap.compile`'s `mounts`,
`Zones.linked`): its project spelling's zones are added to its own. Found on disk when a command is proposed that
changes, runs or brings something outside the project (`leaves`): a walk of the project, and of the folders its
links lead to (a link there leads on: `/tmp/x/deep -> /tmp/y` puts `/tmp/y` at `sub/deep`).
"""
from __future__ import annotations

import itertools
import os
import posixpath
import re
from collections import deque

from veriguard.enforce.shell_git import PRINTS, SENDING_KIND
from veriguard.enforce.shell_table import Mounts, literal_head, normalise
from veriguard.enforce.shell_walk import Analysis, within

# Entries looked at on disk, per analysis, to find the project's links and those under where they lead; with more,
# what the command changes outside the project is read as reaching the unresolved zone.
MOUNT_LIMIT = 200_000
CHAIN_LIMIT = 40          # links followed one by one from a link of the project (the kernel stops at 40 too)
# The home folder's walk for links that lead out of it (home_links): entries looked at, and folders below the home.
HOME_LIMIT = 5_000
HOME_DEPTH = 3


def leaves(a: Analysis, project: tuple[str, ...]) -> bool:
    """Whether `a` changes, runs or brings something outside the project folder (`project`: its spellings): an
    access other than a read of a path or a glob there, a folder a step brings names into, a git rewrite's folder.
    A read needs no project spelling: the zone maps name no credential by the project's placeholder."""
    def out(accesses: tuple[str, ...], path: str) -> bool:
        return set(accesses) != {"read"} and not within(normalise(path), project)

    return (any(out(acc, path) for acc, path, _ in a.paths)
            or any(out(acc, literal_head(comps)) for acc, comps, _ in a.patterns)
            or any(not within(normalise(b.folder), project) for b in a.brought)
            or any(r.cwd is None or not within(normalise(r.cwd), project) for r in a.rewrites))


def changes(a: Analysis) -> bool:
    """Whether `a` writes or deletes anything, brings names into a folder, rewrites a work tree or sends its files,
    wherever it is (a log or a diff in a command that sends nothing out only prints them here)."""
    return (any({"write", "delete"} & set(acc) for acc, _, _ in a.paths)
            or any({"write", "delete"} & set(acc) for acc, _, _ in a.patterns)
            or bool(a.brought) or any(r.sub not in PRINTS or a.kind == SENDING_KIND for r in a.rewrites))


def project_links(project: tuple[str, ...], limit: int | None = None) -> tuple[Mounts, bool]:
    """(where, link) for each symbolic link under the project folder (`project`: its spellings, the first as the
    agent names it) that leads out of it: each step of a chain of links and the real path at its end, also where
    nothing is yet (`ln -s /tmp/later sub`, then `mkdir /tmp/later`); the folders they lead to are walked for links
    in turn, named under the project's link. Breadth first, at most `limit` (MOUNT_LIMIT) entries; True when there
    were more."""
    return _links_out(project, (), MOUNT_LIMIT if limit is None else limit, None)


def home_links(home: tuple[str, ...], project: tuple[str, ...], limit: int = HOME_LIMIT,
               depth: int = HOME_DEPTH) -> Mounts:
    """(where, link) for each symbolic link of the home folder (`home`: its spellings), outside the project, that
    leads out of the home or into the project, as project_links finds them: a user's `~/bin -> /tmp/b` or `~/.bashrc
    -> /opt/dots/bashrc` makes a write of `/tmp/b/x` a write of `~/bin/x` (a program on the user's PATH), and a
    dotfiles repository's `~/.bashrc -> ~/dotfiles/bashrc` makes the agent's write of `bashrc` there a write of the
    shell's start-up file: the home's zone refuses both. The project itself is not walked (project_links does that);
    at most `depth` folders below the home and `limit` entries are looked at, breadth first (the shallow folders,
    where dotfile managers put their links, come first: `~/.bashrc`, `~/.config/x`, `~/.local/bin`), since a home can
    hold millions."""
    found, _ = _links_out(home, project, limit, depth)
    return found


def project_names(mounts: Mounts, project: tuple[str, ...], home: tuple[str, ...]) -> tuple[str, ...]:
    """The project's names under the links of the home (`mounts`) that lead to it or to a folder above it (`~/code ->
    /data/code` with the project /data/code/app: `~/code/app`): the project whatever it is called, not the home that
    the name lies in (a write of `~/code/app/x` is the project's; of `/data/code/other/x`, still the home's). Not a
    link with a dotted name below the home (`~/.vim -> ~/src/vimfiles`, `~/.config/nvim -> ~/nvim-config`): there the
    whole project is the home's configuration, which the user's programs read, and stays the home's too."""
    def plain(link: str) -> bool:
        below = next((link[len(h.rstrip("/")) + 1:] for h in home if within(link, (h,)) and link != h), link)
        return not any(part.startswith(".") for part in below.split("/"))

    return tuple(dict.fromkeys(normalise(link + project[0][len(where.rstrip("/")):]) for where, link in mounts
                               if within(project[0], (where,)) and plain(link)))


def _links_out(root: tuple[str, ...], skip: tuple[str, ...], limit: int,
               depth: int | None) -> tuple[Mounts, bool]:
    """project_links' walk of `root` (its spellings), not into `skip`, at most `depth` folders below it: the links that
    lead out of `root` or into `skip`."""
    left = limit
    found: dict[tuple[str, str], None] = {}
    queue = deque([(root[0], root[0], 0)])          # (folder on disk, its name under the root, depth)
    walked = {normalise(os.path.realpath(root[0]))}
    while queue:
        folder, named, level = queue.popleft()
        try:
            with os.scandir(folder) as it:
                entries = list(itertools.islice(it, left + 1))
        except OSError:
            continue
        if len(entries) > left:
            return tuple(found), True
        left -= len(entries)
        deeper = depth is None or level < depth
        for e in entries:
            if e.is_symlink():
                name = named + "/" + e.name
                steps = _steps(folder, e.name)
                found.update(dict.fromkeys((where, name) for where in steps
                                           if not within(where, root) or within(where, skip)))
                real = steps[-1]
                if deeper and real not in walked and not within(real, root) and os.path.isdir(real):
                    walked.add(real)
                    queue.append((real, name, level + 1))
            elif deeper and e.is_dir(follow_symlinks=False) and not within(normalise(e.path), skip):
                queue.append((e.path, named + "/" + e.name, level + 1))
    return tuple(found), False


MOUNTINFO = "/proc/self/mountinfo"


def mount_points(path: str | None = None) -> Mounts:
    """(where, spelling) for each folder this machine's mount table shows at a second path: a bind mount (`mount
    --bind ~/.ssh /tmp/m`, which no symbolic link reveals: `cat /tmp/m/id_rsa` reads the key) and a FUSE mount of a
    local folder (bindfs), in both directions (a path under the mount point is also under its source, and a path
    under the source also under the mount point: `/tmp/x` bound onto `.claude`). Linux only; nothing elsewhere or when
    the table cannot be read."""
    try:
        with open(path or MOUNTINFO, encoding="utf-8", errors="replace") as f:
            rows = [_mount_row(line) for line in f]
    except OSError:
        return ()
    whole: dict[str, str] = {}
    for device, root, point, _, _ in (r for r in rows if r is not None):
        if root == "/":
            whole.setdefault(device, point)
    found: dict[tuple[str, str], None] = {}
    for device, root, point, kind, source in (r for r in rows if r is not None):
        if root != "/" and device in whole:
            origin = normalise(posixpath.join(whole[device], root.lstrip("/")))
        elif kind.startswith("fuse.") and source.startswith("/"):
            origin = normalise(source)
        else:
            continue
        if origin != point:
            found.update({(point, origin): None, (origin, point): None})
    return tuple(found)


def _mount_row(line: str) -> tuple[str, str, str, str, str] | None:
    """(device, root, mount point, type, source) of a mountinfo line; None when it is not one."""
    head, sep, tail = line.partition(" - ")
    fields, rest = head.split(), tail.split()
    if not sep or len(fields) < 5 or len(rest) < 2:
        return None
    root, point, source = (_unescape(x) for x in (fields[3], fields[4], rest[1]))
    return fields[2], root, normalise(point), rest[0], source


def _unescape(text: str) -> str:
    """mountinfo writes a space, a tab, a newline and a backslash in octal (`\\040`)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)


def _steps(folder: str, name: str) -> list[str]:
    """Where the link `name` in `folder` leads: each link of a chain as the one before names it (`sub -> /tmp/a`,
    `/tmp/a -> /tmp/b`: both), and last the real path at its end."""
    out: dict[str, None] = {}
    here = folder + "/" + name
    for _ in range(CHAIN_LIMIT):
        try:
            here = normalise(posixpath.join(posixpath.dirname(here), os.readlink(here)))
        except (OSError, ValueError):
            break
        out[here] = None
        if not os.path.islink(here):
            break
    real = normalise(os.path.realpath(here))
    out.pop(real, None)
    return [*out, real]
