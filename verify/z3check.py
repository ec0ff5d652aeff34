"""Checks of a contract on its own, with z3, before any policy code exists.

Lists are modelled with at most `bound` elements, so a finding of "cannot happen" holds up to
that size; the Nagini proof of the policy is unbounded.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

from contracts.check import Contract
from contracts.errors import NOWHERE, Pos
from contracts.runtime_support import flatten_arguments
from contracts.schema import argument_schema
from contracts.to_python import compile_checker
from contracts.to_z3 import Z3Encoding


@dataclass(frozen=True)
class Finding:
    check: str          # satisfiable | can_fire | can_hold | not_deny_all | not_allow_all | not_shadowed | property
    subject: str
    ok: bool | None     # None: z3 gave up (unknown)
    message: str
    witness: dict[str, Any] | None = None
    pos: Pos = field(default=NOWHERE, compare=False)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["line"], d["col"] = self.pos.line, self.pos.col
        del d["pos"]
        return d


@dataclass(frozen=True)
class Z3Report:
    findings: tuple[Finding, ...]
    seconds: float
    bound: int

    def failed(self, *checks: str) -> list[Finding]:
        return [f for f in self.findings if f.ok is not True and (not checks or f.check in checks)]


class _Solver:
    def __init__(self, enc: Z3Encoding, timeout_ms: int) -> None:
        self.enc = enc
        self.timeout_ms = timeout_ms

    def witness(self, *constraints: Any) -> tuple[bool | None, dict[str, Any] | None]:
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


def check_contract(contract: Contract, *, bound: int = 3, timeout_ms: int = 20000) -> Z3Report:
    t0 = time.monotonic()
    enc = Z3Encoding(contract, bound)
    z3 = enc.z3
    sv = _Solver(enc, timeout_ms)
    out: list[Finding] = []

    ok, w = sv.witness()
    out.append(Finding("satisfiable", "", ok, "some input satisfies the argument domains and assumptions" if ok else
                       "no input satisfies the argument domains and assumptions: every request would be out of domain",
                       w, contract.assumes[0].pos if contract.assumes else NOWHERE))
    if not ok:
        return Z3Report(tuple(out), time.monotonic() - t0, bound)

    holds = {d.id: enc.holds(d.id) for d in contract.rules}
    for d in contract.rules:
        ok, w = sv.witness(z3.Not(holds[d.id]))
        out.append(Finding("can_fire", d.id, ok, f"rule {d.id} can be violated" if ok else
                           f"rule {d.id} can never be violated: it holds for every input (up to {bound} list items)",
                           w, d.pos))
        ok, w = sv.witness(holds[d.id])
        out.append(Finding("can_hold", d.id, ok, f"rule {d.id} can hold" if ok else
                           f"rule {d.id} is violated by every input: it denies everything", w, d.pos))
    ok, w = sv.witness(enc.allowed())
    out.append(Finding("not_deny_all", "", ok, "some input is allowed" if ok else
                       "no input is allowed: the rules contradict each other (deny-all)", w,
                       contract.rules[0].pos))
    ok, w = sv.witness(z3.Not(enc.allowed()))
    out.append(Finding("not_allow_all", "", ok, "some input is denied" if ok else
                       "every input is allowed: the policy can never deny (allow-all)", w, contract.rules[0].pos))
    if len(contract.rules) > 1:
        for d in contract.rules:
            others = [holds[o.id] for o in contract.rules if o.id != d.id]
            ok, w = sv.witness(z3.Not(holds[d.id]), *others)
            out.append(Finding("not_shadowed", d.id, ok, f"rule {d.id} alone can deny a request" if ok else
                               f"rule {d.id} is shadowed: whenever it is violated another rule is too, so it never "
                               "changes a decision", w, d.pos))
    checker = compile_checker(contract)
    schema = argument_schema(contract.signature)
    for p in contract.properties:
        ok, w = sv.witness(z3.Not(enc.expr(p.body)))
        message = (f"property {p.id} follows from the rules (up to {bound} list items)" if ok is False else
                   f"property {p.id} does not follow from the rules" if ok else f"z3 could not decide property {p.id}")
        if ok and w is not None:
            flat = flatten_arguments(schema, w)
            allowed, violations, denied = checker.spec_decision(**flat)
            failed = checker.failed_properties(**flat, vg_allowed=allowed, vg_violations=violations, vg_denied=denied)
            message += "; confirmed by the runtime checker" if p.id in failed else \
                "; NOT confirmed by the runtime checker (report this as a bug)"
        out.append(Finding("property", p.id, None if ok is None else not ok, message, w, p.pos))
    return Z3Report(tuple(out), time.monotonic() - t0, bound)
