"""Text -> AST for the contract language (lark LALR, strict, positions kept)."""
from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path
from typing import Any

import lark
from lark import (Lark, Token, Transformer, Tree, UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken,
                  v_args)
from lark.exceptions import VisitError

from veriguard.contracts import ast as A
from veriguard.contracts.errors import ContractError, Pos
from veriguard.contracts.names import RESERVED

# Every pass over a contract (and Python's parser, on the generated code) recurses once or more
# per level, and the generated code nests up to three parentheses per level (Python allows 200).
MAX_NESTING = 50
MAX_INT_DIGITS = 18


GRAMMAR = Path(__file__).parent / "grammar.lark"


@lru_cache(maxsize=1)
def _parser() -> Lark:
    """The parser from the tables in grammar_tables.py when they were made from this grammar.lark by this lark
    (building them takes over a second at every start: strict mode compares every pair of terminals), else
    built from the grammar."""
    from veriguard.contracts import grammar_tables as T

    if T.GRAMMAR_SHA256 == grammar_sha256() and T.LARK_VERSION == lark.__version__:
        return Lark._load_from_dict(T.DATA, T.MEMO, propagate_positions=True)
    return built_parser()


def built_parser() -> Lark:
    return Lark.open_from_package(
        "veriguard.contracts", "grammar.lark", ("",),
        parser="lalr", strict=True, propagate_positions=True, maybe_placeholders=True,
        start=["start", "type_start", "signature_start"],
    )


def grammar_sha256() -> str:
    return hashlib.sha256(GRAMMAR.read_bytes()).hexdigest()


def tables_source() -> str:
    """grammar_tables.py for the grammar and lark installed (`scripts/grammar_tables.py` writes it). lark's
    serialised tables number their states in an order that varies from one process to the next, so two
    writes differ in bytes, not in what they parse (tests/unit/test_grammar_tables.py)."""
    from lark.grammar import Rule
    from lark.lexer import TerminalDef

    data, memo = built_parser().memo_serialize([TerminalDef, Rule])
    options = {k: v for k, v in data["options"].items() if k not in ("import_paths", "source_path")}
    data = {**data, "options": options}
    return (f'"""The LALR tables of grammar.lark, serialised by lark: written by `scripts/grammar_tables.py`, '
            f'never by hand.\ncontracts/parse.py uses them only while GRAMMAR_SHA256 and LARK_VERSION match '
            f'what is installed."""\nGRAMMAR_SHA256 = {grammar_sha256()!r}\n'
            f'LARK_VERSION = {lark.__version__!r}\nDATA = {data!r}\nMEMO = {memo!r}\n')


def _pos(meta: Any) -> Pos:
    if isinstance(meta, Token):
        return Pos(meta.line or 0, meta.column or 0, meta.end_line or 0, meta.end_column or 0)
    if getattr(meta, "empty", True):
        return Pos(0, 0)
    return Pos(meta.line, meta.column, meta.end_line, meta.end_column)


def _unquote(tok: Token) -> str:
    body = str(tok)[1:-1]
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            out.append({"n": "\n", "t": "\t"}.get(nxt, nxt))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


class _Kind:
    def __init__(self, c: list[Token]) -> None:
        self.children = c


