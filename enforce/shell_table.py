"""The shell extractor's two tables, read from the spec's folder and checked once at load time.

commands.toml says what each program does with its arguments (class, the role of each operand and
option value); zones.toml says which zone a path is in. Nothing about zones or programs is written in
Python: a user extends both files for their own tools. Every error names the file and the key.
"""
from __future__ import annotations

import functools
import hashlib
import itertools
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Iterator, Mapping, NamedTuple, Sequence

from veriguard.contracts.regex_safety import UnsafeRegex, check_regex
from veriguard.enforce.extract_errors import ExtractionError
from veriguard.enforce.shell_git import REWRITES

ACCESSES = ("read", "write", "delete", "execute")
# Operand and option-value kinds beside the accesses (combined with "+", e.g. "read+delete").
KINDS = ("none", "unknown", "command", "shell", "script", "chdir", "at_file", "write_out", "subcommand", "variable",
         "sed", "awk", "url", "program", "setting", "setting_value", "setting_env", "repository", "file", "environment",
         "query", "path_list", "at_list", "into", "compressed", "prefix", "mount", "guest", "typed", "glob_name", "define",
         "unpack", "keeps_url", "mount_options", "versioned", "revision", "url_glob", "search_path")
# kinds that combine with accesses: "into" (a folder the sources are put in, each under its own name: cp, ln,
# scp), "compressed" (the file under its name with a compression suffix added or taken off), "prefix" (files
# whose names start with the value: split's pieces); "mount" (a container's bind mount: its host folder); "guest" (a
# path inside a container, not on this machine); "query" (an expression that may also be a file: yq reads a lone
# operand as its file), "at_file" (a word whose @FILE part is a file: gh api's -F name=@FILE, a body file otherwise),
# "glob_name" (an output name in which `#N` stands for what the URL's Nth glob matched: curl -o '#1' 'https://h/{a,b}');
# "url_glob" (a file name curl expands as it expands a URL: `-T '{.env,a}'` uploads .env; any {...} or [...] in it);
# "define" (NAME=VALUE, a build property: a VALUE written as a path is a folder the build may read and write);
# "mount_options" (mount's -o list, `KEY=VALUE,...`: a VALUE written as a path, or a `:` list of them, is a folder the
# mount shows elsewhere: `-o lowerdir=~:/tmp/a,upperdir=/tmp/u`);
# "unpack" (a folder that files the command reads, or fetches, land in under names only their content gives: tar -x,
# unzip -d, git clone: shell.through_content lists them on disk, or asks when it cannot); "keeps_url" (an address the
# command keeps in its repository's configuration, where later commands use it: git remote add, push -u); "versioned"
# (a package named with a version, fetched from the network and run: `go run example.com/x@latest`); "revision" (git's
# REV:PATH, :PATH, :N:PATH: the file PATH as a commit or the index holds it, `git show HEAD:.env`); "search_path" (a `:`
# list of folders a program loads code from, each an execute of the folder: PYTHONPATH, whose sitecustomize.py any Python
# runs)
_COMBINE = {"url", "url_glob", "program", "at_list", "into", "compressed", "prefix", "query", "at_file", "glob_name", "unpack",
            "keeps_url", "versioned", "revision", "mount_options"}   # write+mount_options: docker build -o PATH|dest=PATH
OTHER_OPTIONS = ("ignore", "unknown", "operand")
STYLES = ("gnu", "single")
INTERPRETERS = ("shell", "code")
SPECIALS = ("cd", "pushd", "popd", "eval", "source", "alias", "set", "shopt", "trap", "read", "env", "xargs",
            "busybox", "watch", "ps")
PRINTS = ("operands", "cwd")
PLACEHOLDERS = ("workspace", "home", "tmp", "guard", "secret", "carried", "carried_tree")
# Filled by the monitor with every path it protects (zero or more each; a pattern naming one with no path is
# dropped): {guard}, what the agent must not change (the enforced build's folder, the decision log and its head);
# {secret}, what the agent must not read (the private key that signs the decision log); {carried}, the files earlier
# commands wrote from the project's secrets (the hook's state across commands: `cp .env /tmp/e`, then `curl -d @/tmp/e`),
# and {carried_tree} the folders they wrote whole (`cp -r . /tmp/x`).
PLACES = ("guard", "secret", "carried", "carried_tree")
Places = tuple[tuple[str, tuple[str, ...]], ...]  # hashable: (("guard", (path, ...)), ("secret", (...)))
# (where a symbolic link of the project leads, the link), both absolute and normalised: ZoneMap.compile's `mounts`
Mounts = tuple[tuple[str, str], ...]
FILE_PLACEHOLDERS = ("repository", "home")


def _fail(file: Path, where: str, message: str) -> ExtractionError:
    return ExtractionError("extract.config", f"{file}: {where}: {message}")


class Slot(NamedTuple):
    """One item of an operand pattern: its roles and whether it takes any number of operands."""

    roles: tuple[str, ...]
    many: bool = False


class OptionSpec(NamedTuple):  # NamedTuples and not dataclasses here: a hook process pays for creating the class
    value: str | None = None            # None: a flag; else the role or kind of its value
    attached: bool = False               # the value only counts when attached (-i.bak, -ofile)
    cls: str | None = None
    operands: tuple[Slot, ...] | None = None
    recursive: bool = False
    default_operand: str | None = None
    prints: str | None = None
    sudo: bool = False
    roles: Mapping[str, str] = MappingProxyType({})
    script: str | None = None            # the program text comes from: "value", "operand" or "stdin"
    stop: bool = False                   # no option after this one
    terminators: tuple[str, ...] = ()    # for value = "command": the words that end it
    cwd: tuple[str, ...] = ()            # accesses to the working directory it adds
    filter: bool | None = None           # False: with it, a filter's output is not its input's lines (head -c)
    no_cwd: bool = False                 # the command's own cwd accesses do not apply (unzip -d DIR)
    why: str = ""
    file: tuple[str, ...] | None = None  # replaces the command's `file` (git config --global)
    then: str | None = None              # the role of a second word it takes (jq --rawfile NAME FILE)
    separate: str | None = None          # an attached value's option also takes a next word matching this (BSD sed -i '')
    before_chdir: bool = False           # its value is a path in the folder the command starts in (tar -C DIR -f ARCHIVE)


@dataclass(frozen=True, eq=False)
class CommandSpec:
    name: str
    cls: str
    operands: tuple[Slot, ...] = (Slot(("none",), True),)
    options: Mapping[str, OptionSpec] = field(default_factory=dict)
    other_options: str = "unknown"
    style: str = "gnu"
    stop_at_operand: bool = False
    first_cluster: bool = False          # the first argument is an option cluster even without "-" (tar czf)
    recursive: bool = False
    default_operand: str | None = None
    cwd: tuple[str, ...] = ()
    prints: str | None = None
    filter: bool = False
    subcommands: Mapping[str, "CommandSpec"] = field(default_factory=dict)
    optional_subcommands: bool = False   # a first operand that names no subcommand is the command's own (yq [eval] EXPR)
    same_as: str | None = None
    sudo: bool = False
    interpreter: str | None = None
    special: str | None = None
    keyed: Mapping[str, str] = field(default_factory=dict)
    remote: str | None = None
    plus: str | None = None
    roles: Mapping[str, str] = field(default_factory=dict)
    why: str = ""
    file: tuple[str, ...] = ()           # the files its role "file" is an access of ({repository}/config)
    rewrites: bool = False               # a git subcommand that may rewrite its work tree's files (shell_git)
    assignments: bool = False            # NAME=VALUE operands set the program's variables, as the environment does (make)

    @functools.cached_property
    def options_matter(self) -> bool:
        """Whether an option can change what the command touches or its class (then an argument
        the analysis cannot see, which may be such an option, makes the command unknown)."""
        return self.other_options != "ignore" or any(
            o.value not in (None, "none") or o.cls or o.operands is not None or o.recursive or o.sudo or o.roles
            or o.script or o.default_operand for o in self.options.values())

    def option(self, name: str) -> OptionSpec | None:
        """The declared option `name`; a unique prefix of a declared `--long` option counts (getopt_long)."""
        if name in self.options:
            return self.options[name]
        if name.startswith("--") and len(name) > 3:
            hits = {k for k in self.options if k.startswith(name)}
            if len(hits) == 1:
                return self.options[hits.pop()]
            if hits:
                return OptionSpec(cls="unknown", why=f"{name} is an ambiguous abbreviation")
        return None


