"""Simple commands: what each program does with its arguments, from commands.toml, and the shell
built-ins that change the shell itself (cd, eval, source, set, read...). A mixin of the analyser
(enforce/shell_walk.py): the methods use its results, paths and zones."""
from __future__ import annotations

import fnmatch
import posixpath
import re
import urllib.parse
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Mapping

from veriguard.enforce.shell_hosts import this_machine
from veriguard.enforce.shell_scripts import awk_program_is_plain, sed_script_is_plain
from veriguard.enforce.shell_state import IO, Invocation, State
from veriguard.enforce.shell_table import (ACCESSES, CommandSpec, OptionSpec, Settings, Slot, Zones, has_glob,
                                           normalise, split_pattern)
from veriguard.enforce.shell_words import Value, escape_glob

if TYPE_CHECKING:
    from veriguard.enforce.shell_table import CommandTable

STDIN_PATHS = ("/dev/stdin", "/dev/fd/0", "/proc/self/fd/0")
# a remote operand: [user@]host:PATH, the host a name, an address, or an IPv6 address in brackets ([::1]:PATH)
REMOTE = re.compile(r"^(?:[^@/:\s]+@)?(?:\[[^\]/\s]+\]|[A-Za-z0-9][A-Za-z0-9.\-]*):(?!//)")


