"""Which (database, column) pairs an EHRAgent program reads, found statically: no LLM, no execution.

What counts as reading a column:
* GetValue(db, 'col[, agg]') reads col. FilterDB(db, cond) reads every column its conditions name,
  max(col)/min(col) selectors included: which rows survive reveals those columns.
* db['col'], db[['a', 'b']], db.col, row['col'], row.get('col') read those columns; rows come from
  iterating a table (treated as iterating its rows) or from .iterrows().
* SQLInterpreter reads every column the query names in any clause (select, where, join, group,
  order, having, subqueries, CTEs); `*` and `t.*` read every column they cover. Unqualified columns
  are resolved against the tables in scope with the schema (sqlglot); an ambiguous one is an error.
  Calendar's argument is SQL too: EHRAgent runs "select datetime(current_time, '<argument>')".
* A table that is loaded (LoadDB, or FROM in SQL) but of which no column is named counts as read
  whole: its data is in the agent's hands and nothing shows that less was used (count(*), len()).
* A table used in a way not modelled here (printed, formatted into text, returned as the answer,
  handed to a function or a pandas method) counts as read whole, and confidence drops to 0.5.
* len(), isinstance(), `is`, `'c' in row`, truth tests and .empty/.shape/.columns reveal no value.
* Both branches of an `if` count, dead or not. User functions are read once where they are defined,
  with unknown parameters; a table passed to one counts as read whole.
Fail closed: ExtractionError for empty or invalid code, SQL that does not parse or is not a query,
unknown tables or columns, a table argument not traceable to LoadDB, SQL whose shape depends on
run-time text, dynamic code (eval, exec, getattr, open, dunders), and imports that can read data
around the tools. Assumption: values that flow in at run time (format arguments) are data, not syntax.
"""
from __future__ import annotations

import ast
import builtins
import re
import string
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NoReturn

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, traverse_scope
from sqlglot.tokens import TokenType

from enforce.extract_errors import ExtractionError

HOLE = "\x00"  # stands for a run-time value inside a string template
SQL_HOLE = "987654321012345"
TOOLS = frozenset({"LoadDB", "FilterDB", "GetValue", "SQLInterpreter", "Calendar", "Calculate"})
FORBIDDEN = frozenset({"eval", "exec", "compile", "open", "__import__", "getattr", "setattr", "delattr",
                       "globals", "locals", "vars", "input", "breakpoint", "memoryview", "exit", "quit"})
SAFE_BUILTINS = frozenset({"len", "isinstance", "type", "id", "callable"})
ITERATING_BUILTINS = frozenset({"list", "tuple", "set", "frozenset", "sorted", "reversed", "iter"})
ALLOWED_IMPORTS = frozenset({"datetime", "time", "math", "statistics", "collections", "re", "itertools",
                             "functools", "decimal", "fractions", "json", "string", "heapq", "bisect",
                             "calendar", "dateutil"})
SAFE_TABLE_ATTRS = frozenset({"empty", "shape", "columns", "size", "ndim", "dtypes"})
ADDING_METHODS = frozenset({"append", "add", "insert", "extend", "update", "appendleft"})
AGGREGATIONS = ("mean", "max", "min", "sum", "list")
CONDITION_OP = re.compile(r">=|<=|!=|==|=|>|<|\s(?:not\s+)?in\s|\s(?:not\s+)?like\s", re.IGNORECASE)
SELECTOR = re.compile(r"\s*(?:max|min)\s*\((.*)\)\s*", re.DOTALL)
PERCENT_SPEC = re.compile(r"%(?:\([^)]*\))?[#0\- +]*\d*(?:\.\d+)?[sdifrxXeEgGc]")
MAX_TEXTS = 16
HANDLERS = {ast.Constant: "constant", ast.Name: "name", ast.Call: "call", ast.Attribute: "attribute",
            ast.Subscript: "subscript", ast.Compare: "compare", ast.BinOp: "arithmetic", ast.BoolOp: "either",
            ast.UnaryOp: "unary", ast.IfExp: "if_expression", ast.JoinedStr: "fstring", ast.List: "literal",
            ast.Tuple: "literal", ast.Set: "literal", ast.Dict: "dictionary", ast.ListComp: "comprehension",
            ast.SetComp: "comprehension", ast.GeneratorExp: "comprehension", ast.DictComp: "comprehension",
            ast.NamedExpr: "named", ast.Lambda: "function", ast.Starred: "starred", ast.Slice: "slice"}
EMPTY: frozenset[str] = frozenset()


@dataclass(frozen=True)
class CodeAccess:
    pairs: tuple[tuple[str, str], ...]
    provenance: tuple[str, ...]
    confidence: float
    notes: tuple[str, ...]