@dataclass(frozen=True, eq=False)
class CommandTable:
    path: Path
    class_order: tuple[str, ...]          # most restrictive first
    unknown: str                          # the class of what cannot be classified
    commands: Mapping[str, CommandSpec]
    system_dirs: tuple[str, ...]          # programs named by a path here are looked up by name
    project_dirs: tuple[str, ...]         # the same, and running them is an execute access
    harmless_env: tuple[str, ...]         # variables a command may set for what it runs (globs)
    shell_variables: tuple[str, ...]      # assigning one changes how the shell runs what follows
    files: str = ""                       # the class of running a file the table does not describe ("": unknown)
    loops: "Loops | None" = None          # the class of repetition the analysis cannot bound
    settings: Mapping[str, "Settings"] = field(default_factory=dict)   # [settings.PROGRAM]
    env_runs: Mapping[str, str] = field(default_factory=dict)          # variable -> the role of its value
    secret_env: tuple[str, ...] = ()      # variables whose values are credentials (globs)
    environ: str = ""                     # the path reading them (or the whole environment) counts as
    opaque: tuple[str, ...] = ()          # classes whose text is scanned for protected names ([mentions]) besides unknown
    build_files: tuple[str, ...] = ()     # names (globs) of the files a build tool runs from the folder it builds
    # a script's name -> a word after it -> the class of running it so (`python3 setup.py install`: package_install)
    script_commands: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # a script's name -> its options that name the folders it installs into (OptionSpec.file, or the option's value),
    # written whole (`python3 setup.py install --user` writes ~/.local, as `pip install --user` does)
    script_writes: Mapping[str, "CommandSpec"] = field(default_factory=dict)

    def secret(self, name: str | None) -> bool:
        """Whether expanding or printing `name` reads a credential (None or "*": every variable)."""
        return name is None or name == "*" or any(_glob_match(p, name) for p in self.secret_env)

    def rank(self, cls: str) -> int:
        return len(self.class_order) - self.class_order.index(cls)

    def lowest(self) -> str:
        return self.class_order[-1]

    def harmless(self, name: str) -> bool:
        return any(_glob_match(p, name) for p in self.harmless_env)

    def builds_from(self, name: str) -> bool:
        """Whether a build tool runs a file of this name in the folder it builds (a Makefile)."""
        return any(_glob_match(p, name) for p in self.build_files)

    def check(self) -> None:
        """Check every entry now (ExtractionError naming the file and key of the first in error)."""
        for name in self.commands:
            self.commands[name]


class Settings(NamedTuple):
    """[settings.PROGRAM]: a program's configuration (git's): where its repository and files are, and
    the keys whose value it runs or reads (git -c KEY=VALUE, `git config KEY VALUE`, GIT_CONFIG_*)."""

    repository: str = ""                      # the repository folder, looked for from the cwd upward
    repository_env: tuple[str, ...] = ()      # variables that name the repository (GIT_DIR)
    env_keys: Mapping[str, str] = MappingProxyType({})   # variables that set a key (GIT_WORK_TREE: core.worktree)
    files_env: tuple[str, ...] = ()           # variables that name a configuration file (GIT_CONFIG_GLOBAL)
    key_env: str = ""                         # KEY_n / VALUE_n pairs in the environment (prefixes)
    value_env: str = ""
    parameters_env: str = ""                  # 'key'='value' pairs in one variable (GIT_CONFIG_PARAMETERS)
    keys: tuple[tuple[str, OptionSpec], ...] = ()   # case-folded glob -> the role of the value
    # zones the agent may write: a repository whose configuration lies in one of them runs what the agent chose there
    writable: tuple[str, ...] = ()
    no_repository: tuple[str, ...] = ()       # subcommands that read no repository's configuration (git clone, init)

    def key(self, name: str) -> OptionSpec | None:
        folded = name.casefold()
        return next((o for pattern, o in self.keys if _glob_match(pattern, folded)), None)


class Loops(NamedTuple):
    """[loops]: repetition the analysis cannot bound (a while loop, a for loop over more than
    `max_runs` words or over words it cannot count, a background job inside a loop or a function, a
    function calling a function of the command) is of class `cls`."""

    cls: str
    max_runs: int


def _glob_match(pattern: str, name: str) -> bool:
    return glob_match(pattern, name, dot_rule=False)


# ---------------------------------------------------------------------------------------------
# commands.toml

_CMD_KEYS = {"class", "operands", "options", "other_options", "style", "stop_at_operand", "first_cluster", "recursive",
             "default_operand", "cwd", "prints", "filter", "subcommands", "same_as", "sudo", "interpreter",
             "special", "keyed", "remote", "plus", "roles", "why", "file", "rewrites", "optional_subcommands",
             "assignments"}
_OPT_KEYS = {"value", "attached", "class", "operands", "recursive", "default_operand", "prints", "sudo", "roles",
             "script", "stop", "terminators", "cwd", "filter", "no_cwd", "why", "file", "then", "separate",
             "before_chdir"}
_SETTINGS_KEYS = {"repository", "repository_env", "env_keys", "files_env", "key_env", "value_env", "parameters_env",
                  "keys", "writable", "no_repository"}
_SETTING_ROLES = {"file": "none"}   # a setting may change the role "file" of the command it is given to


class _Reader:
    def __init__(self, file: Path, classes: tuple[str, ...]) -> None:
        self.file, self.classes = file, classes

    def role(self, text: Any, where: str, names: Mapping[str, str], *, kinds: bool = True) -> tuple[str, ...]:
        if not isinstance(text, str) or not text:
            raise _fail(self.file, where, f"expected a role such as \"read\", got {text!r}")
        parts = tuple(text.split("+"))
        allowed = set(ACCESSES) | set(names) | (set(KINDS) if kinds else {"none"})
        for p in parts:
            if p not in allowed:
                raise _fail(self.file, where, f"unknown role {p!r}; one of {sorted(allowed)}")
        if len(parts) > 1 and not set(parts) <= set(ACCESSES) | set(names) | _COMBINE:
            raise _fail(self.file, where, f"only accesses and {sorted(_COMBINE)} combine with '+', got {text!r}")
        return parts

    def pattern(self, raw: Any, where: str, names: Mapping[str, str]) -> tuple[Slot, ...]:
        if not isinstance(raw, list):
            raise _fail(self.file, where, f"expected a list such as [\"read*\", \"write\"], got {raw!r}")
        slots = []
        for i, item in enumerate(raw):
            text = str(item)
            many = text.endswith("*") or text.endswith("...")
            slot = Slot(self.role(text.rstrip("*.") or text, f"{where}[{i}]", names), many)
            if "command" in slot.roles and i != len(raw) - 1:
                raise _fail(self.file, f"{where}[{i}]", "\"command...\" must be the last item")
            slots.append(Slot(slot.roles, many or "command" in slot.roles))
        if sum(s.many for s in slots) > 1:
            raise _fail(self.file, where, "at most one item may take any number of operands ('*')")
        return tuple(slots)

    def cls(self, raw: Any, where: str) -> str:
        if raw not in self.classes:
            raise _fail(self.file, where, f"class {raw!r} is not one of {list(self.classes)}")
        return str(raw)

    def choice(self, raw: Any, where: str, allowed: tuple[str, ...]) -> str:
        if raw not in allowed:
            raise _fail(self.file, where, f"{raw!r} is not one of {list(allowed)}")
        return str(raw)

    def keys(self, raw: Any, where: str, allowed: set[str]) -> Mapping[str, Any]:
        if not isinstance(raw, Mapping):
            raise _fail(self.file, where, f"expected a table, got {raw!r}")
        extra = sorted(set(raw) - allowed)
        if extra:
            raise _fail(self.file, where, f"unknown key(s) {extra}; allowed: {sorted(allowed)}")
        return raw

    def roles_table(self, raw: Any, where: str, names: Mapping[str, str] | None = None) -> dict[str, str]:
        if not isinstance(raw, Mapping):
            raise _fail(self.file, where, "expected a table of name = role")
        for k, v in raw.items():
            self.role(v, f"{where}.{k}", {}, kinds=False)
            if names is not None and k not in names:
                raise _fail(self.file, f"{where}.{k}", f"no role {k!r} is declared in the command's roles")
        return {str(k): str(v) for k, v in raw.items()}

    def option(self, raw: Any, where: str, names: Mapping[str, str]) -> OptionSpec:
        raw = self.keys(raw, where, _OPT_KEYS)
        value = raw.get("value")
        if value is not None:
            value = "+".join(self.role(value, f"{where}.value", names))
        then = raw.get("then")
        if then is not None:
            if value is None or raw.get("attached"):
                raise _fail(self.file, f"{where}.then", "only an option that takes a separate value takes a second one")
            then = "+".join(self.role(then, f"{where}.then", names))
        separate = raw.get("separate")
        if separate is not None:
            if value is None or not raw.get("attached"):
                raise _fail(self.file, f"{where}.separate", "only an option whose value is attached takes a separate one")
            self.regex(separate, f"{where}.separate")
        script = raw.get("script")
        if script is not None:
            self.choice(script, f"{where}.script", ("value", "operand", "stdin"))
        prints = raw.get("prints")
        if prints is not None:
            self.choice(prints, f"{where}.prints", PRINTS)
        return OptionSpec(
            value=value, attached=bool(raw.get("attached", False)),
            cls=self.cls(raw["class"], f"{where}.class") if "class" in raw else None,
            operands=self.pattern(raw["operands"], f"{where}.operands", names) if "operands" in raw else None,
            recursive=bool(raw.get("recursive", False)), default_operand=raw.get("default_operand"),
            prints=prints, sudo=bool(raw.get("sudo", False)),
            roles=self.roles_table(raw.get("roles", {}), f"{where}.roles", names),
            script=script, stop=bool(raw.get("stop", False)),
            terminators=tuple(map(str, raw.get("terminators", ()))), cwd=self.accesses(raw.get("cwd", []), where),
            filter=self.flag(raw["filter"], f"{where}.filter") if "filter" in raw else None,
            no_cwd=self.flag(raw.get("no_cwd", False), f"{where}.no_cwd"),
            before_chdir=self.flag(raw.get("before_chdir", False), f"{where}.before_chdir"),
            why=str(raw.get("why", "")), file=self.files(raw["file"], f"{where}.file") if "file" in raw else None,
            then=then, separate=str(separate) if separate is not None else None)

    def regex(self, raw: Any, where: str) -> None:
        """A regular expression the analysis matches the agent's words with: one that compiles and cannot
        backtrack without bound (contracts/regex_safety.py)."""
        if not isinstance(raw, str):
            raise _fail(self.file, where, f"expected a regular expression (a string), got {raw!r}")
        try:
            check_regex(raw, where)
            re.compile(raw)
        except re.error as e:
            raise _fail(self.file, where, f"not a regular expression: {e}") from None
        except UnsafeRegex as e:
            raise _fail(self.file, where, f"pattern {raw!r} {e.why}; fix: {e.fix}") from None

    def files(self, raw: Any, where: str) -> tuple[str, ...]:
        pats = _strings(raw, self.file, where)
        for p in pats:
            bad = [n for n in re.findall(r"\{(\w+)\}", p) if n not in FILE_PLACEHOLDERS]
            if bad or not p.startswith(("/", "{")):
                raise _fail(self.file, where, f"{p!r} must be absolute or start with {{repository}} or {{home}}")
        return pats

    def flag(self, raw: Any, where: str) -> bool:
        if type(raw) is not bool:
            raise _fail(self.file, where, f"expected true or false, got {raw!r}")
        return raw

    def accesses(self, raw: Any, where: str) -> tuple[str, ...]:
        if not isinstance(raw, list):
            raise _fail(self.file, f"{where}.cwd", f"expected a list of accesses, got {raw!r}")
        for i, r in enumerate(raw):
            if r not in ("into", "unpack"):   # the working directory receives the sources (curl -O, tar -x)
                self.role(r, f"{where}.cwd[{i}]", {}, kinds=False)
        return tuple(map(str, raw))

    def command(self, name: str, raw: Any, where: str) -> CommandSpec:
        raw = self.keys(raw, where, _CMD_KEYS)
        if "same_as" in raw:
            if set(raw) != {"same_as"}:
                raise _fail(self.file, where, "same_as stands alone")
            return CommandSpec(name, self.lowest, same_as=str(raw["same_as"]))
        if "class" not in raw:
            raise _fail(self.file, where, "every command needs a class")
        names = self.roles_table(raw.get("roles", {}), f"{where}.roles")
        options: dict[str, OptionSpec] = {}
        for key, spec in (raw.get("options") or {}).items():
            opt = self.option(spec, f"{where}.options.{key!r}", names)
            for alias in str(key).split("|"):
                if not alias.startswith(("-", "+")):
                    raise _fail(self.file, f"{where}.options.{key!r}", f"option {alias!r} must start with '-'")
                options[alias] = opt
        subs: dict[str, CommandSpec] = {}
        for key, spec in (raw.get("subcommands") or {}).items():
            sub = self.command(f"{name} {key}", spec, f"{where}.subcommands.{key}")
            for alias in str(key).split("|"):
                subs[alias] = sub
        for k, allowed in (("other_options", OTHER_OPTIONS), ("style", STYLES)):
            if k in raw:
                self.choice(raw[k], f"{where}.{k}", allowed)
        for k, allowed in (("interpreter", INTERPRETERS), ("special", SPECIALS), ("prints", PRINTS)):
            if k in raw:
                self.choice(raw[k], f"{where}.{k}", allowed)
        cwd = self.accesses(raw.get("cwd", []), where)
        keyed = {str(k): "+".join(self.role(v, f"{where}.keyed.{k}", names))
                 for k, v in (raw.get("keyed") or {}).items()}
        operands = self.pattern(raw["operands"], f"{where}.operands", names) if "operands" in raw else None
        rewrites = self.flag(raw["rewrites"], f"{where}.rewrites") if "rewrites" in raw else False
        words = name.split(" ")
        unknown_git = sorted(set(words[1].split("|") if len(words) > 1 else words) - REWRITES) if rewrites else []
        if unknown_git:
            raise _fail(self.file, f"{where}.rewrites", f"{unknown_git} are not git subcommands whose writes veriguard "
                        f"can ask the repository about; those it can: {sorted(REWRITES)}")
        return CommandSpec(
            name=name, cls=self.cls(raw["class"], f"{where}.class"),
            operands=operands if operands is not None else (Slot(("none",), True),),
            options=options, other_options=str(raw.get("other_options", "unknown")), style=str(raw.get("style", "gnu")),
            stop_at_operand=bool(raw.get("stop_at_operand", bool(subs))), first_cluster=bool(raw.get("first_cluster")),
            recursive=bool(raw.get("recursive", False)),
            default_operand=raw.get("default_operand"), cwd=cwd, prints=raw.get("prints"),
            filter=bool(raw.get("filter", False)), subcommands=subs, sudo=bool(raw.get("sudo", False)),
            optional_subcommands=self.flag(raw.get("optional_subcommands", False), f"{where}.optional_subcommands"),
            interpreter=raw.get("interpreter"), special=raw.get("special"), keyed=keyed,
            remote=self.cls(raw["remote"], f"{where}.remote") if "remote" in raw else None,
            plus=self.cls(raw["plus"], f"{where}.plus") if "plus" in raw else None,
            roles=names, why=str(raw.get("why", "")),
            file=self.files(raw["file"], f"{where}.file") if "file" in raw else (), rewrites=rewrites,
            assignments=self.flag(raw.get("assignments", False), f"{where}.assignments"))

    @property
    def lowest(self) -> str:
        return self.classes[-1]


