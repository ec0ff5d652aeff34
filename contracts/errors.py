"""Errors a person has to act on, each with a stable code, a place and a fix."""
from __future__ import annotations

from dataclasses import dataclass


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


class VeriguardError(Exception):
    """Root of the errors that end a command with a message instead of a traceback."""

    exit_code = 2

    def __init__(self, code: str, message: str, *, file: str = "", pos: Pos = NOWHERE, fix: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.file = file
        self.pos = pos
        self.fix = fix

    def located(self, file: str, line_offset: int = 0, col_offset: int = 0) -> "VeriguardError":
        """The same error, placed in `file` (positions shifted by the offsets)."""
        pos = self.pos.shifted(line_offset, col_offset) if self.pos.line else self.pos
        return type(self)(self.code, self.message, file=file, pos=pos, fix=self.fix)

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
    """The spec, its tables or its contract text is wrong: the security engineer must fix it."""


class ContractError(SpecError):
    """The contract text does not parse or does not type-check."""


class EnvironmentProblem(VeriguardError):
    """The machine lacks something the verifier needs (Java, Python 3.12, nagini)."""

    exit_code = 3


class GeneratedCodeError(VeriguardError):
    """Code veriguard generated falls outside the allowlist for generated modules: nothing of it ran.

    Names and values from a spec are checked before any code is generated, so this is a bug in a
    generator; it ends the command like bad input (exit 2) and names the construct."""
