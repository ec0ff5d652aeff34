"""Contract expressions -> Nagini specification text (Requires/Ensures/@Pure bodies).

Nagini's `in` on collections of strings or ints compares references, not values, so set
membership becomes `==` chains. Quantifiers over list arguments use the index form with an
explicit trigger, which Nagini verifies fastest (notes/nagini.md, section 3).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from veriguard.contracts import ast as A

RESULT = "ResultT(Decision)"


@dataclass(frozen=True)
class NaginiNames:
    """How names appear in the target code."""

    table: Callable[[str], str] = lambda name: f"table_{name}"
    length: Callable[[str], str] = lambda name: f"len({name})"
    result: str = RESULT
    bound: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> (value text, whole element text)
    code: bool = False  # True in function bodies: plain Python (no Implies), runnable once contracts are stripped
    rule_index: dict[str, int] = field(default_factory=dict)  # rule id -> its number in Decision.violations


def expr(e: A.Expr, names: NaginiNames = NaginiNames(), depth: int = 0) -> str:
    def sub(x: A.Expr) -> str:
        return expr(x, names, depth)

    if isinstance(e, A.Lit):
        return repr(e.value)
    if isinstance(e, A.Var):
        if e.binding == "bound":
            return names.bound[e.path[0]][0]
        return e.flat
    if isinstance(e, A.Not):
        return f"(not {sub(e.operand)})"
    if isinstance(e, A.BoolOp):
        return f"({sub(e.left)} {e.op} {sub(e.right)})"
    if isinstance(e, A.Implies):
        if names.code:
            return f"((not {sub(e.left)}) or {sub(e.right)})"
        return f"Implies({sub(e.left)}, {sub(e.right)})"
    if isinstance(e, (A.Compare, A.Arith)):
        return f"({sub(e.left)} {e.op} {sub(e.right)})"
    if isinstance(e, A.Member):
        x = sub(e.operand)
        op, join = ("!=", " and ") if e.negated else ("==", " or ")
        return "(" + join.join(f"{x} {op} {v.value!r}" for v in e.values) + ")"
    if isinstance(e, A.Neg):
        return f"(-{sub(e.operand)})"
    if isinstance(e, A.Call):
        if e.kind == "len":
            arg = e.args[0]
            assert isinstance(arg, A.Var)
            return names.length(arg.flat)
        if e.kind == "violated":
            arg = e.args[0]
            assert isinstance(arg, A.Var)
            return f"({names.rule_index[arg.path[0]]} in {names.result}.violations)"
        if e.kind == "denied":
            first = e.args[0]
            assert isinstance(first, A.Var)
            return f"({names.bound[first.path[0]][1]} in {names.result}.denied)"
        return f"{names.table(e.name)}(" + ", ".join(sub(a) for a in e.args) + ")"
    if isinstance(e, A.Quant):
        j = f"vg_j{depth}"
        element = f"{e.source}[{j}]"
        bound = dict(names.bound)
        if len(e.names) == 1:
            bound[e.names[0]] = (element, element)
        else:
            bound.update({n: (f"{element}[{k}]", element) for k, n in enumerate(e.names)})
        inner = NaginiNames(names.table, names.length, names.result, bound, names.code, names.rule_index)
        body = expr(e.body, inner, depth + 1)
        in_range = f"0 <= {j} and {j} < len({e.source})"
        if e.kind == "forall":
            return f"Forall(int, lambda {j}: (Implies({in_range}, {body}), [[{element}]]))"
        return f"Exists(int, lambda {j}: ({in_range} and {body}, [[{element}]]))"
    if isinstance(e, A.Allowed):
        return f"{names.result}.allowed"
    raise TypeError(e)