@dataclass(frozen=True)
class _Source:
    """A table file's bytes, equal by (path, sha256): the key its parse is cached under."""

    file_name: str
    digest: str
    data: bytes = field(compare=False, repr=False)


def _source(file: Path, data: bytes | None) -> _Source:
    """`data` (the bytes a build certified), else the file read once: what is hashed is what is parsed."""
    data = _read_table(file) if data is None else data
    return _Source(str(file), hashlib.sha256(data).hexdigest(), data)


def _read_table(file: Path) -> bytes:
    try:
        return file.read_bytes()
    except OSError as e:
        raise ExtractionError("extract.config", f"{file}: cannot be read: {e.strerror}") from None


def _toml(file: Path, data: bytes | None = None) -> dict[str, Any]:
    """The TOML in `data`, else in `file`; `file` names it in every error."""
    data = _read_table(file) if data is None else data
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ExtractionError("extract.config", f"{file}: not valid TOML: not UTF-8 ({e})") from None
    loads, error = _toml_parser()
    try:
        return loads(text)
    except error as e:
        raise ExtractionError("extract.config", f"{file}: not valid TOML: {e}") from None


def _toml_parser() -> tuple[Any, type[Exception]]:
    """rtoml (the shell extra) where installed: it reads commands.toml in a fifteenth of tomllib's time,
    which a hook process pays on every tool call. Both implement TOML 1.0 and reject the same files
    (tests/unit/test_shell_table.py)."""
    try:
        import rtoml
    except ImportError:
        import tomllib

        return tomllib.loads, tomllib.TOMLDecodeError
    return rtoml.loads, rtoml.TomlParsingError


def _strings(raw: Any, file: Path, where: str) -> tuple[str, ...]:
    if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
        raise _fail(file, where, f"expected a list of strings, got {raw!r}")
    return tuple(raw)


def load_commands(file: Path, *, lazy: bool = False, data: bytes | None = None) -> CommandTable:
    """The command table in `file` (or `data`, its bytes as a build certified them), loaded once per content.
    Every entry is checked now, or with `lazy` when it is first looked up (a hook process, which looks up a
    handful of the table's entries per call, then pays for those only; an entry in error denies the commands
    that use it)."""
    table = _load_commands(_source(file, data))
    if not lazy:
        table.check()
    return table


@functools.lru_cache(maxsize=16)
def _load_commands(source: _Source) -> CommandTable:
    file = Path(source.file_name)
    raw = _toml(file, source.data)
    allowed = {"class_order", "unknown_class", "opaque_classes", "programs", "environment", "commands", "loops", "settings"}
    extra = sorted(set(raw) - allowed)
    if extra:
        raise _fail(file, "top level", f"unknown key(s) {extra}; allowed: {sorted(allowed)}")
    order = _strings(raw.get("class_order"), file, "class_order")
    if len(set(order)) != len(order) or not order:
        raise _fail(file, "class_order", "list every class once, most restrictive first")
    unknown = str(raw.get("unknown_class", ""))
    if unknown not in order:
        raise _fail(file, "unknown_class", f"{unknown!r} is not in class_order")
    opaque = _strings(raw.get("opaque_classes", []), file, "opaque_classes")
    if not set(opaque) <= set(order):
        raise _fail(file, "opaque_classes", f"{sorted(set(opaque) - set(order))} are not in class_order")
    reader = _Reader(file, order)
    table = raw.get("commands") or {}
    if not isinstance(table, dict):
        raise _fail(file, "[commands]", f"expected a table of program = {{ class = ... }}, got {table!r}")
    entries: dict[str, tuple[str, Any]] = {}
    for key, spec in table.items():
        for alias in str(key).split("|"):
            if alias in entries:
                raise _fail(file, f"[commands.{key}]", f"{alias!r} is declared twice")
            entries[alias] = (str(key), spec)
    programs = reader.keys(raw.get("programs") or {}, "[programs]", {"system", "project", "files", "build_files",
                                                                      "script_commands", "script_writes"})
    env = raw.get("environment") or {}
    files = reader.cls(programs["files"], "programs.files") if "files" in programs else ""
    return CommandTable(file, order, unknown, Commands(reader, entries),
                        _strings(programs.get("system", []), file, "programs.system"),
                        _strings(programs.get("project", []), file, "programs.project"),
                        _strings(env.get("harmless", []), file, "environment.harmless"),
                        _strings(env.get("shell", []), file, "environment.shell"),
                        files, _loops(reader, raw["loops"]) if "loops" in raw else None,
                        _settings(reader, raw.get("settings") or {}), _env_runs(reader, env.get("runs") or {}),
                        _strings(env.get("secrets", []), file, "environment.secrets"), _environ(env, file),
                        tuple(opaque), _strings(programs.get("build_files", []), file, "programs.build_files"),
                        _script_commands(reader, programs.get("script_commands", {}), file),
                        _script_writes(programs.get("script_writes", {}), file, order[-1]))