class Commands:
    """Needs from the analyser (enforce/shell_walk.py) its results and these helpers."""

    table: "CommandTable"
    inv: Invocation | None
    prints: Value | None
    lines: list[str]
    written: set[str]
    system_dirs: tuple[str, ...]
    project_dirs: tuple[str, ...]
    sudo: bool
    function_depth: int
    home: str
    source: str
    zones: Zones
    workspaces: tuple[str, ...]
    # (invocation, folders, sources as escaped patterns ("": not known; None: what it reads), recursive): Commands.bring
    brings: list[tuple[Invocation, tuple[str, ...], tuple[str, ...] | None, bool]]
    above: dict[tuple[str, str, tuple[str, ...], str], None]
    leading: dict[tuple[str, str], None]
    read_by: dict[int, list[str]]

    if TYPE_CHECKING:
        def unknown(self, why: str) -> None: ...
        def classify(self, cls: str, why: str) -> None: ...
        def note(self, phrase: str) -> None: ...
        def pipe_to_shell(self, why: str) -> None: ...
        def touch(self, accesses: tuple[str, ...], value: Value, inv: Invocation | None, *,
                  recursive: bool) -> None: ...
        def paths(self, value: Value, cwds: tuple[str, ...] | None) -> list[str | None]: ...
        def chdir(self, target: Value, cwds: tuple[str, ...] | None) -> tuple[str, ...] | None: ...
        def script(self, text: str, st: State, io: IO) -> State: ...
        def home_value(self, st: State) -> Value: ...
        def repeats(self, why: str) -> None: ...
        def mentions(self, text: str, what: str, inv: Invocation | None) -> None: ...
        def read_environment(self, what: str) -> None: ...
        def rewrites_tree(self, sub: str, inv: Invocation, before: list[Value] | None = None) -> None: ...
        def links_made(self, value: Value, inv: Invocation) -> None: ...
        def joined(self, text: str, cwds: tuple[str, ...] | None) -> list[str | None]: ...
        def pattern_paths(self, value: Value, cwds: tuple[str, ...] | None) -> list[str | None]: ...

    def run(self, words: list[Value], st: State, io: IO, env_assigns: list[tuple[str, Value]], label: str,
            cwds: tuple[str, ...] | None = None, *, inherit_cwds: bool = True) -> State:
        """Analyse one simple command; it runs in `st`'s directories unless `inherit_cwds` is false."""
        if not words:
            return st
        outer = self.inv
        inv = Invocation("", words[1:], st, io, st.cwds if inherit_cwds else cwds, dict(env_assigns))
        self.inv = inv
        self.leading_globs(words[1:], inv.cwds)
        self.prints = None
        try:
            for name, value in env_assigns:
                if not self.table.harmless(name):
                    self.unknown(f"sets {name} for the program, which may change what it runs")
                self.env_runs(name, value, inv)
            self.set_earlier(st, inv)
            prog = words[0]
            if prog.text is None or prog.pattern is not None:
                self.unknown(f"the program name is {prog.reason or 'a glob'}")
                if io.stdin == "pipe":
                    self.pipe_to_shell("a program the analysis cannot name reads the pipe")
                self.unknown_program(inv)
                return st
            spec, name = self.program(prog.text, inv)
            inv.name = name
            if name in self.table.settings:
                self.env_settings(self.table.settings[name], inv)
            if spec is None:
                self.unknown_program(inv)
                return st
            out = self.apply(spec, name, inv)
            if name in self.table.settings:
                self.repository_runs(self.table.settings[name], inv)
            return out
        finally:
            self.lines.append(f"`{label}`: " + (", ".join(dict.fromkeys(inv.phrases)) or "nothing to check"))
            self.inv = outer

    def again(self, words: list[Value], inv: Invocation, st: State, io: IO,
              env: list[tuple[str, Value]] | None = None) -> State:
        """A command another one runs (a wrapper's, xargs', find -exec's), in the same directories and
        environment."""
        return self.run(words, st, io, (env or []) + list(inv.env.items()),
                        "… " + " ".join(w.text or "?" for w in words)[:70], inv.cwds, inherit_cwds=False)

    def program(self, name: str, inv: Invocation) -> tuple[CommandSpec | None, str]:
        """The table entry for the program `name` (a bare name, or a path in a known folder)."""
        if "/" in name:
            paths = self.paths(Value.of(name), inv.cwds)
            folders = {posixpath.dirname(p) for p in paths if p is not None}
            base = posixpath.basename(name)
            if paths and None not in paths and folders <= set(self.system_dirs):
                return self.lookup(base, inv)
            self.touch(("execute",), Value.of(name), inv, recursive=False)
            if paths and None not in paths and folders <= set(self.project_dirs):
                return self.lookup(base, inv)
            self.executes_written(Value.of(name), inv)
            self.runs_file(f"runs {name}, a program the table does not describe")
            return None, base
        if name in inv.st.functions:
            self.unknown(f"calls the function {name} defined in the command")
            if self.function_depth:
                self.repeats(f"a function calls the function {name}: recursion")
            return None, name
        return self.lookup(name, inv)

    def lookup(self, name: str, inv: Invocation) -> tuple[CommandSpec | None, str]:
        spec = self.table.commands.get(name)
        if spec is None and name.lower() in self.table.commands:
            # a case-insensitive file system (macOS) runs `Sudo` as sudo: analyse it as that, unknown
            self.unknown(f"{name!r} is not in {self.table.path.name}; it may run {name.lower()!r}")
            spec, name = self.table.commands[name.lower()], name.lower()
        if spec is not None and spec.same_as is not None:
            spec = self.table.commands[spec.same_as]
        if spec is None:
            self.unknown(f"{name!r} is not in {self.table.path.name}")
        return spec, name

    def unknown_program(self, inv: Invocation) -> None:
        """A program we cannot describe: each argument may be a path it reads or writes."""
        self.opaque_words(inv.args, inv, f"an argument of {inv.name or 'the program'}")

    def opaque_words(self, words: list[Value], inv: Invocation, what: str) -> None:
        """Words given to what the analysis cannot follow (an unknown program, inline code): each may be a
        path it reads or writes, and each protected name it mentions counts (zones.toml [mentions])."""
        self.mentions("", what, inv)  # its working directory
        for a in words:
            if a.text is not None:
                self.mentions(a.text, what, inv)
            if a.text is not None and a.text.startswith("-"):
                if "=" in a.text:
                    self.touch(("read", "write"), Value.of(a.text.split("=", 1)[1]), inv, recursive=False)
                continue
            self.touch(("read", "write"), a, inv, recursive=False)

    # -- table-driven commands ------------------------------------------------------------------

    def apply(self, spec: CommandSpec, name: str, inv: Invocation) -> State:
        if spec.special is not None:
            return _SPECIALS[spec.special](self, spec, inv)
        if spec.rewrites:   # `git bisect start`, `git submodule update`: the subcommand's own subcommand is a word
            words = name.split(" ")
            self.rewrites_tree(words[1], inv, [Value.of(w) for w in words[2:]])
        parsed = self.parse_args(spec, inv)
        st = inv.st
        dispatch = bool(spec.subcommands) and not spec.interpreter and bool(parsed.operands) and not (
            spec.optional_subcommands and parsed.operands[0].static and parsed.operands[0].text not in spec.subcommands)
        classes = ([] if dispatch or parsed.sub is not None else [(spec.cls, spec.why)]) + \
            [(o.cls, o.why or word) for o, word, _ in parsed.opts if o.cls]
        for cls, why in classes:
            self.classify(cls, why if cls != self.table.lowest() else "")
        if spec.sudo or any(o.sudo for o, _, _ in parsed.opts):
            self.sudo = True
            self.note("runs as another user (sudo)")
        start = inv.cwds
        for opt, word, value in parsed.opts:
            if opt.value == "chdir" and value is not None:
                inv.cwds = self.chdir(value, inv.cwds)
        recursive = spec.recursive or any(o.recursive for o, _, _ in parsed.opts)
        inv.builds = spec.cls == "build_test"
        roles = dict(spec.roles)
        roles.update({k: v for k, v in inv.roles.items() if k in roles})
        pattern, default, prints = spec.operands, spec.default_operand, spec.prints
        script_from: str | None = None
        script_value: Value | None = None
        for opt, word, value in parsed.opts:
            roles.update(opt.roles)
            pattern = opt.operands if opt.operands is not None else pattern
            default = opt.default_operand if opt.default_operand is not None else default
            prints = opt.prints or prints
            if opt.script:
                script_from, script_value = opt.script, value
        for opt, word, value in parsed.opts:
            role = opt.value
            if value is not None and role is not None and role not in ("chdir", "command", "subcommand"):
                moved, inv.cwds = inv.cwds, start if opt.before_chdir else inv.cwds
                self.value_role(role, value, inv, roles, word, recursive=recursive)
                inv.cwds = moved
        if parsed.sub is not None:
            return self.subcommand(spec, parsed.sub, inv)
        operands = parsed.operands
        if dispatch:
            return self.subcommand(spec, operands, inv)
        if script_from == "operand":
            script_value = operands[0] if operands else None
            operands = operands[1:]
        if spec.keyed:
            operands = self.keyed(spec, operands, inv, roles, recursive=recursive)
        if spec.assignments:
            operands = self.assignments(operands, inv)
        remote = [o for o in operands if spec.remote and o.text is not None and (
            REMOTE.match(o.text) or _local_url(o) is None)]
        if remote and spec.remote:
            self.classify(spec.remote, f"a remote path or URL ({str(remote[0].text)[:80]})")
        if spec.plus:
            for o in operands:
                if o.text is not None and o.text.startswith("+"):
                    self.classify(spec.plus, f"the command {o.text!r}")
        assigned = assign_slots(pattern, operands)
        if default is not None and script_from != "operand":
            # the default operand stands in the slot no operand filled (`rg PATTERN`, `grep -r PATTERN`: the
            # working directory), not only when there is no operand at all
            with_default = assign_slots(pattern, operands + [Value.of(default)])
            if not any(v.text != "-" and r == with_default[-1][1] for v, r in with_default[:-1]):
                assigned = with_default
        union = tuple(r for s in pattern for r in s.roles if r in ACCESSES or r in roles)
        key: Value = Value.unknown("no setting named")
        for i, (value, slot_roles) in enumerate(assigned):
            if "setting" in slot_roles:
                key = value
                if value.text is None:  # unknown words: a key and a value, or an option that writes
                    self.setting(value, value, inv)
                    roles["file"] = "write"
                continue
            if "setting_value" in slot_roles:  # `git config KEY VALUE`: the file is written
                self.setting(key, value, inv)
                roles["file"] = "write"
                continue
            if "command" in slot_roles:
                rest = [v for v, r in assigned[i:]]
                inner = spec.option(rest[0].text) if rest[0].text and rest[0].text.startswith("-") else None
                if inner is not None and inner.value == "shell" and len(rest) > 1:  # flock FILE -c CMD
                    return self.shell_text(rest[1], inv, st, positional=None, why=rest[0].text or "")
                return self.wrapped(rest, inv, script_from)
            if "shell" in slot_roles:
                rest = [v for v, r in assigned[i:]]
                return self.shell_text(_joined(rest), inv, st, positional=None, why="its arguments")
            if "script" in slot_roles and spec.interpreter and script_from is None:
                script_from, script_value = "file", value
                continue
            if "unknown" in slot_roles:
                self.unknown(f"{value.text!r} as an argument" if value.text is not None else "an argument")
                continue
            if any(value is r for r in remote):
                self.remote_operand(value, "+".join(union if value.multi else slot_roles), inv, roles,
                                    recursive=recursive)
                continue
            effective = union if value.multi else slot_roles
            if spec.cls == "build_test" and spec.other_options == "ignore" and _path_like(value) and not any(
                    r in ACCESSES or r in roles for r in effective):
                # a word the table gives no role, written as a path, of a build tool whose options the table does
                # not all know: a single-dash option it does not list may take it as its value (`-o ~/x`; an
                # unknown --option before a path is handled where options are read), or the tool's own operand may
                # be a folder it fills (`meson setup ~/x`): the build may read or write it, and what is in it
                self.touch(("read", "write"), value, inv, recursive=True)
            elif spec.other_options == "ignore" and parsed.undeclared and _path_like(value) and not any(
                    r in ACCESSES or r in roles for r in effective):
                # an option the table does not list may take the next word as its value, so a word then taken for
                # an operand that is no path (a search's pattern) may be the option's file (`ag -p ~/.ssh/id_rsa x`:
                # -p names an ignore file): written as a path, it is read
                self.touch(("read",), value, inv, recursive=False)
            self.value_role("+".join(effective), value, inv, roles, "", recursive=recursive)
        if script_from == "file" and script_value is not None:
            self.script_command(script_value, [v for v, _ in assigned if v is not script_value], inv)
        elif inv.name in self.table.script_commands:    # a program whose goals choose what it does (mvn deploy)
            self.script_command(Value.of(inv.name), [v for v, _ in assigned], inv)
        if spec.interpreter == "code" and (script_from == "value" or (
                script_from == "file" and script_value is not None and script_value.text in ("-", *STDIN_PATHS))):
            data = [v for v, _ in assigned if v is not script_value]
            self.opaque_words(data, inv, f"an argument of {inv.name}'s inline code")
        if spec.file or any(o.file is not None for o, _, _ in parsed.opts):
            self.config_files(spec, parsed, inv, roles.get("file", "none"), recursive=recursive)
        own = () if any(o.no_cwd for o, _, _ in parsed.opts) else spec.cwd
        cwd_roles = tuple(dict.fromkeys(own + tuple(r for o, _, _ in parsed.opts for r in o.cwd)))
        if cwd_roles:
            self.touch(cwd_roles, Value.of("."), inv, recursive=recursive)
        if "execute" in cwd_roles:
            self.builds_written(inv)
        if "into" in cwd_roles and not any("write" in r for _, r in assigned):   # no folder named (git clone URL)
            inv.into.append(Value.of("."))
        if "unpack" in cwd_roles and not inv.unpack:
            inv.unpack.append(Value.of("."))
        self.put_into(assigned, roles, inv, recursive=recursive)
        for folder in inv.unpack:
            self.bring(folder, None, inv, recursive=True)
        if spec.interpreter:
            positional = tuple(v for v, r in assigned if script_from == "operand")
            self.interpret(spec, script_from, script_value, inv, positional)
        if script_from == "stdin" and not spec.interpreter and any(
                "command" in slot.roles or "shell" in slot.roles for slot in pattern):
            self.interpret_stdin("shell", inv)
        for opt, word, nested in parsed.nested:
            self.nested(nested, operands, inv)
        paths = [v for v, r in assigned if any(x in ACCESSES or x in roles for x in r)]
        # a filter passes its input's lines on only with options the table says keep them whole
        keep = spec.filter and not parsed.undeclared and all(o.filter is not False for o, _, _ in parsed.opts)
        self.prints = self.printed(prints, spec, paths if operands else [], inv, keep=keep)
        return st

    def remote_operand(self, value: Value, role: str, inv: Invocation, roles: Mapping[str, str], *,
                       recursive: bool) -> None:
        """A remote operand (`host:PATH`, `scp://host/PATH`) is read or written on its host, which may be this machine
        (`scp localhost:.ssh/id_rsa /tmp/k` copied the key; `localhost:.claude/settings.json` wrote the settings): on
        a host that is this machine (shell_hosts.this_machine: [::1], 127.1, its hostname) it is the local path, under the home folder unless
        absolute; on any host, the protected names in it count as in text the analysis cannot follow (an alias in
        ~/.ssh/config or the machine's own name may be this machine too), as ssh's remote command does."""
        text = value.text or ""
        self.mentions(text, "a remote path (its host may be this machine)", inv)
        m = REMOTE.match(text)
        url = urllib.parse.urlsplit(text) if _SCHEME.match(text) and "://" in text else None
        if m is not None and url is None and this_machine(m.group(0)[:-1], self.home):
            paths = [text[m.end():]]
        elif url is not None and url.hostname is not None and this_machine(url.hostname, self.home):
            paths = [url.path, url.path.lstrip("/")]    # scp://host/PATH: read from the root or from the home folder
        else:
            return
        for path in paths:
            if path.startswith(":"):
                continue    # an rsync daemon's module (host::module), no path of the file system
            local = path if path.startswith("/") else posixpath.join(self.home, path.removeprefix("~").lstrip("/"))
            self.value_role(role, Value.of(normalise(local)), inv, roles, "", recursive=recursive)

    def value_role(self, role: str, value: Value, inv: Invocation, roles: Mapping[str, str], word: str, *,
                   recursive: bool) -> None:
        parts: list[str] = []
        for r in role.split("+"):
            parts.extend(roles.get(r, r).split("+"))
        accesses = tuple(p for p in parts if p in ACCESSES)
        if value.pattern is not None and value.text is not None and not accesses:
            # the shell expands a glob by listing the folders it walks, whatever the program makes of the names:
            # `echo ~/.ssh/*` lists ~/.ssh as `ls ~/.ssh` does
            folder = posixpath.dirname(value.pattern.rstrip("/")) or "."
            listed = Value(posixpath.dirname(value.text.rstrip("/")) or ".", pattern=folder) if has_glob(folder) \
                else Value.of(posixpath.dirname(value.text.rstrip("/")) or ".")
            self.touch(("read",), listed, inv, recursive=False)
        if "keeps_url" in parts and (value.text is None or _HELPER.match(value.text)):
            # kept in the configuration, the helper runs again at every fetch or push that names the remote
            for config in self.expand_file("{repository}/config", inv):
                self.touch(("write",), config, inv, recursive=False)
        if "url" in parts and value.text is not None and _HELPER.match(value.text):
            # git's TRANSPORT::ADDRESS runs the program git-remote-TRANSPORT, and ext::COMMAND runs COMMAND (allowed
            # where the user's or the agent's environment allows the protocol: GIT_ALLOW_PROTOCOL, protocol.allow)
            self.unknown(f"{value.text[:80]!r} runs a remote helper program")
            self.mentions(value.text, "a remote helper's address", inv)
            return
        if "url" in parts:
            # what a clone checks out is not a listing of the address, local or not (Commands.bring)
            self.read_by.setdefault(id(inv), []).append("")
            local = _local_url(value)
            if local is None:
                if value.text is not None and (_SSH_URL.match(value.text) or REMOTE.match(value.text)):
                    # curl's sftp:// and scp://, git's ssh:// and HOST:PATH reach the host's files through its ssh
                    # server, and the host may be this machine (`curl -T x sftp://192.0.2.2/~/.bashrc`, `curl
                    # scp://localhost/~/.ssh/id_rsa`, `git push 127.0.0.1:/home/u/other-project`)
                    self.remote_operand(value, "+".join(accesses or ("read",)), inv, roles, recursive=recursive)
                return
            value, accesses = local, accesses or ("read",)
        if "revision" in parts and value.text is not None and ":" in value.text and "://" not in value.text:
            self.revision_path(value.text, inv)
        if "versioned" in parts and (value.text is None or "@" in value.text):
            self.unknown(f"{inv.name} fetches {value.text or 'a package'} from the network and runs it")
        if "program" in parts:
            if value.pipe or value.stream:
                self.pipe_to_shell(f"{inv.name} runs a program read from a pipe")
            elif value.text in ("-", *STDIN_PATHS):
                self.interpret_stdin(None, inv)
            accesses = accesses or ("read",)
        if "url_glob" in parts and value.text is not None and (glob := _CURL_GLOB.search(value.text)):
            # curl's own globbing (`-T '{.env,a}'`, `-T 'f[1-3]'`): the folder before the first glob, all in it; where
            # a glob holds a `/` (`{/home/u/.ssh/id_rsa,x}`), any path
            before, rest = value.text[:glob.start()], value.text[glob.start():]
            globbed = Value.unknown("a curl glob's alternatives name folders") if "/" in rest.split("}")[0] or \
                "/" in rest.split("]")[0] else Value.of(posixpath.dirname(before) or ".")
            self.touch(accesses or ("read",), globbed, inv, recursive=True)
            return
        if accesses:
            if "execute" in accesses:
                self.executes_written(value, inv)
            self.touch(accesses, value, inv, recursive=recursive)
            if "write" in accesses and value.static:
                for p in self.paths(value, inv.cwds):
                    if p is not None:
                        self.written.add(p)
        if "unknown" in parts:
            self.unknown(f"{word} {value.text!r}" if value.text is not None else word)
        if "at_file" in parts:
            if value.text is None:
                self.touch(("read",), value, inv, recursive=False)
            else:  # curl's @FILE, <FILE, name=@FILE and name@FILE (--data-urlencode): any of them may read a file
                at_name = _at_file(value.text)
                if at_name is not None and at_name not in ("-", ""):
                    self.touch(("read",), Value.of(at_name), inv, recursive=False)
        if "typed" in parts:   # TYPE:PATH or TYPE=PATH (--cov-report html:DIR, --emit=link=FILE): written at PATH
            typed = re.match(r"[\w-]+[:=](.+)", value.text) if value.text is not None else None
            if value.text is None or typed is not None:
                self.touch(("write",), Value.of(typed.group(1)) if typed else value, inv, recursive=True)
        numbered = re.search(r"#\d", value.text) if "glob_name" in parts and value.text is not None else None
        if numbered is not None and value.text is not None:
            # curl -o '#1' 'https://h/{.mcp.json}': each match of the URL's globs ({a,b}, [1-9]) fills #N, so the
            # name may be any in the folder before the first #N (or any under it, where #N names a folder)
            head = posixpath.dirname(value.text[:numbered.start()] + "x") or "."
            self.touch(("write",), Value.of(head), inv, recursive=True)
        if "define" in parts and value.text is not None and "=" in value.text:
            # mvn -Dmaven.repo.local=DIR, gradle -Dgradle.user.home=DIR (its init.d scripts run): a property whose
            # value is written as a path may name a folder the build fills or reads code from
            named = Value.of(value.text.partition("=")[2])
            if _path_like(named):
                self.touch(("read", "write"), named, inv, recursive=True)
        if "mount_options" in parts:
            self.mount_options(value, inv, word)
        if "search_path" in parts:   # PYTHONPATH=DIR:DIR: the program imports code from each (an empty part: its cwd), by
            #                          module names: the folder's own zone (`.` holds .claude/, which no import names)
            known = value.text if value.text is not None else value.prefix.rpartition(":")[0]
            for part in known.split(":") if known else ():
                self.touch(("execute",), Value.of(part or "."), inv, recursive=False)
            if value.text is None:
                self.unknown(f"{word}: folders code is loaded from that the analysis cannot read ({value.reason})")
        if "write_out" in parts:  # curl --write-out: %output{FILE} (or {>>FILE}) sends the rest to FILE
            if value.text is None:
                self.unknown(f"{word}: a format the analysis cannot read ({value.reason})")
            else:
                for m in re.finditer(r"%output\{(?:>>)?([^}]*)\}", value.text):
                    self.touch(("write",), Value.of(m.group(1)), inv, recursive=False)
        if parts == ["none"] and word.startswith("-") and value.text is not None and value.text.startswith(("/", "~")):
            # an option's value the table calls no path but written as one: a program that reads it after all (a
            # flag declared with a value, another tool's meaning of the option) must not read a secret unseen
            self.touch(("read",), value, inv, recursive=False)
        if "shell" in parts:
            self.shell_text(value, inv, inv.st, positional=None, why=word)
        if "sed" in parts and not (value.text is not None and sed_script_is_plain(value.text)):
            self.unknown("a sed script that may run commands or write files")
            if value.text is not None:   # `w.envrc`: sed's w, W, r and R take a file name right after the letter
                self.mentions(re.sub(r"([wWrR])(?=[.~/])", r"\1 ", value.text), "the sed script", inv)
        if "awk" in parts and not (value.text is not None and awk_program_is_plain(value.text)):
            self.unknown("an awk program that may run commands or touch files")
            if value.text is not None:
                self.mentions(value.text, "the awk program", inv)
        if "variable" in parts:
            self.set_variable(value, inv.st, f"set by {inv.name}")
        if "environment" in parts and value.text not in inv.st.vars and self.table.secret(value.text):
            self.read_environment(f"{inv.name} {value.text if value.text is not None else '<unknown name>'}")
        if "path_list" in parts or ("at_list" in parts and value.text is not None and value.text.startswith("@")):
            # a file (or `-`: the input) of paths the program then reads: the list is read, and so is each path in
            # it, which the analysis cannot know (tar -T, rsync --files-from, --files0-from, 7z @LIST, sha256sum -c)
            listed = value if "path_list" in parts else Value.of(str(value.text)[1:])
            if listed.text != "-":
                self.touch(("read",), listed, inv, recursive=False)
            self.touch(("read",), Value.unknown(f"a path listed in {listed.text!r}"), inv, recursive=recursive)
        if "query" in parts and _query_reads_environment(value.text, self.table.secret):
            self.read_environment(f"{inv.name}'s expression {value.text!r}" if value.text is not None
                                  else f"{inv.name}: an expression the analysis cannot read ({value.reason})")
        if "query" in parts:
            for loaded in _query_loads(value):
                self.touch(("read",), loaded, inv, recursive=False)
        if "setting" in parts or "setting_env" in parts:
            self.setting_pair(value, inv, from_env="setting_env" in parts)
        if "repository" in parts:
            inv.repositories.append(value)
        if "into" in parts:
            inv.into.append(value)
        if "unpack" in parts:
            inv.unpack.append(value)
        if "mount" in parts:
            self.mount(value, inv, word)
        if "compressed" in parts or "prefix" in parts:
            for name in _renamed(value, compressed="compressed" in parts):
                self.touch(("write",), name, inv, recursive=False)

    # -- configuration that makes a program run others (git) ---------------------------------------

    def set_earlier(self, st: State, inv: Invocation) -> None:
        """The variables programs run or write in ([environment.runs]: PAGER, TMPDIR...) that the command set before
        `inv` runs, however it set them (`X=v;`, `read X`, `printf -v X`, `for X in`, `declare X=v`...): the agent's
        environment may export them already, and then `inv` sees the new value."""
        for name in sorted(self.table.env_runs.keys() & st.vars.keys() - inv.env.keys()):
            if not self.table.harmless(name):
                self.unknown(f"${name} is set earlier in the command, and may be exported: it may change what runs")
            self.env_runs(name, st.vars[name], inv)

    def env_runs(self, name: str, value: Value, inv: Invocation) -> None:
        """A variable whose value programs run, load or write in ([environment.runs]: GIT_SSH_COMMAND, PAGER, TMPDIR)."""
        role = self.table.env_runs.get(name)
        if role is not None:
            self.value_role(role, value, inv, {}, f"${name}", recursive=False)

    def env_settings(self, settings: Settings, inv: Invocation) -> None:
        """What the environment tells the program of its configuration ([settings.PROGRAM]). A shell
        variable counts too: it may have been exported."""
        env = {**inv.st.vars, **inv.env}
        inv.repositories.extend(env[n] for n in settings.repository_env if n in env)
        inv.files.extend(env[n] for n in settings.files_env if n in env)
        for n, key in settings.env_keys.items():
            if n in env:
                self.setting(Value.of(key), env[n], inv)
        if settings.key_env:
            for n, v in env.items():
                if n.startswith(settings.key_env):
                    suffix = n[len(settings.key_env):]
                    self.setting(v, env.get(settings.value_env + suffix, Value.unknown(f"${settings.value_env}"
                                                                                         f"{suffix}")), inv)
        if settings.parameters_env in env:
            text = env[settings.parameters_env].text
            if text is None:
                self.unknown(f"${settings.parameters_env} holds settings the analysis cannot read")
            else:
                for k, _, quoted in re.findall(r"'((?:[^']|'\\'')*)'(=('(?:[^']|'\\'')*'))?", text):
                    self.setting(Value.of(k), Value.of(quoted[1:-1]) if quoted else Value.of("true"), inv)

    def setting_pair(self, value: Value, inv: Invocation, *, from_env: bool) -> None:
        """`KEY=VALUE` (git -c), or `KEY=VARIABLE` (git --config-env: the value is the variable's)."""
        if value.text is None:
            self.unknown(f"a setting the analysis cannot read ({value.reason})")
            return
        k, eq, v = value.text.partition("=")
        if from_env:
            val = {**inv.st.vars, **inv.env}.get(v, Value.unknown(f"${v} from the environment"))
        else:
            val = Value.of(v) if eq else Value.of("true")
        self.setting(Value.of(k), val, inv)

    def setting(self, key: Value, value: Value, inv: Invocation) -> None:
        """A configuration key given a value: a key [settings.PROGRAM] lists (one that makes the program
        run or read something) has its value analysed in that role."""
        program = inv.name.split(" ")[0]
        settings = self.table.settings.get(program)
        if settings is None:
            return
        if key.text is None:
            self.unknown(f"sets a {program} setting the analysis cannot read ({key.reason})")
            return
        opt = settings.key(key.text)
        if opt is None:
            return
        self.note(f"sets {key.text}: {opt.why or 'a setting that runs programs'}")
        if opt.cls:
            self.classify(opt.cls, f"{key.text}: {opt.why}" if opt.why else key.text)
        inv.roles.update(opt.roles)
        if opt.value == "chdir":
            inv.cwds = _union(inv.cwds, self.chdir(value, inv.cwds))
        elif opt.value is not None:
            if "shell" in opt.value and value.text is not None and value.text.startswith("!"):
                value = Value.of(value.text[1:])  # git's `!command` (aliases, helpers)
            self.value_role(opt.value, value, inv, {}, key.text, recursive=opt.recursive)

    def config_files(self, spec: CommandSpec, parsed: "Commands.Parsed", inv: Invocation, role: str, *,
                     recursive: bool) -> None:
        """The files a command's role "file" names (git config's configuration file), with that role's
        access: the file an option names, else the option's or the command's templates."""
        accesses = "+".join(a for a in role.split("+") if a in ACCESSES)
        if not accesses:
            return
        explicit = [v for o, _, v in parsed.opts if o.value == "file" and v is not None]
        templates = next((o.file for o, _, _ in reversed(parsed.opts) if o.file is not None), spec.file)
        targets = explicit or [t for tpl in templates for t in self.expand_file(tpl, inv)]
        for t in targets + inv.files:
            self.value_role(accesses, t, inv, {}, "", recursive=recursive)

    def expand_file(self, template: str, inv: Invocation) -> list[Value]:
        text = template.replace("{home}", self.home)
        if "{repository}" not in text:
            return [Value.of(text)]
        return [Value.of(text.replace("{repository}", r.text)) if r.text is not None else
                Value.unknown(f"{template} of a repository the analysis cannot locate ({r.reason})")
                for r in self.repositories(inv)]

    def leading_globs(self, words: list[Value], cwds: tuple[str, ...] | None) -> None:
        """An argument that is a glob starting with a wildcard (`*`, `?x`, `[a-z]*`, `*/f`) is replaced by names the
        disk gives, which begin the word: a name that starts with `-` is read by the program as an option (`tar cf
        a.tar *` in a folder holding `--checkpoint-action=exec=sh x.sh` runs it; `rm *` meets `-rf`). Which names
        match is read on disk (Analysis.leading_globs, shell.through_leading_globs)."""
        for w in words:
            if w.pattern is None or cwds is None or not w.pattern.startswith(("*", "?", "[", "@(", "!(", "+(")):
                continue
            for c in cwds:
                self.leading[(c, w.pattern.split("/")[0])] = None

    def repository_runs(self, settings: Settings, inv: Invocation) -> None:
        """A program that runs what its repository's configuration names (git: core.fsmonitor on `git status`, the
        pager, diff and merge drivers, hooks) runs the agent's choice where that configuration lies in a zone the agent
        may write (a repository in /tmp): the command is unknown. The working directory's own repository folder is
        looked at: in the project it is agent_config (a nested repository's too), which the agent cannot make or change,
        and git looks no further up when it is there. Where it is not there, git looks in the folders above (a project
        under /tmp without its own .git meets /tmp/.git): which one it finds is read on disk (Analysis.repositories,
        shell.through_repositories)."""
        if not settings.writable or not settings.repository or inv.cwds is None:
            return
        if inv.name.split(" ")[1:2] and inv.name.split(" ")[1] in settings.no_repository:
            return
        for folder in inv.cwds:
            config = normalise(posixpath.join(folder, settings.repository, "config"))
            zone = self.zones.of(split_pattern(escape_glob(config)))[0]   # a literal path: its first zone
            if zone in settings.writable:
                self.unknown(f"{inv.name} runs the programs its repository's configuration names, and {config} lies "
                             f"where the agent may write ({zone})")
                return
            self.above[(folder, settings.repository, settings.writable, inv.name)] = None

    def repositories(self, inv: Invocation) -> list[Value]:
        """Where the program's repository may be: named (--git-dir, GIT_DIR), or the repository folder in
        the working directory or any folder above it (the analysis does not look at the disk), or the
        working directory itself when it is inside one (a bare repository, `cd .git`)."""
        settings = self.table.settings.get(inv.name.split(" ")[0])
        name = settings.repository if settings is not None else ""
        out = list(inv.repositories)
        if not name or inv.cwds is None:
            return out + [Value.unknown("a repository above a working directory the analysis does not know")]
        for c in inv.cwds:
            a = c
            while True:
                out.append(Value.of(posixpath.join(a, name)))
                if a.endswith(name):
                    out.append(Value.of(a))
                if a == "/":
                    break
                a = posixpath.dirname(a)
        return list(dict.fromkeys(out))

    def set_variable(self, name: Value, st: State, how: str) -> None:
        """A variable a builtin sets by name (read, printf -v, mapfile): a subscript in the name is
        evaluated as arithmetic, so only plain names are followed."""
        if name.text is None or not re.fullmatch(r"[A-Za-z_]\w*", name.text):
            self.unknown(f"a variable name the analysis cannot follow ({name.text or name.reason})")
            st.opaque = st.opaque or "a variable set by a name the analysis cannot read"
            return
        st.vars[name.text] = Value.unknown(f"${name.text} is {how}", stream=True)

    @dataclass
    class Parsed:
        opts: list[tuple[OptionSpec, str, Value | None]] = field(default_factory=list)
        operands: list[Value] = field(default_factory=list)
        nested: list[tuple[OptionSpec, str, list[Value]]] = field(default_factory=list)
        sub: list[Value] | None = None
        undeclared: bool = False     # an option the table does not list was given

    def parse_args(self, spec: CommandSpec, inv: Invocation) -> "Commands.Parsed":
        out = Commands.Parsed()
        args = inv.args
        if spec.first_cluster and args and args[0].text is not None and args[0].text[:1] not in ("-", ""):
            args = [Value.of("-" + args[0].text), *args[1:]]
        done = False
        i = 0
        while i < len(args):
            a = args[i]
            i += 1
            if a.text is None:
                if not done and spec.options_matter and _may_be_option(a):
                    self.unknown(f"an argument the analysis cannot see ({a.reason}) may be an option")
                out.operands.append(a)
                done = done or spec.stop_at_operand
                continue
            t = a.text
            declared = t.startswith("+") and spec.option(t) is not None    # `bash +O dotglob`
            if done or t == "-" or not (t.startswith("-") or declared) or (a.pattern is not None and not declared
                                                                           and not t.startswith("-")):
                out.operands.append(a)
                done = done or spec.stop_at_operand
                continue
            if t == "--":
                done = True
                continue
            got = self._option(spec, t, args, i, out)
            if got is None:
                if spec.other_options == "operand":
                    out.operands.append(a)
                    done = done or spec.stop_at_operand
                    continue
                self._other(spec, t, out)
                if spec.cls == "build_test" and t.startswith("--") and i < len(args) and self.inv is not None \
                        and _path_like(args[i]):
                    # a build or test tool's unknown --option before a path may name where it writes (a report,
                    # an output or cache folder: `--outFile`, `--target-dir`): the path is written, everything in it
                    self.touch(("read", "write"), args[i], self.inv, recursive=True)
                continue
            i = got
            last = out.opts[-1][0] if out.opts else None
            if last is not None and last.value == "command" and out.opts[-1][2] is None:
                opt, word, _ = out.opts.pop()
                nested: list[Value] = []
                while i < len(args) and not (args[i].text in opt.terminators):
                    nested.append(args[i])
                    i += 1
                i += 1
                out.nested.append((opt, word, nested))
                continue
            chosen = out.opts[-1][2] if out.opts else None
            if last is not None and last.value == "subcommand" and chosen is not None:
                out.opts[-1] = (last, out.opts[-1][1], None)
                out.sub = [chosen, *args[i:]]
                return out
            if last is not None and last.stop:
                out.operands.extend(args[i:])
                return out
        return out

    def _option(self, spec: CommandSpec, t: str, args: list[Value], i: int, out: "Commands.Parsed") -> int | None:
        """Record the option word `t` (args[i-1]); returns the index after it, None when not declared. A word the
        table declares whole (`-out`, `-keyout` of openssl, `-TT` of zip) is that option, not a cluster of short ones
        (`-o ut`: openssl's `-out ~/.bashrc` was read as an operand)."""
        whole = len(t.partition("=")[0]) > 2 and t.partition("=")[0] in spec.options
        if spec.style == "single" or t.startswith("--") or whole:
            name, eq, attached = t.partition("=")
            opt = spec.option(name)
            if opt is None and spec.style == "single":  # a value attached to the option's name: -ofile, -I/usr/x
                for k, o in spec.options.items():
                    if o.value not in (None, "command") and (o.attached or len(k) == 2) and t.startswith(k) \
                            and len(t) > len(k):
                        out.opts.append((o, k, Value.of(t[len(k):])))
                        return i
                if eq and name.startswith("-"):    # --name=VALUE, or -name=VALUE in a program of whole-word options
                    self._other(spec, name, out, Value.of(attached))
                    return i
                return None
            if opt is None:
                if eq:
                    self._other(spec, name, out, Value.of(attached))
                    return i
                return None
            if opt.value is None or (opt.attached and not eq):
                if opt.value is not None and _separate(opt, args, i):
                    out.opts.append((opt, name, args[i]))
                    return i + 1
                out.opts.append((opt, name, None))
                return i
            if opt.value == "command":
                out.opts.append((opt, name, None))
                return i
            if eq:
                out.opts.append((opt, name, Value.of(attached)))
                return self._then(opt, name, args, i, out)
            out.opts.append((opt, name, args[i] if i < len(args) else None))
            return self._then(opt, name, args, i + 1, out)
        j = 1
        while j < len(t):
            name = "-" + t[j]
            opt = spec.option(name)
            if opt is None:
                if spec.other_options == "operand":
                    return None if j == 1 else i
                self._other(spec, name, out)
                j += 1
                continue
            if opt.value is None:
                out.opts.append((opt, name, None))
                j += 1
                continue
            rest = t[j + 1:]
            if opt.value == "command":
                out.opts.append((opt, name, None))
                return i
            if opt.attached:
                if not rest and _separate(opt, args, i):
                    out.opts.append((opt, name, args[i]))
                    return i + 1
                out.opts.append((opt, name, Value.of(rest) if rest else None))
                return i
            if rest:
                out.opts.append((opt, name, Value.of(rest)))
                return i
            out.opts.append((opt, name, args[i] if i < len(args) else None))
            return self._then(opt, name, args, i + 1, out)
        return i

    @staticmethod
    def _then(opt: OptionSpec, name: str, args: list[Value], i: int, out: "Commands.Parsed") -> int:
        """After an option's value, the second word it takes (jq's --rawfile NAME FILE), with its own role."""
        if opt.then is None:
            return i
        out.opts.append((OptionSpec(value=opt.then), name, args[i] if i < len(args) else None))
        return i + 1

    def _other(self, spec: CommandSpec, name: str, out: "Commands.Parsed", value: Value | None = None) -> None:
        out.undeclared = True
        if spec.other_options == "unknown":
            self.unknown(f"the option {name} is not in the table")
        elif value is not None and spec.other_options == "ignore" and self.inv is not None:
            # `--name=VALUE` the table does not know: whether the program reads VALUE or writes it (a report, a
            # cache, a scratch folder it empties first) is unknown, so both
            self.touch(("read", "write"), value, self.inv, recursive=False)

    def keyed(self, spec: CommandSpec, operands: list[Value], inv: Invocation, roles: Mapping[str, str], *,
              recursive: bool) -> list[Value]:
        rest = []
        for o in operands:
            if o.text is not None and "=" in o.text:
                key, value = o.text.split("=", 1)
                if key in spec.keyed:
                    self.value_role(spec.keyed[key], Value.of(value), inv, roles, key, recursive=recursive)
                continue
            rest.append(o)
        return rest

    def assignments(self, operands: list[Value], inv: Invocation) -> list[Value]:
        """`make CC=/tmp/x`, `make SHELL=/tmp/x`: a NAME=VALUE operand sets a variable of the program, over its own
        files and the environment, so it counts as `NAME=VALUE make` does (a name not known harmless makes the command
        unknown; one the environment's table says runs its value is analysed in that role)."""
        rest = []
        for o in operands:
            if o.text is None:   # `make "$V"` with V=SHELL=/tmp/x
                self.unknown(f"{inv.name}'s operand that the analysis cannot read ({o.reason or 'computed'}) may set a "
                             "variable of the program")
            m = _ASSIGNMENT.match(o.text or "")
            if m is None:
                rest.append(o)
                continue
            if not self.table.harmless(m.group(1)):
                self.unknown(f"sets {m.group(1)} for the program, which may change what it runs")
            self.env_runs(m.group(1), Value.of(o.text[m.end():]) if o.text is not None else o, inv)
        return rest

    def mount(self, value: Value, inv: Invocation, word: str) -> None:
        """A container's mount (`-v SRC:DST[:ro]`, `--mount type=bind,src=SRC[,readonly]`): the host folder SRC and all
        in it are read, and the folder is written unless read-only; a named volume is no host path. Unreadable: the
        whole host."""
        if value.text is None:
            self.touch(("read", "write"), Value.of("/"), inv, recursive=True)
            return
        if word in ("--mount", "--secret"):   # docker build --secret id=x,src=FILE hands FILE to the build's code
            fields = {k: v for k, _, v in (f.partition("=") for f in value.text.split(","))}
            if fields.get("type", "volume") not in ("bind", "volume", "file"):
                return
            source = fields.get("source") or fields.get("src") or ""
            readonly = word == "--secret" or fields.get("readonly", fields.get("ro", "false")) in ("true", "1", "")
            variable = fields.get("env") or (fields.get("id") if word == "--secret" and not source else None)
            if variable is not None and self.table.secret(variable):   # --secret id=NAME[,env=NAME]: a variable's value
                self.read_environment(f"{inv.name} {word} {value.text}")
        else:
            source, _, rest = value.text.partition(":")
            readonly = "ro" in rest.split(":")[-1].split(",") if ":" in rest else False
        if not source.startswith(("/", ".", "~")):
            return                     # a named volume, held by the engine
        self.touch(("read",), Value.of(source), inv, recursive=True)
        if not readonly:   # the folder is written; what the container then writes in it is its program's (as project code)
            self.touch(("write",), Value.of(source), inv, recursive=False)

    def mount_options(self, value: Value, inv: Invocation, word: str) -> None:
        """mount's `-o KEY=VALUE,...` (overlayfs' `lowerdir=A:B,upperdir=U`, fuse-overlayfs', unionfs'): each VALUE
        written as a path, and each part of a `:` list of them, is a folder the mount shows at its mount point, read
        and written whole, as a folder named as an operand is. Unreadable: the whole machine."""
        if value.text is None:
            self.touch(("read", "write"), Value.of("/"), inv, recursive=True)
            return
        for item in value.text.split(","):
            _, eq, named = item.partition("=")
            for part in named.split(":") if eq else ():
                folder = Value.of(part.split("=", 1)[0])
                if _path_like(folder):
                    self.touch(("read", "write"), folder, inv, recursive=True)

    def put_into(self, assigned: list[tuple[Value, tuple[str, ...]]], roles: Mapping[str, str], inv: Invocation, *,
                 recursive: bool) -> None:
        """Sources copied, linked or fetched into a folder (`cp SRC... DIR`, `ln -s TARGET [DIR]`, `curl -O URL`,
        `scp host:F .`) land there under their own names, which may be protected names (`.envrc`, `.mcp.json`)
        in a folder that is not: each such name is a write."""
        slots = [(v, r) for v, r in assigned if "into" not in r and any(x in ACCESSES or x in roles or x == "url"
                                                                        for x in r)]
        folders = list(inv.into)
        if not slots and len(assigned) == 1 and "into" in assigned[0][1]:   # `ln -s TARGET`: a link in `.`
            slots, folders = [(assigned[0][0], ("read", "write"))], [Value.of(".")]
        for folder in folders:
            for src, slot_roles in slots:
                if recursive or src.pattern is not None:   # names a glob or a folder's content gives
                    self.bring(folder, src, inv, recursive=recursive)
                child = _into(folder, src)
                self.touch(("write",), child or folder, inv, recursive=recursive or child is None)
                if child is not None and child.static and child.text is not None:   # `wget URL/x.py && python3 x.py`
                    self.written.update(p for p in self.paths(child, inv.cwds) if p is not None)
                accesses = tuple(a for x in slot_roles for a in roles.get(x, x).split("+") if a in ACCESSES)
                if "write" in accesses:
                    self.links_made(child or folder, inv)
                    self.links_made(folder, inv)
                    self.link_targets(accesses, src, folder, inv)

    def bring(self, folder: Value, src: Value | None, inv: Invocation, *, recursive: bool) -> None:
        """Files land in `folder` under names the disk gives (a glob's matches, a folder's content: `src`) or an
        archive's members (`src` None: what `inv` reads), which may be protected names in a sub-folder (`sub/.envrc`,
        `lefthook.yml`): shell.through_content reads them on disk. A folder the analysis cannot resolve is written
        as an unresolved path already."""
        if folder.text is None or folder.pattern is not None:
            return
        dests = [d for d in self.joined(folder.text, inv.cwds) if d is not None]
        if src is None:
            sources: tuple[str, ...] | None = None
        elif src.text is None or "://" in src.text or REMOTE.match(src.text):
            sources = ("",)
        else:
            found = ([escape_glob(p) if p is not None else None for p in self.joined(src.text, inv.cwds)]
                     if src.pattern is None else self.pattern_paths(src, inv.cwds))
            sources = tuple(p or "" for p in found)
        self.brings.append((inv, tuple(dests), sources, recursive))

    def link_targets(self, accesses: tuple[str, ...], target: Value, folder: Value, inv: Invocation) -> None:
        """A source written through what is put into `folder` is a link's target (`ln -s TARGET LINK`, `cp -s`):
        a relative target is taken from the link's folder, not the working directory: LINK's own when it is a
        folder, else the one it lies in; the analysis does not know which, so both count."""
        if target.text is None or target.text.startswith(("/", "~")) or target.text in ("", "-"):
            return
        if folder.text is None or folder.pattern is not None:
            self.touch(accesses, Value.unknown(f"the link target {target.text} from a folder the analysis cannot "
                                               "resolve"), inv, recursive=False)
            return
        for base in dict.fromkeys((folder.text, posixpath.dirname(folder.text.rstrip("/")) or ".")):
            joined = posixpath.join(base, target.text)
            pattern = posixpath.join(escape_glob(base), target.pattern) if target.pattern is not None else None
            self.touch(accesses, Value(joined, pattern=pattern), inv, recursive=False)

    def subcommand(self, spec: CommandSpec, operands: list[Value], inv: Invocation) -> State:
        if not operands:
            return inv.st
        first = operands[0]
        if first.text is None:
            self.unknown(f"a {inv.name} subcommand the analysis cannot see")
            self.any_subcommand(spec, inv)
            inv.args = operands[1:]
            self.unknown_program(inv)
            return inv.st
        found = spec.subcommands.get(first.text)
        if found is None:
            inv.args = operands[1:]
            if any(c.rewrites for c in spec.subcommands.values()):   # an alias (`git co BRANCH`): the repository says
                self.rewrites_tree(first.text, inv)
            self.unknown(f"{inv.name} {first.text} is not in {self.table.path.name}")
            if inv.roles.get("file") == "write":  # an alias given for this run (git -c alias.x=config)
                self.any_subcommand(spec, inv)
            self.unknown_program(inv)
            return inv.st
        sub = self.table.commands[found.same_as] if found.same_as is not None else found
        inv.args = operands[1:]
        inv.name = f"{inv.name} {first.text}"
        return self.apply(sub, inv.name, inv)

    def any_subcommand(self, spec: CommandSpec, inv: Invocation) -> None:
        """A subcommand that may be any of `spec`'s: the files any of them writes count as written."""
        for sub in {id(c): c for c in spec.subcommands.values()}.values():
            for target in (t for tpl in sub.file for t in self.expand_file(tpl, inv)):
                self.note(f"it may be `{sub.name}`, which writes {target.text or target.reason}")
                self.value_role("write", target, inv, {}, "", recursive=False)

    def wrapped(self, rest: list[Value], inv: Invocation, script_from: str | None) -> State:
        """A wrapper's command (sudo, env, timeout...): analysed as a command of its own."""
        if not rest:
            if script_from == "stdin":
                self.interpret_stdin("shell", inv)
            return inv.st
        return self.again(rest, inv, inv.st, inv.io)

    def nested(self, words: list[Value], operands: list[Value], inv: Invocation) -> None:
        """`find ... -exec cmd {} ;`: `{}` is a path under the starting points."""
        starts = [o for o in operands] or [Value.of(".")]
        dirs: list[str] = []
        unknown = False
        for s in starts:
            for p in self.paths(s, inv.cwds) if s.static else [None]:
                if p is None:
                    unknown = True
                else:
                    dirs.append(p)
        found = Value.unknown("a path find found", under=tuple(dirs)) if not unknown else \
            Value.unknown("a path under a starting point the analysis cannot resolve")
        replaced = [found if w.text is not None and "{}" in w.text else w for w in words]
        if replaced == words:
            replaced = words + [found]
        self.again(replaced, inv, inv.st.copy(), IO())

    def printed(self, prints: str | None, spec: CommandSpec, operands: list[Value], inv: Invocation, *,
                keep: bool) -> Value | None:
        if prints == "cwd":
            return Value.unknown("paths printed", under=inv.cwds, stream=True) if inv.cwds else None
        if prints == "operands":
            dirs: list[str] = []
            for o in operands or [Value.of(".")]:
                ps = self.paths(o, inv.cwds) if o.static else [None]
                if None in ps:
                    return None
                dirs.extend(p for p in ps if p is not None)
            return Value.unknown("paths printed", under=tuple(dirs), stream=True)
        if keep and not [o for o in operands if o.text != "-"] and inv.io.stdin == "pipe":
            return inv.io.data
        return None

    # -- interpreters -----------------------------------------------------------------------------

    def interpret(self, spec: CommandSpec, source: str | None, text: Value | None, inv: Invocation,
                  positional: tuple[Value, ...]) -> None:
        kind = spec.interpreter
        if source in ("value", "operand"):
            if text is None:
                return
            if kind == "shell":
                self.shell_text(text, inv, inv.st, positional=positional or (Value.of(inv.name),),
                                why="its -c argument", options=True)
            else:
                self.code(text, inv)
            return
        if source == "file" and text is not None:
            if text.pipe or text.stream:
                self.pipe_to_shell(f"{inv.name} runs a script read from {text.reason or 'a pipe'}")
                return
            if text.text in ("-", *STDIN_PATHS):
                self.interpret_stdin(kind, inv)
                return
            self.touch(("execute",), text, inv, recursive=False)
            self.executes_written(text, inv)
            if kind == "shell":
                self.runs_file(f"runs the shell script {text.text or '?'}, whose commands are not analysed")
            return
        self.interpret_stdin(kind, inv)

    def interpret_stdin(self, kind: str | None, inv: Invocation) -> None:
        io = inv.io
        if io.stdin == "pipe":
            self.pipe_to_shell(f"{inv.name} reads its program from a pipe")
        elif io.stdin == "text" and io.data is not None:
            if io.data.text is None:
                if io.data.stream:
                    self.pipe_to_shell(f"{inv.name} runs text that includes a command's output")
                else:
                    self.unknown(f"{inv.name} runs text the analysis cannot read ({io.data.reason})")
            elif kind == "shell":
                self.shell_text(io.data, inv, inv.st, positional=None, why="a here-document", options=True)
            else:
                self.code(io.data, inv)
        elif io.stdin == "file":
            self.unknown(f"{inv.name} runs a script read from a file")
            if io.data is not None and io.data.static:
                self.executes_written(io.data, inv)
        else:
            self.unknown(f"{inv.name} without a script: an interactive session")

    def code(self, text: Value, inv: Invocation) -> None:
        if text.text is None and (text.stream or text.pipe):
            self.pipe_to_shell(f"{inv.name} runs code from a command's output")
        self.unknown(f"{inv.name} runs code given on the command line, which is not analysed")
        if text.text is not None:
            self.mentions(text.text, f"{inv.name}'s inline code", inv)

    def shell_text(self, text: Value, inv: Invocation, st: State, positional: tuple[Value, ...] | None,
                   why: str, *, same_shell: bool = False, options: bool = False) -> State:
        """Analyse `text` as shell code `inv` runs: in the same shell (eval, source), or in a new one, which reads its
        globs loosely (dot files included) as `st` does, or when its own options (`options`: `inv` is the shell) or
        environment may change how it expands them (`bash -O dotglob`, `BASHOPTS=dotglob bash -c`)."""
        if text.text is None or text.pattern is not None:
            if text.stream or text.pipe:
                self.pipe_to_shell(f"{inv.name} runs {why}, which comes from a command's output")
            else:
                self.unknown(f"{inv.name} runs {why}, which the analysis cannot read ({text.reason})")
            return st
        loose = st.loose_glob or self.shell_settings(inv, options=options)
        inner = st if same_shell else State(inv.cwds, {}, positional, frozenset(), "", loose)
        outer = self.inv
        self.inv = None
        try:
            self.note(f"{inv.name} runs {why}, analysed:")
            out = self.script(text.text, inner, IO())
        finally:
            self.inv = outer
        return out if same_shell else st

    def shell_settings(self, inv: Invocation, *, options: bool) -> bool:
        """Whether the shell `inv` starts may expand words otherwise than by default: a variable that sets the
        shell's options in its environment, or (`options`) an option of the shell's own before its script."""
        if any(name in self.table.shell_variables for name in inv.env):
            return True
        for word in inv.args if options else ():
            if word.text is None:
                return True
            if word.text in ("-c", "-s", "--") or not word.text.startswith(("-", "+")):
                return False
            if word.text[:2] not in ("--", "++") and set(word.text[1:]) & set("Oo"):
                return True
        return False

    # -- specials: shell builtins -----------------------------------------------------------------

    def sp_cd(self, spec: CommandSpec, inv: Invocation) -> State:
        args = [a for a in inv.args if not (a.text is not None and re.fullmatch(r"-[LPe@]+", a.text))]
        args = [a for a in args if a.text != "--"]
        out = inv.st.copy()
        target: Value = args[0] if args else inv.env.get("HOME", self.home_value(inv.st))
        cdpath = "CDPATH" in inv.env or "CDPATH" in inv.st.vars
        searched = cdpath and target.text is not None and not target.text.startswith(("/", "./", "../", "~"))
        if target.text == "-" or (target.text is not None and re.fullmatch(r"[+-]\d+", target.text)) or searched:
            out.cwds = None
            self.note("changes to a directory the analysis does not track")
        else:
            out.cwds = self.chdir(target, inv.cwds)
            self.note(f"now in {', '.join(out.cwds) if out.cwds else 'a directory the analysis cannot resolve'}")
        if spec.cwd:  # entering a directory is an access to it (the table says which)
            for d in out.cwds if out.cwds is not None else (None,):
                self.touch(spec.cwd, Value.of(d) if d is not None else Value.unknown("a directory cd goes to"),
                           inv, recursive=False)
        self.classify(spec.cls, "")
        return out

    def sp_popd(self, spec: CommandSpec, inv: Invocation) -> State:
        out = inv.st.copy()
        out.cwds = None
        self.classify(spec.cls, "")
        return out

    def sp_eval(self, spec: CommandSpec, inv: Invocation) -> State:
        text = _joined(inv.args)
        self.classify(spec.cls, "")
        if text.text is None:
            if any(a.stream or a.pipe for a in inv.args):
                self.pipe_to_shell("eval of a command's output")
            self.unknown(f"eval of text the analysis cannot read ({text.reason})")
            out = inv.st.copy()
            out.opaque = "eval of unknown text"
            return out
        return self.shell_text(text, inv, inv.st, None, "eval", same_shell=True)

    def sp_source(self, spec: CommandSpec, inv: Invocation) -> State:
        out = inv.st.copy()
        out.opaque = f"{inv.name} may change any variable"
        if not inv.args:
            return out
        file = inv.args[0]
        self.unknown(f"{inv.name} runs a script whose commands are not analysed")
        if file.pipe or file.stream or (file.text in STDIN_PATHS and inv.io.stdin == "pipe"):
            self.pipe_to_shell(f"{inv.name} of a command's output")
        elif file.text not in STDIN_PATHS:
            self.touch(("read", "execute"), file, inv, recursive=False)
            self.executes_written(file, inv)
        return out

    def sp_alias(self, spec: CommandSpec, inv: Invocation) -> State:
        self.classify(spec.cls, "")
        for a in inv.args:
            if a.text is not None and "=" in a.text:
                self.unknown("defines an alias; what its uses run is not followed")
                self.shell_text(Value.of(a.text.split("=", 1)[1]), inv, inv.st, None, "the alias text")
            elif a.text is None:
                self.unknown("an alias the analysis cannot read")
        return inv.st

    def sp_set(self, spec: CommandSpec, inv: Invocation) -> State:
        out = inv.st.copy()
        self.classify(spec.cls, "")
        args = inv.args
        if not args:
            self.read_environment("set without arguments")   # prints every variable
        harmless = set(_SET_FLAGS)
        i = 0
        while i < len(args):
            a = args[i]
            if a.text is None:
                self.unknown("set with an argument the analysis cannot see")
                return out
            if a.text == "--":
                out.positional = (out.positional[0] if out.positional else Value.of("sh"), *args[i + 1:])
                return out
            if a.text in ("-o", "+o"):
                if i + 1 < len(args) and args[i + 1].text not in _SET_OPTIONS:
                    self.unknown(f"set -o {args[i + 1].text}")
                i += 2
                continue
            if a.text[:1] in "-+" and set(a.text[1:]) <= harmless:
                i += 1
                continue
            if a.text[:1] in "-+":
                self.unknown(f"set {a.text}")
                i += 1
                continue
            out.positional = (out.positional[0] if out.positional else Value.of("sh"), *args[i:])
            return out
        return out

    def sp_shopt(self, spec: CommandSpec, inv: Invocation) -> State:
        self.classify(spec.cls, "")
        out = inv.st.copy()
        if any(a.text in ("-s", "-u", "-o") or a.text is None for a in inv.args):
            self.unknown("shopt changes how the shell expands words")
            out.loose_glob = True
        return out

    def sp_trap(self, spec: CommandSpec, inv: Invocation) -> State:
        self.classify(spec.cls, "")
        args = [a for a in inv.args if a.text not in ("--",)]
        if args and args[0].text not in ("-p", "-l", "-", "") and len(args) >= 2:
            self.shell_text(args[0], inv, inv.st, None, "a trap")
        return inv.st

    def sp_read(self, spec: CommandSpec, inv: Invocation) -> State:
        self.classify(spec.cls, "")
        out = inv.st.copy()
        parsed = self.parse_args(spec, inv)
        for opt, word, value in parsed.opts:
            if opt.value == "variable" and value is not None:
                self.set_variable(value, out, "read from input")
        for o in parsed.operands:
            self.set_variable(o, out, "read from input")
        if not parsed.operands:
            out.vars["REPLY"] = Value.unknown("$REPLY is read from input", stream=True)
        return out

    def sp_env(self, spec: CommandSpec, inv: Invocation) -> State:
        self.classify(spec.cls, "")
        parsed = self.parse_args(spec, inv)
        for opt, word, value in parsed.opts:
            if opt.value == "chdir" and value is not None:
                inv.cwds = self.chdir(value, inv.cwds)
            elif opt.value is not None and value is not None:
                self.value_role(opt.value, value, inv, {}, word, recursive=False)
            if opt.cls:
                self.classify(opt.cls, opt.why or word)
        rest = list(parsed.operands)
        assigns: list[tuple[str, Value]] = []
        while rest and rest[0].text is not None and re.match(r"[A-Za-z_]\w*=", rest[0].text):
            name, _, text = rest.pop(0).text.partition("=")  # type: ignore[union-attr]
            assigns.append((name, Value.of(text)))
        if not rest:
            self.read_environment("env without a program")   # prints the environment
        if rest and rest[0].text is None:
            self.unknown("env runs a program the analysis cannot name")
        for name, value in assigns if not rest else ():
            if not self.table.harmless(name):
                self.unknown(f"sets {name} for the program, which may change what it runs")
        return self.again(rest, inv, inv.st, inv.io, assigns) if rest else inv.st

    def sp_xargs(self, spec: CommandSpec, inv: Invocation) -> State:
        self.classify(spec.cls, "")
        parsed = self.parse_args(spec, inv)
        replace_with: str | None = None
        from_file = False
        for opt, word, value in parsed.opts:
            if opt.roles.get("replace") or word in ("-I", "--replace", "-i"):
                replace_with = value.text if value is not None and value.text else "{}"
            if opt.value and "read" in opt.value and value is not None:
                self.touch(("read",), value, inv, recursive=False)
                from_file = True
            if opt.cls:
                self.classify(opt.cls, opt.why or word)
        io = inv.io
        if from_file or io.stdin == "file":
            items = [Value.unknown("arguments read from a file", multi=True)]
        elif io.stdin == "text" and io.data is not None and io.data.text is not None \
                and not re.search(r"[\"'\\]", io.data.text):
            items = [Value.of(w) for w in io.data.text.split()]
        elif io.stdin in ("pipe", "text") and io.data is not None:
            items = [replace(io.data, multi=True, stream=True)] if io.data.text is None else \
                [Value.unknown("arguments read from its input", stream=True, multi=True)]
        else:
            items = [Value.unknown("arguments read from its input", stream=True, multi=True)]
        words = list(parsed.operands) or [Value.of("echo")]
        if replace_with is not None:
            item = items[0] if len(items) == 1 else Value.unknown("one of several input words", multi=False)
            words = [_replace(w, replace_with, item) for w in words]
        else:
            words = words + items
        return self.again(words, inv, inv.st.copy(), IO())

    def sp_busybox(self, spec: CommandSpec, inv: Invocation) -> State:
        self.classify(spec.cls, "")
        if not inv.args:
            return inv.st
        return self.again(inv.args, inv, inv.st, inv.io)

    def sp_ps(self, spec: CommandSpec, inv: Invocation) -> State:
        """ps: the BSD option `e` (`ps e`, `ps auxe`, `ps eww`) prints every listed process's environment, a read
        of the environment's credentials like `env`; a word the analysis cannot read may be that option."""
        self.classify(spec.cls, "")
        after_value_option = False
        for a in inv.args:
            text = a.text
            if text is None:
                self.read_environment("ps with a word the analysis cannot read")
            elif after_value_option or text.startswith("-"):
                after_value_option = text in _PS_VALUE_OPTIONS
            elif re.fullmatch(r"[A-Za-z]+", text) and "e" in text:
                self.read_environment(f"ps {text} (BSD `e`: the environment of every process it lists)")
        return inv.st

    def sp_watch(self, spec: CommandSpec, inv: Invocation) -> State:
        self.classify(spec.cls, "")
        parsed = self.parse_args(spec, inv)
        if any(word in ("-x", "--exec") for _, word, _ in parsed.opts):
            return self.again(parsed.operands, inv, inv.st.copy(), IO())
        return self.shell_text(_joined(parsed.operands), inv, inv.st, None, "its arguments")


    def runs_file(self, why: str) -> None:
        """Running a file whose content is not analysed: [programs] files names its class (else unknown);
        its execute access is listed, so the zone map decides where that may happen."""
        self.classify(self.table.files or self.table.unknown, why)

    def revision_path(self, text: str, inv: Invocation) -> None:
        """git's `REV:PATH` (`:PATH`, `:2:PATH`: the index's) reads PATH as committed: relative to the repository's top
        (the project, or the working folder), or to the working folder where it starts with ./ or ../."""
        path = re.sub(r"^\d:", "", text.partition(":")[2])
        if not path:
            return
        tops = () if path.startswith(("./", "../")) else self.workspaces
        for where in (Value.of(path), *(Value.of(posixpath.join(t, path)) for t in tops)):
            self.touch(("read",), where, inv, recursive=path.endswith("/"))

    def builds_written(self, inv: Invocation) -> None:
        """A build tool runs the files that define the build in the folder it builds (`curl URL > Makefile; make`,
        `wget URL/justfile && just`): one the command itself wrote is run unseen, as a script it wrote is."""
        folders = [d for d in inv.cwds or () if d is not None]
        for p in sorted(self.written):
            if any(p.startswith(d.rstrip("/") + "/") for d in folders) and \
                    self.table.builds_from(posixpath.basename(p)):
                self.unknown(f"{inv.name} runs {p}, which the command itself wrote (downloaded or generated)")
                self.mentions(self.source, f"the command that writes {posixpath.basename(p)} and builds", inv)
                return

    def script_command(self, script: Value, after: list[Value], inv: Invocation) -> None:
        """The class of running a script the table knows by name with the words after it (`python3 setup.py install`
        installs into the interpreter's site-packages, as `pip install .` does; `setup.py upload` sends), or a program
        whose words choose what it does (`mvn deploy`): a word not known before the command runs may be any of them.
        The folders its options install into are written whole (`--user`: ~/.local; `--prefix DIR`, `--home=DIR`:
        DIR, where a leading ~ is the home, as distutils reads it)."""
        name = posixpath.basename(script.text or "")
        words, writes = self.table.script_commands.get(name), self.table.script_writes.get(name)
        for value in after:
            if value.text is None:
                if words or writes:
                    self.unknown(f"{script.text} run with a word not known before the command runs")
                continue
            chosen = _word_class(words, value.text) if words else None
            if chosen is not None:
                self.classify(chosen, f"{script.text} {value.text}")
        if writes is None:
            return
        for opt, word, given in self.parse_args(writes, replace(inv, args=list(after))).opts:
            if opt.file is not None:
                targets = [Value.of(t.replace("{home}", self.home)) for t in opt.file]
            elif given is None or given.text is None:
                self.unknown(f"{script.text} {word} without a folder")
                continue
            else:
                targets = [Value.of(self.home + given.text[1:]) if given.text.startswith("~") and
                           given.text[1:2] in ("", "/") else given]
            for t in targets:
                self.touch(("write",), t, inv, recursive=True)

    def executes_written(self, value: Value, inv: Invocation) -> None:
        if value.static and any(p in self.written for p in self.paths(value, inv.cwds) if p is not None):
            self.unknown(f"runs {value.text}, which the command itself wrote (downloaded or generated)")
            self.mentions(self.source, f"the command that writes and runs {value.text}", inv)


