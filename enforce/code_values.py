"""The abstract values of an agent's program: what an expression may evaluate to, joined as unions.

Used by the code interpreter (enforce/code_interpreter.py), the tool tables and the SQL reader, with
the two ways they all refuse: `fail` (a stable code and the place) and `unanalysable` (a construct
outside the subset they follow), both an ExtractionError.
"""
from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import NoReturn

from veriguard.enforce.extract_errors import ExtractionError

HOLE = "\x00"  # stands for a run-time value inside a string template
EMPTY: frozenset[str] = frozenset()
MAX_SIZE = 1_000   # nodes of a value read as a tree: joins, comparisons and walks cost that much
MAX_FIELDS = 64    # a longer tuple keeps what it holds, not where


@dataclass(frozen=True)
class Val:
    """What an expression may evaluate to; every field is a possibility, so joins are unions.

    Val() is no value at all: the expression raises (an unbound name) and nothing after it runs.
    `pipes` False: the run-time part holds no `||` (EHRAgent's FilterDB separator) unless the database does: it comes
    straight from the database or a tool, is a number or one character, or a part of such a value; True: the program
    may have composed its text (OTHER). DATUM is a run-time value with `pipes` False.
    """
    tables: frozenset[str] = EMPTY  # a (possibly filtered) table of one of these databases
    rows: frozenset[str] = EMPTY    # one row of one of these databases
    texts: frozenset[str] = EMPTY   # one of these strings, HOLE marking run-time parts
    other: bool = False             # any other run-time value (its parts are such values too)
    items: Val | None = None        # an immutable sequence (tuple, iterator) whose elements may be this
    fields: tuple[Val, ...] | None = None  # a fixed-length tuple, position by position
    funcs: frozenset[str] = EMPTY   # known callables and modules: tool:X, builtin:X, lib:X, user:N
    locs: frozenset[int] = frozenset()  # a container made at one of these places; elements in the heap
    pipes: bool = False             # a run-time part (the value when `other`, a HOLE of `texts`) may hold `||`
    size: int = field(default=1, init=False, compare=False, repr=False)  # nodes, shared parts counted each time

    def __post_init__(self) -> None:
        """Refuse a value whose tree outgrows MAX_SIZE: parts are shared, so `u = (u, u)` repeated doubles the
        tree each time while its memory stays small, and every join, comparison or walk of it would follow it.
        A tuple's positions are also what it holds (`items`): whatever reads a sequence through `items` (an index, a
        method, an attribute) then sees them; `Val(fields=(k, v))` with no items read as nothing, as if it raised."""
        if self.fields is not None and self.items is None and self.fields:
            object.__setattr__(self, "items", join_all(self.fields))
        size = 1 + (self.items.size if self.items is not None else 0) + sum(f.size for f in self.fields or ())
        if size > MAX_SIZE:
            raise ExtractionError("extract.code.unanalysable", f"unanalysable code: a value nested too deeply "
                                  f"(more than {MAX_SIZE:,} parts; tuples of tuples, zip of zips)")
        object.__setattr__(self, "size", size)
        if self.pipes and not self.other and not any(HOLE in t for t in self.texts):
            object.__setattr__(self, "pipes", False)  # no run-time part: the texts themselves are read as they are


OTHER = Val(other=True, pipes=True)  # any run-time value: text the program composed may hold `||`
DATUM = Val(other=True)  # a run-time value the program did not compose (see `pipes`): a number, a tool's result
STORED = Val(other=True, pipes=True)  # a stored value the schema does not declare free of `||` (Interpreter.stored)
NOTHING = Val()
ADJACENT = re.compile(r"\|\x00|\x00\||\x00\x00")  # a HOLE next to `|` or to another HOLE


def join(a: Val, b: Val) -> Val:
    if a == b or b == NOTHING:
        return a
    if a == NOTHING:
        return b
    if a.fields is not None and b.fields is not None and len(a.fields) == len(b.fields):
        fields, items = tuple(map(join, a.fields, b.fields)), _either(a.items, b.items)
    else:  # positions no longer line up: what they hold becomes what the sequence may yield
        fields, items = None, _either(_sequence(a), _sequence(b))
    return Val(a.tables | b.tables, a.rows | b.rows, a.texts | b.texts, a.other or b.other, items, fields,
               a.funcs | b.funcs, a.locs | b.locs, a.pipes or b.pipes)


def _either(a: Val | None, b: Val | None) -> Val | None:
    return a if b is None else b if a is None else join(a, b)


def _sequence(value: Val) -> Val | None:
    """What the value's sequence part may yield, its fixed positions included; None when it has none."""
    if value.fields is None:
        return value.items
    return join_all(([value.items] if value.items is not None else []) + list(value.fields))


def join_all(values: Iterable[Val]) -> Val:
    out = NOTHING
    for value in values:
        out = join(out, value)
    return out


def widen(old: Val, new: Val) -> Val:
    """Make a loop settle: strings that keep changing become run-time values."""
    if old == new:
        return new
    moved = new.texts != old.texts
    fields = new.fields if new.fields == old.fields else None
    items = new.items if fields is not None else _sequence(new)
    items = items if old.items is None or items is None else widen(old.items, items)
    return Val(new.tables, new.rows, EMPTY if moved else new.texts, new.other or moved, items, fields, new.funcs,
               new.locs, new.pipes or moved)


def container(elements: Sequence[Val], *, positional: bool) -> Val:
    keep = positional and len(elements) <= MAX_FIELDS
    return Val(items=join_all(elements), fields=tuple(elements) if keep else None)


def is_text(value: Val) -> bool:
    return value == Val(texts=value.texts, pipes=value.pipes) and bool(value.texts)


def may_split(value: Val) -> bool:
    """Whether the value itself (not what it holds) may be text with `||` in it: a run-time part the program
    composed, a text that has one, or a run-time part next to a `|` or to another one (`'|' + x`, x ends in `|`)."""
    return value.pipes or any("||" in t or ADJACENT.search(t) for t in value.texts)


def single_text(value: Val) -> str | None:
    if is_text(value) and len(value.texts) == 1:
        text = next(iter(value.texts))
        return None if HOLE in text else text
    return None


def fail(code: str, where: str, message: str) -> NoReturn:
    raise ExtractionError(code, f"{where}: {message}")



def unanalysable(node: ast.AST | None, construct: str) -> NoReturn:
    raise ExtractionError("extract.code.unanalysable", f"unanalysable code: {construct} at {at(node)}")


def at(node: ast.AST | None) -> str:
    return f"line {getattr(node, 'lineno', 1)}:{getattr(node, 'col_offset', 0) + 1}"


@functools.lru_cache(maxsize=4096)  # a node is read again each round; unparsing is slow
def snippet(node: ast.AST) -> str:
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= 100 else text[:97] + "..."