def _script_commands(reader: "_Reader", raw: Any, file: Path) -> dict[str, dict[str, str]]:
    """[programs] script_commands: `{ "setup.py" = { "install|develop" = "package_install" } }`."""
    where = "programs.script_commands"
    if not isinstance(raw, Mapping):
        raise _fail(file, where, f"expected a table of script name = {{ word = class }}, got {raw!r}")
    out: dict[str, dict[str, str]] = {}
    for script, words in raw.items():
        if not isinstance(words, Mapping) or not words:
            raise _fail(file, f"{where}.{script}", f"expected a table of word = class, got {words!r}")
        out[str(script)] = {w: reader.cls(cls, f"{where}.{script}.{key}") for key, cls in words.items()
                            for w in str(key).split("|")}
    return out


def _script_writes(raw: Any, file: Path, lowest: str) -> dict[str, CommandSpec]:
    """[programs] script_writes: `{ "setup.py" = { "--user" = ["{home}/.local"], "--prefix|--root" = [] } }`, each
    script's as an entry whose options the command's own parser reads (`--prefix DIR`, `--prefix=DIR`, `-dDIR`, an
    abbreviation): an option with folders writes them (OptionSpec.file), one without writes its value; any other word
    is an operand."""
    where = "programs.script_writes"
    if not isinstance(raw, Mapping):
        raise _fail(file, where, f"expected a table of script name = {{ option = [folder, ...] }}, got {raw!r}")
    out: dict[str, CommandSpec] = {}
    for script, options in raw.items():
        if not isinstance(options, Mapping) or not options:
            raise _fail(file, f"{where}.{script}", f"expected a table of option = [folder, ...], got {options!r}")
        specs: dict[str, OptionSpec] = {}
        for key, places in options.items():
            names = str(key).split("|")
            if not all(n.startswith("-") and len(n) > 1 for n in names):
                raise _fail(file, f"{where}.{script}.{key}", "expected options (words starting with -)")
            folders = _strings(places, file, f"{where}.{script}.{key}")
            specs.update(dict.fromkeys(names, OptionSpec(file=folders) if folders else OptionSpec(value="write")))
        out[str(script)] = CommandSpec(name=str(script), cls=lowest, options=specs, other_options="operand")
    return out


class Commands(Mapping[str, CommandSpec]):
    """[commands]: program name -> its entry, each checked and compiled when first looked up."""

    def __init__(self, reader: _Reader, entries: dict[str, tuple[str, Any]]) -> None:
        self._reader, self._entries = reader, entries
        self._done: dict[str, CommandSpec] = {}

    def __getitem__(self, name: str) -> CommandSpec:
        spec = self._done.get(name)
        if spec is None:
            key, raw = self._entries[name]
            spec = self._reader.command(key.split("|")[0], raw, f"[commands.{key}]")
            self._check_same_as(spec)
            for alias in key.split("|"):
                self._done[alias] = spec
        return spec

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def _check_same_as(self, cmd: CommandSpec) -> None:
        if cmd.same_as is not None:
            _, target = self._entries.get(cmd.same_as, ("", None))
            if not isinstance(target, dict) or "same_as" in target:
                raise _fail(self._reader.file, f"[commands... {cmd.name}]",
                            f"same_as {cmd.same_as!r} names no command with a class")
        for sub in {id(c): c for c in cmd.subcommands.values()}.values():  # each entry once, not per alias
            self._check_same_as(sub)


def _settings(reader: _Reader, raw: Any) -> dict[str, Settings]:
    out: dict[str, Settings] = {}
    for program, body in reader.keys(raw, "[settings]", set(raw) if isinstance(raw, Mapping) else set()).items():
        where = f"[settings.{program}]"
        body = reader.keys(body, where, _SETTINGS_KEYS)
        keys = tuple((alias.casefold(), reader.option(v, f"{where}.keys.{k!r}", _SETTING_ROLES))
                     for k, v in reader.keys(body.get("keys", {}), f"{where}.keys",
                                             set(body.get("keys", {}) or {})).items() for alias in str(k).split("|"))
        env_keys = reader.keys(body.get("env_keys", {}), f"{where}.env_keys", set(body.get("env_keys", {}) or {}))
        out[str(program)] = Settings(
            repository=str(body.get("repository", "")),
            repository_env=_strings(body.get("repository_env", []), reader.file, f"{where}.repository_env"),
            env_keys={str(k): str(v) for k, v in env_keys.items()},
            files_env=_strings(body.get("files_env", []), reader.file, f"{where}.files_env"),
            key_env=str(body.get("key_env", "")), value_env=str(body.get("value_env", "")),
            parameters_env=str(body.get("parameters_env", "")), keys=keys,
            writable=_strings(body.get("writable", []), reader.file, f"{where}.writable"),
            no_repository=_strings(body.get("no_repository", []), reader.file, f"{where}.no_repository"))
    return out


def _environ(env: Mapping[str, Any], file: Path) -> str:
    path = env.get("file", "")
    if not isinstance(path, str) or (path and not path.startswith("/")):
        raise _fail(file, "environment.file", f"expected an absolute path (the process environment, e.g. "
                    f"/proc/self/environ), got {path!r}")
    return path


def _env_runs(reader: _Reader, raw: Any) -> dict[str, str]:
    table = reader.keys(raw, "[environment.runs]", set(raw) if isinstance(raw, Mapping) else set())
    return {str(k): "+".join(reader.role(v, f"environment.runs.{k}", {})) for k, v in table.items()}


def _loops(reader: _Reader, raw: Any) -> Loops:
    raw = reader.keys(raw, "[loops]", {"class", "max_runs"})
    runs = raw.get("max_runs")
    if type(runs) is not int or not 1 <= runs <= 256:
        raise _fail(reader.file, "loops.max_runs", f"expected a whole number from 1 to 256, got {runs!r}")
    return Loops(reader.cls(raw.get("class"), "loops.class"), runs)


# ---------------------------------------------------------------------------------------------
# zones.toml and path matching

@functools.lru_cache(maxsize=4096)
def _component_regex(pattern: str, *, dot_rule: bool, loose: bool = False) -> re.Pattern[str]:
    """A regex for one path component of a glob (`*`, `?`, `[...]`, backslash escapes). `loose` reads
    every bracket expression as any one character: a command's glob may use classes ([[:alpha:]])
    this translation does not follow, and a path it might match must count."""
    out, i = [], 0
    if dot_rule and pattern[:1] in ("*", "?"):  # only a literal dot matches a leading dot (a bracket may)
        out.append(r"(?!\.)")
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = _bracket_end(pattern, i)
            if end < 0:
                out.append(re.escape(c))
            elif loose:
                out.append("[^/]")
                i = end
            else:
                out.append(_bracket_regex(pattern[i + 1:end]))
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out))


STAR, ANY = "*", "?"  # tokens of a glob: these two, a one-character literal (a 1-tuple), or a class (a regex)
Token = str | tuple[str] | re.Pattern[str]


def glob_match(pattern: str, name: str, *, dot_rule: bool, loose: bool = False) -> bool:
    """Whether `name` matches the glob `pattern` (`*`, `?` and `*` never matching `/`, `[...]`, backslash
    escapes), in time linear in the name for a given pattern: a zone map is data, and a regex of many `*`
    backtracks polynomially on the agent's file names (twelve `*a` took seconds on 30 characters). A
    pattern with at most one `*` keeps its regex, which cannot backtrack more than the matcher loops."""
    if pattern.count("*") <= 1:
        return _component_regex(pattern, dot_rule=dot_rule, loose=loose).fullmatch(name) is not None
    if dot_rule and pattern[:1] in ("*", "?") and name[:1] == ".":
        return False  # only a literal dot matches a leading dot
    if "/" in name:
        return _match_tokens(_glob_tokens(pattern, loose=loose), name)
    pieces = _star_pieces(pattern)
    return _match_pieces(pieces, name) if pieces is not None else _match_greedy(_glob_tokens(pattern, loose=loose), name)


@functools.lru_cache(maxsize=4096)
def _star_pieces(pattern: str) -> tuple[str, ...] | None:
    """The literal texts between the `*` of a glob made of `*` and literal characters only (`*.key.*`: "", ".key.",
    ""), or None for one with `?`, a class or an escape."""
    if any(c in pattern for c in "?[\\"):
        return None
    return tuple(pattern.split("*"))


def _match_pieces(pieces: tuple[str, ...], name: str) -> bool:
    """Whether `name` matches the glob `*`.join(pieces): its first piece begins the name, its last ends it, and the
    others occur in order between them (the leftmost occurrence of each is as good as any): linear in the name."""
    first, last = pieces[0], pieces[-1]
    if len(name) < len(first) + len(last) or not name.startswith(first) or not name.endswith(last):
        return False
    at, end = len(first), len(name) - len(last)
    for piece in pieces[1:-1]:
        found = name.find(piece, at, end)
        if found < 0:
            return False
        at = found + len(piece)
    return True


