"""Errors a person has to act on, each with a stable code, a place and a fix, grouped by who must act.

Every error class derives from exactly one group below, which gives its exit code; the actor that
contracts/error_catalogue.py gives each code must be the group's (tests/unit/test_error_catalogue.py)."""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


@dataclass(frozen=True)
class Pos:
    """A 1-based line and column span in some source text."""

    line: int
    col: int
    end_line: int = 0
    end_col: int = 0

    def shifted(self, line_offset: int, col_offset: int) -> "Pos":
        """Move a position found in an embedded text to the file that embeds it."""
        col = self.col + col_offset if self.line == 1 else self.col
        end_col = self.end_col + col_offset if self.end_line == 1 else self.end_col
        return Pos(self.line + line_offset, col, self.end_line + line_offset if self.end_line else 0, end_col)


NOWHERE = Pos(0, 0)


class Actor(Enum):
    """Who must act when the error is raised."""

    SPEC_AUTHOR = "spec author"   # the security engineer: the spec, its tables, contract or answers
    OPERATOR = "operator"         # who runs veriguard: flags, builds, keys, logs, approvals, data files
    ENVIRONMENT = "environment"   # the machine or a remote service: Java, Nagini, a model provider, an API key
    AGENT = "agent"               # the agent's proposed action cannot be read: it is denied; the agent re-plans
    BUG = "bug"                   # veriguard itself: report it


class VeriguardError(Exception):
    """Root of the errors that end a command with a message instead of a traceback. Raise a group (below)
    or a class of one; the root raised directly counts as an operator error (exit 2)."""

    actor = Actor.OPERATOR
    exit_code = 2

    def __init__(self, code: str, message: str, *, file: str = "", pos: Pos = NOWHERE, fix: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.file = file
        self.pos = pos
        self.fix = fix

    def located(self, file: str, line_offset: int = 0, col_offset: int = 0) -> "VeriguardError":
        """The same error, placed in `file` (positions shifted by the offsets). A copy, not a new call of the
        class: a subclass's __init__ may take other arguments and keep other attributes."""
        moved = type(self).__new__(type(self), *self.args)
        moved.__dict__.update(self.__dict__)
        moved.file = file
        moved.pos = self.pos.shifted(line_offset, col_offset) if self.pos.line else self.pos
        return moved

    def where(self) -> str:
        if not self.file:
            return ""
        if not self.pos.line:
            return self.file
        return f"{self.file}:{self.pos.line}:{self.pos.col}"

    def __str__(self) -> str:
        where = self.where()
        head = f"{where}: " if where else ""
        text = f"{head}error[{self.code}]: {self.message}"
        if self.fix:
            text += f"\n  fix: {self.fix}"
        return text

    def to_dict(self) -> dict[str, object]:
        return {"code": self.code, "message": self.message, "file": self.file,
                "line": self.pos.line, "col": self.pos.col, "fix": self.fix}


class SpecError(VeriguardError):
    """The spec, its tables, its contract text or the answers to its questions are wrong: the security
    engineer must fix them (exit 2)."""

    actor = Actor.SPEC_AUTHOR


class OperatorError(VeriguardError):
    """Who runs veriguard gave something unusable: an option, a build, a key, a log, an approval, a data
    file (exit 2)."""

    actor = Actor.OPERATOR


class EnvironmentProblem(VeriguardError):
    """The machine or a remote service lacks something: Java, Python 3.12, Nagini, a model package, an API
    key, the network (exit 3)."""

    actor = Actor.ENVIRONMENT
    exit_code = 3


class AgentInputError(VeriguardError):
    """The agent's proposed action (its output, a tool call, a policy argument) cannot be read: it is denied,
    and the agent re-plans. From the command line it is bad input (exit 2)."""

    actor = Actor.AGENT


class InternalError(VeriguardError):
    """veriguard itself is wrong (a generator, a frozen policy and its checker disagreeing): report it
    (exit 70)."""

    actor = Actor.BUG
    exit_code = 70


GROUPS: tuple[type[VeriguardError], ...] = (SpecError, OperatorError, EnvironmentProblem, AgentInputError,
                                            InternalError)


class ContractError(SpecError):
    """The contract text does not parse or does not type-check."""


class GeneratedCodeError(InternalError):
    """Code veriguard generated falls outside the allowlist for generated modules: nothing of it ran.

    Names and values from a spec are checked before any code is generated, so this is a bug in a
    generator; it ends the command as an internal error (exit 70) and names the construct."""
