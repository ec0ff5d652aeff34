"""Do two contracts over the same arguments decide alike? z3 searches for inputs where they differ
(allowed, or a denied item), and the runtime checkers confirm each difference."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from veriguard.contracts.check import Contract
from veriguard.contracts.runtime_support import flatten_arguments
from veriguard.contracts.schema import argument_schema
from veriguard.contracts.to_python import compile_checker
from veriguard.contracts.to_z3 import Z3Encoding


@dataclass(frozen=True)
class Difference:
    args: dict[str, Any]
    formal: tuple[bool, list[str], list[Any]]
    other: tuple[bool, list[str], list[Any]]


def differences(formal: Contract, other: Contract, *, bound: int = 3, limit: int = 5,
                timeout_ms: int = 30000) -> list[Difference] | None:
    """Up to `limit` inputs on which the two contracts decide differently; [] when none exists up to
    `bound` list items; None when z3 gave up."""
    a = Z3Encoding(formal, bound)
    b = Z3Encoding(other, bound, ctx=a.ctx)  # one context: the same argument names are the same symbols
    z3 = a.z3
    differs = [a.allowed() != b.allowed()]
    if formal.item_rules() and other.item_rules():
        for name, (n, elems) in a.lists.items():
            for i, el in enumerate(elems):
                differs.append(a.all_of([i < n, a.is_denied(el) != b.is_denied(el)]))
    s = z3.Solver(ctx=a.ctx)
    s.set("timeout", timeout_ms)
    s.add(a.domain(), b.domain(), a.any_of(differs))
    checkers = compile_checker(formal), compile_checker(other)
    schema = argument_schema(formal.signature)
    out: list[Difference] = []
    while len(out) < limit:
        r = s.check()
        if r == z3.unknown:
            return None if not out else out
        if r == z3.unsat:
            return out
        model = s.model()
        args = a.arguments(model)
        flat = flatten_arguments(schema, args)
        out.append(Difference(args, checkers[0].spec_decision(**flat), checkers[1].spec_decision(**flat)))
        s.add(a.any_of([sym != model.eval(sym, model_completion=True) for sym in a.scalars.values()]))
    return out