@dataclass(frozen=True)
class Val:
    """What an expression may evaluate to; every field is a possibility, so joins are unions."""
    tables: frozenset[str] = EMPTY  # a (possibly filtered) table of one of these databases
    rows: frozenset[str] = EMPTY    # one row of one of these databases
    texts: frozenset[str] = EMPTY   # one of these strings, HOLE marking run-time parts
    other: bool = False             # any other run-time value
    items: Val | None = None        # a container whose elements may be this
    fields: tuple[Val, ...] | None = None  # a fixed-length tuple or list, position by position
    funcs: frozenset[str] = EMPTY   # a tool ("tool:LoadDB") or builtin ("builtin:len")


OTHER = Val(other=True)
NOTHING = Val()


def join(a: Val, b: Val) -> Val:
    if a == b:
        return a
    items = a.items if b.items is None else b.items if a.items is None else join(a.items, b.items)
    if a.fields is not None and b.fields is not None:
        fields = tuple(map(join, a.fields, b.fields)) if len(a.fields) == len(b.fields) else None
    else:
        fields = a.fields if b.items is None else b.fields if a.items is None else None
    return Val(a.tables | b.tables, a.rows | b.rows, a.texts | b.texts, a.other or b.other, items, fields,
               a.funcs | b.funcs)


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
    items = new.items if old.items is None or new.items is None else widen(old.items, new.items)
    return Val(new.tables, new.rows, EMPTY if moved else new.texts, new.other or moved, items,
               new.fields if new.fields == old.fields else None, new.funcs)


def container(elements: Sequence[Val], positional: bool) -> Val:
    return Val(items=join_all(elements), fields=tuple(elements) if positional else None)


def held_tables(value: Val) -> frozenset[str]:
    """Every database whose data the value, or anything inside it, may carry."""
    inner = ([value.items] if value.items is not None else []) + list(value.fields or ())
    return frozenset().union(value.tables, value.rows, *map(held_tables, inner))


def _held_funcs(value: Val) -> frozenset[str]:
    inner = ([value.items] if value.items is not None else []) + list(value.fields or ())
    return frozenset().union(value.funcs, *map(_held_funcs, inner))


def single_text(value: Val) -> str | None:
    if len(value.texts) == 1 and not (value.other or value.items or value.funcs or held_tables(value)):
        text = next(iter(value.texts))
        return None if HOLE in text else text
    return None


def fail(code: str, where: str, message: str) -> NoReturn:
    raise ExtractionError(code, f"{where}: {message}")


def at(node: ast.AST) -> str:
    return f"line {getattr(node, 'lineno', '?')}:{getattr(node, 'col_offset', -1) + 1}"


def snippet(node: ast.AST) -> str:
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= 100 else text[:97] + "..."


def extract_accesses(code: str, schema: Mapping[str, Sequence[str]]) -> CodeAccess:
    """The (database, column) pairs `code` reads; ExtractionError when that cannot be told for sure."""
    if not code or not code.strip():
        fail("extract.code.empty", "line 1", "the generated code is empty: nothing to check")
    try:
        tree = ast.parse(code)
    except SyntaxError as e:
        fail("extract.code.syntax", f"line {e.lineno}:{e.offset}", f"the generated code is not valid Python: {e.msg}")
    if not tree.body:
        fail("extract.code.empty", "line 1", "the generated code has no statements (only comments)")
    analyzer = _Analyzer(schema)
    analyzer.run(tree)
    return analyzer.result()


