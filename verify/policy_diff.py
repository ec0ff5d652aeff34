"""What one policy decides differently from another over the same arguments, found with z3.

Both contracts are encoded in one z3 context (contracts.to_z3, the encoding the gates use), so the
same argument is the same symbol. A policy allows an input exactly when the input is in its domain
(types, enums, `assume`s; outside it the frozen module refuses the input, which denies) and every rule
holds. Newly allowed: NEW allows, OLD denies; newly denied: the reverse. Each witness z3 finds is run
on both frozen policies (`Run`, given by the caller), which must decide as z3 says; a disagreement is
an ERROR verdict. Each spec's properties are also checked against the other policy's decision.
Inputs that both policies deny, for other rules or other denied items, are not counted as differences.

Lists are modelled with at most `bound` items, so "no difference" holds up to that size.
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from veriguard.contracts import ast as A
from veriguard.contracts.check import Contract
from veriguard.contracts.runtime_support import flatten_arguments
from veriguard.contracts.schema import argument_schema
from veriguard.contracts.signature import Signature
from veriguard.contracts.to_python import compile_checker
from veriguard.contracts.to_z3 import Z3Encoding
from veriguard.verify.verdicts import Verdict, worst


@dataclass(frozen=True)
class Outcome:
    """What a frozen policy did with one input: "decided" (allowed, violations, denied items), "rejected"
    (an argument outside the domain the proof covers: a denial), or "failed" (any other error: a denial)."""

    kind: str
    allowed: bool = False
    violations: tuple[str, ...] = ()
    denied: tuple[Any, ...] = ()
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "allowed": self.allowed, "violations": list(self.violations),
                "denied": [list(x) if isinstance(x, tuple) else x for x in self.denied], "reason": self.reason}


Run = Callable[[dict[str, Any]], Outcome]


@dataclass(frozen=True)
class Witness:
    arguments: dict[str, Any]
    reasons: tuple[str, ...]    # the denying side's failed rules, and `assume <id>` for failed assumptions
    old: Outcome
    new: Outcome
    problem: str = ""           # set when a frozen policy does not decide as z3 says

    def to_dict(self) -> dict[str, Any]:
        return {"arguments": self.arguments, "reasons": list(self.reasons), "old": self.old.to_dict(),
                "new": self.new.to_dict(), "problem": self.problem}


@dataclass(frozen=True)
class Direction:
    """The claim "no input is <name>" (newly_allowed: NEW allows nothing OLD denies): PROVED by unsat;
    REFUTED by witnesses both frozen policies confirm; UNKNOWN when z3 gave up; ERROR when a frozen
    policy disagrees with z3."""

    name: str
    verdict: Verdict
    message: str
    witnesses: tuple[Witness, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict.value, "message": self.message, "witnesses": [w.to_dict() for w in self.witnesses]}


@dataclass(frozen=True)
class PropertyCheck:
    """One spec's property against the other policy's decision: PROVED (it holds there too), REFUTED
    (a witness, confirmed on the other frozen policy), UNKNOWN, or ERROR (the frozen policy disagrees)."""

    owner: str       # "old" or "new": whose property
    id: str
    message: str
    verdict: Verdict
    witness: dict[str, Any] | None = None
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"owner": self.owner, "id": self.id, "message": self.message, "verdict": self.verdict.value,
                "witness": self.witness, "detail": self.detail}


@dataclass(frozen=True)
class PolicyDiff:
    bound: int
    newly_allowed: Direction
    newly_denied: Direction
    properties: tuple[PropertyCheck, ...]
    seconds: float = 0.0

    @property
    def same_decisions(self) -> bool:
        """Proved: the two policies allow exactly the same inputs (up to `bound` list items)."""
        return self.newly_allowed.verdict is Verdict.PROVED and self.newly_denied.verdict is Verdict.PROVED

    @property
    def verdict(self) -> Verdict:
        """PROVED when no input is decided differently and every property holds on both sides."""
        return worst([self.newly_allowed.verdict, self.newly_denied.verdict, *(p.verdict for p in self.properties)])

    def to_dict(self) -> dict[str, Any]:
        return {"bound": self.bound, "same_decisions": self.same_decisions, "verdict": self.verdict.value,
                "newly_allowed": self.newly_allowed.to_dict(), "newly_denied": self.newly_denied.to_dict(),
                "properties": [p.to_dict() for p in self.properties], "seconds": round(self.seconds, 3)}


def argument_difference(old: Signature, new: Signature) -> str | None:
    """The first difference between two policies' arguments (names, order and types), or None."""
    olds, news = [(a.name, a.type) for a in old.arguments], [(a.name, a.type) for a in new.arguments]
    for (on, ot), (nn, nt) in zip(olds, news):
        if on != nn:
            return f"argument {on!r} of OLD is {nn!r} in NEW at the same place"
        if ot != nt:
            return f"argument {on!r} has type {_show_type(ot)} in OLD and {_show_type(nt)} in NEW"
    if len(olds) != len(news):
        longer, which = (olds, "OLD") if len(olds) > len(news) else (news, "NEW")
        return f"only {which} has the argument {longer[min(len(olds), len(news))][0]!r}"
    return None