def _word_class(words: Mapping[str, str], word: str) -> str | None:
    """The class of `word` in a script's or program's table of words, whose keys may be globs (`publish*`)."""
    if word in words:
        return words[word]
    return next((cls for key, cls in words.items() if fnmatch.fnmatchcase(word, key)), None)


_CURL_GLOB = re.compile(r"[{\[]")


def _at_file(text: str) -> str | None:
    """The file of curl's `@FILE`, `<FILE`, `name=@FILE;type=...`, also quoted (`-F 'f=@"a;b.txt"'`, with `\\"` and
    `\\\\` escaped in it); None when the word names none."""
    m = re.search(r"[@<]", text)
    if m is None:
        return None
    rest = text[m.end():]
    if not rest.startswith('"'):
        return rest.split(";", 1)[0]
    out: list[str] = []
    i = 1
    while i < len(rest) and rest[i] != '"':
        if rest[i] == "\\" and i + 1 < len(rest):
            i += 1
        out.append(rest[i])
        i += 1
    return "".join(out)


_SET_FLAGS = "euxvfCBEHhTnmbkpP"
_SET_OPTIONS = {"pipefail", "errexit", "nounset", "xtrace", "noclobber", "noglob", "verbose", "errtrace",
                "functrace", "noexec", "notify", "monitor", "ignoreeof"}