@functools.lru_cache(maxsize=4096)
def _glob_tokens(pattern: str, *, loose: bool) -> tuple[Token, ...]:
    """The glob as tokens, read as _component_regex reads it (a class is the regex of its one character)."""
    out: list[Token] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            out.append((pattern[i + 1],))
            i += 2
            continue
        end = _bracket_end(pattern, i) if c == "[" else -1
        if c in (STAR, ANY):
            if not (c == STAR and out and out[-1] == STAR):  # ** is * within one component
                out.append(c)
        elif end >= 0:
            out.append(re.compile("[^/]" if loose else _bracket_regex(pattern[i + 1:end])))
            i = end
        else:
            out.append((c,))
        i += 1
    return tuple(out)


def _one(token: Token, ch: str) -> bool:
    """Whether a token other than `*` matches the character `ch`."""
    if token == ANY:
        return ch != "/"
    if isinstance(token, tuple):
        return token[0] == ch
    return isinstance(token, re.Pattern) and token.fullmatch(ch) is not None


def _match_greedy(tokens: tuple[Token, ...], name: str) -> bool:
    """The two-pointer wildcard match, for a name without `/` (every `*` may take any of its characters):
    on a mismatch only the last `*` seen takes one more character. At most len(name) * len(tokens) steps."""
    t = n = 0
    star, star_n = -1, 0
    while n < len(name):
        if t < len(tokens) and tokens[t] == STAR:
            star, star_n = t, n
            t += 1
        elif t < len(tokens) and _one(tokens[t], name[n]):
            t += 1
            n += 1
        elif star >= 0:
            star_n += 1
            t, n = star + 1, star_n
        else:
            return False
    return all(tok == STAR for tok in tokens[t:])


def _match_tokens(tokens: tuple[Token, ...], name: str) -> bool:
    """The match as a set of token positions, one character at a time (a `*` never takes `/`): for a name
    with `/` (a setting key), where the last `*` alone cannot stand for all. len(name) * len(tokens) steps."""
    def closure(states: set[int]) -> set[int]:
        out = set(states)
        for i in sorted(states):
            while i < len(tokens) and tokens[i] == STAR:
                i += 1
                out.add(i)
        return out

    states = closure({0})
    for ch in name:
        states = closure({i if tokens[i] == STAR else i + 1 for i in states if i < len(tokens)
                          and (ch != "/" if tokens[i] == STAR else _one(tokens[i], ch))})
        if not states:
            return False
    return len(tokens) in states


def _bracket_regex(body: str) -> str:
    """The regex class of a bracket expression's body (`!`/`^` negates; `-` stays a range)."""
    neg = body[:1] in ("!", "^")
    body = body[1:] if neg else body
    return "[" + ("^" if neg else "") + "".join(ch if ch == "-" else re.escape(ch) for ch in body) + "]"


def _bracket_end(pattern: str, i: int) -> int:
    """Index of the `]` closing the bracket expression at `i` (bash's reading), or -1."""
    j = i + 1
    if j < len(pattern) and pattern[j] in "!^":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    while j < len(pattern):
        if pattern[j] == "[" and pattern[j + 1:j + 2] in (":", "=", "."):
            close = pattern.find(pattern[j + 1] + "]", j + 2)
            if close < 0:
                return -1
            j = close + 2
            continue
        if pattern[j] == "\\":
            j += 2
            continue
        if pattern[j] == "]":
            return j
        j += 1
    return -1


GLOB_CHARS = frozenset("*?[")


def has_glob(component: str) -> bool:
    """Whether a (backslash-escaped) component has an active glob character."""
    i = 0
    while i < len(component):
        if component[i] == "\\":
            i += 2
            continue
        if component[i] in GLOB_CHARS:
            return True
        i += 1
    return False


def unescape(component: str) -> str:
    return re.sub(r"\\(.)", r"\1", component)


class Comp(NamedTuple):
    """A path component: a literal name, a glob over one name, or `**` (any number of components)."""

    text: str
    glob: bool = False
    star2: bool = False

    def matches(self, name: str, *, dot_rule: bool, loose: bool = False) -> bool:
        if not self.glob:
            return self.text == name
        if name in (".", ".."):
            return False
        return glob_match(self.text, name, dot_rule=dot_rule, loose=loose)


STAR2 = Comp("**", True, True)


def literal_head(pattern: tuple[Comp, ...]) -> str:
    """The literal folder a pattern starts with, `/` ended."""
    names = []
    for c in pattern:
        if c.glob or c.star2:
            break
        names.append(c.text)
    return "/" + "".join(n + "/" for n in names)


def split_pattern(path: str) -> tuple[Comp, ...]:
    """Components of an absolute, normalised, backslash-escaped pattern ('/' is the empty tuple)."""
    comps = []
    for part in path.split("/"):
        if not part:
            continue
        if part == "**":
            comps.append(STAR2)
        elif has_glob(part):
            comps.append(Comp(part, True))
        else:
            comps.append(Comp(unescape(part)))
    return tuple(comps)


def _meet(a: Comp, b: Comp, *, dot_rule: bool) -> bool:
    """Whether a name can match both components (`a` is the command's, `b` the zone map's)."""
    if not a.glob and not b.glob:
        return a.text == b.text
    if not a.glob:
        return b.matches(a.text, dot_rule=False)
    if not b.glob:
        return a.matches(b.text, dot_rule=dot_rule, loose=True)
    if dot_rule and a.text[:1] in ("*", "?") and b.text[:1] == ".":
        return False  # every name the zone's glob matches starts with a dot, which the command's `*` or `?` skips
    return True  # two globs are otherwise assumed to meet


def _intersect(t: tuple[Comp, ...], z: tuple[Comp, ...], *, dot_rule: bool) -> bool:
    """Whether some path matches both patterns."""
    if not any(c.star2 for c in t):
        if not any(c.star2 for c in z):
            return len(t) == len(z) and all(_meet(a, b, dot_rule=dot_rule) for a, b in zip(t, z))
        if z[-1].star2 and not any(c.star2 for c in z[:-1]):
            return len(t) >= len(z) - 1 and all(_meet(a, b, dot_rule=dot_rule) for a, b in zip(t, z[:-1]))
    if t and z and not t[-1].star2 and not z[-1].star2 and not _meet(t[-1], z[-1], dot_rule=dot_rule):
        return False     # a path both match ends in a name both last components match: the cheap test first
    if _folder(t):       # a folder touched whole (X/**): `z` matches a path under X, step by step, in one pass
        for i, a in enumerate(t[:-1]):
            if i == len(z):
                return False
            if z[i].star2:
                return True
            if not _meet(a, z[i], dot_rule=dot_rule):
                return False
        return True
    memo: dict[tuple[int, int], bool] = {}

    def go(i: int, j: int) -> bool:
        key = (i, j)
        if key not in memo:
            if i == len(t) and j == len(z):
                memo[key] = True
            elif i < len(t) and t[i].star2:
                memo[key] = go(i + 1, j) or (j < len(z) and go(i, j + 1))
            elif j < len(z) and z[j].star2:
                memo[key] = go(i, j + 1) or (i < len(t) and go(i + 1, j))
            else:
                memo[key] = i < len(t) and j < len(z) and _meet(t[i], z[j], dot_rule=dot_rule) and go(i + 1, j + 1)
        return memo[key]

    return go(0, 0)


def _fold(z: tuple[Comp, ...]) -> tuple[Comp, ...]:
    """`z` matched ignoring case and Unicode normalisation (macOS's file systems: `cafe\u0301` is `café`)."""
    return tuple(Comp(unicodedata.normalize("NFC", c.text.casefold()), c.glob, c.star2) for c in z)


def _folder(z: tuple[Comp, ...]) -> bool:
    """Whether `z` is `X/**` with X literal: X and all under it."""
    return bool(z) and z[-1].star2 and not any(c.glob for c in z[:-1])


def _spelled(pattern: tuple[Comp, ...], target: tuple[Comp, ...]) -> bool:
    """Whether a [nested] pattern can be met by `target`: a name without a leading dot (lefthook.yml, mise.toml) only
    where the command spells the last part out (no wildcard there): every glob of the project (`sed -i ... *`,
    `rm -rf ./*`) would meet it otherwise; a wildcard meets a dotted name only where it spells the dot (`.*`). A
    pattern that ends in a wildcard names no file but what is in a folder (`sub/.claude/**`, `site-packages/*.pth`):
    a glob there meets it (`rm sub/.claude/*` was a plain workspace delete)."""
    return bool(pattern) and (pattern[-1].text.startswith(".") or pattern[-1].glob or not target
                              or not target[-1].glob)


def _named_by(pattern: tuple[Comp, ...], target: tuple[Comp, ...]) -> bool:
    """Whether an `approval` pattern can be met by `target`: a last part of the target made of wildcards only (`sed -i
    ... src/*`, `cp /tmp/x/* .`) meets a folder's contents (`.github/workflows/**`) and a dotted name (by the dot rule:
    `.*`), not every plain name it could match (`pylintrc`, `Jenkinsfile`, `*.code-workspace`); a glob that spells
    part of the name (`activat?`, `*.code-workspace`) meets what it matches."""
    last = pattern[-1] if pattern else None
    return (last is None or last.star2 or last.text.startswith(".") or not target or not target[-1].glob
            or target[-1].text.strip("*?") != "")


def _anchor(z: tuple[Comp, ...]) -> str | None:
    """The first name after a pattern's `**` when it is a literal (`.envrc` in `/w/**/.envrc`), case-folded."""
    star = next((i for i, c in enumerate(z) if c.star2), None)
    if star is None or star + 1 >= len(z) or z[star + 1].glob:
        return None
    return z[star + 1].text.casefold()


