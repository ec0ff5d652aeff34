"""Which files a git command that rewrites the work tree may write, asked of the repository when the
command is proposed (checkout, switch, restore, reset, merge, rebase, cherry-pick, revert, stash, clean, rm).

A branch switch, a merge or a stash pop writes whatever files differ between two commits, so the command's
words alone do not say whether it rewrites the agent's own configuration (a `.claude/settings.json`
committed on another branch). Only git's plumbing is run (rev-parse, merge-base, rev-list, diff-tree,
diff-index --cached, ls-tree, ls-files), with fsmonitor off: none of them runs a hook, a filter, a diff
driver or a pager, so a repository the agent configured cannot make the monitor run a program. Work-tree
files are compared with the index by hashing them here (a filtered file counts as changed).

The answer is a superset of the files written (a name ending in "/": a folder and all it holds), but only for
the paths the caller calls `relevant` (those in a zone other than the work tree's own); `Unresolved` says why no such answer exists (an option
this reading does not know, a revision git cannot resolve, commits `git pull` has not fetched yet)."""
from __future__ import annotations

import hashlib
import os
import shlex
import stat
import subprocess
import time
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, Sequence

__all__ = ["NO_CHANGE", "PRINTS", "prints_content", "prints_stash", "REWRITES", "SENDING_KIND", "SENDS", "Repository", "Unresolved", "resolved", "static_effect", "written"]

REWRITES = frozenset({"checkout", "switch", "restore", "reset", "merge", "rebase", "cherry-pick", "revert", "stash",
                      "clean", "rm", "pull", "bisect", "sparse-checkout", "checkout-index", "read-tree", "submodule",
                      "push", "archive", "log", "whatchanged", "show", "diff", "diff-tree", "diff-index",
                      "diff-files", "range-diff", "format-patch", "fast-export", "cat-file", "pack-objects", "blame",
                      "annotate", "grep", "bundle"})
# of REWRITES, those that print or pack committed files' content (a patch, a log, a bundle: `git log -p | curl`): what
# they may print is every file of the repository's history and index, asked only where the command sends data out
PRINTS = frozenset({"log", "whatchanged", "show", "diff", "diff-tree", "diff-index", "diff-files", "range-diff",
                    "format-patch", "fast-export", "cat-file", "pack-objects", "blame", "annotate", "grep", "bundle"})
# of REWRITES, those that send the files of commits (read them) instead of writing them
SENDS = frozenset({"push", "archive", *PRINTS})
# The class whose reads of the project's secrets the contract asks about (shell_agent.toml's project_secrets_stay_local):
# what a log, patch or bundle prints is read for those commands only (it costs a walk of the history)
SENDING_KIND = "network"
NO_CHANGE: tuple[str, ...] = ()
MAX_ALIASES = 8             # git's aliases may name other aliases
MAX_COMMITS = 500            # a cherry-pick of more commits is not read commit by commit
MAX_HASHED = 64 * 1024 * 1024  # a larger work-tree file counts as changed without being read
TIMEOUT_S = 5.0


@dataclass(frozen=True)
class Unresolved:
    reason: str


class _Fail(Exception):
    """A question git could not answer: the module turns it into Unresolved."""

    def __init__(self, reason: str, *, no_repository: bool = False) -> None:
        super().__init__(reason)
        self.no_repository = no_repository