@v_args(meta=True)
class _ToAst(Transformer):  # type: ignore[type-arg]
    def start(self, meta: Any, decls: list[A.Decl]) -> list[A.Decl]:
        return decls

    def decl(self, meta: Any, c: list[Any]) -> A.Decl:
        kind, name, message, body = c
        return A.Decl(kind=str(kind.children[0]), id=str(name), message=_unquote(message), body=body,
                      pos=_pos(meta), id_pos=_pos(name))

    def quantifier(self, meta: Any, c: list[Any]) -> A.Quant:
        kind, names, source, body = c
        return A.Quant(kind=str(kind.children[0]), names=names, source=str(source), body=body,
                       pos=_pos(meta), source_pos=_pos(source))

    def decl_kind(self, meta: Any, c: list[Token]) -> Any:
        return _Kind(c)

    def quant_kind(self, meta: Any, c: list[Token]) -> Any:
        return _Kind(c)

    def binder(self, meta: Any, c: list[Token]) -> tuple[str, ...]:
        return tuple(str(t) for t in c)

    def implies(self, meta: Any, c: list[Any]) -> A.Implies:
        return A.Implies(left=c[0], right=c[-1], pos=_pos(meta))

    def or_(self, meta: Any, c: list[Any]) -> A.BoolOp:
        return A.BoolOp(op="or", left=c[0], right=c[1], pos=_pos(meta))

    def and_(self, meta: Any, c: list[Any]) -> A.BoolOp:
        return A.BoolOp(op="and", left=c[0], right=c[1], pos=_pos(meta))

    def not_(self, meta: Any, c: list[Any]) -> A.Not:
        return A.Not(operand=c[0], pos=_pos(meta))

    def compare(self, meta: Any, c: list[Any]) -> A.Compare:
        return A.Compare(op=str(c[1]), left=c[0], right=c[2], pos=_pos(meta))

    def member(self, meta: Any, c: list[Any]) -> A.Member:
        return A.Member(operand=c[0], values=tuple(c[1]), pos=_pos(meta))

    def not_member(self, meta: Any, c: list[Any]) -> A.Member:
        return A.Member(operand=c[0], values=tuple(c[1]), negated=True, pos=_pos(meta))

    def set_lit(self, meta: Any, c: list[Any]) -> list[A.Lit]:
        return [x for x in c if x is not None]

    def arith(self, meta: Any, c: list[Any]) -> A.Arith:
        return A.Arith(op=str(c[1]), left=c[0], right=c[2], pos=_pos(meta))

    def neg(self, meta: Any, c: list[Any]) -> A.Expr:
        if isinstance(c[0], A.Lit) and isinstance(c[0].value, int) and not isinstance(c[0].value, bool):
            return A.Lit(value=-c[0].value, pos=_pos(meta))
        return A.Neg(operand=c[0], pos=_pos(meta))

    def int_lit(self, meta: Any, c: list[Token]) -> A.Lit:
        return A.Lit(value=_int(c[0]), pos=_pos(c[0]))

    def neg_int_lit(self, meta: Any, c: list[Token]) -> A.Lit:
        return A.Lit(value=-_int(c[0]), pos=_pos(meta))

    def str_lit(self, meta: Any, c: list[Token]) -> A.Lit:
        return A.Lit(value=_unquote(c[0]), pos=_pos(c[0]))

    def true(self, meta: Any, c: list[Any]) -> A.Lit:
        return A.Lit(value=True, pos=_pos(meta))

    def false(self, meta: Any, c: list[Any]) -> A.Lit:
        return A.Lit(value=False, pos=_pos(meta))

    def allowed(self, meta: Any, c: list[Any]) -> A.Allowed:
        return A.Allowed(pos=_pos(meta))

    def dotted(self, meta: Any, c: list[Token]) -> A.Var:
        return A.Var(path=tuple(str(t) for t in c), pos=_pos(meta))

    def call(self, meta: Any, c: list[Any]) -> A.Call:
        name, *args = c
        return A.Call(name=str(name), args=tuple(a for a in args if a is not None), pos=_pos(meta))

    # types: returned as nested tuples ("named", name, pos) / ("generic", name, inner, pos) / ("tuple", items, pos)
    def type_start(self, meta: Any, c: list[Any]) -> Any:
        return c[0]

    def signature_start(self, meta: Any, c: list[Any]) -> Any:
        return (tuple(c[:-1]), c[-1])

    def named_type(self, meta: Any, c: list[Token]) -> Any:
        return ("named", str(c[0]), _pos(c[0]))

    def generic_type(self, meta: Any, c: list[Any]) -> Any:
        return ("generic", str(c[0]), c[1], _pos(c[0]))

    def tuple_type(self, meta: Any, c: list[Any]) -> Any:
        return ("tuple", tuple(c), _pos(meta))


def _int(tok: Token) -> int:
    if len(tok) > MAX_INT_DIGITS:
        raise ContractError("contract.int_too_large", f"the integer {str(tok)[:12]}… has {len(tok)} digits; "
                            f"at most {MAX_INT_DIGITS} are supported", pos=_pos(tok),
                            fix="use a smaller number (limits and amounts fit in 18 digits)")
    return int(tok)


