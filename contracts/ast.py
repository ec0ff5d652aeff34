"""The contract AST: one tree, compiled to Nagini, Python, z3 and Hypothesis.

Nodes are frozen. The parser leaves `ty` and the resolution fields empty; the checker
(`contracts.check`) returns a copy with them filled in, which is what the compilers read.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterator, Union

from veriguard.contracts.errors import NOWHERE, Pos
from veriguard.contracts.types import Type


@dataclass(frozen=True, kw_only=True)
class Node:
    pos: Pos = NOWHERE
    ty: Type | None = field(default=None, compare=False)


@dataclass(frozen=True, kw_only=True)
class Lit(Node):
    value: bool | int | str


@dataclass(frozen=True, kw_only=True)
class Var(Node):
    """`role`, `user.age`, or a name bound by a quantifier.

    After checking, `binding` is "arg", "field" or "bound" and `flat` is the parameter name
    the compiled policy uses (`user.age` -> `user_age`).
    """

    path: tuple[str, ...]
    binding: str = ""
    flat: str = ""


@dataclass(frozen=True, kw_only=True)
class Not(Node):
    operand: "Expr"


@dataclass(frozen=True, kw_only=True)
class BoolOp(Node):
    op: str  # "and" | "or"
    left: "Expr"
    right: "Expr"


@dataclass(frozen=True, kw_only=True)
class Implies(Node):
    left: "Expr"
    right: "Expr"


@dataclass(frozen=True, kw_only=True)
class Compare(Node):
    op: str  # == != < <= > >=
    left: "Expr"
    right: "Expr"


@dataclass(frozen=True, kw_only=True)
class Member(Node):
    """`x in {"a", "b"}`: membership in a constant set, compiled to `==` chains."""

    operand: "Expr"
    values: tuple[Lit, ...]
    negated: bool = False


@dataclass(frozen=True, kw_only=True)
class Arith(Node):
    op: str  # + | -
    left: "Expr"
    right: "Expr"


@dataclass(frozen=True, kw_only=True)
class Neg(Node):
    operand: "Expr"


@dataclass(frozen=True, kw_only=True)
class Call(Node):
    """A table lookup `permitted(role, db, col)` or a builtin: len, violated, denied.

    After checking, `kind` is "table", "len", "violated" or "denied".
    """

    name: str
    args: tuple["Expr", ...]
    kind: str = ""


@dataclass(frozen=True, kw_only=True)
class Quant(Node):
    """`forall (db, col) in accessed: body` over a list argument."""

    kind: str  # "forall" | "exists"
    names: tuple[str, ...]
    source: str
    body: "Expr"
    source_pos: Pos = NOWHERE


@dataclass(frozen=True, kw_only=True)
class Allowed(Node):
    """The decision's `allowed` flag; only properties may mention the decision."""


Expr = Union[Lit, Var, Not, BoolOp, Implies, Compare, Member, Arith, Neg, Call, Quant, Allowed]


@dataclass(frozen=True, kw_only=True)
class Decl:
    kind: str  # "rule" | "property" | "assume"
    id: str
    message: str
    body: Expr
    pos: Pos = NOWHERE
    id_pos: Pos = NOWHERE


def children(e: Expr) -> Iterator[Expr]:
    """The direct sub-expressions of `e`."""
    if isinstance(e, (Not, Neg)):
        yield e.operand
    elif isinstance(e, (BoolOp, Implies, Compare, Arith)):
        yield e.left
        yield e.right
    elif isinstance(e, Member):
        yield e.operand
        yield from e.values
    elif isinstance(e, Call):
        yield from e.args
    elif isinstance(e, Quant):
        yield e.body


def walk(e: Expr) -> Iterator[Expr]:
    """`e` and all its sub-expressions, parents first."""
    yield e
    for c in children(e):
        yield from walk(c)


def literals(e: Expr) -> Iterator[Lit]:
    return (n for n in walk(e) if isinstance(n, Lit))


def has_quantifier(e: Expr) -> bool:
    return any(isinstance(n, Quant) for n in walk(e))


def render(e: Expr) -> str:
    """The contract-language text of `e` (fully parenthesised where it matters)."""
    if isinstance(e, Lit):
        if isinstance(e.value, bool):
            return "true" if e.value else "false"
        if isinstance(e.value, str):
            return '"' + e.value.replace("\\", "\\\\").replace('"', '\\"') + '"'
        return str(e.value)
    if isinstance(e, Var):
        return ".".join(e.path)
    if isinstance(e, Not):
        return f"not {_paren(e.operand)}"
    if isinstance(e, BoolOp):
        return f"{_paren(e.left)} {e.op} {_paren(e.right)}"
    if isinstance(e, Implies):
        return f"{_paren(e.left)} ==> {_paren(e.right)}"
    if isinstance(e, Compare):
        return f"{_paren(e.left)} {e.op} {_paren(e.right)}"
    if isinstance(e, Member):
        op = "not in" if e.negated else "in"
        return f"{_paren(e.operand)} {op} {{" + ", ".join(render(v) for v in e.values) + "}"
    if isinstance(e, Arith):
        return f"{_paren(e.left)} {e.op} {_paren(e.right)}"
    if isinstance(e, Neg):
        return f"-{_paren(e.operand)}"
    if isinstance(e, Call):
        return f"{e.name}(" + ", ".join(render(a) for a in e.args) + ")"
    if isinstance(e, Quant):
        names = e.names[0] if len(e.names) == 1 else "(" + ", ".join(e.names) + ")"
        return f"{e.kind} {names} in {e.source}: {render(e.body)}"
    if isinstance(e, Allowed):
        return "allowed"
    raise TypeError(e)


def _paren(e: Expr) -> str:
    simple = isinstance(e, (Lit, Var, Call, Allowed))
    return render(e) if simple else f"({render(e)})"


def map_positions(obj: object, f: "Callable[[Pos], Pos]") -> object:
    """A copy of a node (or tuple of nodes) with every position passed through `f`."""
    import dataclasses

    if isinstance(obj, Pos):
        return f(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        changes = {fl.name: map_positions(getattr(obj, fl.name), f) for fl in dataclasses.fields(obj) if fl.name != "ty"}
        return dataclasses.replace(obj, **changes)  # type: ignore[misc]  # mypy 1.5: is_dataclass does not narrow
    if isinstance(obj, tuple):
        return tuple(map_positions(x, f) for x in obj)
    return obj
