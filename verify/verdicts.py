"""Verdicts and diagnostics: what a verifier or a gate concluded, as values (never a bool).

One vocabulary from a single proof obligation to the certificate: the Nagini proof, each z3 finding,
each property, each spec example, each gate. A gate states a claim ("the policy decides every example
as the spec says", "the contract kills enough mutants"); its verdict says how that claim stands.

Precedence (`worst`), most severe first, and why:
  REFUTED      the claim is shown false: by a concrete input, or (for a claim that some input exists) by
               a proof that none does. It is the only verdict that is a fact about the policy rather
               than about the run, and nothing else in the run can undo it.
  ERROR        a tool failed or its input was ill-formed: the run is no evidence of anything, and the
               tool must be fixed before any other verdict of the run can be trusted.
  TIMEOUT      a tool ran out of time: the same question may be answered with more time.
  UNKNOWN      the tool ran to the end and could not decide (verifier incompleteness, a model not
               replayed): a person must look.
  NOT_CHECKED  the check did not run (disabled, nothing to check, or an earlier step failed); it is
               usually a consequence of one of the above, so it never hides them.
  PASSED       tested on every input tried, without failure: evidence, not a proof.
  PROVED       proved for every input in the domain.
A certificate is PROVED only when the worst verdict of its gates `holds` and the proof is PROVED.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import Enum
from typing import Any, Iterable


class Verdict(str, Enum):
    PROVED = "PROVED"            # the verifier ran to the end and proved every clause
    PASSED = "PASSED"            # a test gate found no failure on any input it ran (evidence, not proof)
    NOT_CHECKED = "NOT_CHECKED"  # the check did not run
    UNKNOWN = "UNKNOWN"          # not proved and no counterexample reproduces (or none was replayed)
    TIMEOUT = "TIMEOUT"          # the tool ran out of time (Silicon timeout, a hard kill, the test wall clock)
    ERROR = "ERROR"              # the input could not be translated, or a tool crashed
    REFUTED = "REFUTED"          # the claim is shown false (a concrete input, or a proof that none exists)


_SEVERITY = (Verdict.PROVED, Verdict.PASSED, Verdict.NOT_CHECKED, Verdict.UNKNOWN, Verdict.TIMEOUT, Verdict.ERROR,
             Verdict.REFUTED)


def worst(verdicts: Iterable[Verdict]) -> Verdict:
    """The most severe verdict (see the module docstring); NOT_CHECKED when there is none, never PROVED."""
    return max(verdicts, key=_SEVERITY.index, default=Verdict.NOT_CHECKED)


def holds(verdict: Verdict) -> bool:
    """True for the verdicts a certified build may carry: PROVED, and PASSED for test gates."""
    return verdict in (Verdict.PROVED, Verdict.PASSED)


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
    confirmed: bool | None = None          # the replay: True reproduces, False does not, None not replayed
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
    cache: dict[str, Any] | None = None   # how the proof cache answered (verify.proof_cache); None: not asked

    def to_dict(self) -> dict[str, Any]:
        out = {"verdict": self.verdict.value, "detail": self.detail, "seconds": round(self.seconds, 3),
               "tool": self.tool, "diagnostics": [d.to_dict() for d in self.diagnostics]}
        return out | ({"cache": self.cache} if self.cache is not None else {})