class _Analyzer:
    def __init__(self, schema: Mapping[str, Sequence[str]]) -> None:
        self.schema = {table: frozenset(columns) for table, columns in schema.items()}
        self.env: dict[str, Val] = {}
        self.reads: dict[tuple[str, str], list[str]] = {}
        self.loaded: dict[str, str] = {}
        self.notes: list[str] = []
        self.confidence = 1.0

    # ---- results -------------------------------------------------------------------------------
    def run(self, tree: ast.Module) -> None:
        self.block(tree.body)
        self.escape(self.env.get("answer", NOTHING), tree.body[-1], "the answer is the table itself")
        for table, where in self.loaded.items():
            if not any(t == table for t, _ in self.reads):
                for column in sorted(self.schema[table]):
                    self.read_one(table, column, f"{where}: nothing of it is named -> {table}.{column} (whole table)")
                self.notes.append(f"{where}: {table} is loaded but no column of it is named; every column counts")

    def result(self) -> CodeAccess:
        pairs = tuple(sorted(self.reads))
        provenance = tuple(self.reads[p][0] + (f" (+{len(self.reads[p]) - 1} more)" if len(self.reads[p]) > 1 else "")
                           for p in pairs)
        return CodeAccess(pairs, provenance, self.confidence, tuple(dict.fromkeys(self.notes)))

    def read_one(self, table: str, column: str, how: str) -> None:
        found = self.reads.setdefault((table, column), [])
        if how not in found:
            found.append(how)

    def read(self, tables: frozenset[str], column: str, node: ast.AST, how: str) -> None:
        owners = sorted(t for t in tables if column in self.schema[t])
        if not owners:
            fail("extract.code.unknown_column", at(node), f"{how} names column {column!r}, which "
                 f"{'/'.join(sorted(tables))} does not have")
        if len(tables) > 1:
            self.confidence = min(self.confidence, 0.8)
            self.notes.append(f"{at(node)}: the table may be any of {', '.join(sorted(tables))}; "
                              f"{column!r} is attributed to {', '.join(owners)}")
        for table in owners:
            self.read_one(table, column, f"{how} line {getattr(node, 'lineno', '?')} -> {table}.{column}")

    def read_whole(self, tables: frozenset[str], node: ast.AST, why: str) -> None:
        for table in sorted(tables):
            for column in sorted(self.schema[table]):
                self.read_one(table, column, f"{why} line {getattr(node, 'lineno', '?')} -> {table}.{column} "
                              "(whole table)")
            self.notes.append(f"{at(node)}: {why}; every column of {table} counts as read")
        self.confidence = min(self.confidence, 0.5)

    def escape(self, value: Val, node: ast.AST, why: str) -> None:
        tools = sorted(f[5:] for f in _held_funcs(value) if f.startswith("tool:"))
        if tools:
            fail("extract.code.dynamic", at(node), f"the tool {tools[0]} is handed to code the extractor cannot "
                 f"follow ({why.replace('a table', 'it')})")
        tables = held_tables(value)
        if tables:
            self.read_whole(tables, node, why)

    def unsupported(self, node: ast.AST, what: str) -> NoReturn:
        fail("extract.code.unsupported", at(node), f"{what} is not analysed, so its accesses cannot be vouched for")

    # ---- statements ----------------------------------------------------------------------------
    def block(self, body: list[ast.stmt]) -> None:
        for statement in body:
            self.stmt(statement)

    def stmt(self, node: ast.stmt) -> None:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            if node.value is not None:
                value = self.expr(node.value)
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    self.bind(target, value, node)
        elif isinstance(node, ast.AugAssign):
            current = self.expr(node.target)  # expr ignores ctx, so the target reads as a load
            self.bind(node.target, self.binop(node.op, current, self.expr(node.value), node), node)
        elif isinstance(node, ast.Expr):
            self.escape(self.expr(node.value), node, f"`{snippet(node.value)}` is shown as the cell's value")
        elif isinstance(node, ast.If):
            self.expr(node.test)
            self.branches([node.body, node.orelse])
        elif isinstance(node, (ast.For, ast.While)):
            self.loop(node)
            self.block(node.orelse)
        elif isinstance(node, ast.Try):
            self.try_(node)
        elif isinstance(node, ast.With):
            for item in node.items:
                value = self.expr(item.context_expr)
                if item.optional_vars is not None:
                    self.bind(item.optional_vars, value, node)
            self.block(node.body)
        elif isinstance(node, ast.FunctionDef):
            if node.decorator_list:
                self.unsupported(node, "a decorated function")
            self.env[node.name] = self.function(node)
        elif isinstance(node, (ast.Return, ast.Raise, ast.Assert)):
            for part in (getattr(node, f, None) for f in ("value", "exc", "cause", "test", "msg")):
                if part is not None:
                    self.escape(self.expr(part), node, f"a table leaves through `{type(node).__name__.lower()}`")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            self.import_(node)
        elif not isinstance(node, (ast.Pass, ast.Break, ast.Continue, ast.Global, ast.Nonlocal, ast.Delete)):
            # (del keeps a name's last value: an over-approximation)
            self.unsupported(node, f"the statement {type(node).__name__}")

    def branches(self, bodies: list[list[ast.stmt]]) -> None:
        start, outcomes = self.env, []
        for body in bodies:
            self.env = dict(start)
            self.block(body)
            outcomes.append(self.env)
        self.env = _join_envs(outcomes)

    def loop(self, node: ast.For | ast.While) -> None:
        for round_ in range(5):
            start = dict(self.env)
            if isinstance(node, ast.For):  # iterated again each round: the body may grow the list
                self.bind(node.target, self.elements(self.expr(node.iter), node), node)
            else:
                self.expr(node.test)
            self.block(node.body)
            merged = _join_envs([start, self.env])
            if round_ >= 2:
                merged = {k: widen(start[k], v) if k in start else v for k, v in merged.items()}
            self.env = merged
            if merged == start:
                return
        self.unsupported(node, "a loop whose values do not settle")

    def try_(self, node: ast.Try) -> None:
        seen = [dict(self.env)]  # a handler may start after any statement of the body
        for statement in node.body:
            self.stmt(statement)
            seen.append(dict(self.env))
        self.block(node.orelse)
        outcomes = [self.env]
        for handler in node.handlers:
            self.env = _join_envs(seen)
            if handler.type is not None:
                self.expr(handler.type)
            if handler.name:
                self.env[handler.name] = OTHER
            self.block(handler.body)
            outcomes.append(self.env)
        self.env = _join_envs(outcomes + ([] if node.handlers else [_join_envs(seen)]))
        self.block(node.finalbody)

    def import_(self, node: ast.Import | ast.ImportFrom) -> None:
        for module in [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]:
            if module.split(".")[0] not in ALLOWED_IMPORTS:
                fail("extract.code.import", at(node), f"import of {module!r}: it can read data around the tools")
        for alias in node.names:
            if alias.name == "*":
                self.unsupported(node, "a star import")
            self.env[(alias.asname or alias.name).split(".")[0]] = OTHER

    def function(self, node: ast.FunctionDef | ast.Lambda) -> Val:
        """Read a body once, where it is defined, with unknown parameters: what it reads from enclosing
        variables is recorded, tables it returns leak, and a call to it is a call to unknown code."""
        for default in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
            self.escape(self.expr(default), node, "a table is a default argument")
        saved, args = self.env, node.args
        self.env = dict(saved)
        for arg in args.posonlyargs + args.args + args.kwonlyargs + [a for a in (args.vararg, args.kwarg) if a]:
            self.env[arg.arg] = OTHER
        if isinstance(node, ast.Lambda):
            self.escape(self.expr(node.body), node, "a function returns a table")
        else:
            self.block(node.body)
        self.env = _join_envs([saved, self.env])  # globals it changes; its locals too, harmlessly
        return OTHER

    def bind(self, target: ast.expr, value: Val, node: ast.AST) -> None:
        if isinstance(target, ast.Name):
            self.env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            starred = any(isinstance(t, ast.Starred) for t in target.elts)
            if value.fields is not None and not starred and len(value.fields) == len(target.elts):
                for part, inner in zip(target.elts, value.fields):
                    self.bind(part, inner, node)
            else:
                element = self.elements(value, node)
                for part in target.elts:
                    self.bind(part, Val(items=element) if isinstance(part, ast.Starred) else element, node)
        elif isinstance(target, ast.Starred):
            self.bind(target.value, value, node)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id in self.env:
            self.expr(target.slice)
            self.env[target.value.id] = join(self.env[target.value.id], Val(items=value))
        else:
            self.expr(target)
            self.escape(value, node, f"a table is stored into `{snippet(target)}`, which is not tracked")

    # ---- expressions ---------------------------------------------------------------------------
    def expr(self, node: ast.expr) -> Val:
        handler = HANDLERS.get(type(node))
        if handler is None:
            self.unsupported(node, f"the expression {type(node).__name__}")
        return getattr(self, handler)(node)

    def arithmetic(self, node: ast.BinOp) -> Val:
        return self.binop(node.op, self.expr(node.left), self.expr(node.right), node)

    def either(self, node: ast.BoolOp) -> Val:
        return join_all(self.expr(v) for v in node.values)

    def starred(self, node: ast.Starred) -> Val:
        return self.elements(self.expr(node.value), node)

    def slice(self, node: ast.Slice) -> Val:
        for part in (node.lower, node.upper, node.step):
            if part is not None:
                self.expr(part)
        return OTHER

    def constant(self, node: ast.Constant) -> Val:
        return Val(texts=frozenset({node.value})) if isinstance(node.value, str) else OTHER

    def name(self, node: ast.Name) -> Val:
        if node.id in self.env:
            return self.env[node.id]
        if node.id.startswith("__") or node.id in FORBIDDEN:
            fail("extract.code.dynamic", at(node), f"`{node.id}` can run or reach code the extractor cannot see")
        if node.id in TOOLS:
            return Val(funcs=frozenset({f"tool:{node.id}"}))
        return Val(funcs=frozenset({f"builtin:{node.id}"})) if hasattr(builtins, node.id) else OTHER

    def unary(self, node: ast.UnaryOp) -> Val:
        value = self.expr(node.operand)
        if not isinstance(node.op, ast.Not):
            self.escape(value, node, f"`{snippet(node)}` computes on a table")
        return OTHER

    def if_expression(self, node: ast.IfExp) -> Val:
        self.expr(node.test)
        return join(self.expr(node.body), self.expr(node.orelse))

    def named(self, node: ast.NamedExpr) -> Val:
        value = self.expr(node.value)
        self.bind(node.target, value, node)
        return value

    def literal(self, node: ast.List | ast.Tuple | ast.Set) -> Val:
        positional = not isinstance(node, ast.Set) and not any(isinstance(e, ast.Starred) for e in node.elts)
        return container([self.expr(e) for e in node.elts], positional)

    def dictionary(self, node: ast.Dict) -> Val:
        keys = [self.expr(k) for k in node.keys if k is not None]
        values = [self.expr(v) if k is not None else self.elements(self.expr(v), node)
                  for k, v in zip(node.keys, node.values)]
        return container(keys + values, positional=False)

    def comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp) -> Val:
        saved = self.env
        self.env = dict(saved)
        for generator in node.generators:
            self.bind(generator.target, self.elements(self.expr(generator.iter), node), node)
            for condition in generator.ifs:
                self.expr(condition)
        if isinstance(node, ast.DictComp):
            element = join(self.expr(node.key), self.expr(node.value))
        else:
            element = self.expr(node.elt)
        self.env = _join_envs([saved, self.env])  # lst.append and := inside reach the enclosing scope
        return Val(items=element)

    def elements(self, value: Val, node: ast.AST) -> Val:
        """What iterating over (or unpacking) the value yields."""
        parts = [value.items] if value.items is not None else []
        if value.tables:
            parts.append(Val(rows=value.tables))
        if value.rows:
            self.escape(Val(rows=value.rows), node, "iterating over a row yields every column's value")
        if value.rows or value.texts or value.other or value.funcs:
            parts.append(OTHER)
        return join_all(parts)

    def attribute(self, node: ast.Attribute) -> Val:
        if node.attr.startswith("__"):
            fail("extract.code.dynamic", at(node), f"attribute {node.attr!r} reaches interpreter internals")
        base = self.expr(node.value)
        tables = base.tables | base.rows
        if tables and node.attr not in SAFE_TABLE_ATTRS:
            if any(node.attr in self.schema[t] for t in tables):
                self.read(tables, node.attr, node, snippet(node))
            else:
                self.escape(base, node, f"`{snippet(node)}` uses the table in a way not modelled")
        return OTHER

    def subscript(self, node: ast.Subscript) -> Val:
        base, key = self.expr(node.value), self.expr(node.slice)
        parts: list[Val] = []
        tables = base.tables | base.rows
        if tables:
            names = [single_text(field) for field in key.fields or ()] if not key.texts else [single_text(key)]
            if names and None not in names:
                for column in names:
                    self.read(tables, column or "", node, snippet(node))
            else:
                self.escape(base, node, f"`{snippet(node)}` indexes the table by something other than column names")
            parts.append(OTHER)
        if base.items is not None:
            index = node.slice.value if isinstance(node.slice, ast.Constant) else None
            if base.fields is not None and isinstance(index, int) and -len(base.fields) <= index < len(base.fields):
                parts.append(base.fields[index])
            else:
                parts.append(Val(items=base.items) if isinstance(node.slice, ast.Slice) else base.items)
        if base.texts or base.other or base.funcs:
            parts.append(OTHER)
        return join_all(parts)

    def compare(self, node: ast.Compare) -> Val:
        operands = [self.expr(node.left)] + [self.expr(c) for c in node.comparators]
        for i, op in enumerate(node.ops):
            if not isinstance(op, (ast.Is, ast.IsNot)):
                self.escape(operands[i], node, f"`{snippet(node)}` compares a table")
                if not isinstance(op, (ast.In, ast.NotIn)):  # `'c' in row` looks at column labels only
                    self.escape(operands[i + 1], node, f"`{snippet(node)}` compares a table")
        return OTHER

    def binop(self, op: ast.operator, left: Val, right: Val, node: ast.AST) -> Val:
        if isinstance(op, ast.Add) and (left.texts or right.texts):
            return self.templates([self.parts(left, node), self.parts(right, node)])
        if isinstance(op, ast.Mod) and left.texts:
            self.escape(right, node, "a table is %-formatted into text")
            return self.templates([{PERCENT_SPEC.sub(HOLE, t).replace("%%", "%") for t in left.texts}])
        if isinstance(op, (ast.Add, ast.Mult)) and (left.items is not None or right.items is not None):
            return Val(items=join_all(v.items for v in (left, right) if v.items is not None))
        self.escape(join(left, right), node, "arithmetic on a table")
        return OTHER

    def parts(self, value: Val, node: ast.AST) -> set[str]:
        """The strings a value may contribute to a template; run-time values become HOLE."""
        self.escape(value, node, "a table is formatted into text")
        known = single_text(value)
        if known is not None:
            return {known}
        return set(value.texts) | ({HOLE} if value.other or value.items or value.funcs or not value.texts else set())

    def templates(self, pieces: list[set[str]]) -> Val:
        combined = {""}
        for options in pieces:
            combined = {a + b for a in combined for b in options}
            if len(combined) > MAX_TEXTS:
                return OTHER
        return Val(texts=frozenset(combined))

    def fstring(self, node: ast.JoinedStr) -> Val:
        pieces: list[set[str]] = []
        for part in node.values:
            if isinstance(part, ast.FormattedValue):
                options = self.parts(self.expr(part.value), node)
                if part.format_spec is not None:
                    self.expr(part.format_spec)
                pieces.append(options if part.conversion == -1 and part.format_spec is None else {HOLE})
            else:
                pieces.append({str(getattr(part, "value", ""))})
        return self.templates(pieces)

    def format(self, base: Val, node: ast.Call) -> Val:
        args, kwargs = self.args(node)
        self.escape(container(args + list(kwargs.values()), False), node, "a table is formatted into text")
        try:
            return Val(texts=frozenset(_format_template(t, args, kwargs) for t in base.texts), other=base.other)
        except (ValueError, IndexError, KeyError):
            return OTHER

    # ---- calls ---------------------------------------------------------------------------------
    def call(self, node: ast.Call) -> Val:
        if isinstance(node.func, ast.Attribute):
            return self.method(node)
        callee = self.expr(node.func)
        results = [self.tool(name[5:], node) if name.startswith("tool:") else self.builtin(name[8:], node)
                   for name in sorted(callee.funcs)]
        if callee.other or callee.texts or held_tables(callee) or not callee.funcs:
            results.append(self.call_unknown(node, f"`{snippet(node.func)}`"))
        return join_all(results)

    def args(self, node: ast.Call) -> tuple[list[Val], dict[str | None, Val]]:
        return [self.expr(a) for a in node.args], {k.arg: self.expr(k.value) for k in node.keywords}

    def call_unknown(self, node: ast.Call, what: str) -> Val:
        args, kwargs = self.args(node)
        self.escape(container(args + list(kwargs.values()), False), node, f"a table is passed to {what}")
        return OTHER

    def builtin(self, function: str, node: ast.Call) -> Val:
        if function in SAFE_BUILTINS:
            self.args(node)
            return OTHER
        if function in ITERATING_BUILTINS and len(node.args) == 1 and not node.keywords:
            return Val(items=self.elements(self.expr(node.args[0]), node))
        return self.call_unknown(node, f"{function}()")  # sorted(rows, key=f) hands every row to f

    def tool(self, function: str, node: ast.Call) -> Val:
        if function == "Calculate":  # EHRAgent's calculator parses arithmetic, nothing else
            return self.call_unknown(node, function)
        count = 2 if function in ("FilterDB", "GetValue") else 1
        if len(node.args) != count or node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            fail("extract.code.call", at(node), f"`{snippet(node)}` needs exactly {count} positional argument(s)")
        if function == "SQLInterpreter":
            self.sql(self.expr(node.args[0]), node)
            return OTHER
        if function == "Calendar":  # runs "select datetime(current_time, '<argument>')"
            shift = self.parts(self.expr(node.args[0]), node)
            self.sql(self.templates([{"select datetime(current_time, '"}, shift, {"')"}]), node)
            return OTHER
        if function == "LoadDB":
            return self.load_db(node, self.expr(node.args[0]))
        table = self.expr(node.args[0])
        tables = table.tables | table.rows
        if not tables:
            fail("extract.code.unresolved_table", at(node), f"{function} on `{snippet(node.args[0])}`: cannot "
                 "tell which table it holds (it is not traceable to a LoadDB)")
        self.columns_of(function, tables, self.expr(node.args[1]), node)
        return Val(tables=tables) if function == "FilterDB" else OTHER

    def load_db(self, node: ast.Call, name: Val) -> Val:
        if name.other or not name.texts or any(HOLE in t for t in name.texts) or held_tables(name):
            fail("extract.code.unresolved_table", at(node), f"LoadDB({snippet(node.args[0])}): the name is not a "
                 "constant, so the table cannot be determined")
        for table in sorted(name.texts):
            if table not in self.schema:
                fail("extract.code.unknown_table", at(node), f"LoadDB: no database named {table!r} in the schema")
            self.loaded.setdefault(table, f"{snippet(node)} line {node.lineno}")
        return Val(tables=name.texts)

    def columns_of(self, function: str, tables: frozenset[str], argument: Val, node: ast.Call) -> None:
        how = snippet(node)
        if single_text(argument) is None and (argument.other or not argument.texts or argument.items
                                              or argument.funcs or held_tables(argument)):
            self.read_whole(tables, node, f"{how}: its argument is not known statically")
        for template in sorted(argument.texts):
            if function == "GetValue":
                columns = [_getvalue_column(template, how, node)]
            else:
                columns = [_condition_column(c, how, node) for c in template.split("||") if c.strip()]
            for column in columns:
                if column is None:
                    self.read_whole(tables, node, f"{how}: a column name is only known at run time")
                else:
                    self.read(tables, column, node, how)

    def method(self, node: ast.Call) -> Val:
        assert isinstance(node.func, ast.Attribute)
        attr, receiver = node.func.attr, node.func.value
        if attr.startswith("__"):
            fail("extract.code.dynamic", at(node), f"method {attr!r} reaches interpreter internals")
        base = self.expr(receiver)
        tables = base.tables | base.rows
        if base.texts and attr == "format":
            return join(self.format(base, node), OTHER if tables else NOTHING)
        if tables and attr == "iterrows" and not node.args:
            return Val(items=Val(items=Val(rows=tables, other=True), fields=(OTHER, Val(rows=tables))))
        key = single_text(self.expr(node.args[0])) if tables and attr == "get" and node.args else None
        if key is not None:
            self.read(tables, key, node, snippet(node))
            return OTHER
        if base.items is not None and attr in ADDING_METHODS and node.args:
            args, _ = self.args(node)
            added = self.elements(args[-1], node) if attr in ("extend", "update") else args[-1]
            if isinstance(receiver, ast.Name) and receiver.id in self.env:
                self.env[receiver.id] = join(self.env[receiver.id], Val(items=added))
            else:
                self.escape(added, node, f"a table is added to `{snippet(receiver)}`, which is not tracked")
            return OTHER
        # lst.sort(key=f), df.merge(...), d.items(): the receiver's data reaches code not modelled
        self.escape(base, node, f"`.{attr}()` is an operation not modelled")
        return self.call_unknown(node, f"`.{attr}()`")

    # ---- SQL -----------------------------------------------------------------------------------
    def sql(self, query: Val, node: ast.Call) -> None:
        if query.other or not query.texts or query.items or query.funcs or held_tables(query):
            fail("extract.sql.unresolved", at(node), f"SQLInterpreter({snippet(node.args[0])}): the query is not "
                 "known statically, so its tables cannot be determined")
        for text in sorted(query.texts):
            for table, column, how in sql_reads(text, self.schema, at(node)):
                if column:
                    self.read_one(table, column, f"{snippet(node)} line {node.lineno}: {how} -> {table}.{column}")
                else:
                    self.loaded.setdefault(table, f"{snippet(node)} line {node.lineno}")