_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_SSH_URL = re.compile(r"^(?:sftp|scp|ssh|git\+ssh|ssh\+git)://", re.IGNORECASE)
# make's NAME=, NAME:=, NAME+=, NAME?=, NAME!=: any word with `=` and no blank before it (`.SHELLFLAGS=-c id`, `a/b=1`)
_ASSIGNMENT = re.compile(r"^([^\s=]+?)(?:\+|\?|!|:{1,3})?=")
_HELPER = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*::")     # git's TRANSPORT::ADDRESS (ext::sh -c ..., fd::3)


def _into(folder: Value, src: Value) -> Value | None:
    """What putting `src` into `folder` writes: FOLDER/NAME, NAME the last part of src's path (of a URL's path, of
    a remote host:PATH); None when the name cannot be known (then any name in the folder may be written)."""
    if folder.text is None or folder.pattern is not None or src.text is None:
        return None
    text = src.text
    remote = REMOTE.match(text)
    url = "://" in text      # a URL that matches no file is passed on as written: its path names the file
    if url:
        text = urllib.parse.urlsplit(text).path
    elif remote:
        text = text[remote.end():]
        url = True           # host:PATH names a remote repository or file the same way
    name = posixpath.basename(text.rstrip("/"))
    glob = src.pattern is not None and not url
    if name in ("", ".", "..", "~") or (not glob and any(c in name for c in "*?[]{}")):
        return None          # a folder's contents, or a name curl expands itself (URL globbing)
    if name.endswith(".git") and len(name) > 4 and url:
        name = name[:-4]     # a clone's folder: the repository's name without .git
    if src.pattern is None or url:
        return Value.of(posixpath.join(folder.text, name))
    last = src.pattern.rstrip("/").rsplit("/", 1)[-1]
    return Value(posixpath.join(folder.text, name), pattern=posixpath.join(escape_glob(folder.text), last))