def _loose_regex(z: tuple[Comp, ...]) -> str:
    """A regular expression every literal path matching `z` matches (a glob component matches any name)."""
    return "".join("(?:/.*)?" if c.star2 else "/[^/]*" if c.glob else "/" + re.escape(c.text) for c in z)


def _contains(z: tuple[Comp, ...], t: tuple[Comp, ...]) -> bool:
    """Whether every path matching t matches z (only decided for the shapes that occur; else False)."""
    if not any(c.glob for c in t):
        return _intersect(t, z, dot_rule=False)  # a literal path: matching is containment
    if z and z[-1].star2 and not any(c.glob for c in z[:-1]):
        prefix = z[:-1]
        literal = [c for c in t[:len(prefix)] if not c.glob]
        return len(t) >= len(prefix) and len(literal) == len(prefix) and all(
            a.text == b.text for a, b in zip(t, prefix))
    return False


# the escapes printf, `echo -e` and $'...' write a character with (`init-\x68ook`, `\150`, `\0150`): echo's octal
# takes a leading 0, printf's format does not, so both readings are tried
_SHELL_ESCAPES = (re.compile(r"\\u([0-9a-fA-F]{4})|\\U([0-9a-fA-F]{8})|\\x([0-9a-fA-F]{1,2})|\\0([0-7]{1,3})|\\([0-7]{1,3})"),
                  re.compile(r"\\u([0-9a-fA-F]{4})|\\U([0-9a-fA-F]{8})|\\x([0-9a-fA-F]{1,2})|()\\([0-7]{1,3})"))


def _unescaped(m: re.Match[str]) -> str:
    hexa = m.group(1) or m.group(2) or m.group(3)
    code = int(hexa, 16) if hexa else int(m.group(4) or m.group(5), 8)
    return chr(code) if code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else m.group(0)


def _readings(text: str) -> list[str]:
    """`text` case-folded, and where it holds a backslash, also with its escapes written as their characters (TOML's
    `\u002d` in a quoted key; printf's and echo's `\x68`, `\150`, `\0150`)."""
    if "\\" not in text:
        return [text.casefold()]
    return [text.casefold(), *(e.sub(_unescaped, text).casefold() for e in _SHELL_ESCAPES)]


@dataclass(frozen=True, eq=False)
class ZoneMap:
    path: Path
    zones: tuple[tuple[str, tuple[str, ...]], ...]   # (zone, patterns) in order; first match wins
    unmatched: str
    unresolved: str
    no_data: tuple[str, ...]
    links: tuple[str, ...] = ()
    # [mentions]: zone -> names that, in text the analysis cannot follow (inline code), count as a write
    mentions: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # [nested]: zone -> patterns matched only by a path a command names, not by a folder it touches whole
    nested: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # approval: patterns whose change, where a command names the path, needs a human's approval (the command is
    # unknown), for files the spec cannot zone without denying their ordinary use (`source .venv/bin/activate`)
    approval: tuple[str, ...] = ()
    # [except]: zone -> patterns of paths a command names that are not in that zone though its patterns match them
    # (a project's `.env.example` is no secret): such a path falls to the next zone that matches it
    excepted: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # [settings_code]: names of files whose settings may be code a tool runs on its own, and those settings' keys
    # (case-folded): a command that changes such a file and whose text holds a key needs approval
    code_files: tuple[str, ...] = ()
    code_keys: tuple[str, ...] = ()
    # carried: zones whose files' text stays theirs wherever a command copies it: a command that reads one by name and
    # writes a file of another zone needs approval (the next command may send the copy, and is judged on its own)
    carried: tuple[str, ...] = ()

    def names(self) -> set[str]:
        return {z for z, _ in self.zones} | {self.unmatched, self.unresolved}

    def compile(self, workspace: str, home: str, tmp: str, places: Places = (), aliases: Places = (),
                mounts: Mounts = ()) -> "Zones":
        """The map for one observation. A pattern naming {guard} or {secret} stands for one pattern per path
        `places` gives it; without any (no build, as in `veriguard eval`) it matches nothing. `aliases` gives
        other spellings of {workspace}, {home} and {tmp} (where a link to them leads): a pattern naming one stands
        for one pattern per spelling, so the project's `.claude` is protected under its real path too. `mounts`:
        (where, link) for the symbolic links of the project that lead elsewhere; a path at or under `where` is
        also in the zones of its spelling under `link` (`/tmp/x/.envrc` is `sub/.envrc` when the project holds
        `sub -> /tmp/x`): Zones.linked."""
        return _compile(self, workspace, home, tmp, places, aliases, mounts)

    def code_settings(self, text: str) -> list[str]:
        """The [settings_code] keys `text` holds (ignoring case), also spelled with TOML's escapes in a quoted key
        (`"init\\u002dhook"`)."""
        if not self.code_keys:
            return []
        return self.code_settings_and_pieces(text)[0]

    def code_settings_and_pieces(self, text: str) -> tuple[list[str], set[str]]:
        """code_settings(text) and key_pieces(text), from one reading of `text`."""
        readings = _readings(text)
        return ([k for k in self.code_keys if any(k in r for r in readings)],
                {w for w in self._key_words_all if any(w in r for r in readings)})

    @functools.cached_property
    def _key_words(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """Each [settings_code] key with its pieces (the words between `-` and `_`), split once."""
        return tuple((key, tuple(w for w in re.split(r"[-_]", key) if w)) for key in self.code_keys)

    @functools.cached_property
    def _key_words_all(self) -> frozenset[str]:
        return frozenset(w for _, words in self._key_words for w in words)

    def code_pieces(self, new: str, pieces: set[str]) -> list[str]:
        """The [settings_code] keys whose pieces (the words between `-` and `_`) the text `new` (a command's, as
        written and with its escapes read) and the `pieces` found in the text already there all hold, one piece at
        least in `new`: a key a program assembles (`printf '%s-%s' init hook`, `sed s/hoo/hook/` on a file holding
        `init-hoo`)."""
        readings = _readings(new)
        out = []
        for key, words in self._key_words:
            given = {w for w in words if any(w in r for r in readings)}
            if given and all(w in given or w in pieces for w in words):
                out.append(key)
        return out

    def key_pieces(self, text: str) -> set[str]:
        """The pieces of the [settings_code] keys (code_pieces) that `text` holds."""
        return self.code_settings_and_pieces(text)[1]

    def holds_code_settings(self, path: str) -> bool:
        """Whether the file at `path` is one whose settings may be code ([settings_code] files, by name)."""
        return path.rstrip("/").rsplit("/", 1)[-1].casefold() in self.code_files

    def uses_workspace(self) -> bool:
        """Whether a zone is defined by the {workspace} placeholder (which the agent may then change at will)."""
        return any("{workspace}" in p for _, patterns in self.zones for p in patterns)


def places_of(given: Mapping[str, Any]) -> Places:
    """`{"guard": [path, ...], ...}` as compile() takes it: normalised, in a stable order, empty entries left out."""
    unknown = set(given) - set(PLACES)
    if unknown:
        raise ValueError(f"unknown place(s) {sorted(unknown)}; known: {PLACES}")
    return tuple((name, tuple(sorted({normalise(str(p)) for p in given[name]})))
                 for name in PLACES if given.get(name))


def _expand(pattern: str, spellings: Mapping[str, tuple[str, ...]]) -> list[str]:
    """One filled pattern per combination of the spellings of the placeholders it names (none when one of them has
    no path: a place the monitor was not given)."""
    named = [n for n in PLACEHOLDERS if "{" + n + "}" in pattern]
    return list(dict.fromkeys(fill(pattern, dict(zip(named, combo)))
                              for combo in itertools.product(*(spellings.get(n, ()) for n in named))))


@functools.lru_cache(maxsize=64)
def _compile(zmap: ZoneMap, workspace: str, home: str, tmp: str, places: Places, aliases: Places = (),
             mounts: Mounts = ()) -> "Zones":
    values = {"workspace": workspace, "home": home, "tmp": tmp}
    other = dict(aliases)
    spellings = {**{k: (v, *other.get(k, ())) for k, v in values.items()}, **dict(places)}
    zones = tuple((zone, tuple(split_pattern(normalise(q)) for p in patterns for q in _expand(p, spellings)))
                  for zone, patterns in zmap.zones)
    no_data = tuple(split_pattern(normalise(q)) for p in zmap.no_data for q in _expand(p, spellings))
    links = tuple(split_pattern(normalise(q)) for p in zmap.links for q in _expand(p, spellings))
    folded = tuple((zone, tuple(_fold(z) for z in patterns))
                   for zone, patterns in zones)
    nested = tuple((zone, tuple(_fold(split_pattern(normalise(q))) for p in patterns for q in _expand(p, spellings)))
                   for zone, patterns in zmap.nested)
    return Zones(zones, zmap.unmatched, zmap.unresolved, no_data, links, zones if folded == zones else folded,
                 tuple((z, tuple(n.casefold() for n in names)) for z, names in zmap.mentions), nested,
                 tuple((_literal(normalise(where)), _literal(normalise(link))) for where, link in mounts),
                 tuple(_fold(split_pattern(normalise(q))) for p in zmap.approval for q in _expand(p, spellings)),
                 tuple((zone, tuple(_fold(split_pattern(normalise(q))) for p in patterns for q in _expand(p, spellings)))
                       for zone, patterns in zmap.excepted))


def _literal(path: str) -> tuple[Comp, ...]:
    """The components of a literal absolute path (no character is a wildcard)."""
    return tuple(Comp(part) for part in path.split("/") if part)


def _below(target: tuple[Comp, ...], folder: tuple[Comp, ...], *, dot_rule: bool) -> list[tuple[Comp, ...]]:
    """What `target` matches at or under the literal `folder`, relative to it: `target` less that folder's names
    (a `**` of it may stand for some of them); none when it matches nothing there."""
    out: dict[tuple[Comp, ...], None] = {}
    seen: set[tuple[int, int]] = set()
    stack = [(0, 0)]
    while stack:
        i, j = stack.pop()
        if (i, j) in seen:
            continue
        seen.add((i, j))
        if j == len(folder):
            out[target[i:]] = None
        elif i < len(target) and target[i].star2:
            stack += [(i + 1, j), (i, j + 1)]     # the `**` stands for none of the folder's next names, or for one more
        elif i < len(target) and target[i].matches(folder[j].text, dot_rule=dot_rule, loose=True):
            stack.append((i + 1, j + 1))
    return list(out)


def fill(pattern: str, values: Mapping[str, str]) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: values[m.group(1)].replace("\\", "\\\\").replace("*", "\\*")
                  .replace("?", "\\?").replace("[", "\\["), pattern)