def _show_type(t: Any) -> str:
    values = getattr(t, "values", None)
    return f"{t} {{{', '.join(map(repr, values))}}}" if values else str(t)


class _DecidedBy(Z3Encoding):
    """`contract`'s expressions (arguments, tables) with the decision (allowed, violated, denied) of `other`,
    so that one policy's properties can be asked of the other policy's decisions."""

    def __init__(self, contract: Contract, other: Z3Encoding) -> None:
        super().__init__(contract, other.bound, ctx=other.ctx)
        self.other = other

    def allowed(self) -> Any:
        return self.other.allowed()

    def holds(self, rule_id: str) -> Any:  # a rule the other policy lacks is never reported as violated
        return self.other.holds(rule_id) if self.other.contract.rule(rule_id) else self.value(True)

    def is_denied(self, item: tuple[Any, ...]) -> Any:
        return self.other.is_denied(item)


class _Side:
    """One policy: its encoding, what it allows, and how its frozen module is run."""

    def __init__(self, label: str, enc: Z3Encoding, run: Run) -> None:
        self.label, self.enc, self.run = label, enc, run
        self.ok = enc.all_of([enc.domain(), enc.allowed()])

    def reasons(self) -> list[tuple[str, Any]]:
        """(name, z3 term that holds when it denies) for each assumption and rule."""
        enc, z3 = self.enc, self.enc.z3
        return [(f"assume {d.id}", z3.Not(enc.expr(d.body))) for d in enc.contract.assumes] + \
            [(d.id, z3.Not(enc.holds(d.id))) for d in enc.contract.rules]

    def expected(self, model: Any) -> tuple[str, tuple[str, ...]]:
        """What z3 says this policy does on `model`: ("rejected", failed assumptions) or ("decided", failed rules)."""
        enc, z3 = self.enc, self.enc.z3

        def true(term: Any) -> bool:
            return bool(z3.is_true(model.eval(term, model_completion=True)))

        failed_assumes = tuple(d.id for d in enc.contract.assumes if not true(enc.expr(d.body)))
        if failed_assumes:
            return "rejected", failed_assumes
        return "decided", tuple(d.id for d in enc.contract.rules if not true(enc.holds(d.id)))


def _disagreement(side: _Side, expected: tuple[str, tuple[str, ...]], got: Outcome) -> str:
    kind, ids = expected
    if got.kind == "failed":
        return f"the {side.label} frozen policy failed on z3's witness: {got.reason}"
    if kind == "rejected":
        return "" if got.kind == "rejected" else \
            f"z3 says the {side.label} policy's assumption(s) {', '.join(ids)} fail, but its frozen module decided " \
            f"allowed={got.allowed}"
    if got.kind == "rejected":
        return f"the {side.label} frozen policy refused z3's witness ({got.reason}), which z3 places in its domain"
    if got.allowed != (not ids) or set(got.violations) != set(ids):
        return f"z3 says the {side.label} policy violates {list(ids)}, its frozen module says " \
               f"allowed={got.allowed} violations={list(got.violations)}"
    return ""


def _solve(solver: Any, enc: Z3Encoding, *constraints: Any) -> tuple[Any, Any]:
    """(z3's answer, a model or None) for `constraints`; when there is a model, one whose lists hold at most
    one item is preferred (a witness a person can read)."""
    z3 = enc.z3
    small = [enc.all_of([n <= 1 for n, _ in enc.lists.values()])] if enc.lists else []
    model = None
    for extra in ([], small) if small else ([],):
        solver.push()
        solver.add(*constraints, *extra)
        r = solver.check()
        model = solver.model() if r == z3.sat else model
        solver.pop()
        if model is None:
            return r, None
    return z3.sat, model


def _witnesses(solver: Any, deny: _Side, allow: _Side, old: _Side, limit: int) -> tuple[bool | None, list[Witness]]:
    """Inputs `allow` allows and `deny` denies: (None when z3 gave up on whether one exists, witnesses).
    When one exists, one witness per reason `deny` has (an assumption or a rule that fails), with that reason
    alone failing where z3 finds such an input, so that each rule involved shows up on its own."""
    z3 = deny.enc.z3
    base = [allow.ok, z3.Not(deny.ok)]
    r, first = _solve(solver, deny.enc, *base)
    if first is None:
        return (None if r == z3.unknown else False), []
    reasons = deny.reasons()
    models = []
    for name, reason in reasons:
        others = [z3.Not(t) for n, t in reasons if n != name]
        _, alone = _solve(solver, deny.enc, *base, reason, *others)
        models.append(alone if alone is not None else _solve(solver, deny.enc, *base, reason)[1])
    found: list[Witness] = []
    seen: set[str] = set()
    for model in [m for m in models if m is not None] or [first]:
        args = deny.enc.arguments(model)
        key = json.dumps(args, sort_keys=True)
        if key not in seen and len(found) < limit:
            seen.add(key)
            found.append(_confirm(args, model, deny, allow, old))
    return True, found