def _renamed(value: Value, *, compressed: bool) -> list[Value]:
    """The files a compressor (`compressed`: the name with a suffix added or taken off, any suffix: -S) or a
    splitter (the value is a prefix: split's pieces) writes beside `value`."""
    if value.text is None:
        return [value]
    if value.pattern is not None:   # a glob: any name in its folder that a match's prefix may have (dot rule kept)
        head, name = posixpath.split(value.pattern)
        return [Value(value.text + "*", pattern=value.pattern + "*"),
                Value(value.text, pattern=posixpath.join(head, ".*" if name.startswith(".") else "*"))]
    grown = Value(value.text + "*", pattern=escape_glob(value.text) + "*")
    if not compressed:
        return [grown]
    head, name = posixpath.split(value.text)
    return [grown] + [Value.of(posixpath.join(head, name[:k])) for k in range(1, min(len(name), 255))]


def _local_url(value: Value) -> Value | None:
    """The local file a URL operand names (file://, or a plain path); None for a remote URL."""
    text = value.text if value.text is not None else value.prefix
    m = _SCHEME.match(text)
    if m and m.group(1).lower() != "file":
        return None
    if value.text is None:
        return value
    if m:
        rest = re.sub(r"^file:(//(localhost)?)?", "", text, flags=re.I)
        return Value.of(rest if rest.startswith("/") else "/" + rest)
    if REMOTE.match(text):
        return None
    return value