@dataclass(frozen=True)
class Repository:
    """The repository a git command run in `cwd` uses, found by git itself; `top` is its work tree."""

    cwd: str
    top: str
    object_format: str
    deadline: float
    sources: list[str] = field(default_factory=list)   # the trees (INDEX: the index) the files it names come from

    @staticmethod
    def find(cwd: str, timeout: float = TIMEOUT_S) -> "Repository | Unresolved | None":
        """The repository of `cwd`; None when `cwd` is in none (git would refuse the command there too)."""
        probe = Repository(cwd, cwd, "sha1", time.monotonic() + timeout)
        try:
            inside = probe.git("rev-parse", "--is-inside-work-tree").strip()
            if inside != b"true":
                return Unresolved(f"{cwd} is not in a repository's work tree")
            top, fmt = probe.git("rev-parse", "--show-toplevel", "--show-object-format").decode(
                "utf-8", "surrogateescape").splitlines()[:2]
        except _Fail as e:
            return None if e.no_repository else Unresolved(str(e))
        except ValueError:
            return Unresolved("git's answer could not be read")
        return Repository(cwd, top, fmt, probe.deadline)

    def again(self, timeout: float = TIMEOUT_S) -> "Repository":
        """This repository for another git step of the same command: a list of sources of its own and a time limit
        of its own (what an earlier step walked is shared through _WALKS)."""
        return replace(self, sources=[], deadline=time.monotonic() + timeout)

    def git(self, *args: str, ok_codes: tuple[int, ...] = (0,), stdin: bytes | None = None) -> bytes:
        env = dict(os.environ, GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0", LC_ALL="C")
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise _Fail(f"git did not answer within {TIMEOUT_S:g} s")
        try:
            done = subprocess.run(["git", "--no-pager", "-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false",
                                   *args], cwd=self.cwd, env=env, input=stdin if stdin is not None else b"",
                                  capture_output=True, timeout=left)
        except FileNotFoundError:
            raise _Fail("git is not installed where the monitor runs, or the folder is gone") from None
        except subprocess.TimeoutExpired:
            raise _Fail(f"git did not answer within {TIMEOUT_S:g} s") from None
        except OSError as e:
            raise _Fail(f"git could not be run in {self.cwd}: {e.strerror}") from None
        if done.returncode not in ok_codes:
            err = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise _Fail(f"`git {args[0]}` failed: {err[0] if err else f'exit {done.returncode}'}",
                        no_repository=done.returncode == 128 and b"not a git repository" in done.stderr)
        return done.stdout

    # -- questions ----------------------------------------------------------------------------------

    def commit(self, rev: str, kind: str = "commit") -> str:
        """The object `rev` names, peeled to a commit (or to a tree: `kind`, where git takes any tree-ish)."""
        if rev == "-":
            rev = "@{-1}"
        if rev.startswith("-"):
            raise _Fail(f"{rev!r} is not a revision")
        named = self.git("rev-parse", "--verify", "--quiet", "--end-of-options", rev, ok_codes=(0, 1)).strip()
        # peeled apart from the name: `main:src^{tree}` would name the path `src^{tree}` in main
        out = self.git("rev-parse", "--verify", "--quiet", named.decode() + f"^{{{kind}}}", ok_codes=(0, 1)) \
            if named else b""
        if not out.strip():
            raise _Fail(f"git cannot resolve {rev!r} to a {kind}")
        return out.decode().strip()

    def maybe_commit(self, rev: str, kind: str = "commit") -> str | None:
        try:
            return self.commit(rev, kind)
        except _Fail:
            return None

    def remote_branches(self, name: str) -> list[str]:
        """The commits of `origin/NAME` and the like: `git checkout NAME` creates NAME from one of them."""
        out = self.git("for-each-ref", "--format=%(objectname)", f"refs/remotes/*/{name}")
        return out.decode().split()

    def alias(self, name: str) -> list[str] | None:
        """The words `git NAME` stands for when NAME is an alias (git's own subcommands are not aliased)."""
        out = self.git("config", "--get", f"alias.{name}", ok_codes=(0, 1)).decode("utf-8", "surrogateescape").strip()
        if not out:
            return None
        if out.startswith("!"):
            raise _Fail(f"the alias {name} runs the shell command {out[1:]!r}")
        try:
            words = shlex.split(out)
        except ValueError:
            raise _Fail(f"the alias {name} = {out!r} cannot be read") from None
        if not words:
            raise _Fail(f"the alias {name} is empty")
        return words

    def merge_bases(self, a: str, b: str) -> list[str]:
        return self.git("merge-base", "--all", a, b, ok_codes=(0, 1)).decode().split()

    def between(self, a: str, b: str) -> set[str]:
        self.sources.append(b)
        return _names(self.git("diff-tree", "-r", "-z", "--name-only", "--no-renames", a, b))

    def tree_files(self, rev: str) -> set[str]:
        self.sources.append(rev)
        return _names(self.git("ls-tree", "-r", "-z", "--name-only", "--full-tree", rev))

    def commits(self, revs: Sequence[str]) -> list[str]:
        if any(r.startswith("-") for r in revs):
            raise _Fail(f"{[r for r in revs if r.startswith('-')][0]!r} is not a revision")
        out = self.git("rev-list", "--no-walk=unsorted", "--end-of-options", *revs)  # (--max-count would walk)
        found = out.decode().split()
        if len(found) > MAX_COMMITS:
            raise _Fail(f"more than {MAX_COMMITS} commits")
        return found

    def history(self, revs: Sequence[str], *, since: Sequence[str] = ()) -> set[str]:
        """Every file any commit reachable from `revs` (commits, or rev-list's words `--all`, `--reflog`), and not
        from `since` (`--remotes=origin/*`), changed: a file committed and deleted later is in its history. No cap on
        commits but the deadline: a history too long to read in time is Unresolved. Walked once while the refs stay as
        they are (a command is analysed again for its approval, and each part of the policy's arguments): the walk
        depends on nothing else, and a reflog only shrinks without a ref's change (then the set is a superset)."""
        refs = self.git("show-ref", "--head", ok_codes=(0, 1))
        key = (self.top, tuple(revs), tuple(since), hashlib.sha256(refs).hexdigest())
        if key in _WALKS:
            commits, files = _WALKS[key]
            self.sources.extend(commits)
            return set(files)
        commits = tuple(self.git("rev-list", *revs, *(["--not", *since] if since else [])).decode().split())
        found = self.changed_by(commits)
        _WALKS[key] = (commits, frozenset(found))
        while len(_WALKS) > MAX_WALKS:
            _WALKS.pop(next(iter(_WALKS)))
        return found

    def changed_by(self, commits: Sequence[str]) -> set[str]:
        """Every file any of `commits` changes (against each parent of a merge; a root commit's files)."""
        if not commits:
            return set()
        self.sources.extend(commits)
        out = self.git("diff-tree", "--stdin", "--no-commit-id", "-r", "-z", "--name-only", "--no-renames", "-m",
                       "--root", stdin="".join(c + "\n" for c in commits).encode())
        return _names(out)

    def restored(self, source: str | None, pathspec: Sequence[str], relevant: Callable[[str], bool]) -> set[str]:
        """The files a restore of `pathspec` from `source` (None: the index) may write: those whose index entry
        differs from `source`, and the relevant ones whose work-tree file differs from the index."""
        spec = ["--", *pathspec]
        self.sources.extend([INDEX] if source is None else [source, INDEX])
        out = set() if source is None else _names(self.git("diff-index", "--cached", "-z", "--name-only",
                                                            "--no-renames", source, *spec))
        listing = self.git("ls-files", "-z", "-s", "--full-name", *spec)
        for entry in filter(None, listing.split(b"\0")):
            meta, _, raw = entry.partition(b"\t")
            mode, sha, stage = meta.decode().split()
            path = os.fsdecode(raw)
            if path not in out and relevant(self.top + "/" + path) and (
                    stage != "0" or _differs(self.top + "/" + path, mode, sha, self.object_format)):
                out.add(path)
        return out

    def untracked(self, pathspec: Sequence[str], *, ignored: bool) -> set[str]:
        return _names(self.git("ls-files", "-z", "-o", "--full-name", *(() if ignored else ("--exclude-standard",)),
                               "--", *pathspec))


INDEX = ""
MAX_WALKS = 16
# Repository.history's walks: (top, revs, since, the refs' digest) -> (commits, files)
_WALKS: dict[tuple[str, tuple[str, ...], tuple[str, ...], str], tuple[tuple[str, ...], frozenset[str]]] = {}


def link_targets(repo: Repository, paths: set[str]) -> list[tuple[str, str]] | Unresolved:
    """(path, target) of each of `paths` that is a symbolic link (mode 120000) in a tree or the index its content
    came from (Repository.sources, filled by `written`)."""
    try:
        shas: dict[tuple[str, str], None] = {}
        for source in dict.fromkeys(repo.sources):
            listing = repo.git("ls-files", "-z", "-s", "--full-name") if source == INDEX else repo.git(
                "ls-tree", "-r", "-z", "--full-tree", source)
            for entry in filter(None, listing.split(b"\0")):
                meta, _, raw = entry.partition(b"\t")
                fields = meta.decode().split()
                path = os.fsdecode(raw)
                if fields[0] == "120000" and path in paths:
                    shas[path, fields[1] if source == INDEX else fields[2]] = None
        if not shas:
            return []
        out = repo.git("cat-file", "--batch", stdin="".join(sha + "\n" for _, sha in shas).encode())
    except _Fail as e:
        return Unresolved(str(e))
    targets: list[tuple[str, str]] = []
    for path, _ in shas:
        head, _, out = out.partition(b"\n")
        size = int(head.split()[2]) if len(head.split()) == 3 else 0
        targets.append((path, os.fsdecode(out[:size])))
        out = out[size + 1:]
    return targets


def _names(out: bytes) -> set[str]:
    return {os.fsdecode(n) for n in out.split(b"\0") if n}


def _differs(path: str, mode: str, sha: str, fmt: str) -> bool:
    """Whether the work-tree file at `path` differs from the blob `sha` with `mode` (no filter is applied, so a
    file git would filter counts as different)."""
    try:
        st = os.lstat(path)
    except OSError:
        return True
    if mode == "120000":
        if not stat.S_ISLNK(st.st_mode):
            return True
        data = os.fsencode(os.readlink(path))
    elif mode in ("100644", "100755"):
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_HASHED or (mode == "100755") != bool(st.st_mode & 0o100):
            return True
        try:
            with open(path, "rb") as f:
                data = f.read(MAX_HASHED + 1)
        except OSError:
            return True
    else:
        return True
    h = hashlib.new("sha256" if fmt == "sha256" else "sha1")
    h.update(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest() != sha


# -- reading a subcommand's words ------------------------------------------------------------------------

@dataclass
class _Words:
    flags: set[str]
    values: dict[str, str]              # the last value of each option
    operands: list[str]
    after_dashes: list[str] | None      # the words after `--`, if it was given
    given: list[tuple[str, str]] = field(default_factory=list)   # every (option, value), repeats included

    def set(self, name: str, value: str) -> None:
        self.values[name] = value
        self.given.append((name, value))


def _read(args: Sequence[str], flags: Iterable[str], valued: Iterable[str], *, optional: Iterable[str] = ()) -> _Words:
    """The words of a git subcommand; an option not listed is refused (the caller cannot know what it does)."""
    flags, valued, optional = set(flags), set(valued), set(optional)
    out = _Words(set(), {}, [], None)
    i = 0
    while i < len(args):
        w = args[i]
        if w == "--":
            out.after_dashes = list(args[i + 1:])
            break
        if w.startswith("--") and "=" in w and w.split("=", 1)[0] in valued | optional:
            name, value = w.split("=", 1)
            out.set(name, value)
        elif w in valued:
            if i + 1 >= len(args):
                raise _Fail(f"{w} needs a value")
            out.set(w, args[i + 1])
            i += 1
        elif w in flags or w in optional:
            out.flags.add(w)
        elif w.startswith("--"):
            raise _Fail(f"the option {w} is not one this reading knows")
        elif w.startswith("-") and len(w) > 1:   # short flags together (-fd), or a short option and its value (-bNEW)
            if all(f"-{c}" in flags for c in w[1:]):
                out.flags.update(f"-{c}" for c in w[1:])
            elif w[:2] in valued:
                out.set(w[:2], w[2:])
            elif w[:2] in optional:
                out.flags.add(w[:2])
            else:
                raise _Fail(f"the option {w} is not one this reading knows")
        else:
            out.operands.append(w)
        i += 1
    return out


def _one(words: _Words, *names: str) -> str | None:
    return next((words.values[n] for n in names if n in words.values), None)


def _has(words: _Words, *names: str) -> bool:
    return any(n in words.flags for n in names)


_QUIET = {"-q", "--quiet", "--progress", "--no-progress", "--recurse-submodules", "--no-recurse-submodules"}
_CHECKOUT_FLAGS = _QUIET | {"-f", "--force", "-m", "--merge", "--detach", "--no-track", "-t", "--overlay",
                            "--no-overlay", "--ignore-skip-worktree-bits", "--ignore-other-worktrees", "--ours",
                            "--theirs", "-p", "--patch", "-l", "--guess", "--no-guess", "-d", "--discard-changes"}
_CHECKOUT_VALUED = {"-b", "-B", "--orphan", "--conflict", "-c", "-C", "--create", "--force-create"}
_MERGE_FLAGS = _QUIET | {"--ff", "--no-ff", "--ff-only", "--squash", "--no-squash", "--commit", "--no-commit", "-e",
                         "--edit", "--no-edit", "--stat", "-n", "--no-stat", "--summary", "--log", "--no-log",
                         "--signoff", "--no-signoff", "-v", "--verbose", "--verify", "--no-verify",
                         "--allow-unrelated-histories", "--autostash", "--no-autostash", "--rerere-autoupdate",
                         "--no-rerere-autoupdate", "--overwrite-ignore", "--no-overwrite-ignore", "--no-gpg-sign",
                         "--verify-signatures", "--no-verify-signatures", "--compact-summary"}
_MERGE_VALUED = {"-m", "--message", "-F", "--file", "-s", "--strategy", "-X", "--strategy-option", "--into-name",
                 "--cleanup"}
_REBASE_FLAGS = _QUIET | {"-v", "--verbose", "--autostash", "--no-autostash", "--autosquash", "--no-autosquash",
                          "--fork-point", "--no-fork-point", "--committer-date-is-author-date", "--reset-author-date",
                          "--ignore-date", "--signoff", "--no-verify", "--verify", "--update-refs", "--no-update-refs",
                          "-m", "--merge", "--apply", "--stat", "-n", "--no-stat", "--keep-base", "--no-ff",
                          "--force-rebase", "-f", "--keep-empty", "--no-keep-empty", "--reapply-cherry-picks",
                          "--no-reapply-cherry-picks", "--no-gpg-sign", "--rerere-autoupdate", "--no-rerere-autoupdate"}
_REBASE_VALUED = {"--onto", "-s", "--strategy", "-X", "--strategy-option", "--empty", "-C", "--whitespace"}
_PICK_FLAGS = _QUIET | {"-e", "--edit", "--no-edit", "-x", "-n", "--no-commit", "-s", "--signoff", "--ff",
                        "--allow-empty", "--allow-empty-message", "--keep-redundant-commits", "--rerere-autoupdate",
                        "--no-rerere-autoupdate", "--no-gpg-sign", "-r", "--reference"}
_PICK_VALUED = {"-m", "--mainline", "--strategy", "-X", "--strategy-option", "--cleanup", "--empty"}
_RESTORE_FLAGS = _QUIET | {"-W", "--worktree", "-S", "--staged", "--ours", "--theirs", "-m", "--merge", "--overlay",
                           "--no-overlay", "--ignore-unmerged", "--ignore-skip-worktree-bits", "-p", "--patch"}
_RESTORE_VALUED = {"-s", "--source", "--conflict"}
_RESET_FLAGS = _QUIET | {"--soft", "--mixed", "--hard", "--merge", "--keep", "--no-refresh", "--refresh", "-N",
                         "--intent-to-add", "-p", "--patch"}
_CLEAN_FLAGS = {"-f", "--force", "-d", "-x", "-X", "-q", "--quiet", "-n", "--dry-run"}
_RM_FLAGS = {"-f", "--force", "-r", "-n", "--dry-run", "--cached", "--ignore-unmatch", "--sparse", "-q", "--quiet",
             "--pathspec-file-nul"}
_RM_VALUED = {"--pathspec-from-file"}
_CLEAN_VALUED = {"-e", "--exclude"}
_IN_PROGRESS = {"--continue", "--abort", "--skip", "--quit", "--edit-todo", "--show-current-patch"}
_STRATEGIES = {"ort", "recursive", "resolve", "octopus", "ours"}   # not subtree: it moves their files under a prefix


def _plain_strategy(w: "_Words") -> None:
    """A merge strategy that writes their files where their tree has them: git's own ones but subtree (which
    shifts them under a folder, `-X subtree=.claude`); any other name runs a program git-merge-NAME."""
    for name, value in w.given:
        if name in ("-s", "--strategy") and value not in _STRATEGIES:
            raise _Fail(f"the merge strategy {value!r} writes their files elsewhere or runs a program of its own")
        if name in ("-X", "--strategy-option") and value.startswith("subtree"):
            raise _Fail(f"-X {value} writes their files under another folder")



# -- what each subcommand writes --------------------------------------------------------------------------

def static_effect(sub: str, args: Sequence[str]) -> tuple[str, ...] | None:
    """NO_CHANGE when the words alone show the command leaves the work tree as it is (a new branch at HEAD,
    a stash listing, a restore of the index only), else None (the repository must be asked)."""
    try:
        if sub in ("checkout", "switch"):
            w = _read(args, _CHECKOUT_FLAGS, _CHECKOUT_VALUED, optional={"--track"})
            new = _one(w, "-b", "-B", "-c", "-C", "--create", "--force-create")
            if new is not None and not w.operands and not w.after_dashes and not _has(w, "-f", "--force",
                                                                                      "--discard-changes"):
                return NO_CHANGE
        elif sub == "stash":
            if args and args[0] in ("list", "show", "drop", "clear", "create", "store"):
                return NO_CHANGE
        elif sub == "reset":       # read as _reset reads it: `--ha` (git takes a unique prefix) is no plain word
            w = _read(args, _RESET_FLAGS, set())
            if not _has(w, "--hard", "--merge", "--keep"):
                return NO_CHANGE
        elif sub == "restore":
            w = _read(args, _RESTORE_FLAGS, _RESTORE_VALUED)
            if _has(w, "-S", "--staged") and not _has(w, "-W", "--worktree"):
                return NO_CHANGE
        elif sub == "clean":
            if _has(_read(args, _CLEAN_FLAGS, _CLEAN_VALUED), "-n", "--dry-run"):
                return NO_CHANGE
        elif sub == "rm":          # plain paths: the command's table entry deletes them (and folders whole, with -r)
            w = _read(args, _RM_FLAGS, _RM_VALUED)
            if _has(w, "--cached", "-n", "--dry-run") or (
                    "--pathspec-from-file" not in w.values and all(map(_literal, w.operands + (w.after_dashes or [])))):
                return NO_CHANGE
    except _Fail:
        return None
    return None


_PATCH_LONG = ("--patch", "--cc", "--dd", "--remerge-diff", "--diff-merges", "--unified", "--word-diff", "--color-words",
               "--binary", "--function-context", "--full-index", "--output")
_NO_CONTENT = ("--stat", "--numstat", "--shortstat", "--name-only", "--name-status", "--no-patch", "--quiet", "--summary",
               "--dirstat", "--raw", "--compact-summary", "--oneline", "-s")


def prints_content(sub: str, args: Sequence[str | None]) -> bool:
    """Whether `git SUB ARGS` (SUB in PRINTS) may print a committed file's content: a log only with a patch option (a
    word not known before it runs, or a short option holding p, u, c, m, W, L or U, counts as one); a show or cat-file of
    `REV:PATH` words only prints those files (read as PATH already); a diff or show unless it asks for names or counts
    only and for no patch."""
    words = [w for w in args if w is not None and w != "--"]
    patch = None in args or any(w.startswith(_PATCH_LONG) or (w.startswith("-") and not w.startswith("--") and
                                                              bool(set(w[1:]) & set("pucmWLU"))) for w in words)
    if sub in ("log", "whatchanged"):
        return patch
    named = [w for w in words if not w.startswith("-") and w not in ("blob", "tree", "commit", "tag")]
    if sub in ("show", "cat-file") and None not in args and named and all(":" in w for w in named):
        return False     # `git show REV:PATH`: the blobs it names, which the command's reads of PATH hold already
    if sub in ("show", "diff", "diff-tree", "diff-index", "diff-files"):
        return patch or not any(w.startswith(_NO_CONTENT) for w in words)
    return True


def prints_stash(sub: str | None, args: Sequence[str | None]) -> bool:
    """Whether `git SUB ARGS` is a `git stash show` that may print a stashed file's content (a patch: `-p`, or
    stash.showPatch in the configuration, unless it asks for names or counts only)."""
    return sub == "stash" and bool(args) and args[0] == "show" and prints_content("show", args[1:])


def resolved(repo: Repository, sub: str, args: Sequence[str]) -> tuple[str, list[str]] | Unresolved:
    """The git subcommand and words `git SUB ARGS` runs once its aliases are expanded (`git pu` may be `push`)."""
    try:
        for _ in range(MAX_ALIASES):
            if sub in REWRITES:
                return sub, list(args)
            expansion = repo.alias(sub)
            if expansion is None:
                return sub, list(args)     # a program git-SUB: the command's class (unknown) asks a human
            sub, args = expansion[0], [*expansion[1:], *args]
        raise _Fail(f"more than {MAX_ALIASES} aliases in a row")
    except _Fail as e:
        return Unresolved(str(e))


def written(repo: Repository, sub: str, args: Sequence[str], relevant: Callable[[str], bool]) -> set[str] | Unresolved:
    """The files (relative to `repo.top`) `git SUB ARGS` (SUB: no alias, see `resolved`) may write, or send where SUB
    is in SENDS, complete for the `relevant` ones."""
    try:
        if sub in _NEVER:
            return Unresolved(_NEVER[sub])
        return _HOW[sub](repo, list(args), relevant) if sub in _HOW else set()
    except _Fail as e:
        return Unresolved(str(e))


def _switch_to(repo: Repository, target: str, relevant: Callable[[str], bool], *, force: bool) -> set[str]:
    out = repo.between("HEAD", target)
    return out | repo.restored(target, [], relevant) if force else out


def _checkout(repo: Repository, args: list[str], relevant: Callable[[str], bool]) -> set[str]:
    w = _read(args, _CHECKOUT_FLAGS, _CHECKOUT_VALUED, optional={"--track"})
    force = _has(w, "-f", "--force")
    new = _one(w, "-b", "-B", "--orphan")
    ops, paths = w.operands, w.after_dashes
    if new is not None or paths is not None:
        if len(ops) > 1 or (new is not None and paths):
            raise _Fail("a checkout with a new branch and paths is not one this reading knows")
        if paths:          # `git checkout TREE-ISH -- PATHS`: any tree-ish (evil^{tree})
            return repo.restored(repo.commit(ops[0], "tree") if ops else None, paths, relevant)
        return _switch_to(repo, repo.commit(ops[0]) if ops else "HEAD", relevant, force=force)
    if not ops:
        return repo.restored("HEAD", [], relevant) if force else set()
    target = repo.maybe_commit(ops[0])
    if target is not None:
        return repo.restored(target, ops[1:], relevant) if len(ops) > 1 else _switch_to(repo, target, relevant, force=force)
    tree = repo.maybe_commit(ops[0], "tree")
    if tree is not None:   # a tree that is no commit: git restores the paths after it from it, or refuses
        return repo.restored(tree, ops[1:], relevant) if len(ops) > 1 else set()
    guesses = [] if _has(w, "--no-guess") or len(ops) > 1 else repo.remote_branches(ops[0])
    out = repo.restored(None, ops, relevant)       # git reads the words as paths when they name no branch
    for g in guesses:
        out |= _switch_to(repo, g, relevant, force=force)
    return out


def _switch(repo: Repository, args: list[str], relevant: Callable[[str], bool]) -> set[str]:
    w = _read(args, _CHECKOUT_FLAGS, _CHECKOUT_VALUED, optional={"--track"})
    if w.after_dashes is not None or len(w.operands) > 1:
        raise _Fail("git switch takes one branch or commit")
    force = _has(w, "-f", "--force", "--discard-changes")
    if "--orphan" in w.values:
        return repo.tree_files("HEAD")              # an orphan branch starts with no files
    if not w.operands:
        return _switch_to(repo, "HEAD", relevant, force=force)
    target = repo.maybe_commit(w.operands[0])
    if target is not None:
        return _switch_to(repo, target, relevant, force=force)
    guesses = [] if _has(w, "--no-guess") else repo.remote_branches(w.operands[0])
    if not guesses:
        raise _Fail(f"git cannot resolve {w.operands[0]!r} to a branch")
    return set().union(*(_switch_to(repo, g, relevant, force=force) for g in guesses))


def _restore(repo: Repository, args: list[str], relevant: Callable[[str], bool]) -> set[str]:
    w = _read(args, _RESTORE_FLAGS, _RESTORE_VALUED)
    source = _one(w, "-s", "--source")
    paths = w.operands + (w.after_dashes or [])
    if not paths:
        return set()
    staged = _has(w, "-S", "--staged")
    return repo.restored(repo.commit(source, "tree") if source else ("HEAD" if staged else None), paths, relevant)


def _reset(repo: Repository, args: list[str], relevant: Callable[[str], bool]) -> set[str]:
    w = _read(args, _RESET_FLAGS, set())
    if not _has(w, "--hard", "--merge", "--keep"):
        return set()
    if w.after_dashes or len(w.operands) > 1:
        raise _Fail("a reset of paths with --hard is not one this reading knows")
    target = repo.commit(w.operands[0]) if w.operands else "HEAD"
    return repo.between("HEAD", target) | repo.restored(target, [], relevant)


def _merge(repo: Repository, args: list[str], relevant: Callable[[str], bool]) -> set[str]:
    if _IN_PROGRESS & set(args):
        raise _Fail("a merge in progress goes on from a state this reading does not know")
    w = _read(args, _MERGE_FLAGS, _MERGE_VALUED, optional={"-S", "--gpg-sign", "--log"})
    _plain_strategy(w)
    revs = w.operands + (w.after_dashes or []) or ["@{upstream}"]
    out: set[str] = set()
    for rev in revs:
        target = repo.commit(rev)
        bases = repo.merge_bases("HEAD", target)
        out |= set().union(*(repo.between(b, target) for b in bases)) if bases else repo.tree_files(target)
    return out | (repo.restored("HEAD", [], relevant) if _has(w, "--autostash") else set())


def _rebase(repo: Repository, args: list[str], relevant: Callable[[str], bool]) -> set[str]:
    if _IN_PROGRESS & set(args):
        raise _Fail("a rebase in progress goes on from a state this reading does not know")
    w = _read(args, _REBASE_FLAGS, _REBASE_VALUED, optional={"-S", "--gpg-sign", "--rebase-merges", "-r"})
    _plain_strategy(w)
    if len(w.operands) > 2 or w.after_dashes is not None:
        raise _Fail("git rebase takes an upstream and a branch")
    upstream = repo.commit(w.operands[0] if w.operands else "@{upstream}")
    branch = repo.commit(w.operands[1]) if len(w.operands) > 1 else repo.commit("HEAD")
    bases = repo.merge_bases(upstream, branch)
    onto = repo.commit(w.values["--onto"]) if "--onto" in w.values else (
        bases[0] if _has(w, "--keep-base") and bases else upstream)
    out = repo.between("HEAD", branch) | repo.between(branch, onto)
    out |= set().union(*(repo.between(b, branch) for b in bases)) if bases else repo.tree_files(branch)
    return out | (repo.restored("HEAD", [], relevant) if _has(w, "--autostash") else set())


def _pick(repo: Repository, args: list[str], relevant: Callable[[str], bool]) -> set[str]:
    if _IN_PROGRESS & set(args):
        raise _Fail("a cherry-pick or revert in progress goes on from a state this reading does not know")
    w = _read(args, _PICK_FLAGS, _PICK_VALUED, optional={"-S", "--gpg-sign"})
    _plain_strategy(w)
    revs = w.operands + (w.after_dashes or [])
    if not revs:
        raise _Fail("no commit named")
    return repo.changed_by(repo.commits(revs))


def _stash(repo: Repository, args: list[str], relevant: Callable[[str], bool]) -> set[str]:
    sub, rest = (args[0], args[1:]) if args and not args[0].startswith("-") else ("push", args)
    if sub == "show":      # reached only where the command sends what it prints (shell.through_git): what it holds
        ops = [w for w in rest if not w.startswith("-")]
        if len(ops) > 1:
            raise _Fail("git stash show takes one stash")
        return _stashed(repo, ops[0] if ops else "stash@{0}")[0]
    if sub in ("list", "drop", "clear", "create", "store"):
        return set()
    if sub in ("push", "save"):
        w = _read(rest, _QUIET | {"-k", "--keep-index", "--no-keep-index", "-p", "--patch", "-S", "--staged"},
                  {"-m", "--message"})
        paths = (w.after_dashes or []) + (w.operands if sub == "push" else [])
        return repo.restored("HEAD", paths, relevant)
    if sub in ("pop", "apply", "branch"):
        w = _read(rest, _QUIET | {"--index"}, set())
        ops = w.operands[1:] if sub == "branch" else w.operands
        if sub == "branch" and not w.operands or len(ops) > 1:
            raise _Fail(f"git stash {sub} takes {'a branch and ' if sub == 'branch' else ''}one stash")
        out, base = _stashed(repo, ops[0] if ops else "stash@{0}")
        return out | repo.between("HEAD", base) if sub == "branch" else out     # the branch starts at the base
    raise _Fail(f"git stash {sub} is not one this reading knows")


def _stashed(repo: Repository, name: str) -> tuple[set[str], str]:
    """The files a stash holds (its work-tree and index changes against its base, and its untracked files), and its
    base commit."""
    stash = repo.commit(name)
    base = repo.commit(stash + "^1")
    out = repo.between(base, stash)
    index, untracked = repo.maybe_commit(stash + "^2"), repo.maybe_commit(stash + "^3")
    out |= repo.between(base, index) if index else set()
    return out | (repo.tree_files(untracked) if untracked else set()), base


def _submodule(repo: Repository, args: list[str], relevant: Callable[[str], bool]) -> set[str]:
    """A folder a submodule is checked out in is written whole (its files come from another repository): named
    with a trailing "/"."""
    sub, rest = (args[0], args[1:]) if args else ("", [])
    if sub == "add":
        w = _read(rest, _QUIET | {"-f", "--force"}, {"-b", "--branch", "--name", "--reference", "--depth"})
        ops = w.operands + (w.after_dashes or [])
        if len(ops) != 2:
            raise _Fail("git submodule add without a folder puts the submodule where its URL's name says")
        return {os.path.relpath(os.path.normpath(os.path.join(repo.cwd, ops[1])), repo.top) + "/"}
    if sub in ("update", "deinit"):
        w = _read(rest, _QUIET | {"--init", "--recursive", "--remote", "--no-fetch", "-N", "--checkout", "--merge",
                                  "--rebase", "-f", "--force", "--all", "--recommend-shallow", "--no-recommend-shallow",
                                  "--single-branch", "--no-single-branch"}, {"--reference", "--depth", "-j", "--jobs",
                                                                            "--filter"})
        listing = repo.git("ls-files", "-z", "-s", "--full-name", "--", *w.operands, *(w.after_dashes or []))
        return {os.fsdecode(e.partition(b"\t")[2]) + "/" for e in listing.split(b"\0") if e.startswith(b"160000 ")}
    raise _Fail(f"git submodule {sub} moves or writes submodules' folders")


_PUSH_VALUED = {"-o", "--push-option", "--repo", "--receive-pack", "--exec"}
_PUSH_ALL = {"--all", "--mirror", "--branches", "--tags"}


def _push(repo: Repository, args: list[str], relevant: Callable[[str], bool]) -> set[str]:
    """The files of the commits a push sends (a `.env` committed and pushed leaves the machine): the trees of
    HEAD or of the refspecs' sources, of every branch and tag with --all, --mirror or --tags."""
    words, i = [], 0
    while i < len(args):
        a = args[i]
        if a in _PUSH_VALUED:
            i += 1
        elif a == "--":
            words += args[i + 1:]
            break
        elif not a.startswith("-"):
            words.append(a)
        i += 1
    revs = [spec.lstrip("+").partition(":")[0] for spec in words[1:]]
    if any(a.split("=")[0] in _PUSH_ALL for a in args):
        revs += repo.git("for-each-ref", "--format=%(objectname)", "refs/heads", "refs/tags").decode().split()
    if not revs:
        revs = ["HEAD"]
    tips = []
    for rev in dict.fromkeys(r for r in revs if r):
        commit = repo.maybe_commit(rev)
        if commit is None:
            raise _Fail(f"git push names {rev!r}, which names no commit here")
        tips.append(commit)
    # every file the pushed commits changed, not only their trees': a secret committed and deleted later is pushed
    # with its commit, unless the remote has it already (its remote-tracking branches hold it)
    remote = _push_remote(repo, words[0] if words else None)
    since = [f"--remotes={remote}/*"] if remote else []
    files = set(repo.history(tips, since=since))
    for commit in tips:
        files |= repo.tree_files(commit)
    return {p for p in files if relevant(p)}


def _push_remote(repo: Repository, word: str | None) -> str | None:
    """The configured remote a push goes to (None: an address, whose commits this repository cannot know)."""
    if word is None:
        upstream = repo.git("rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{push}", ok_codes=(0, 128))
        word = upstream.decode("utf-8", "surrogateescape").strip().partition("/")[0] or "origin"
    known = repo.git("remote").decode("utf-8", "surrogateescape").split()
    return word if word in known else None


def _prints(repo: Repository, args: list[str], relevant: Callable[[str], bool]) -> set[str]:
    """What a log, patch, diff, blame, bundle or object dump may print: any file of the repository's history (every
    ref, the reflog), of its index and of its stashes. A superset of what the words name, which it does not read."""
    files = repo.history(["--all", "--reflog"]) | _names(repo.git("ls-files", "-z", "--full-name", "--cached"))
    return {p for p in files if relevant(p)}


_ARCHIVE_VALUED = {"-o", "--output", "--format", "--prefix", "--remote", "--exec", "--add-file", "--add-virtual-file",
                   "--mtime"}


def _archive(repo: Repository, args: list[str], relevant: Callable[[str], bool]) -> set[str]:
    """The files of the tree an archive holds (`git archive HEAD | curl -T - URL` sends a committed `.env`)."""
    words = [a for i, a in enumerate(args) if not a.startswith("-") and (i == 0 or args[i - 1] not in _ARCHIVE_VALUED)]
    if not words:
        raise _Fail("git archive names no tree")
    commit = repo.maybe_commit(words[0], "tree")
    if commit is None:
        raise _Fail(f"git archive names {words[0]!r}, which names no tree here")
    return {p for p in repo.tree_files(commit) if relevant(p)}


def _clean(repo: Repository, args: list[str], relevant: Callable[[str], bool]) -> set[str]:
    w = _read(args, _CLEAN_FLAGS, _CLEAN_VALUED)
    if _has(w, "-n", "--dry-run"):
        return set()
    return repo.untracked(w.operands + (w.after_dashes or []), ignored=_has(w, "-x", "-X"))


def _literal(pathspec: str) -> bool:
    """A pathspec git reads as the path it spells: no magic (`:/x`, `:(glob)...`), no wildcard (git's `*` matches
    across folders: `*.json` is .claude/settings.json too), no escape."""
    return not pathspec.startswith(":") and not any(c in pathspec for c in "*?[\\")


def _rm(repo: Repository, args: list[str], relevant: Callable[[str], bool]) -> set[str]:
    """The tracked files `git rm` may delete from the work tree: those its pathspecs match, as git matches them."""
    w = _read(args, _RM_FLAGS, _RM_VALUED)
    if _has(w, "--cached", "-n", "--dry-run"):
        return set()
    if "--pathspec-from-file" in w.values:
        raise _Fail("its paths are listed in a file")
    return _names(repo.git("ls-files", "-z", "--full-name", "--", *w.operands, *(w.after_dashes or [])))


_HOW: dict[str, Callable[[Repository, list[str], Callable[[str], bool]], set[str]]] = {
    "checkout": _checkout, "switch": _switch, "restore": _restore, "reset": _reset, "merge": _merge, "rebase": _rebase,
    "cherry-pick": _pick, "revert": _pick, "stash": _stash, "clean": _clean, "rm": _rm, "submodule": _submodule,
    "push": _push, "archive": _archive, **dict.fromkeys(PRINTS, _prints)}
_NEVER = {
    "pull": "git pull merges commits it has not fetched yet: run `git fetch`, then `git merge` or `git rebase` what "
            "it fetched, each on its own",
    "bisect": "git bisect checks out commits one after another",
    "sparse-checkout": "git sparse-checkout adds and removes files of the work tree by pattern",
    "checkout-index": "git checkout-index writes the index's files",
    "read-tree": "git read-tree can write any tree into the work tree"}


def config_places(cwd: str, home: str) -> list[str]:
    """What the configuration of the repository of `cwd` makes git read or run later, beyond the fixed names of the
    zone map (.git/config, .git/hooks): the folder `core.hooksPath` names and every configuration file it includes
    (`include.path`, `includeIf.*.path`); [] outside a repository or when git cannot say."""
    found = Repository.find(cwd)
    if not isinstance(found, Repository):
        return []
    try:
        listing = found.git("config", "--list", "--show-origin", "--includes", "-z")
    except _Fail:
        return []
    fields = listing.decode("utf-8", "surrogateescape").split("\0")
    places: list[str] = []
    for origin, entry in zip(fields[0::2], fields[1::2]):
        key, _, value = entry.partition("\n")
        if origin.startswith("file:"):
            places.append(os.path.normpath(os.path.join(found.cwd, origin[5:])))
        named = home + value[1:] if value.startswith("~/") else value
        key = key.lower()
        if key == "core.hookspath" and value:
            places.append(os.path.normpath(os.path.join(found.top, named)))
        elif value and origin.startswith("file:") and (key == "include.path" or (
                key.startswith("includeif.") and key.endswith(".path"))):   # included whether it exists yet or not
            places.append(os.path.normpath(os.path.join(found.cwd, os.path.dirname(origin[5:]), named)))
    return list(dict.fromkeys(places))
