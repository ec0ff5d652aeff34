"""Worker replies -> ProofResult, with counterexamples decoded and clauses named."""
from __future__ import annotations

import re
from typing import Any

from contracts.types import Type
from verify import counterexample as cx
from verify.verdicts import Diagnostic, ProofResult, Verdict

_CLAUSE = re.compile(r"#\s*((?:rule|property|decision|assume|domain|soundness|completeness)\b.*)$")


def clause_of(source_line: str) -> str:
    """The clause a generated contract line states (from its trailing comment), else the line itself."""
    m = _CLAUSE.search(source_line)
    return m.group(1).strip() if m else source_line.strip()


def from_worker(raw: dict[str, Any], *, file: str = "", params: list[tuple[str, Type]] | None = None) -> ProofResult:
    status = raw.get("status")
    seconds = float(raw.get("seconds", 0.0))
    diags = []
    for e in raw.get("errors", []):
        values = cx.decode(e.get("counterexample"), params) if e.get("counterexample") else None
        diags.append(Diagnostic(code=e.get("code", ""), message=e.get("message", ""), function=e.get("function", ""),
                                clause=clause_of(e.get("source", "")) if e.get("source") else e.get("reason", ""),
                                line=e.get("line", 0), col=e.get("col", 0), source=e.get("source", ""),
                                counterexample=values or None, file=file))
    if status == "proved":
        return ProofResult(Verdict.PROVED, (), seconds)
    if status == "failed":
        verdict = Verdict.REFUTED if any(d.counterexample for d in diags) else Verdict.UNKNOWN
        detail = "counterexample found" if verdict is Verdict.REFUTED else "could not prove; no counterexample"
        return ProofResult(verdict, tuple(diags), seconds, detail)
    if status == "timeout":
        return ProofResult(Verdict.TIMEOUT, tuple(diags), seconds, raw.get("message", "Silicon timed out"))
    if status == "killed":
        return ProofResult(Verdict.TIMEOUT, tuple(diags), seconds, raw.get("message", "killed at the wall-clock limit"))
    if status == "translation_error":
        return ProofResult(Verdict.ERROR, tuple(diags), seconds, "translation error: the file is outside the subset "
                           "Nagini verifies")
    message = raw.get("message", "the verifier crashed")
    extra = {"stderr": raw.get("stderr", [])} if raw.get("stderr") else {}
    crash = [Diagnostic(code="verify.backend.crash", message=message + (": " + "; ".join(
        str(e.get("message", "")) for e in raw.get("errors", [])) if raw.get("errors") else ""), file=file)]
    return ProofResult(Verdict.ERROR, tuple(crash), seconds, "verifier crashed", extra=extra)