def _separate(opt: OptionSpec, args: list[Value], i: int) -> bool:
    """Whether the next word is also the value of an option whose value is attached (BSD sed's `-i ''`)."""
    text = args[i].text if i < len(args) else None
    return opt.separate is not None and text is not None and re.fullmatch(opt.separate, text) is not None


def _may_be_option(v: Value) -> bool:
    """Whether an unknown word may start with '-' (or split into words that do)."""
    if v.under or v.pipe or v.numeric:
        return False
    return v.multi or not v.prefix or v.prefix.startswith("-")


def _union(a: tuple[str, ...] | None, b: tuple[str, ...] | None) -> tuple[str, ...] | None:
    return None if a is None or b is None else tuple(dict.fromkeys(a + b))


def _joined(vals: list[Value]) -> Value:
    """The words `vals` joined by spaces, as eval reads them again: unknown where one is a glob's matches, whose names
    on disk become code (a file named `$(curl URL|sh).txt` runs in `eval echo *.txt`)."""
    texts = [v.text for v in vals]
    if any(t is None for t in texts):
        bad = next(v for v in vals if v.text is None)
        return replace(bad, multi=False)
    globbed = next((v.pattern for v in vals if v.pattern is not None), None)
    if globbed is not None:
        return Value.unknown(f"the names {globbed} matches on disk, which are read again as code")
    return Value.of(" ".join(t for t in texts if t is not None))


