"""Contract -> Hypothesis strategies for the policy's arguments (nested, JSON-shaped).

Values are drawn mostly from the constants the contract and its tables mention, so that
every rule gets inputs that make it fire and inputs that keep it quiet, and partly at random.
"""
from __future__ import annotations

from typing import Any

from veriguard.contracts import ast as A
from veriguard.contracts.check import Contract
from veriguard.contracts.types import BoolT, EnumT, IntT, ListT, RecordT, Scalar, TupleT


def constant_pools(c: Contract) -> tuple[list[str], list[int]]:
    strs: set[str] = set()
    ints: set[int] = set()
    decls = c.assumes + c.rules + c.properties
    for d in decls:
        for lit in A.literals(d.body):
            if isinstance(lit.value, str):
                strs.add(lit.value)
            elif isinstance(lit.value, int) and not isinstance(lit.value, bool):
                ints.update((lit.value - 1, lit.value, lit.value + 1))
    for t in c.signature.tables:
        for key, value in t.rows:
            for v in (*key, value):
                if isinstance(v, str):
                    strs.add(v)
                elif isinstance(v, int) and not isinstance(v, bool):
                    ints.add(v)
    return sorted(strs), sorted(ints)


def _row_guided(c: Contract, source: str, arity: int) -> list[tuple[Any, ...]]:
    """Element tuples built from table rows, for lists whose elements are looked up in a table."""
    out: list[tuple[Any, ...]] = []
    for d in c.rules + c.properties:
        for q in (n for n in A.walk(d.body) if isinstance(n, A.Quant) and n.source == source):
            for call in (n for n in A.walk(q.body) if isinstance(n, A.Call) and n.kind == "table"):
                table = c.signature.table(call.name)
                assert table is not None
                positions = {}
                for p, arg in enumerate(call.args):
                    if isinstance(arg, A.Var) and arg.binding == "bound" and arg.path[0] in q.names:
                        positions[q.names.index(arg.path[0])] = p
                if len(positions) == arity:
                    out += [tuple(key[positions[k]] for k in range(arity)) for key, _ in table.rows]
    return sorted(set(out), key=repr)


def from_contract(c: Contract, *, max_list: int = 4) -> Any:
    """A strategy of argument dicts for `c` (records as dicts, tuples as lists)."""
    from hypothesis import strategies as st

    strs, ints = constant_pools(c)

    def scalar(t: Scalar) -> Any:
        if isinstance(t, BoolT):
            return st.booleans()
        if isinstance(t, IntT):
            near = st.sampled_from(ints) if ints else st.integers(-3, 3)
            return st.one_of(near, near, st.integers(-10, 200))
        if isinstance(t, EnumT):
            return st.sampled_from(t.values)
        known = st.sampled_from(strs) if strs else st.just("x")
        return st.one_of(known, known, known, st.text(alphabet="abcxyz_", max_size=6))

    def element(source: str, t: Scalar | TupleT) -> Any:
        if not isinstance(t, TupleT):
            return scalar(t)
        parts = st.tuples(*(scalar(i) for i in t.items)).map(list)
        rows = _row_guided(c, source, len(t.items))
        return st.one_of(st.sampled_from(rows).map(list), parts) if rows else parts

    fields: dict[str, Any] = {}
    for a in c.signature.arguments:
        if isinstance(a.type, RecordT):
            fields[a.name] = st.fixed_dictionaries({f: scalar(ft) for f, ft in a.type.fields})
        elif isinstance(a.type, ListT):
            fields[a.name] = st.lists(element(a.name, a.type.elem), max_size=max_list)
        else:
            fields[a.name] = scalar(a.type)  # type: ignore[arg-type]
    return st.fixed_dictionaries(fields)



def coverage_inputs(c: Contract, *, limit: int = 3000, bases: int = 12, seed: int = 0) -> list[dict[str, Any]]:
    """Systematic inputs (nested, JSON-shaped) that complement random testing.

    Every element built from a table row, alone in its list, under every combination of enum
    arguments; and, from a few seeded base inputs, every scalar varied one at a time over the
    constants the contract mentions. This is what catches a wrong table entry, which a proof
    cannot: the compiled table is part of the contract it proves against.
    """
    import itertools
    import random

    rng = random.Random(seed)
    strs, ints = constant_pools(c)

    def pool(t: Scalar) -> list[Any]:
        if isinstance(t, BoolT):
            return [False, True]
        if isinstance(t, IntT):
            return ints or [0, 1]
        if isinstance(t, EnumT):
            return list(t.values)
        return strs or ["x"]

    slots: list[tuple[str, str | None, Scalar]] = []   # (argument, field, type) of every scalar
    for a in c.signature.arguments:
        if isinstance(a.type, RecordT):
            slots += [(a.name, f, ft) for f, ft in a.type.fields]
        elif not isinstance(a.type, ListT):
            slots.append((a.name, None, a.type))  # type: ignore[arg-type]

    def assemble(values: dict[tuple[str, str | None], Any], lists: dict[str, list[Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for a in c.signature.arguments:
            if isinstance(a.type, RecordT):
                out[a.name] = {f: values[(a.name, f)] for f, _ in a.type.fields}
            elif isinstance(a.type, ListT):
                out[a.name] = lists.get(a.name, [])
            else:
                out[a.name] = values[(a.name, None)]
        return out

    def base() -> dict[tuple[str, str | None], Any]:
        return {(n, f): rng.choice(pool(t)) for n, f, t in slots}

    out: list[dict[str, Any]] = []
    enum_slots = [(n, f, t) for n, f, t in slots if isinstance(t, EnumT)]
    enum_combos = list(itertools.islice(itertools.product(*(t.values for _, _, t in enum_slots)), 60))
    for a in c.signature.list_arguments():
        assert isinstance(a.type, ListT)
        rows = _row_guided(c, a.name, _arity(a.type))
        etypes = a.type.elem.items if isinstance(a.type.elem, TupleT) else (a.type.elem,)
        near = {tuple(o if k == i else x for k, x in enumerate(r))
                for r in rows for i, v in enumerate(r) for o in _others(v, etypes[i])}
        elems = [list(e) if isinstance(a.type.elem, TupleT) else e[0] for e in rows + sorted(near - set(rows), key=repr)]
        for e in elems:
            for combo in enum_combos:
                values = base()
                values.update({(n, f): v for (n, f, _), v in zip(enum_slots, combo)})
                out.append(assemble(values, {a.name: [e]}))
    for _ in range(bases):
        b = base()
        out.append(assemble(b, {}))
        for n, f, t in slots:
            for v in pool(t):
                if v != b[(n, f)]:
                    out.append(assemble({**b, (n, f): v}, {}))
    return out[:limit]


def _others(v: Any, t: Scalar) -> list[Any]:
    """Values of `v`'s type near it: every other enum value, or one no contract or table mentions."""
    if isinstance(t, EnumT):
        return [x for x in t.values if x != v]
    if isinstance(v, bool):
        return [not v]
    if isinstance(v, int):
        return [v + 100003]
    return ["vg_unlisted"]


def _arity(t: ListT) -> int:
    return len(t.elem.items) if isinstance(t.elem, TupleT) else 1
