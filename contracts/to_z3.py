"""Contract -> z3 terms, over a bounded model of list arguments (at most `bound` elements).

Bounded lists make the checks here complete only up to that size; the Nagini proof is the
unbounded one. z3 is imported when an encoding is built, never at import time.
"""
from __future__ import annotations

import re

from typing import Any

from veriguard.contracts import ast as A
from veriguard.contracts.check import Contract
from veriguard.contracts.signature import Table, element_types
from veriguard.contracts.types import BoolT, EnumT, IntT, ListT, RecordT, Scalar, StrT, TupleT


def _z3() -> Any:
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # z3 4.8.7 imports the deprecated pkg_resources
        import z3
    return z3


class Z3Encoding:
    """Symbols for every argument plus the contract's clauses as z3 formulas."""

    def __init__(self, contract: Contract, bound: int = 3, ctx: Any = None) -> None:
        self.z3 = _z3()
        # a fresh context per encoding: z3's models depend on the context's history, and the same
        # question must get the same witness in every run (certificates are compared byte for byte)
        self.ctx = ctx if ctx is not None else self.z3.Context()
        self.contract = contract
        self.bound = bound
        self.scalars: dict[str, Any] = {}
        self.hidden: dict[str, Any] = {}  # rule id -> a free Bool standing for it: the rule's definition unseen
        self.lists: dict[str, tuple[Any, list[tuple[Any, ...]]]] = {}
        self._image: Any = None   # the regex of z3_text's spellings, made when first needed
        z3 = self.z3
        for name, t in contract.signature.flat_params():
            if isinstance(t, ListT):
                n = z3.Int(f"len({name})", self.ctx)
                elems = [tuple(self._const(f"{name}[{i}][{k}]", et) for k, et in enumerate(element_types(t)))
                         for i in range(bound)]
                self.lists[name] = (n, elems)
            elif isinstance(t, (TupleT, RecordT)):  # the spec reader refuses both; flat_params splits records
                raise TypeError(f"parameter {name} is a {t}, which has no z3 encoding")
            else:
                self.scalars[name] = self._const(name, t)

    def _const(self, name: str, t: Scalar) -> Any:
        z3 = self.z3
        if isinstance(t, BoolT):
            return z3.Bool(name, self.ctx)
        if isinstance(t, IntT):
            return z3.Int(name, self.ctx)
        return z3.String(name, self.ctx)

    def all_of(self, items: list[Any]) -> Any:
        """And over a list, in this encoding's context (z3 4.8.7 defaults And/Or to the global one)."""
        return self.z3.And(*items, self.ctx) if items else self.value(True)

    def any_of(self, items: list[Any]) -> Any:
        return self.z3.Or(*items, self.ctx) if items else self.value(False)

    def value(self, v: bool | int | str) -> Any:  # noqa: FBT001 (a contract value, not a flag)
        z3 = self.z3
        if isinstance(v, bool):
            return z3.BoolVal(v, self.ctx)
        if isinstance(v, int):
            return z3.IntVal(v, self.ctx)
        return z3.StringVal(z3_text(v), self.ctx)

    # --- the input domain ----------------------------------------------------------------
    def domain(self) -> Any:
        """Well-typed inputs: enum values, list sizes within the bound, plus every `assume`."""
        z3 = self.z3
        cs = []
        for name, t in self.contract.signature.flat_params():
            if isinstance(t, EnumT):
                cs.append(self._in_enum(self.scalars[name], t))
            elif isinstance(t, StrT):
                cs.append(self._spelled(self.scalars[name]))
            elif isinstance(t, ListT):
                n, elems = self.lists[name]
                cs.append(self.all_of([n >= 0, n <= self.bound]))
                for i, el in enumerate(elems):
                    for x, et in zip(el, element_types(t)):
                        if isinstance(et, EnumT):
                            cs.append(z3.Implies(i < n, self._in_enum(x, et)))
                        elif isinstance(et, StrT):
                            cs.append(self._spelled(x))
        cs += [self.expr(d.body) for d in self.contract.assumes]
        return self.all_of(cs)

    def _spelled(self, x: Any) -> Any:
        """`x` is a string z3_text writes (the spelling of some Python string): z3 made up strings outside it (a lone
        backslash, a byte from 0x80 up, `\\u{41}`), which read back as a Python string that may equal a constant
        z3 took as different. Strings are only compared for equality, so this never changes a verdict."""
        if self._image is None:
            self._image = _spelling_regex(self.z3, self.ctx)
        return self.z3.InRe(x, self._image)

    def _in_enum(self, x: Any, t: EnumT) -> Any:
        return self.any_of([x == self.value(v) for v in t.values])

    # --- clauses ---------------------------------------------------------------------------
    def holds(self, rule_id: str) -> Any:
        if rule_id in self.hidden:
            return self.hidden[rule_id]
        d = self.contract.rule(rule_id)
        assert d is not None
        return self.expr(d.body)

    def hide(self, rule_ids: set[str]) -> None:
        """From now on each of `rule_ids` is any truth value: what is still provable does not need its definition."""
        self.hidden = {r: self.z3.Bool(f"hidden rule {r}", self.ctx) for r in sorted(rule_ids)}

    def allowed(self) -> Any:
        return self.all_of([self.holds(d.id) for d in self.contract.rules])

    def is_denied(self, item: tuple[Any, ...]) -> Any:
        """`item` is reported as denied: it is an element of an item rule's list that fails it."""
        z3 = self.z3
        cases = []
        for r in self.contract.item_rules():
            n, elems = self.lists[r.quant.source]
            for i, el in enumerate(elems):
                env = dict(zip(r.quant.names, el))
                same = self.all_of([a == b for a, b in zip(el, item)])
                cases.append(self.all_of([i < n, same, z3.Not(self.expr(r.quant.body, env))]))
        return self.any_of(cases)

    def expr(self, e: A.Expr, env: dict[str, Any] | None = None) -> Any:
        z3 = self.z3
        env = env or {}

        def sub(x: A.Expr) -> Any:
            return self.expr(x, env)

        if isinstance(e, A.Lit):
            return self.value(e.value)
        if isinstance(e, A.Var):
            return env[e.path[0]] if e.binding == "bound" else self.scalars[e.flat]
        if isinstance(e, A.Not):
            return z3.Not(sub(e.operand))
        if isinstance(e, A.BoolOp):
            return (self.all_of if e.op == "and" else self.any_of)([sub(e.left), sub(e.right)])
        if isinstance(e, A.Implies):
            return z3.Implies(sub(e.left), sub(e.right))
        if isinstance(e, A.Compare):
            left, right = sub(e.left), sub(e.right)
            return {"==": lambda: left == right, "!=": lambda: left != right, "<": lambda: left < right,
                    "<=": lambda: left <= right, ">": lambda: left > right, ">=": lambda: left >= right}[e.op]()
        if isinstance(e, A.Member):
            x = sub(e.operand)
            inside = self.any_of([x == self.value(v.value) for v in e.values])
            return z3.Not(inside) if e.negated else inside
        if isinstance(e, A.Arith):
            return sub(e.left) + sub(e.right) if e.op == "+" else sub(e.left) - sub(e.right)
        if isinstance(e, A.Neg):
            return -sub(e.operand)
        if isinstance(e, A.Call):
            return self._call(e, env)
        if isinstance(e, A.Quant):
            n, elems = self.lists[e.source]
            parts = []
            for i, el in enumerate(elems):
                body = self.expr(e.body, {**env, **dict(zip(e.names, el))})
                parts.append(z3.Implies(i < n, body) if e.kind == "forall" else self.all_of([i < n, body]))
            return self.all_of(parts) if e.kind == "forall" else self.any_of(parts)
        if isinstance(e, A.Allowed):
            return self.allowed()
        raise TypeError(e)

    def _call(self, e: A.Call, env: dict[str, Any]) -> Any:
        z3 = self.z3
        if e.kind == "len":
            arg = e.args[0]
            assert isinstance(arg, A.Var)
            return self.lists[arg.flat][0]
        if e.kind == "violated":
            arg = e.args[0]
            assert isinstance(arg, A.Var)
            return z3.Not(self.holds(arg.path[0]))
        if e.kind == "denied":
            return self.is_denied(tuple(self.expr(a, env) for a in e.args))
        table = self.contract.signature.table(e.name)
        assert table is not None
        return self.table(table, [self.expr(a, env) for a in e.args])

    def table(self, t: Table, args: list[Any]) -> Any:
        z3 = self.z3
        matches = [(self.all_of([a == self.value(k) for a, k in zip(args, key)]), value) for key, value in t.rows]
        if t.is_relation:
            return self.any_of([m for m, v in matches if v is True])
        out = self.value(t.default)
        for m, v in reversed(matches):
            out = z3.If(m, self.value(v), out)
        return out

    # --- concrete values -------------------------------------------------------------------
    def bind(self, flat: dict[str, Any]) -> list[tuple[Any, Any]]:
        """Substitution pairs that fix every symbol to the concrete flat arguments."""
        pairs = [(sym, self.value(flat[name])) for name, sym in self.scalars.items()]
        for name, (n, elems) in self.lists.items():
            items = flat[name]
            if len(items) > self.bound:
                raise ValueError(f"{name} has {len(items)} elements; this encoding holds at most {self.bound}")
            pairs.append((n, self.value(len(items))))
            for el_syms, item in zip(elems, items):
                values = item if isinstance(item, tuple) else (item,)
                pairs += [(s, self.value(v)) for s, v in zip(el_syms, values)]
        return pairs

    def evaluate(self, term: Any, flat: dict[str, Any]) -> bool:
        """`term` under concrete arguments; raises if z3 cannot reduce it to true or false."""
        z3 = self.z3
        reduced = z3.simplify(z3.substitute(term, *self.bind(flat)))
        if z3.is_true(reduced):
            return True
        if z3.is_false(reduced):
            return False
        raise ValueError(f"z3 did not reduce the clause to a constant: {reduced}")

    def arguments(self, model: Any) -> dict[str, Any]:
        """A z3 model as nested arguments (the shape an agent's extractor produces)."""
        z3 = self.z3

        def val(sym: Any, t: Scalar) -> Any:
            v = model.eval(sym, model_completion=True)
            if isinstance(t, BoolT):
                return z3.is_true(v)
            if isinstance(t, IntT):
                return v.as_long()
            return python_text(v.as_string())

        out: dict[str, Any] = {}
        for a in self.contract.signature.arguments:
            if isinstance(a.type, RecordT):
                out[a.name] = {f: val(self.scalars[f"{a.name}_{f}"], ft) for f, ft in a.type.fields}
            elif isinstance(a.type, ListT):
                n, elems = self.lists[a.name]
                size = model.eval(n, model_completion=True).as_long()
                types = element_types(a.type)
                rows = [[val(s, t) for s, t in zip(elems[i], types)] for i in range(size)]
                out[a.name] = [r if len(types) > 1 else r[0] for r in rows]
            else:
                assert isinstance(a.type, (BoolT, IntT, StrT, EnumT))
                out[a.name] = val(self.scalars[a.name], a.type)
        return out