def _replace(word: Value, marker: str, item: Value) -> Value:
    if word.text is None or marker not in word.text:
        return word
    if word.text == marker or (word.text.startswith(marker) and item.under):
        return item
    if item.text is not None:
        return Value.of(word.text.replace(marker, item.text))
    return Value.unknown(item.reason or "an input word", stream=item.stream)


# jq's and yq's environment (`env`, `$ENV`, `env(NAME)`, `strenv(NAME)`; `.env` is a field), and `$NAME` or `${NAME}`
# in any query (envsubst's SHELL-FORMAT, a jq variable of that name: the restrictive reading)
_ENV_QUERY = re.compile(r"\$ENV\b|(?<![\w$.\"])(?:str)?env\b")
_QUERY_VARIABLE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")


# yq's functions that read a file (load, load_str, load_xml, load_props, load_base64...): its name, when the call
# spells it as a plain string
_LOAD_CALL = re.compile(r"\bload(?:_\w+)?\s*\(")
_LOAD_LITERAL = re.compile(r'\bload(?:_\w+)?\s*\(\s*"([^"\\]*)"\s*\)')


def _query_loads(query: Value) -> list[Value]:
    """The files a query's text may read (yq's load functions): a name spelled as a plain string, else unknown."""
    if query.text is None:
        return [Value.unknown(f"a file an expression the analysis cannot read may load ({query.reason})")]
    named = [Value.of(name) for name in _LOAD_LITERAL.findall(query.text)]
    if len(_LOAD_CALL.findall(query.text)) > len(named):
        named.append(Value.unknown("a file the expression loads by a name it computes"))
    return named


