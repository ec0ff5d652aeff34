"""Worker replies -> ProofResult, with counterexamples decoded and clauses named."""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from veriguard.contracts.types import Type
from veriguard.verify import counterexample as cx
from veriguard.verify.verdicts import Diagnostic, ProofResult, Verdict

MODEL_NOT_REPLAYED = "Nagini's counterexample model was not replayed on running code; it may be spurious"
TAIL_LINES = 12
_CLAUSE = re.compile(r"#\s*((?:rule|property|decision|assume|domain|soundness|completeness)\b.*)$")
# a lemma the synth did not send to Nagini: z3 refuted its property with an input that breaks it on the policy
NOT_SENT = "proof.not_sent"


def clause_of(source_line: str) -> str:
    """The clause a generated contract line states (from its trailing comment), else the line itself."""
    m = _CLAUSE.search(source_line)
    return m.group(1).strip() if m else source_line.strip()


def from_worker(raw: dict[str, Any], *, file: str = "", params: list[tuple[str, Type]] | None = None) -> ProofResult:
    seconds = float(raw.get("seconds", 0.0))
    diags = []
    for e in raw.get("errors", []):
        values = cx.decode(e.get("counterexample"), params) if e.get("counterexample") else None
        diags.append(Diagnostic(code=e.get("code", ""), message=e.get("message", ""), function=e.get("function", ""),
                                clause=clause_of(e.get("source", "")) if e.get("source") else e.get("reason", ""),
                                line=e.get("line", 0), col=e.get("col", 0), source=e.get("source", ""),
                                counterexample=values or None, file=file))
    return replace(_from_verifier(raw, diags, seconds, file), cache=raw.get("cache"))


def cache_note(cache: dict[str, Any] | None) -> str:
    """How the proof cache answered, in words ("" when it was not asked or had nothing)."""
    if not cache:
        return ""
    key = str(cache.get("key", ""))[:16]
    if cache.get("hit") == "file":
        return f"cached: the verifier's answer for this exact source, stored {cache.get('stored_at') or 'this run'} (key {key})"
    if cache.get("hit") == "functions":
        return f"cached: every function's proof is in the cache (key {key})"
    if cache.get("reused"):
        return (f"{len(cache.get('proved_now', []))} functions verified now, {len(cache['reused'])} proofs from the "
                f"cache (key {key})")
    return ""


def _from_verifier(raw: dict[str, Any], diags: list[Diagnostic], seconds: float, file: str) -> ProofResult:
    status = raw.get("status")
    if status == "proved":
        return ProofResult(Verdict.PROVED, (), seconds)
    if status == "failed":
        # a model is Nagini's claim, not a fact: only a replay on running code (synth.pipeline) makes it REFUTED
        detail = (MODEL_NOT_REPLAYED if any(d.counterexample for d in diags) else
                  f"could not prove; no counterexample model ({raw['models']})" if raw.get("models") else
                  "could not prove; no counterexample")
        return ProofResult(Verdict.UNKNOWN, tuple(diags), seconds, detail)
    if status == "timeout":
        return ProofResult(Verdict.TIMEOUT, tuple(diags), seconds, raw.get("message", "Silicon timed out"))
    if status == "killed":
        return ProofResult(Verdict.TIMEOUT, tuple(diags), seconds, raw.get("message", "killed at the wall-clock limit"))
    if status == "translation_error":
        return ProofResult(Verdict.ERROR, tuple(diags), seconds, "translation error: the file is outside the subset "
                           "Nagini verifies")
    return ProofResult(Verdict.ERROR, (crash_diagnostic(raw, file),), seconds, "verifier crashed")


def crash_diagnostic(raw: dict[str, Any], file: str) -> Diagnostic:
    """The crash, with the last lines the worker wrote (its stderr, or the trace of an exception it caught)."""
    message = str(raw.get("message", "the verifier crashed"))
    errors = [str(e.get("message", "")) for e in raw.get("errors", []) if e.get("message")]
    tail = [str(line) for line in raw.get("stderr") or []]
    tail += [line for e in raw.get("errors", []) for line in str(e.get("trace", "")).splitlines()]
    tail = [line[:300] for line in tail if line.strip()][-TAIL_LINES:]
    text = message + (": " + "; ".join(errors) if errors else "")
    if tail:
        text += f"\nlast {len(tail)} lines the verifier wrote:\n" + "\n".join(tail)
    return Diagnostic(code="verify.backend.crash", message=text, file=file)
