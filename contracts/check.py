"""Name resolution, typing and shape checks: parsed declarations -> a checked `Contract`."""
from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass
from typing import Any

from veriguard.contracts import ast as A
from veriguard.contracts.errors import ContractError, Pos
from veriguard.contracts.names import BUILTINS, name_problem
from veriguard.contracts.types import MAX_TEXT
from veriguard.contracts.signature import Signature, element_types
from veriguard.contracts.types import (BOOL, INT, STR, BoolT, EnumT, IntT, ListT, RecordT, Scalar, TupleT, Type,
                             comparable, is_scalar)


@dataclass(frozen=True)
class ItemRule:
    """A rule of the form `forall <names> in <list>: <condition>`; failing elements are denied."""

    decl: A.Decl
    quant: A.Quant


@dataclass(frozen=True)
class Contract:
    signature: Signature
    assumes: tuple[A.Decl, ...]
    rules: tuple[A.Decl, ...]
    properties: tuple[A.Decl, ...]
    text: str = ""

    def item_rules(self) -> list[ItemRule]:
        out = []
        for d in self.rules:
            q = item_quantifier(d.body)
            if q is not None:
                out.append(ItemRule(d, q))
        return out

    def rule(self, rule_id: str) -> A.Decl | None:
        return next((d for d in self.rules if d.id == rule_id), None)

    def denied_element(self) -> Type | None:
        """The type of a denied item, or None when no rule denies items."""
        items = self.item_rules()
        if not items:
            return None
        t = self.signature.argument(items[0].quant.source)
        assert t is not None and isinstance(t.type, ListT)
        return t.type.elem


def item_quantifier(body: A.Expr) -> A.Quant | None:
    """The rule as `forall x in L: P`, moving a scalar guard `G ==> forall ...` inside."""
    if isinstance(body, A.Quant) and body.kind == "forall":
        return body
    if isinstance(body, A.Implies) and isinstance(body.right, A.Quant) and body.right.kind == "forall" \
            and not A.has_quantifier(body.left):
        q = body.right
        guarded = A.Implies(left=body.left, right=q.body, pos=body.pos, ty=BOOL)
        return dataclasses.replace(q, body=guarded)
    return None