def _query_reads_environment(text: str | None, secret: Callable[[str | None], bool]) -> bool:
    """Whether a query language's text (jq, yq, envsubst) may print the environment or a secret variable of it."""
    if text is None:
        return True
    return bool(_ENV_QUERY.search(text)) or any(secret(name) for name in _QUERY_VARIABLE.findall(text))


def _path_like(value: Value) -> bool:
    """A word written as a path outside the working folder (absolute, from a home folder, or climbing out) or to
    a hidden file or folder in it, where the protected names of a project are (`.envrc`, `.claude/x`)."""
    text = value.text
    return text is not None and (text.startswith(("/", "~")) or any(
        c == ".." or (c.startswith(".") and c != ".") for c in text.split("/")))


def assign_slots(pattern: tuple[Slot, ...], operands: list[Value]) -> list[tuple[Value, tuple[str, ...]]]:
    """Give each operand the roles of its place in the pattern (one item may take any number)."""
    star = next((i for i, s in enumerate(pattern) if s.many), None)
    if star is None:
        return [(v, pattern[i].roles if i < len(pattern) else ("none",)) for i, v in enumerate(operands)]
    before, after = pattern[:star], pattern[star + 1:]
    if "command" in pattern[star].roles or "shell" in pattern[star].roles:
        after = ()
    out: list[tuple[Value, tuple[str, ...]]] = []
    n = len(operands)
    k_before = min(len(before), n)
    k_after = min(len(after), n - k_before)
    for i in range(k_before):
        out.append((operands[i], before[i].roles))
    middle = operands[k_before:n - k_after]
    out.extend((v, pattern[star].roles) for v in middle)
    for j, v in enumerate(operands[n - k_after:]):
        out.append((v, after[len(after) - k_after + j].roles))
    return out


_SPECIALS: dict[str, Callable[[Any, CommandSpec, Invocation], State]] = {
    "cd": Commands.sp_cd, "pushd": Commands.sp_cd, "popd": Commands.sp_popd, "eval": Commands.sp_eval,
    "source": Commands.sp_source, "alias": Commands.sp_alias, "set": Commands.sp_set, "shopt": Commands.sp_shopt,
    "trap": Commands.sp_trap, "read": Commands.sp_read, "env": Commands.sp_env, "xargs": Commands.sp_xargs,
    "busybox": Commands.sp_busybox, "watch": Commands.sp_watch, "ps": Commands.sp_ps,
}
# ps options whose value is the next word (a process list, a format, a user...), never BSD option letters
_PS_VALUE_OPTIONS = frozenset({"-o", "-O", "-p", "-q", "-u", "-U", "-g", "-G", "-t", "-C", "-s", "-k", "--sort",
                               "--format", "--pid", "--ppid", "--user", "--User", "--group", "--Group", "--tty",
                               "--sid", "--cols", "--columns", "--rows", "--lines", "-N", "--quick-pid"})