# z3 4.8.7's StringVal takes ASCII only: a rule, enum value or table key with "é" ended synth in an internal error.
# Strings are only compared for equality in the contract language, so any one-to-one spelling keeps every verdict.
_Z3_RENDERED = re.compile(r"\\(\\|x[0-9a-fA-F]{2}|[nvfr])")   # how as_string() shows a backslash and a control byte
_Z3_NAMED = {"n": "\n", "v": "\v", "f": "\f", "r": "\r"}     # z3 4.8.7 names these four; the rest are \xHH
_Z3_SPELLED = re.compile(r"\\(\\|u\{[0-9a-f]+\})")     # what z3_text writes


def z3_text(s: str) -> str:
    """`s` spelled in ASCII, one to one: a backslash doubled, each character from U+0080 up as \\u{hex}."""
    return "".join("\\\\" if c == "\\" else c if ord(c) < 0x80 else f"\\u{{{ord(c):x}}}" for c in s)


def python_text(rendered: str) -> str:
    """The Python string whose z3_text is the string z3 shows as `rendered` (a model's value). ValueError for a
    string z3_text never writes (a lone backslash, a byte from 0x80 up, `\\u{41}`): Z3Encoding.domain keeps z3's
    strings to spellings, and one outside them has no Python string that z3 compares as it did (before, it was read
    as its characters, and could equal a constant z3 took as different)."""
    raw = _Z3_RENDERED.sub(_rendered_char, rendered)
    text = _Z3_SPELLED.sub(lambda m: "\\" if m[1] == "\\" else _code_point(m[1][2:-1]) or m[0], raw)
    if z3_text(text) != raw:
        raise ValueError(f"z3's string {rendered[:80]!r} is not the spelling of any Python string")
    return text