def sql_reads(text: str, schema: Mapping[str, frozenset[str]], where: str) -> list[tuple[str, str, str]]:
    """(table, column, how) for every column the query reads; (table, "", how) for every table it scans."""
    sql = text.replace(HOLE, SQL_HOLE)
    try:
        tokens = sqlglot.Dialect.get_or_raise("sqlite").tokenize(sql)
        statements = [s for s in sqlglot.parse(sql, read="sqlite") if s is not None]
    except SqlglotError as e:
        fail("extract.sql.syntax", where, f"the SQL does not parse: {_first_line(e)}")
    for token in tokens:
        if SQL_HOLE in token.text and token.token_type != TokenType.STRING and not (
                token.token_type == TokenType.NUMBER and token.text == SQL_HOLE):
            fail("extract.sql.dynamic", where, f"a run-time value forms part of the SQL name or keyword "
                 f"{token.text.replace(SQL_HOLE, '{…}')!r}, so the query's shape is unknown")
    if not statements:
        fail("extract.sql.syntax", where, "the SQL is empty")
    found: list[tuple[str, str, str]] = []
    for statement in statements:
        if not isinstance(statement, exp.Query):
            fail("extract.sql.statement", where, f"the SQL is a {statement.key.upper()} statement; only queries "
                 "are allowed")
        _check_holes(statement, where)
        ctes = {cte.alias_or_name.lower() for cte in statement.find_all(exp.CTE)}
        for named in statement.find_all(exp.Table):
            if named.name.lower() not in schema and named.name.lower() not in ctes:
                fail("extract.sql.unknown_table", where, f"the SQL reads table {named.name!r}, not in the schema")
        try:
            qualified = qualify(statement.copy(), schema={t: {c: "TEXT" for c in cs} for t, cs in schema.items()},
                                dialect="sqlite", validate_qualify_columns=True, quote_identifiers=False)
        except SqlglotError as e:
            fail("extract.sql.column", where, f"{_first_line(e)} (the column is unknown, or ambiguous between the "
                 "tables in scope)")
        for scope in traverse_scope(qualified):
            found += [(s.name.lower(), "", "FROM") for s in scope.sources.values() if isinstance(s, exp.Table)]
            for column in scope.columns:
                table = _source_table(scope, column.table)
                if table is None:
                    continue  # a column of a subquery or CTE: its own scope records what it reads
                if column.name.lower() not in schema[table]:
                    fail("extract.sql.column", where, f"the SQL reads {table}.{column.name}, not in the schema")
                found.append((table, column.name.lower(), f"SQL column {column.sql()}"))
    return found