def normalise(path: str) -> str:
    """Lexical normalisation of an absolute path: `//`, `/./` and `..` (symlinks are not followed)."""
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts:
                parts.pop()
            continue
        parts.append(part)
    return "/" + "/".join(parts)


@dataclass(frozen=True, eq=False)
class Zones:
    """A zone map with its placeholders filled in for one observation."""

    zones: tuple[tuple[str, tuple[tuple[Comp, ...], ...]], ...]
    unmatched: str
    unresolved: str
    no_data: tuple[tuple[Comp, ...], ...]
    links: tuple[tuple[Comp, ...], ...]
    folded: tuple[tuple[str, tuple[tuple[Comp, ...], ...]], ...]
    mentions: tuple[tuple[str, tuple[str, ...]], ...] = ()     # case-folded names
    nested: tuple[tuple[str, tuple[tuple[Comp, ...], ...]], ...] = ()   # case-folded; see ZoneMap.nested
    mounts: tuple[tuple[tuple[Comp, ...], tuple[Comp, ...]], ...] = ()   # (where, link); see ZoneMap.compile
    approval: tuple[tuple[Comp, ...], ...] = ()     # case-folded; see ZoneMap.approval
    excepted: tuple[tuple[str, tuple[tuple[Comp, ...], ...]], ...] = ()   # case-folded; see ZoneMap.excepted

    def needs_approval(self, target: tuple[Comp, ...]) -> bool:
        """Whether changing `target`, a path a command names (not a folder it writes whole), needs approval."""
        return not any(c.star2 for c in target) and any(
            _named_by(z, t) and _intersect(_fold(t), z, dot_rule=True)
            for t in (target, *self.linked(target, dot_rule=True)) for z in self.approval)

    @functools.cached_property
    def mention_patterns(self) -> tuple[tuple[str, re.Pattern[str]], ...]:
        """Per zone, its [mentions] names in case-folded text; a name that starts with a dot not after a
        letter or digit (`anthropic.claude-3` does not name `.claude`)."""
        def one(name: str) -> str:
            return (r"(?<![a-z0-9_\-])" if name.startswith(".") else "") + re.escape(name)

        return tuple((z, re.compile("|".join(map(one, names)))) for z, names in self.mentions if names)

    def no_data_path(self, target: tuple[Comp, ...]) -> bool:
        """Whether a literal path is a pseudo-file that holds no data (/dev/null...)."""
        if any(c.glob for c in target):
            return False
        if len(target) > 4 or target[:1] not in self._no_data_heads:
            return False
        return any(_intersect(target, nd, dot_rule=False) for nd in self.no_data)

    @functools.cached_property
    def _no_data_heads(self) -> set[tuple[Comp, ...]]:
        return {nd[:1] for nd in self.no_data}

    def through_link(self, target: tuple[Comp, ...]) -> bool:
        """Whether `..` follows a component that is a symbolic link (/proc/self/cwd/..): lexical
        normalisation cannot resolve that path."""
        for k, c in enumerate(target):
            if not c.glob and c.text == ".." and any(
                    _intersect(target[:j], link, dot_rule=False) for link in self.links for j in range(1, k + 1)):
                return True
        return False

    def beyond(self, base: Sequence[str], under: str = "") -> Callable[[str], bool]:
        """A test of a literal absolute path: whether it may be in a zone not in `base` (`of` finds one). Fast for
        the many files of a repository (`under`: its folder): a loose regular expression of the other zones'
        patterns (any glob is any name, any case; under `under`, only those that reach into it, matched on the
        rest of the path) passes the few that need the exact test."""
        order = [zone for zone, _ in self.zones]
        last = max((i for i, zone in enumerate(order) if zone in base), default=-1)
        # a path is in the first zone with a pattern it matches: only other zones listed before a base one compete
        others = [z for zone, patterns in self.zones[:last + 1] if zone not in base for z in patterns]
        # [nested] patterns (`{workspace}/**/.envrc`) name a file anywhere below a folder: a path passes when one of
        # its components is a pattern's first name after `**` (a set lookup, not one more loose expression each)
        anchors: set[str] = set()
        for z in (z for zone, patterns in self.nested if zone not in base for z in patterns):
            anchor = _anchor(z)
            if anchor is None:
                others.append(z)
            else:
                anchors.add(anchor)
        own = [z for zone, patterns in self.zones if zone in base for z in patterns]
        head = tuple(Comp(c.casefold()) for c in under.split("/") if c)
        near: list[tuple[Comp, ...]] = []
        far: list[tuple[Comp, ...]] = []
        for z in others:
            folded = _fold(z)
            if head and not _intersect(head + (STAR2,), folded, dot_rule=False):
                continue                  # no path under `under` matches it, in any case
            if head and all(not c.glob and c == h for c, h in zip(folded, head)) and len(z) >= len(head):
                near.append(z[len(head):])
            else:
                far.append(z)
        loose_all, loose_near, loose_far = (
            re.compile("|".join(f"(?:{_loose_regex(z)})" for z in zs) or "(?!)", re.IGNORECASE)
            for zs in (others, near, far))
        prefix = "/" + "/".join(c.text for c in head) + "/" if head else ""
        folders = tuple("/" + "/".join(c.text for c in z[:-1]) for z in own if _folder(z))
        shaped = [z for z in own if not _folder(z)]

        mounted = tuple("/" + "/".join(c.text for c in where) for where, _ in self.mounts)

        def test(path: str) -> bool:
            if any(path == m or path.startswith(m.rstrip("/") + "/") for m in mounted):
                return not set(self.of(tuple(Comp(part) for part in path.split("/") if part), dot_rule=True)) <= set(base)
            if prefix and path[:len(prefix)].casefold() == prefix:
                candidate = loose_near.fullmatch(path[len(prefix) - 1:]) or loose_far.fullmatch(path)
            else:
                candidate = loose_all.fullmatch(path)
            named = bool(anchors) and not anchors.isdisjoint(path.casefold().split("/"))
            if candidate is None and not named and any(path == f or path.startswith(f.rstrip("/") + "/")
                                                       for f in folders):
                return False
            comps = tuple(Comp(part) for part in path.split("/") if part)    # a literal path: no glob
            if candidate is None and not named and any(_contains(z, comps) for z in shaped):
                return False
            return not set(self.of(comps, dot_rule=True)) <= set(base)
        return test

    def of(self, target: tuple[Comp, ...], *, dot_rule: bool = True) -> list[str]:
        """Every zone a path matching `target` may be in, in map order; matched as written and
        ignoring case (a case-insensitive file system), which only ever adds zones."""
        key = (target, dot_rule)
        cache = self._cache
        if key not in cache:
            if len(cache) > 4096:
                cache.clear()
            cache[key] = self._zones_of(target, dot_rule=dot_rule)
        return list(cache[key])

    @functools.cached_property
    def _cache(self) -> dict[tuple[tuple[Comp, ...], bool], tuple[str, ...]]:
        return {}

    def _zones_of(self, target: tuple[Comp, ...], *, dot_rule: bool) -> tuple[str, ...]:
        if self.no_data_path(target):
            return ()
        found = self._named(target, dot_rule=dot_rule)
        for other in self.linked(target, dot_rule=dot_rule):
            found += tuple(z for z in self._named(other, dot_rule=dot_rule) if z not in found)
        return found

    def linked(self, target: tuple[Comp, ...], *, dot_rule: bool) -> list[tuple[Comp, ...]]:
        """The other spellings of what `target` matches through the project's symbolic links that lead elsewhere
        (`mounts`): at or under where a link leads, named under the link (`/tmp/x/.envrc` is `sub/.envrc` when the
        project holds `sub -> /tmp/x`: a write there lands in the project, where direnv, VS Code and git read it).
        Matched as written and ignoring case, as `of` does."""
        out: dict[tuple[Comp, ...], None] = {}
        folded = _fold(target)
        for where, link in self.mounts:
            rests = _below(target, where, dot_rule=dot_rule)
            if folded != target or _fold(where) != where:
                rests += _below(folded, _fold(where), dot_rule=dot_rule)
            out.update(dict.fromkeys(link + rest for rest in rests))
        return list(out)

    def _named(self, target: tuple[Comp, ...], *, dot_rule: bool) -> tuple[str, ...]:
        """The zones of `target` as it is spelled (`_zones_of` adds those of its spellings through links)."""
        found = self._of(target, self.zones, dot_rule=dot_rule)
        folded = _fold(target)
        if folded != target or self.folded is not self.zones:
            found += [z for z in self._of(folded, self.folded, dot_rule=dot_rule) if z not in found]
        if self.nested and not any(c.star2 for c in target):   # a path it names, not a folder touched whole
            named = [zone for zone, patterns in self.nested if zone not in found
                     and any(_spelled(z, target) and _intersect(folded, z, dot_rule=dot_rule) for z in patterns)]
            found = named + [z for z in found if z != self.unmatched or not named]
        return tuple(found)

    def _of(self, target: tuple[Comp, ...], zones: Any, *, dot_rule: bool) -> list[str]:
        found: list[str] = []
        last = target[-1] if target else None
        named = last is not None and not last.glob and not last.star2
        index = self._by_last_name(zones) if named else None
        for k, (zone, patterns) in enumerate(zones):
            if self._excepted(zone, target):
                continue
            if index is not None and last is not None:   # a pattern ending in another literal name cannot meet it
                by_name, others = index[k]
                patterns = (*by_name.get(last.text, ()), *others)
            for z in patterns:
                if _intersect(target, z, dot_rule=dot_rule):
                    if zone not in found:
                        found.append(zone)
                    if _contains(z, target):
                        return found
        if self.unmatched not in found:
            found.append(self.unmatched)
        return found

    def _by_last_name(self, zones: Any) -> list[tuple[dict[str, list[tuple[Comp, ...]]], list[tuple[Comp, ...]]]]:
        """Per zone of `zones` (self.zones or self.folded): its patterns that end in a literal name, by that name, and
        the others (ending in a glob or `**`), each in map order; built once per zone list."""
        cache = self._indexes
        if id(zones) not in cache:
            out = []
            for _, patterns in zones:
                by_name: dict[str, list[tuple[Comp, ...]]] = {}
                others = []
                for z in patterns:
                    if z and not z[-1].glob and not z[-1].star2:
                        by_name.setdefault(z[-1].text, []).append(z)
                    else:
                        others.append(z)
                out.append((by_name, others))
            cache[id(zones)] = out
        return cache[id(zones)]

    @functools.cached_property
    def _indexes(self) -> dict[int, list[tuple[dict[str, list[tuple[Comp, ...]]], list[tuple[Comp, ...]]]]]:
        return {}

    def _excepted(self, zone: str, target: tuple[Comp, ...]) -> bool:
        """Whether every path matching `target` is an exception of `zone` (only a path named whole can be: a folder
        touched whole or a glob may hold others)."""
        exceptions = next((patterns for z, patterns in self.excepted if z == zone), ())
        if not exceptions or any(c.glob or c.star2 for c in target):
            return False
        folded = _fold(target)
        return any(_contains(e, folded) for e in exceptions)