def _check_nesting(tree: Tree, what: str) -> None:
    """Refuse a parse tree deeper than MAX_NESTING, without recursion (the transformer recurses)."""
    stack: list[tuple[Tree, int, Pos]] = [(tree, 1, Pos(1, 1))]
    while stack:
        node, depth, where = stack.pop()
        where = _pos(node.meta) if not getattr(node.meta, "empty", True) else where
        if depth > MAX_NESTING:
            raise ContractError("contract.too_deep", f"{what} nests deeper than {MAX_NESTING} levels; "
                                "nesting deeper than that is not supported", pos=where,
                                fix="split the rule into several rules, or name a long list of alternatives "
                                    "with `x in {...}`")
        stack.extend((c, depth + 1, where) for c in node.children if isinstance(c, Tree))


def _syntax_error(text: str, err: UnexpectedInput, what: str) -> ContractError:
    line, col = err.line or 0, err.column or 0
    context = err.get_context(text, span=40).rstrip()
    if isinstance(err, UnexpectedToken):
        tok = err.token
        got = "end of text" if tok.type == "$END" else repr(str(tok))
        expected = ", ".join(sorted(_friendly(t) for t in err.accepts or err.expected))[:300]
        before = text[:err.pos_in_stream].split()
        if before and before[-1] in ("forall", "exists"):
            fix = f"a quantifier inside `and`/`or`/`not` must be parenthesised: `a and ({before[-1]} x in xs: p)`"
        elif tok.type == "NAME" and str(tok) in RESERVED:
            fix = f"{tok!s} is a reserved word; rename it"
        elif str(tok) in RESERVED and tok.type != "$END":
            fix = ("a quantifier inside `and`/`or` must be parenthesised: `a and (forall x in xs: p)`"
                   if str(tok) in ("forall", "exists") else f"expected one of: {expected}")
        else:
            fix = f"expected one of: {expected}"
        message = f"unexpected {got} in {what}"
    elif isinstance(err, UnexpectedCharacters):
        ch = text[err.pos_in_stream] if err.pos_in_stream < len(text) else ""
        message = f"unexpected character {ch!r} in {what}"
        fix = ("strings use double quotes: \"nursing\"" if ch == "'" else
               "use `==` for equality, `==>` for implication" if ch in "=" else
               "remove or replace the character")
    elif isinstance(err, UnexpectedEOF):
        message = f"{what} ends too early"
        fix = "complete the expression"
    else:  # pragma: no cover - lark has no other subclasses
        message, fix = str(err), ""
    return ContractError("contract.syntax", f"{message}\n{context}", pos=Pos(line, col, line, col), fix=fix)


_TERMINAL_NAMES = {"NAME": "a name", "INT": "a number", "STRING": "a \"string\"", "COMPOP": "a comparison",
                   "ADDOP": "+/-", "$END": "end of text"}


def _friendly(terminal: str) -> str:
    if terminal in _TERMINAL_NAMES:
        return _TERMINAL_NAMES[terminal]
    pattern = _parser().get_terminal(terminal).pattern
    return repr(pattern.value) if pattern.type == "str" else terminal


def _run(text: str, start: str, what: str) -> Any:
    try:
        tree = _parser().parse(text, start=start)
    except UnexpectedInput as e:
        raise _syntax_error(text, e, what) from None
    _check_nesting(tree, what)
    try:
        return _ToAst().transform(tree)
    except VisitError as e:  # unwrap once, at the boundary
        raise e.orig_exc from None


def parse_contract(text: str) -> list[A.Decl]:
    """Parse rules, assumptions and properties. Positions are relative to `text`."""
    decls: list[A.Decl] = _run(text, "start", "the contract")
    return decls


def parse_expr(text: str) -> A.Expr:
    """Parse one expression (used by tests and by the LLM path's feedback)."""
    decls = parse_contract(f'property _ "": {text}')
    return decls[0].body


def parse_type(text: str) -> Any:
    """Parse a type expression into a raw tuple tree (resolved by contracts.check)."""
    return _run(text, "type_start", "the type")


def parse_signature(text: str) -> Any:
    """Parse a table signature `(Role, str, str) -> bool` into raw (params, result)."""
    return _run(text, "signature_start", "the table signature")