def _source_table(scope: Scope | None, alias: str) -> str | None:
    if not alias:
        return None  # an output alias (ORDER BY n), not a table column
    while scope is not None:
        source = scope.sources.get(alias)
        if source is not None:
            return source.name.lower() if isinstance(source, exp.Table) else None
        scope = scope.parent
    fail("extract.sql.column", "SQL", f"column qualifier {alias!r} does not name a table in scope")


def _check_holes(statement: exp.Query, where: str) -> None:
    """A run-time value may stand where a value goes (compared, listed, limited), never elsewhere."""
    for literal in statement.find_all(exp.Literal):
        parent = literal.parent if not literal.is_string and literal.this == SQL_HOLE else None
        while parent is not None and not isinstance(parent, (exp.Predicate, exp.Limit, exp.Offset)):
            if isinstance(parent, (exp.Query, exp.Where, exp.Having, exp.From, exp.Join, exp.Order, exp.Group)):
                fail("extract.sql.dynamic", where, f"a run-time value stands in a {parent.key.upper()} clause "
                     "outside any comparison, where it could be a name")
            parent = parent.parent


def _condition_column(condition: str, how: str, node: ast.AST) -> str | None:
    """The column a FilterDB condition names; None when the name is only known at run time."""
    shown = condition.replace(HOLE, "{…}")
    selector = SELECTOR.fullmatch(condition)
    operator = None if selector else CONDITION_OP.search(condition)
    if not selector and operator is None:
        fail("extract.code.filter_syntax", at(node), f"{how}: condition {shown!r} has no comparison and is not "
             "max()/min()")
    name = selector.group(1).strip() if selector else condition[:operator.start()].strip()  # type: ignore[union-attr]
    if HOLE in name:
        return None
    if not name.isidentifier():
        fail("extract.code.filter_syntax", at(node), f"{how}: condition {shown!r} does not start with a column name")
    return name