def check_tables(cfg: Mapping[str, Any], base: Path) -> str | None:
    """What is wrong with the command and zone tables a `from = "shell"` entry names (read from `base`, every entry of
    the command table checked, as a monitor checks each at its first use), or None: synth refuses a spec whose
    tables a monitor would refuse only when a command first needs the entry in error (a regular expression that can
    backtrack without bound, an unknown role)."""
    names = [cfg.get(k) for k in ("commands", "zones")]
    if not all(isinstance(n, str) for n in names):
        return "a shell extractor's commands and zones must each name a file in the spec's folder"
    try:
        load_commands(base / str(names[0]))
        load_zones(base / str(names[1]))
    except ExtractionError as e:
        return e.message
    except OSError as e:
        return f"cannot read the shell extractor's tables: {e}"
    return None


def load_zones(file: Path, zone_names: set[str] | None = None, *, data: bytes | None = None) -> ZoneMap:
    """The zone map in `file` (or `data`, its bytes as a build certified them; loaded once per content),
    checked against the spec's Zone values."""
    zmap = _load_zones(_source(file, data))
    if zone_names is not None:
        bad = sorted(zmap.names() - zone_names)
        if bad:
            raise _fail(file, "zones", f"zone(s) {bad} are not values of the spec's Zone type {sorted(zone_names)}")
    return zmap


@functools.lru_cache(maxsize=16)
def _load_zones(source: _Source) -> ZoneMap:
    file = Path(source.file_name)
    raw = _toml(file, source.data)
    allowed = {"unmatched", "unresolved", "no_data", "links", "zones", "mentions", "nested", "approval", "except",
               "copies", "settings_code", "carried"}
    extra = sorted(set(raw) - allowed)
    if extra:
        raise _fail(file, "top level", f"unknown key(s) {extra}; allowed: {sorted(allowed)}")
    table = raw.get("zones")
    if not isinstance(table, Mapping) or not table:
        raise _fail(file, "[zones]", "expected a table of zone = [patterns], most specific first")
    zones = _with_copies(_zone_patterns(table, file, "zones"), _per_zone(raw, "copies", "suffixes", table, file), file)
    no_data = _strings(raw.get("no_data", []), file, "no_data")
    links = _strings(raw.get("links", []), file, "links")
    approval = _strings(raw.get("approval", []), file, "approval")
    for p in no_data + links + approval:
        _check_pattern(p, file, "no_data / links")
    mentions = _per_zone(raw, "mentions", "names", table, file)
    nested = _per_zone(raw, "nested", "patterns", table, file)
    excepted = _per_zone(raw, "except", "patterns", table, file)
    zmap = ZoneMap(file, tuple(zones), str(raw.get("unmatched", "")), str(raw.get("unresolved", "")), no_data,
                   links, tuple((str(z), _strings(n, file, f"mentions.{z}")) for z, n in mentions.items()),
                   tuple(_zone_patterns(nested, file, "nested")), approval,
                   tuple(_zone_patterns(excepted, file, "except")), *_settings_code(raw, file),
                   _strings(raw.get("carried", []), file, "carried"))
    if set(zmap.carried) - set(table):
        raise _fail(file, "carried", f"zone(s) {sorted(set(zmap.carried) - set(table))} are not in [zones]")
    for k in ("unmatched", "unresolved"):
        if not getattr(zmap, k):
            raise _fail(file, k, "name the zone of a path no pattern matches / the analysis cannot resolve")
    return zmap


def _settings_code(raw: Mapping[str, Any], file: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """[settings_code]'s file names and keys, case-folded; both or neither."""
    table = raw.get("settings_code", {})
    if not isinstance(table, Mapping) or set(table) - {"files", "keys"}:
        raise _fail(file, "[settings_code]", "expected a table with `files` (file names) and `keys` (settings)")
    files = _strings(table.get("files", []), file, "settings_code.files")
    keys = _strings(table.get("keys", []), file, "settings_code.keys")
    if bool(files) != bool(keys) or any(not x.strip() or "/" in x for x in files) or any(not k.strip() for k in keys):
        raise _fail(file, "[settings_code]", "name both files (names without a folder) and keys, none empty")
    return tuple(f.casefold() for f in files), tuple(k.casefold() for k in keys)


def _with_copies(zones: list[tuple[str, tuple[str, ...]]], copies: Mapping[str, Any],
                 file: Path) -> list[tuple[str, tuple[str, ...]]]:
    """[zones] with each pattern of a zone in [copies] also under each of its suffixes (`*.key` and `*.key.*`, `*.key~`):
    a backup or an encrypted copy of a secret is the secret. A pattern ending in `/**` names a folder and is left."""
    out = []
    for zone, patterns in zones:
        suffixes = _strings(copies.get(zone, []), file, f"copies.{zone}")
        for x in suffixes:
            if not x or "/" in x or "{" in x:
                raise _fail(file, f"copies.{zone}", f"{x!r}: a suffix is text added to a file's name, without `/` or "
                            "a placeholder (`.*`, `~`)")
        out.append((zone, patterns + tuple(p + x for p in patterns if not p.endswith("/**") for x in suffixes)))
    return out


def _per_zone(raw: Mapping[str, Any], key: str, what: str, zones: Mapping[str, Any], file: Path) -> Mapping[str, Any]:
    """The table `raw[key]` of zone = [what], each zone one of [zones]."""
    table = raw.get(key, {})
    if not isinstance(table, Mapping):
        raise _fail(file, f"[{key}]", f"expected a table of zone = [{what}]")
    for zone in table:
        if zone not in zones:
            raise _fail(file, f"{key}.{zone}", f"no zone {zone!r} in [zones]")
    return table


def _zone_patterns(table: Mapping[str, Any], file: Path, where: str) -> list[tuple[str, tuple[str, ...]]]:
    """(zone, patterns) of a [zones] or [nested] table, each pattern checked."""
    out = []
    for zone, patterns in table.items():
        pats = _strings(patterns, file, f"{where}.{zone}")
        for p in pats:
            _check_pattern(p, file, f"{where}.{zone}")
        out.append((str(zone), pats))
    return out


def _check_pattern(p: str, file: Path, where: str) -> None:
    if re.search(r"\[[:=.]", p):
        raise _fail(file, where, f"{p!r}: character classes such as [[:alpha:]] are not supported in zone patterns")
    names = re.findall(r"\{(\w+)\}", p)
    bad = [n for n in names if n not in PLACEHOLDERS]
    if bad:
        raise _fail(file, where, f"unknown placeholder {{{bad[0]}}} in {p!r}; use {{workspace}}, {{home}}, {{tmp}}, "
                    "{guard} or {secret}")
    if not p.startswith("/") and not p.startswith("{"):
        raise _fail(file, where, f"{p!r} must be absolute or start with a placeholder")
