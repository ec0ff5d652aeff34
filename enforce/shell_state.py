"""What the analysis of a shell command knows at a point of the script: the working directories,
the variables the command set, the positional arguments; and where a command's input comes from."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from veriguard.enforce.shell_words import Value


@dataclass
class State:
    cwds: tuple[str, ...] | None                      # the possible working directories; None: unknown
    vars: dict[str, Value] = field(default_factory=dict)
    positional: tuple[Value, ...] | None = None      # $0, $1, ... inside `sh -c`; None: unknown
    functions: frozenset[str] = frozenset()
    opaque: str = ""                                  # why every variable may have changed
    loose_glob: bool = False                          # dotglob or the like may be on

    def copy(self) -> "State":
        return replace(self, vars=dict(self.vars))

    def key(self) -> tuple[Any, ...]:
        return (self.cwds, tuple(sorted(self.vars.items(), key=lambda kv: kv[0])), self.positional, self.functions,
                self.opaque, self.loose_glob)


def merge(states: list[State]) -> State:
    """A state that covers each of `states` (the branches of an if, the runs of a loop...)."""
    first = states[0]
    cwds: tuple[str, ...] | None = ()
    for s in states:
        cwds = None if cwds is None or s.cwds is None else tuple(dict.fromkeys(cwds + s.cwds))
    names = set().union(*(s.vars for s in states))
    merged: dict[str, Value] = {}
    for name in names:
        vals = {s.vars.get(name) for s in states}
        only = vals.pop() if len(vals) == 1 else None
        merged[name] = only if only is not None else Value.unknown(f"${name} is set differently on different paths")
    positional = first.positional if all(s.positional == first.positional for s in states) else None
    return State(cwds, merged, positional, frozenset().union(*(s.functions for s in states)),
                 next((s.opaque for s in states if s.opaque), ""), any(s.loose_glob for s in states))


def with_cwds(st: State, *others: State) -> State:
    """`st`, also allowing the working directories of `others` (a `cd` that may have failed)."""
    out = st.copy()
    for o in others:
        out.cwds = None if out.cwds is None or o.cwds is None else tuple(dict.fromkeys(out.cwds + o.cwds))
    return out


class IO(NamedTuple):
    stdin: str = "inherit"          # inherit | pipe | file | text
    data: Value | None = None       # pipe: what the previous stage prints; text: the text


@dataclass
class Invocation:
    """One simple command being analysed: its words, where it runs, what it found."""

    name: str
    args: list[Value]
    st: State
    io: IO
    cwds: tuple[str, ...] | None
    env: dict[str, Value] = field(default_factory=dict)   # `NAME=value cmd`: set for this command only
    phrases: list[str] = field(default_factory=list)
    repositories: list[Value] = field(default_factory=list)  # named by --git-dir / GIT_DIR (beside the search)
    files: list[Value] = field(default_factory=list)         # configuration files named by the environment
    into: list[Value] = field(default_factory=list)          # folders its sources are put in (role "into")
    unpack: list[Value] = field(default_factory=list)        # folders an archive's members land in (role "unpack")
    roles: dict[str, str] = field(default_factory=dict)      # roles its settings changed (init.templateDir)
    builds: bool = False     # a build or test tool: what it writes whole is the project's code's doing, not links it puts