def _rendered_char(m: re.Match[str]) -> str:
    return "\\" if m[1] == "\\" else _Z3_NAMED.get(m[1]) or chr(int(m[1][1:], 16))


def _spelling_regex(z3: Any, ctx: Any) -> Any:
    """The strings z3_text writes, as a z3 regex: ASCII without a backslash, a doubled backslash, or \\u{hex} with
    hex the lower-case digits, without leading zeros, of a code point from 0x80 to 0x10FFFF."""
    def byte(n: int) -> Any:   # z3 4.8.7's StringVal takes ASCII text only: the control bytes are made as units
        return z3.Unit(z3.BitVecVal(n, 8, ctx))

    def span(first: str | int, last: str | int) -> Any:
        return z3.Range(*(byte(c if isinstance(c, int) else ord(c)) for c in (first, last)))

    def text(t: str) -> Any:
        return z3.Re(z3.StringVal(t, ctx))

    def times(r: Any, k: int) -> Any:
        return z3.Concat(*[r] * k) if k > 1 else r

    digit = z3.Union(span("0", "9"), span("a", "f"))
    lead = z3.Union(span("1", "9"), span("a", "f"))
    code = z3.Union(z3.Concat(z3.Union(span("8", "9"), span("a", "f")), digit),       # 0x80 - 0xff
                    *[z3.Concat(lead, times(digit, k)) for k in (2, 3, 4)],          # 0x100 - 0xfffff
                    z3.Concat(text("10"), times(digit, 4)))                          # 0x100000 - 0x10ffff
    return z3.Star(z3.Union(span(0, ord("\\") - 1), span(ord("\\") + 1, 0x7F), text("\\\\"),
                            z3.Concat(text("\\u{"), code, text("}"))))


def _code_point(digits: str) -> str:
    n = int(digits, 16) if len(digits) <= 6 else -1
    return chr(n) if 0x80 <= n <= 0x10FFFF else ""
