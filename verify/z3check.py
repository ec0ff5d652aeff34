"""Checks of a contract on its own, with z3, before any policy code exists.

Lists are modelled with at most `bound` elements, so a finding of "cannot happen" holds up to
that size; the Nagini proof of the policy is unbounded.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

from veriguard.contracts import ast as A
from veriguard.contracts.check import Contract
from veriguard.contracts.errors import NOWHERE, Pos
from veriguard.contracts.runtime_support import flatten_arguments
from veriguard.contracts.schema import argument_schema
from veriguard.contracts.to_python import compile_checker
from veriguard.contracts.to_z3 import Z3Encoding
from veriguard.verify.verdicts import Verdict


@dataclass(frozen=True)
class Finding:
    check: str          # satisfiable | can_fire | can_hold | not_deny_all | not_allow_all | not_shadowed | property
    subject: str
    verdict: Verdict    # PROVED: it holds; REFUTED: it does not (`witness` shows a property failing, or z3
                        # proved that no input exists); UNKNOWN: z3 gave up; ERROR: z3 and the checker disagree
    message: str
    witness: dict[str, Any] | None = None
    pos: Pos = field(default=NOWHERE, compare=False)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["verdict"] = self.verdict.value
        d["line"], d["col"] = self.pos.line, self.pos.col
        del d["pos"]
        return d


@dataclass(frozen=True)
class Z3Report:
    findings: tuple[Finding, ...]
    seconds: float
    bound: int

    def failed(self, *checks: str) -> list[Finding]:
        return [f for f in self.findings if f.verdict is not Verdict.PROVED and (not checks or f.check in checks)]


class _Solver:
    def __init__(self, enc: Z3Encoding, timeout_ms: int) -> None:
        self.enc = enc
        self.timeout_ms = timeout_ms

    def witness(self, *constraints: Any) -> tuple[bool | None, dict[str, Any] | None]:
        """(True, an input) when some input in the domain meets `constraints`, (False, None) when none
        does, (None, None) when z3 gives up."""
        z3 = self.enc.z3
        s = z3.Solver(ctx=self.enc.ctx)
        s.set("timeout", self.timeout_ms)
        s.add(self.enc.domain(), *constraints)
        r = s.check()
        if r == z3.sat:
            return True, self.enc.arguments(s.model())
        if r == z3.unsat:
            return False, None
        return None, None


def _some_input(*, found: bool | None) -> Verdict:
    """The verdict of a claim "some input does this" (an input proves it; unsat refutes it)."""
    return Verdict.UNKNOWN if found is None else Verdict.PROVED if found else Verdict.REFUTED


def _exists(sv: _Solver, check: str, subject: str, pos: Pos, says: tuple[str, str], *constraints: Any) -> Finding:
    """A finding for a claim that some input meets `constraints`; `says` = (message if so, message if not)."""
    found, w = sv.witness(*constraints)
    message = says[0] if found else says[1] if found is False else f"z3 could not decide: {says[0]}"
    return Finding(check, subject, _some_input(found=found), message, w, pos)


def check_contract(contract: Contract, *, bound: int = 3, timeout_ms: int = 20000) -> Z3Report:
    t0 = time.monotonic()
    enc = Z3Encoding(contract, bound)
    z3 = enc.z3
    sv = _Solver(enc, timeout_ms)
    first = _exists(sv, "satisfiable", "", contract.assumes[0].pos if contract.assumes else NOWHERE,
                    ("some input satisfies the argument domains and assumptions",
                     "no input satisfies the argument domains and assumptions: every request would be out of domain"))
    out = [first]
    if first.verdict is not Verdict.PROVED:
        return Z3Report(tuple(out), time.monotonic() - t0, bound)

    holds = {d.id: enc.holds(d.id) for d in contract.rules}
    for d in contract.rules:
        out.append(_exists(sv, "can_fire", d.id, d.pos, (
            f"rule {d.id} can be violated",
            f"rule {d.id} can never be violated: it holds for every input (up to {bound} list items)"),
            z3.Not(holds[d.id])))
        out.append(_exists(sv, "can_hold", d.id, d.pos, (
            f"rule {d.id} can hold", f"rule {d.id} is violated by every input: it denies everything"), holds[d.id]))
    where = contract.rules[0].pos
    out.append(_exists(sv, "not_deny_all", "", where, (
        "some input is allowed", "no input is allowed: the rules contradict each other (deny-all)"), enc.allowed()))
    out.append(_exists(sv, "not_allow_all", "", where, (
        "some input is denied", "every input is allowed: the policy can never deny (allow-all)"),
        z3.Not(enc.allowed())))
    if len(contract.rules) > 1:
        for d in contract.rules:
            others = [holds[o.id] for o in contract.rules if o.id != d.id]
            out.append(_exists(sv, "not_shadowed", d.id, d.pos, (
                f"rule {d.id} alone can deny a request",
                f"rule {d.id} is shadowed: whenever it is violated another rule is too, so it never changes a "
                "decision"), z3.Not(holds[d.id]), *others))
    out += [_property(sv, contract, p, bound) for p in contract.properties]
    return Z3Report(tuple(out), time.monotonic() - t0, bound)


def _property(sv: _Solver, contract: Contract, p: A.Decl, bound: int) -> Finding:
    """PROVED when no input within the bound breaks the property; REFUTED with an input that does, once
    the runtime checker agrees; ERROR when the checker disagrees with z3 (a bug in one of them)."""
    found, w = sv.witness(sv.enc.z3.Not(sv.enc.expr(p.body)))
    if found is None:
        return Finding("property", p.id, Verdict.UNKNOWN, f"z3 could not decide property {p.id}", None, p.pos)
    if not found or w is None:
        return Finding("property", p.id, Verdict.PROVED,
                       f"property {p.id} follows from the rules (up to {bound} list items)", None, p.pos)
    checker = compile_checker(contract)
    flat = flatten_arguments(argument_schema(contract.signature), w)
    allowed, violations, denied = checker.spec_decision(**flat)
    failed = checker.failed_properties(**flat, vg_allowed=allowed, vg_violations=violations, vg_denied=denied)
    if p.id in failed:
        return Finding("property", p.id, Verdict.REFUTED,
                       f"property {p.id} does not follow from the rules; confirmed by the runtime checker", w, p.pos)
    return Finding("property", p.id, Verdict.ERROR, f"property {p.id} does not follow from the rules according to "
                   "z3, but the runtime checker does not confirm it on z3's input (report this as a bug)", w, p.pos)


def rules_needed(contract: Contract, p: A.Decl, *, bound: int = 3, rlimit: int = 50_000_000) -> tuple[str, ...] | None:
    """Rules whose definitions suffice for property `p`, up to `bound` list items: the rules in z3's unsat core
    of "the property fails" when each rule's definition is a tracked assumption (one query; a core is
    sufficient, not always the smallest). None when z3 cannot prove `p` from every rule. An item rule is in the
    answer whenever `p` names `denied(...)`, which reads the item rule's condition itself.

    A proof of `p` may then look into these rules only (Nagini's Reveal), so editing another rule leaves the
    proof unchanged. z3 runs under a step limit (not a time limit), so the same contract gives the same answer on
    any machine (`veriguard audit` compiles it again)."""
    rules = [d.id for d in contract.rules]
    names_denied = any(isinstance(e, A.Call) and e.kind == "denied" for e in A.walk(p.body))
    always = tuple(r.decl.id for r in contract.item_rules()) if names_denied else ()
    if not any(isinstance(e, A.Allowed) or isinstance(e, A.Call) and e.kind == "violated" for e in A.walk(p.body)):
        return always  # the property never mentions a decision a rule makes: no other rule's definition can matter
    enc = Z3Encoding(contract, bound)
    z3 = enc.z3
    bodies = {r: enc.holds(r) for r in rules}
    enc.hide(set(rules))
    s = z3.Solver(ctx=enc.ctx)
    s.set("rlimit", rlimit)
    s.set("core.minimize", True)
    s.add(enc.domain(), z3.Not(enc.expr(p.body)))
    tracks = {z3.Bool(f"definition of rule {r}", enc.ctx): r for r in rules}
    for t, r in tracks.items():
        s.add(z3.Implies(t, enc.hidden[r] == bodies[r]))
    if s.check(*tracks) != z3.unsat:
        return None
    core = {tracks[t] for t in s.unsat_core()} | set(always)
    return tuple(r for r in rules if r in core)