def _getvalue_column(argument: str, how: str, node: ast.AST) -> str | None:
    column, *aggregations = [part.strip() for part in argument.split(",")]
    for aggregation in aggregations:
        if not any(a in aggregation for a in AGGREGATIONS) or HOLE in aggregation:
            fail("extract.code.getvalue_syntax", at(node), f"{how}: {aggregation!r} is not an aggregation "
                 f"({', '.join(AGGREGATIONS)})")
    if HOLE in column:
        return None
    if not column.isidentifier():
        fail("extract.code.getvalue_syntax", at(node), f"{how}: {column!r} is not a column name")
    return column


def _format_template(template: str, args: list[Val], kwargs: dict[str | None, Val]) -> str:
    """str.format on a template: constant arguments are filled in, anything else becomes HOLE."""
    out, auto = [], 0
    for literal, field, spec, conversion in string.Formatter().parse(template):
        out.append(literal)
        if field is None:
            continue
        key, rest = re.match(r"([^.\[]*)(.*)", field).groups()  # type: ignore[union-attr]
        if key == "":
            value, auto = args[auto], auto + 1
        else:
            value = args[int(key)] if key.isdigit() else kwargs[key]
        known = single_text(value)
        out.append(known if known is not None and not (rest or spec or conversion) else HOLE)
    return "".join(out)


def _join_envs(envs: list[dict[str, Val]]) -> dict[str, Val]:
    out: dict[str, Val] = {}
    for env in envs:
        for key, value in env.items():
            out[key] = join(out[key], value) if key in out else value
    return out


def _first_line(error: Exception) -> str:
    return " ".join(str(error).split("\n")[0].split())
