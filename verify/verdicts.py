"""Verdicts and diagnostics: what a verifier or a gate concluded, as values (never a bool)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any


class Verdict(str, Enum):
    PROVED = "PROVED"      # the verifier ran to the end and proved every clause
    REFUTED = "REFUTED"    # a clause fails, with a counterexample
    UNKNOWN = "UNKNOWN"    # a clause could not be proved and no counterexample reproduces: incompleteness
    TIMEOUT = "TIMEOUT"    # the verifier ran out of time (Silicon timeout or a hard kill)
    ERROR = "ERROR"        # the file could not be translated, or the verifier crashed


_ORDER = [Verdict.PROVED, Verdict.UNKNOWN, Verdict.TIMEOUT, Verdict.ERROR, Verdict.REFUTED]


def worst(verdicts: list[Verdict]) -> Verdict:
    return max(verdicts, key=_ORDER.index) if verdicts else Verdict.PROVED


@dataclass(frozen=True)
class Diagnostic:
    code: str
    message: str
    function: str = ""
    clause: str = ""                       # e.g. "property nursing_no_diagnosis", or the contract line
    line: int = 0
    col: int = 0
    source: str = ""
    counterexample: dict[str, Any] | None = None   # flat argument values, JSON-able
    confirmed: bool | None = None          # True: the counterexample reproduces on the running policy
    file: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ProofResult:
    verdict: Verdict
    diagnostics: tuple[Diagnostic, ...] = ()
    seconds: float = 0.0
    detail: str = ""           # e.g. "translation error", "verifier crashed", "Silicon timed out after 120 s"
    tool: str = "nagini"
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict.value, "detail": self.detail, "seconds": round(self.seconds, 3),
                "tool": self.tool, "diagnostics": [d.to_dict() for d in self.diagnostics], **self.extra}