class _Checker:
    def __init__(self, sig: Signature) -> None:
        self.sig = sig
        self.rule_ids: set[str] = set()
        self.item_lists: set[str] = set()
        self._binders: dict[tuple[str, ...], A.Quant] = {}

    def fail(self, code: str, message: str, pos: Pos, fix: str = "") -> ContractError:
        return ContractError(code, message, pos=pos, fix=fix)

    # --- declarations ---------------------------------------------------------------------
    def decls(self, decls: list[A.Decl]) -> list[A.Decl]:
        seen: dict[str, A.Decl] = {}
        for d in decls:
            self.name_ok(d.id, d.id_pos, "id", f"{d.kind} id")
            if d.id in seen:
                raise self.fail("contract.duplicate_id", f"{d.kind} id {d.id!r} is declared twice "
                                f"(first at line {seen[d.id].pos.line})", d.id_pos, "give each declaration its own id")
            seen[d.id] = d
        self.rule_ids = {d.id for d in decls if d.kind == "rule"}
        self.item_lists = set()
        for d in decls:
            if d.kind == "rule":
                q = item_quantifier(d.body)
                if q is not None:
                    self.item_lists.add(q.source)
        out = []
        for d in decls:
            body = self.expr(d.body, {}, d.kind)
            if not isinstance(body.ty, BoolT):
                raise self.fail("contract.type", f"the body of {d.kind} {d.id!r} is {body.ty}, not bool", d.body.pos,
                                "write a condition, e.g. `user.age >= 18`")
            out.append(dataclasses.replace(d, body=body))
        return out

    def name_ok(self, name: str, pos: Pos, kind: str, what: str) -> None:
        problem = name_problem(kind, name)
        if problem is not None:
            raise self.fail("contract.name", f"{what} {name!r} {problem[0]}", pos, problem[1])

    # --- expressions ----------------------------------------------------------------------
    def expr(self, e: A.Expr, scope: dict[str, Scalar], kind: str) -> A.Expr:
        method = getattr(self, "e_" + type(e).__name__.lower())
        out: A.Expr = method(e, scope, kind)
        return out

    def e_lit(self, e: A.Lit, scope: dict[str, Scalar], kind: str) -> A.Expr:
        t: Type = BOOL if isinstance(e.value, bool) else INT if isinstance(e.value, int) else STR
        if isinstance(e.value, str) and len(e.value) > MAX_TEXT:
            raise self.fail("contract.string_too_long", f"the string {e.value[:30]!r}... has {len(e.value):,} "
                            f"characters; at most {MAX_TEXT} are supported", e.pos,
                            "compare with a short value (a rule names cases, it does not hold data)")
        return dataclasses.replace(e, ty=t)

    def e_var(self, e: A.Var, scope: dict[str, Scalar], kind: str) -> A.Expr:
        head = e.path[0]
        if head in scope:
            if len(e.path) > 1:
                raise self.fail("contract.type", f"{head!r} is a {scope[head]}, it has no field {e.path[1]!r}", e.pos)
            return dataclasses.replace(e, ty=scope[head], binding="bound", flat=head)
        arg = self.sig.argument(head)
        if arg is None:
            names = [a.name for a in self.sig.arguments] + list(scope)
            close = difflib.get_close_matches(head, names, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise self.fail("contract.unknown_name", f"unknown name {head!r}", e.pos,
                            f"{hint}the arguments are: {', '.join(a.name for a in self.sig.arguments) or 'none'}")
        if isinstance(arg.type, RecordT):
            if len(e.path) != 2:
                fields = ", ".join(f"{head}.{f}" for f, _ in arg.type.fields)
                raise self.fail("contract.type", f"{head!r} is a record; use one of its fields", e.pos, f"e.g. {fields}")
            ft = arg.type.field(e.path[1])
            if ft is None:
                close = difflib.get_close_matches(e.path[1], [f for f, _ in arg.type.fields], n=1)
                hint = f"did you mean {head}.{close[0]}? " if close else ""
                raise self.fail("contract.unknown_field", f"record {arg.type.name} has no field {e.path[1]!r}", e.pos,
                                f"{hint}fields: {', '.join(f for f, _ in arg.type.fields)}")
            return dataclasses.replace(e, ty=ft, binding="field", flat=f"{head}_{e.path[1]}")
        if len(e.path) > 1:
            raise self.fail("contract.type", f"{head!r} is a {arg.type}, it has no fields", e.pos)
        if isinstance(arg.type, ListT):
            raise self.fail("contract.type", f"{head!r} is a list; use it in a quantifier or len()", e.pos,
                            f"e.g. `forall x in {head}: ...` or `len({head}) <= 10`")
        return dataclasses.replace(e, ty=arg.type, binding="arg", flat=head)

    def e_not(self, e: A.Not, scope: dict[str, Scalar], kind: str) -> A.Expr:
        return dataclasses.replace(e, operand=self.boolean(e.operand, scope, kind, "not"), ty=BOOL)

    def e_boolop(self, e: A.BoolOp, scope: dict[str, Scalar], kind: str) -> A.Expr:
        return dataclasses.replace(e, left=self.boolean(e.left, scope, kind, e.op),
                                   right=self.boolean(e.right, scope, kind, e.op), ty=BOOL)

    def e_implies(self, e: A.Implies, scope: dict[str, Scalar], kind: str) -> A.Expr:
        return dataclasses.replace(e, left=self.boolean(e.left, scope, kind, "==>"),
                                   right=self.boolean(e.right, scope, kind, "==>"), ty=BOOL)

    def boolean(self, e: A.Expr, scope: dict[str, Scalar], kind: str, op: str) -> A.Expr:
        out = self.expr(e, scope, kind)
        if not isinstance(out.ty, BoolT):
            raise self.fail("contract.type", f"operand of `{op}` is {out.ty}, not bool", e.pos,
                            "compare it, e.g. `x == \"value\"` or `n > 0`")
        return out

    def e_compare(self, e: A.Compare, scope: dict[str, Scalar], kind: str) -> A.Expr:
        left, right = self.expr(e.left, scope, kind), self.expr(e.right, scope, kind)
        assert left.ty is not None and right.ty is not None
        if e.op in ("==", "!="):
            if not (is_scalar(left.ty) and is_scalar(right.ty) and comparable(left.ty, right.ty)):
                raise self.fail("contract.type", f"cannot compare {left.ty} with {right.ty} using {e.op}", e.pos,
                                "compare values of the same type")
            self.enum_literal(left.ty, right)
            self.enum_literal(right.ty, left)
        elif not (isinstance(left.ty, IntT) and isinstance(right.ty, IntT)):
            raise self.fail("contract.type", f"`{e.op}` needs two ints, got {left.ty} and {right.ty}", e.pos,
                            "order comparisons apply to int arguments and fields only")
        return dataclasses.replace(e, left=left, right=right, ty=BOOL)

    def enum_literal(self, t: Type, other: A.Expr) -> None:
        if isinstance(t, EnumT) and isinstance(other, A.Lit) and isinstance(other.value, str) \
                and other.value not in t.values:
            close = difflib.get_close_matches(other.value, t.values, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise self.fail("contract.enum_value", f"{other.value!r} is not a value of {t.name}", other.pos,
                            f"{hint}{t.name} is one of: {', '.join(map(repr, t.values))}")

    def e_member(self, e: A.Member, scope: dict[str, Scalar], kind: str) -> A.Expr:
        operand = self.expr(e.operand, scope, kind)
        assert operand.ty is not None
        if not is_scalar(operand.ty):
            raise self.fail("contract.type", f"`in {{...}}` needs a scalar on the left, got {operand.ty}", e.pos)
        values = []
        for v in e.values:
            lit = self.expr(v, scope, kind)
            assert lit.ty is not None
            if not comparable(operand.ty, lit.ty):
                raise self.fail("contract.type", f"set element {A.render(v)} is {lit.ty}, the left side is {operand.ty}",
                                v.pos, "use elements of the same type")
            self.enum_literal(operand.ty, lit)
            assert isinstance(lit, A.Lit)
            values.append(lit)
        return dataclasses.replace(e, operand=operand, values=tuple(values), ty=BOOL)

    def e_arith(self, e: A.Arith, scope: dict[str, Scalar], kind: str) -> A.Expr:
        left, right = self.expr(e.left, scope, kind), self.expr(e.right, scope, kind)
        if not (isinstance(left.ty, IntT) and isinstance(right.ty, IntT)):
            raise self.fail("contract.type", f"`{e.op}` needs two ints, got {left.ty} and {right.ty}", e.pos)
        return dataclasses.replace(e, left=left, right=right, ty=INT)

    def e_neg(self, e: A.Neg, scope: dict[str, Scalar], kind: str) -> A.Expr:
        operand = self.expr(e.operand, scope, kind)
        if not isinstance(operand.ty, IntT):
            raise self.fail("contract.type", f"unary minus needs an int, got {operand.ty}", e.pos)
        return dataclasses.replace(e, operand=operand, ty=INT)

    def e_allowed(self, e: A.Allowed, scope: dict[str, Scalar], kind: str) -> A.Expr:
        self.decision_only(kind, "allowed", e.pos)
        return dataclasses.replace(e, ty=BOOL)

    def decision_only(self, kind: str, what: str, pos: Pos) -> None:
        if kind != "property":
            raise self.fail("contract.decision_in_rule", f"`{what}` speaks of the decision; only a property may use it",
                            pos, "rules and assumptions talk about the inputs; move this clause to `properties`")

    def e_call(self, e: A.Call, scope: dict[str, Scalar], kind: str) -> A.Expr:
        if e.name == "len":
            return self.call_len(e)
        if e.name == "violated":
            self.decision_only(kind, "violated(...)", e.pos)
            if len(e.args) != 1 or not isinstance(e.args[0], A.Var) or e.args[0].path[0] not in self.rule_ids:
                raise self.fail("contract.violated", "violated(...) takes one rule id", e.pos,
                                f"rule ids: {', '.join(sorted(self.rule_ids))}")
            return dataclasses.replace(e, kind="violated", ty=BOOL)
        if e.name == "denied":
            return self.call_denied(e, scope, kind)
        table = self.sig.table(e.name)
        if table is None:
            close = difflib.get_close_matches(e.name, [t.name for t in self.sig.tables] + list(BUILTINS), n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise self.fail("contract.unknown_table", f"unknown table or function {e.name!r}", e.pos,
                            f"{hint}tables: {', '.join(t.name for t in self.sig.tables) or 'none'}; builtins: "
                            + ", ".join(BUILTINS))
        if len(e.args) != len(table.params):
            raise self.fail("contract.arity", f"table {e.name} takes {len(table.params)} arguments, got {len(e.args)}",
                            e.pos, f"signature: ({', '.join(map(str, table.params))}) -> {table.result}")
        args = []
        for a, pt in zip(e.args, table.params):
            ca = self.expr(a, scope, kind)
            assert ca.ty is not None
            if not (is_scalar(ca.ty) and comparable(ca.ty, pt)):
                raise self.fail("contract.type", f"argument {A.render(a)} of {e.name} is {ca.ty}, expected {pt}", a.pos)
            self.enum_literal(pt, ca)
            args.append(ca)
        return dataclasses.replace(e, args=tuple(args), kind="table", ty=table.result)

    def call_len(self, e: A.Call) -> A.Expr:
        arg = e.args[0] if len(e.args) == 1 else None
        a = self.sig.argument(arg.path[0]) if isinstance(arg, A.Var) and len(arg.path) == 1 else None
        if a is None or not isinstance(a.type, ListT):
            lists = ", ".join(x.name for x in self.sig.list_arguments()) or "none"
            raise self.fail("contract.len", "len(...) takes one list argument", e.pos, f"list arguments: {lists}")
        assert isinstance(arg, A.Var)
        var = dataclasses.replace(arg, ty=a.type, binding="arg", flat=a.name)
        return dataclasses.replace(e, args=(var,), kind="len", ty=INT)

    def call_denied(self, e: A.Call, scope: dict[str, Scalar], kind: str) -> A.Expr:
        self.decision_only(kind, "denied(...)", e.pos)
        names = tuple(a.path[0] if isinstance(a, A.Var) and len(a.path) == 1 else "" for a in e.args)
        binder = self._binders.get(names)
        if binder is None or binder.source not in self.item_lists:
            raise self.fail("contract.denied", "denied(...) must name the variables bound by a quantifier over the "
                            "list of a rule that denies items", e.pos,
                            "e.g. `forall (db, col) in accessed: <condition> ==> denied(db, col)`; item-rule lists: "
                            + (", ".join(sorted(self.item_lists)) or "none"))
        args = tuple(self.expr(a, scope, kind) for a in e.args)
        return dataclasses.replace(e, args=args, kind="denied", ty=BOOL)

    def e_quant(self, e: A.Quant, scope: dict[str, Scalar], kind: str) -> A.Expr:
        arg = self.sig.argument(e.source)
        if arg is None or not isinstance(arg.type, ListT):
            lists = ", ".join(a.name for a in self.sig.list_arguments()) or "none"
            raise self.fail("contract.quantifier", f"{e.kind} ranges over {e.source!r}, which is not a list argument",
                            e.source_pos, f"list arguments: {lists}")
        types = element_types(arg.type)
        if len(e.names) != len(types):
            shape = "(" + ", ".join(f"x{i}" for i in range(len(types))) + ")" if len(types) > 1 else "x"
            raise self.fail("contract.quantifier", f"elements of {e.source} are {arg.type.elem}; bind them as {shape}",
                            e.pos, f"e.g. `{e.kind} {shape} in {e.source}: ...`")
        inner = dict(scope)
        for n, t in zip(e.names, types):
            self.name_ok(n, e.pos, "variable", "variable")
            if n in inner or self.sig.argument(n) is not None:
                raise self.fail("contract.shadow", f"variable {n!r} hides another name", e.pos, "pick a fresh name")
            inner[n] = t
        saved = dict(self._binders)
        self._binders = {**self._binders, e.names: e}
        try:
            body = self.boolean(e.body, inner, kind, e.kind)
        finally:
            self._binders = saved
        return dataclasses.replace(e, body=body, ty=BOOL)


def check_contract(sig: Signature, decls: list[A.Decl], *, text: str = "") -> Contract:
    """Type-check `decls` against `sig`; raises ContractError (positions relative to the text)."""
    checker = _Checker(sig)
    checked = checker.decls(decls)
    contract = Contract(sig, tuple(d for d in checked if d.kind == "assume"),
                        tuple(d for d in checked if d.kind == "rule"),
                        tuple(d for d in checked if d.kind == "property"), text)
    types = {str(_elem_type(sig, r.quant.source)) for r in contract.item_rules()}
    if len(types) > 1:
        first = contract.item_rules()[0]
        raise ContractError("contract.denied_types", "rules that deny items range over lists of different element types ("
                            + ", ".join(sorted(types)) + "); a decision has one list of denied items",
                            pos=first.decl.pos, fix="quantify every item rule over lists of the same element type")
    return contract


def _elem_type(sig: Signature, source: str) -> Type:
    a = sig.argument(source)
    assert a is not None and isinstance(a.type, ListT)
    return a.type.elem


BUILTIN_TYPES: dict[str, Type] = {"bool": BOOL, "int": INT, "str": STR}


def resolve_type(raw: Any, named: dict[str, Type], where: str = "") -> Type:
    """Turn a parsed type tree into a Type, resolving declared enum and record names."""
    kind = raw[0]
    if kind == "named":
        _, name, pos = raw
        builtin = BUILTIN_TYPES.get(name)
        if builtin is not None:
            return builtin
        if name in named:
            return named[name]
        close = difflib.get_close_matches(name, list(named) + ["bool", "int", "str"], n=1)
        raise ContractError("spec.unknown_type", f"unknown type {name!r}{where}", pos=pos,
                            fix=(f"did you mean {close[0]!r}? " if close else "")
                            + "declare it under [types] or use bool, int, str, list[...], (T, T)")
    if kind == "tuple":
        _, items, pos = raw
        resolved = tuple(resolve_type(i, named, where) for i in items)
        if not all(is_scalar(i) for i in resolved):
            raise ContractError("spec.type", "tuple elements must be bool, int, str or an enum", pos=pos)
        return TupleT(resolved)  # type: ignore[arg-type]
    _, name, inner, pos = raw
    if name != "list":
        raise ContractError("spec.type", f"unknown generic type {name!r}", pos=pos, fix="only list[...] is supported")
    elem = resolve_type(inner, named, where)
    if not (is_scalar(elem) or isinstance(elem, TupleT)):
        raise ContractError("spec.type", f"list elements must be scalars or tuples of scalars, not {elem}", pos=pos)
    return ListT(elem)  # type: ignore[arg-type]