def _confirm(args: dict[str, Any], model: Any, deny: _Side, allow: _Side, old: _Side) -> Witness:
    expected_deny = deny.expected(model)
    got_deny, got_allow = deny.run(args), allow.run(args)
    problem = _disagreement(deny, expected_deny, got_deny) or _disagreement(allow, ("decided", ()), got_allow)
    if not problem and (got_deny.allowed or not got_allow.allowed):
        problem = "the frozen policies do not differ on z3's witness"
    kind, ids = expected_deny
    reasons = tuple(f"assume {i}" for i in ids) if kind == "rejected" else ids
    pair = (got_deny, got_allow) if deny is old else (got_allow, got_deny)
    return Witness(args, reasons, pair[0], pair[1], problem)


def _direction(name: str, found: list[Witness], bound: int, says: tuple[str, str], *,
               decided: bool | None) -> Direction:
    if decided is None and not found:
        return Direction(name, Verdict.UNKNOWN, f"z3 could not decide whether {says[0]}")
    bad = [w for w in found if w.problem]
    if bad:
        return Direction(name, Verdict.ERROR, f"a frozen policy disagrees with z3: {bad[0].problem} (report this as "
                         "a bug)", tuple(found))
    if not found:
        return Direction(name, Verdict.PROVED, f"proved: no input is {says[1]} (z3: unsat, lists up to {bound} items)")
    return Direction(name, Verdict.REFUTED, f"{len(found)} witness(es) {says[1]}, each confirmed on both frozen policies",
                     tuple(found))


def _property(solver: Any, owner: str, d: A.Decl, mixed: _DecidedBy, domain: Any, contract: Contract,
              decider: _Side) -> PropertyCheck:
    """`d` (a property of `contract`) asked of `decider`'s decisions, on inputs both policies accept."""
    z3 = mixed.z3
    r, model = _solve(solver, mixed, domain, z3.Not(mixed.expr(d.body)))
    if r == z3.unknown:
        return PropertyCheck(owner, d.id, d.message, Verdict.UNKNOWN, detail="z3 could not decide")
    if model is None:
        return PropertyCheck(owner, d.id, d.message, Verdict.PROVED,
                             detail=f"holds for the {decider.label} policy (lists up to {mixed.bound} items)")
    args = mixed.arguments(model)
    got = decider.run(args)
    problem = _disagreement(decider, decider.expected(model), got)
    if not problem:
        flat = flatten_arguments(argument_schema(contract.signature), args)
        failed = compile_checker(contract).failed_properties(
            **flat, vg_allowed=got.allowed, vg_violations=list(got.violations), vg_denied=list(got.denied))
        problem = "" if d.id in failed else "the runtime checker does not confirm the failure on z3's witness"
    if problem:
        return PropertyCheck(owner, d.id, d.message, Verdict.ERROR, args, f"{problem} (report this as a bug)")
    return PropertyCheck(owner, d.id, d.message, Verdict.REFUTED, args,
                         f"fails for the {decider.label} policy; confirmed on its frozen module")


def diff_policies(old: Contract, new: Contract, run_old: Run, run_new: Run, *, bound: int = 3, limit: int = 8,
                  timeout_ms: int = 20000) -> PolicyDiff:
    """Compare two policies with the same arguments (check `argument_difference` first)."""
    assert argument_difference(old.signature, new.signature) is None
    t0 = time.monotonic()
    a = Z3Encoding(old, bound)
    b = Z3Encoding(new, bound, ctx=a.ctx)  # one context: the same argument is the same symbol
    z3 = a.z3
    s_old, s_new = _Side("OLD", a, run_old), _Side("NEW", b, run_new)
    solver = z3.Solver(ctx=a.ctx)
    solver.set("timeout", timeout_ms)
    decided, found = _witnesses(solver, s_old, s_new, s_old, limit)
    allowed = _direction("newly_allowed", found, bound, ("NEW allows an input OLD denies",
                                                         "allowed by NEW and denied by OLD"), decided=decided)
    decided, found = _witnesses(solver, s_new, s_old, s_old, limit)
    denied = _direction("newly_denied", found, bound, ("NEW denies an input OLD allows",
                                                       "denied by NEW and allowed by OLD"), decided=decided)
    both = a.all_of([a.domain(), b.domain()])
    props = [_property(solver, "old", d, _DecidedBy(old, b), both, old, s_new) for d in old.properties]
    props += [_property(solver, "new", d, _DecidedBy(new, a), both, new, s_old) for d in new.properties]
    return PolicyDiff(bound, allowed, denied, tuple(props), time.monotonic() - t0)
