"""An abstract interpreter for an agent's Python program: which (table, column) pairs it may read.

It follows every path of the program over the abstract values of enforce/code_values.py, inside the
subset of enforce/code_subset.py, and records each column read with how it was read. What the
agent's own tools do is told by a ToolTable (enforce/ehragent_tools.py for EHRAgent), chosen by the
spec's [extraction] `language`. See enforce/extract_code.py for what counts as reading a column.
"""
from __future__ import annotations

import ast
import re
import string
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from veriguard.enforce.code_subset import (BUILTINS, CONSUMERS, CONTAINER_METHODS, CONTAINER_OPS,
                                           LIBRARY, NO_REVEAL, RAISES_ON_TABLE, SAFE_TABLE_ATTRS, STR_METHODS,
                                           TABLE_METHODS, VALUE_ATTRS, VALUE_FUNCTIONS, VALUE_METHODS,
                                           WHOLE_TABLE_ATTRS, check_constructs, construct_name,
                                           may_be_builtin, node_name)
from veriguard.enforce.code_values import (DATUM, EMPTY, HOLE, NOTHING, OTHER, STORED, Val, at, container, fail, is_text,
                                           join, join_all, may_split, single_text, snippet, unanalysable, widen)

PERCENT_TOKEN = re.compile(r"%%|%(?:\([^()%]*\))?[#0\- +]*\d*(?:\.\d+)?[sdifrxXeEgGc]|%")
FIELD_NAME = re.compile(r"\d*|[^\W\d]\w*")
MAX_TEXTS = 16
MAX_TEXT_CHARS = 100_000  # a string built longer than this is a run-time value (doubling it is exponential)
MAX_ROUNDS = 6
MIXED = "\x00mixed"  # in the env once a value the program did not compose may have been changed by code that may
# put composed text into it (a store, an append, a function or callback it is handed to): `pipes` no longer holds
NUMERIC = frozenset({"abs", "bool", "float", "int", "round", "divmod", "pow", "ord", "chr", "print", "len",
                     "isinstance"})  # builtins whose result holds no `||`: a number, one character, None
SUBSTRING = frozenset({"split", "rsplit", "splitlines", "strip", "lstrip", "rstrip", "partition", "rpartition",
                       "startswith", "endswith", "find", "rfind", "index", "rindex", "count", "isdigit", "isnumeric",
                       "isdecimal", "isalpha", "isalnum", "isspace", "islower", "isupper", "encode"})
KEEPING = SUBSTRING | frozenset({  # methods of a run-time value that give its parts, a number or a date, no new text
    "isoformat", "date", "time", "weekday", "isoweekday", "timestamp", "total_seconds", "ctime", "pop", "copy", "get",
    "items", "keys", "values", "tolist", "to_list", "unique", "nunique", "item", "mean", "max", "min", "value_counts",
    "most_common", "issubset", "issuperset", "union", "intersection", "difference"})
ADDING = frozenset({"append", "extend", "insert", "update", "setdefault", "add"})  # they put a value into the base
MAX_STEPS = 100_000  # statements and expressions read for all programs of one call; the largest log needs 790
HANDLERS = {ast.Constant: "constant", ast.Name: "name", ast.Call: "call", ast.Attribute: "attribute",
            ast.Subscript: "subscript", ast.Compare: "compare", ast.BinOp: "arithmetic", ast.BoolOp: "either",
            ast.UnaryOp: "unary", ast.IfExp: "if_expression", ast.JoinedStr: "fstring", ast.List: "literal",
            ast.Tuple: "literal", ast.Set: "literal", ast.Dict: "dictionary", ast.ListComp: "comprehension",
            ast.SetComp: "comprehension", ast.DictComp: "comprehension", ast.Lambda: "function",
            ast.Starred: "starred", ast.Slice: "slice", ast.GeneratorExp: "generator"}


@dataclass(frozen=True)
class CodeAccess:
    pairs: tuple[tuple[str, str], ...]
    provenance: tuple[str, ...]
    confidence: float
    notes: tuple[str, ...]


@dataclass(frozen=True)
class ToolTable:
    """What an agent's run time gives each program: its tools, and what a call of one of them reads."""

    language: str           # the name a spec's [extraction] `language` gives it
    tools: frozenset[str]   # names bound to the tools when a program starts
    header: frozenset[str]  # other names the agent binds (its modules): refused, they are not modelled
    answer: str             # bound to a run-time value when a program starts; its final value leaves
    call: Callable[[Interpreter, str, ast.Call], Val]  # a call of one of `tools`


class Interpreter:
    def __init__(self, schema: Mapping[str, Sequence[str]], steps: list[int], tools: ToolTable, *,
                 complete: bool, pipe_free_values: bool = False) -> None:
        self.tools = tools
        self.pipe_free_values = pipe_free_values  # the schema declares that no stored value holds `||` (stored())
        self.schema = {table: frozenset(columns) for table, columns in schema.items()}
        self.schema_key = tuple(sorted(self.schema.items()))
        self.complete = complete
        self.env: dict[str, Val] = {}
        self.heap: dict[int, Val] = {}       # container made at a place -> what iterating it yields
        self.mapped: dict[int, Val] = {}     # dict made at a place -> what its values may be
        self.scopes: list[tuple[bool, frozenset[str]]] = []  # enclosing functions (True) and comprehensions
        self.stable: dict[str, Val] = {}     # module names that never change: imports, functions defined once
        self.bound: frozenset[str] = EMPTY   # every name the module binds
        self.reads: dict[tuple[str, str], list[str]] = {}
        self.loaded: dict[str, str] = {}
        self.load_sites: dict[str, set[int]] = {}  # table -> every tool call that loaded it
        self.raising: set[int] = set()       # calls of the current top-level statement that certainly raise
        self.unused: frozenset[str] = EMPTY  # tables whose only use is the lookup that ends the program
        self.notes: list[str] = []
        self.confidence = 1.0
        self.catching: list[list[dict[str, Val]]] = []  # each enclosing try body: states a handler may start in
        self.jumps: list[tuple[list[dict[str, Val]], list[dict[str, Val]]]] = []  # each loop: break, continue states
        self.round = 0
        self.steps = steps  # statements and expressions left to read, shared with the other programs of the call

    # ---- results -------------------------------------------------------------------------------
    def run(self, tree: ast.Module) -> None:
        check_constructs(tree)
        self.stable, self.bound = _module_names(tree)
        for self.round in range(MAX_ROUNDS):  # the heap is shared by every place: read again until it settles
            heap = (dict(self.heap), dict(self.mapped))
            self.env = {self.tools.answer: OTHER}
            self.module(tree.body)
            if (self.heap, self.mapped) == heap:
                break
        else:
            unanalysable(tree.body[0], "containers whose contents do not settle")
        self.escape(self.env.get(self.tools.answer, NOTHING), tree.body[-1], "the answer is the table itself")
        for table, where in self.loaded.items():
            if table in self.unused:
                self.notes.append(f"{where}: {table} is used only by the lookup that raises; nothing of it is read")
            elif not any(t == table for t, _ in self.reads):
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

    def read(self, tables: frozenset[str], column: str, node: ast.AST, how: str, *, runs: bool = True) -> None:
        """`column` of one of `tables` is read; `runs` False: the lookup may not run at all (an earlier FilterDB
        condition that leaves no row ends the filter), so a column none of them has raises only perhaps."""
        owners = sorted(t for t in tables if column in self.schema[t])
        if not owners:
            if self.complete:  # no such column: the tool raises and reads nothing; the table's use is still unknown
                if runs:
                    self.raising.add(id(node))
                self.notes.append(f"{at(node)}: {how} names {column!r}, which {'/'.join(sorted(tables))} does not "
                                  "have: it raises when run")
                return
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

    def held(self, value: Val) -> tuple[frozenset[str], frozenset[str], frozenset[int]]:
        """Every database whose data the value or anything inside it may carry, every known callable, and every
        container it reaches."""
        tables: set[str] = set()
        funcs: set[str] = set()
        seen: set[int] = set()
        todo = [value]
        while todo:
            current = todo.pop()
            tables |= current.tables | current.rows
            funcs |= current.funcs
            todo += ([current.items] if current.items is not None else []) + list(current.fields or ())
            for loc in current.locs - seen:
                seen.add(loc)
                todo += [self.heap.get(loc, NOTHING), self.mapped.get(loc, NOTHING)]
        return frozenset(tables), frozenset(funcs), frozenset(seen)

    def composed(self, value: Val) -> bool:
        """Whether the value or anything it holds may be text with `||` that the program composed (see Val.pipes):
        its text, str() or repr() may then carry data_filter's separator."""
        return any(may_split(v) for v in self.reachable(value))

    def reachable(self, value: Val) -> Iterable[Val]:
        seen: set[int] = set()
        todo = [value]
        while todo:
            current = todo.pop()
            yield current
            todo += ([current.items] if current.items is not None else []) + list(current.fields or ())
            for loc in current.locs - seen:
                seen.add(loc)
                todo += [self.heap.get(loc, NOTHING), self.mapped.get(loc, NOTHING)]

    def mix(self, value: Val, *, composed: bool = True) -> None:
        """A run-time value the program did not compose, held by `value`, may be changed by code that puts composed
        text into it (`composed`): from here on no run-time value is taken to be free of `||` (MIXED)."""
        if composed and any(v.other and not v.pipes for v in self.reachable(value)):
            self.env[MIXED] = OTHER

    def mixed(self) -> bool:
        return MIXED in self.env

    def stored(self) -> Val:
        """A value as the database stores it (a column's values, a tool's result): not composed (DATUM) only when the
        schema declares that no stored value holds `||` (`no_pipes_in_values`, checked by whoever wrote it); else
        it may hold data_filter's separator (STORED): a value 'bob||diagnosis=flu' in patient.name, filtered on with
        FilterDB(db, 'name=' + name), adds a condition on diagnosis."""
        return DATUM if self.pipe_free_values else STORED

    def escape(self, value: Val, node: ast.AST, why: str) -> None:
        """The value reaches code not modelled: its tables count as read whole; a tool there is refused."""
        tables, funcs, _ = self.held(value)
        tools = sorted(f[5:] for f in funcs if f.startswith("tool:"))
        if tools:
            unanalysable(node, f"the tool {tools[0]} handed to code the extractor cannot follow "
                         f"({why.replace('a table', 'it')})")
        if tables:
            self.read_whole(tables, node, why)

    def hand_over(self, value: Val, node: ast.AST, why: str) -> None:
        """The value is handed to code not modelled (a function of the program, a callback, a library function):
        besides escaping, every container it reaches may be changed there, or come back under another name
        (`f(a)` returning `a`, `statistics.median_low([a])`), so each may now hold anything."""
        self.escape(value, node, why)
        for loc in self.held(value)[2]:
            self.grow(self.heap, loc, OTHER)
            if loc in self.mapped:
                self.grow(self.mapped, loc, OTHER)

    # ---- containers ----------------------------------------------------------------------------
    def new_container(self, node: ast.AST, element: Val, values: Val | None = None) -> Val:
        """A list or set (values None) or a dict (element: its keys) made at this place."""
        self.grow(self.heap, id(node), element)
        if values is not None:
            self.grow(self.mapped, id(node), values)
        return Val(locs=frozenset({id(node)}))

    def grow(self, store: dict[int, Val], loc: int, value: Val) -> None:
        old = store.get(loc, NOTHING)
        new = join(old, value)
        store[loc] = widen(old, new) if self.round >= 2 else new

    def elements(self, value: Val, node: ast.AST) -> Val:
        """What iterating over (or unpacking) the value yields."""
        parts = ([value.items] if value.items is not None else []) + list(value.fields or ())
        parts += [self.heap.get(loc, NOTHING) for loc in sorted(value.locs)]
        if value.tables:
            parts.append(Val(rows=value.tables))
        if value.rows:
            self.escape(Val(rows=value.rows), node, "iterating over a row yields every column's value")
        if value.rows or value.texts or value.other:  # a character, a column's value, or an element
            parts.append(Val(other=True, pipes=value.other and value.pipes))
        return join_all(parts)

    def entries(self, value: Val) -> Val:
        """What subscripting a container yields: a dict's values, a list's elements."""
        parts = ([value.items] if value.items is not None else []) + list(value.fields or ())
        parts += [self.mapped[loc] if loc in self.mapped else self.heap.get(loc, NOTHING) for loc in sorted(value.locs)]
        return join_all(parts)

    def store(self, receiver: Val, key: Val, value: Val, node: ast.AST) -> None:
        """`receiver[key] = value`, `receiver.append(value)` (key NOTHING), ...: what the receiver may now hold."""
        if receiver.tables or receiver.rows:
            unanalysable(node, f"a write into the table `{snippet(node)}`")
        if receiver.funcs:
            unanalysable(node, f"a write into a function or module `{snippet(node)}`")
        for loc in receiver.locs:
            if loc in self.mapped:
                self.grow(self.heap, loc, key)
                self.grow(self.mapped, loc, value)
            else:
                self.grow(self.heap, loc, value)
        if receiver.other or receiver.texts or receiver.items is not None:
            self.mix(receiver, composed=self.composed(join(key, value)))
            self.hand_over(join(key, value), node, f"a table is stored into `{snippet(node)}`, which is not tracked")

    def merge_into(self, receiver: Val, source: Val, node: ast.AST) -> None:
        """`receiver.extend(source)`, `.update(source)`, `+=`, `|=`: keys or elements, and values, of the source."""
        items = self.elements(source, node)
        for loc in receiver.locs:
            if loc in self.mapped:  # a dict takes another dict's keys and values, or (key, value) pairs
                pairs = self.elements(items, node)
                self.grow(self.heap, loc, join(items, pairs))
                self.grow(self.mapped, loc, join(self.entries(source), pairs))
            else:
                self.grow(self.heap, loc, items)

    # ---- statements ----------------------------------------------------------------------------
    def module(self, body: list[ast.stmt]) -> None:
        """The top level, up to a lookup there that certainly raises: the program ends there, nothing after runs."""
        self.unused = EMPTY
        for index, statement in enumerate(body):
            lookup = _top_lookup(statement)
            holder = self.lookup_table(lookup) if lookup is not None else NOTHING  # its value when the call runs
            self.raising = set()
            self.stmt(statement)
            if lookup is not None and holder != NOTHING and id(lookup) in self.raising:
                self.notes.append(f"{at(statement)}: `{snippet(statement)}` raises when run; nothing after it runs")
                self.unused = self.used_only_by(body[:index + 1], lookup, holder)
                return

    def lookup_table(self, lookup: ast.Call) -> Val:
        """The table a top-level lookup is called on, when the callee is certainly one tool and the value is
        certainly a table; NOTHING otherwise. Such a call raises when read() finds none of its tables has the
        column named by its constant argument."""
        assert isinstance(lookup.func, ast.Name) and isinstance(lookup.args[0], ast.Name)
        callee = self.name(lookup.func)  # evaluated first when the call runs, as here
        if len(callee.funcs) != 1 or callee != Val(funcs=callee.funcs) or not min(callee.funcs).startswith("tool:"):
            return NOTHING
        holder = self.name(lookup.args[0])
        return holder if holder.tables and holder == Val(tables=holder.tables) else NOTHING

    def used_only_by(self, body: list[ast.stmt], lookup: ast.Call, holder: Val) -> frozenset[str]:
        """The tables of `holder` that nothing but the failing lookup (the last statement of `body`) touched:
        loaded by one top-level `name = tool(constants)` and by no other call, the name mentioned nowhere else."""
        assert isinstance(lookup.args[0], ast.Name)
        name = lookup.args[0].id
        loads = [call for call in (_load_of(s, name) for s in body[:-1]) if call is not None]
        if len(loads) != 1 or sum(_mentions(s, name) for s in body) != 2:
            return EMPTY  # bound, aliased, passed or read elsewhere: its use is not known
        return frozenset(t for t in holder.tables if self.load_sites.get(t) == {id(loads[0])})

    def block(self, body: list[ast.stmt]) -> None:
        for statement in body:
            self.stmt(statement)

    def stmt(self, node: ast.stmt) -> None:
        self.spend(node)
        if isinstance(node, ast.Assign):
            value = self.expr(node.value)
            for target in node.targets:
                self.bind(target, value, node)
        elif isinstance(node, ast.AugAssign):
            self.augment(node)
        elif isinstance(node, ast.Expr):
            self.escape(self.expr(node.value), node, f"`{snippet(node.value)}` is shown as the cell's value")
        elif isinstance(node, ast.If):
            self.expr(node.test)
            self.branches([node.body, node.orelse])
        elif isinstance(node, (ast.For, ast.While)):
            self.loop(node)
        elif isinstance(node, ast.Try):
            self.try_(node)
        elif isinstance(node, ast.FunctionDef):
            self.env[node.name] = self.function(node)
        elif isinstance(node, (ast.Return, ast.Raise, ast.Assert)):
            for part in (getattr(node, f, None) for f in ("value", "exc", "cause", "test", "msg")):
                if part is not None:
                    self.escape(self.expr(part), node, f"a table leaves through `{type(node).__name__.lower()}`")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            self.import_(node)
        elif isinstance(node, (ast.Break, ast.Continue)) and self.jumps:
            self.jumps[-1][isinstance(node, ast.Continue)].append(dict(self.env))
        elif not isinstance(node, (ast.Pass, ast.Break, ast.Continue)):
            unanalysable(node, construct_name(node))
        for states in self.catching:  # anything after this statement may raise into an enclosing handler
            states.append(dict(self.env))

    def spend(self, node: ast.AST) -> None:
        """One statement or expression read: a loop reads its body again, so a big body nested in loops costs
        its size times the rounds; past the budget the program is refused, not waited on."""
        self.steps[0] -= 1
        if self.steps[0] < 0:
            unanalysable(node, "code too costly to follow (too big, or loops nested too deep)")

    def augment(self, node: ast.AugAssign) -> None:
        current = self.expr(node.target)  # expr ignores ctx, so the target reads as a load
        value = self.expr(node.value)
        result = self.binop(node.op, current, value, node)
        if current.locs and isinstance(node.op, CONTAINER_OPS):  # `lst += more` grows the same list in place
            self.merge_into(current, value, node)
            result = join(result, Val(locs=current.locs))
        if isinstance(node.op, CONTAINER_OPS):  # a run-time list or set grown in place: its aliases see it
            self.mix(current, composed=self.composed(value))
        self.bind(node.target, result, node)

    def branches(self, bodies: list[list[ast.stmt]]) -> None:
        start, outcomes = self.env, []
        for body in bodies:
            self.env = dict(start)
            self.block(body)
            outcomes.append(self.env)
        self.env = _join_envs(outcomes)

    def loop(self, node: ast.For | ast.While) -> None:
        breaks: list[dict[str, Val]] = []
        continues: list[dict[str, Val]] = []
        self.jumps.append((breaks, continues))
        try:
            for round_ in range(5):
                start = dict(self.env)
                if isinstance(node, ast.For):  # iterated again each round: the body may grow the list
                    self.bind(node.target, self.elements(self.expr(node.iter), node), node)
                else:
                    self.expr(node.test)
                self.block(node.body)
                merged = _join_envs([start, self.env] + continues)
                if round_ >= 2:
                    merged = {k: widen(start[k], v) if k in start else v for k, v in merged.items()}
                self.env = merged
                if merged == start:
                    break
            else:
                unanalysable(node, "a loop whose values do not settle")
        finally:
            self.jumps.pop()
        self.block(node.orelse)
        self.env = _join_envs([self.env] + breaks)  # a break leaves with the state it had, skipping the else

    def try_(self, node: ast.Try) -> None:
        seen = [dict(self.env)]  # a handler may start in any state the body passes through, at any depth
        left = [dict(self.env)]  # the finally block may start in any state of body, else or handlers: an exception
        self.catching.append(left)  # they do not catch, a break, a continue or a return leaves through it
        loop = self.jumps[-1] if self.jumps else ([], [])
        jumped = len(loop[0]), len(loop[1])
        try:
            self.catching.append(seen)
            try:
                self.block(node.body)
            finally:
                self.catching.pop()
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
        finally:
            self.catching.pop()
        self.env = _join_envs(outcomes + ([] if node.handlers else [_join_envs(seen)]))
        if not node.finalbody:
            return
        self.env = _join_envs([self.env] + left)
        self.block(node.finalbody)
        for states, before in zip(loop, jumped):  # a break or continue in the try leaves after the finally block
            if len(states) > before:
                states.append(dict(self.env))

    def import_(self, node: ast.Import | ast.ImportFrom) -> None:
        for alias in node.names:
            if isinstance(node, ast.Import):
                name, bound = alias.name, alias.asname or alias.name
            else:
                name, bound = f"{node.module}.{alias.name}", alias.asname or alias.name
            if name not in LIBRARY or (isinstance(node, ast.Import) and LIBRARY[name] != "module"):
                modules = ", ".join(m for m, kind in LIBRARY.items() if kind == "module")
                unanalysable(node, f"the import of {name!r} (only {modules} and their listed members)")
            self.env[bound] = _library_value(name)

    def function(self, node: ast.FunctionDef | ast.Lambda) -> Val:
        """Read a body once, where it is defined, with unknown parameters; a call to it is unknown code."""
        for default in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
            value = self.expr(default)
            self.mix(value)
            self.hand_over(value, node, "a table is a default argument")
        args = node.args
        params = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs + [a for a in (args.vararg,
                                                                                              args.kwarg) if a]]
        local = frozenset(params) | (_bound_names(node.body) if isinstance(node, ast.FunctionDef) else EMPTY)
        saved = self.env, self.catching, self.jumps  # its body runs in a frame of its own
        self.env, self.catching, self.jumps = {p: OTHER for p in params}, [], []
        self.scopes.append((True, local))
        try:
            if isinstance(node, ast.Lambda):
                self.escape(self.expr(node.body), node, "a function returns a table")
            else:
                self.block(node.body)
        finally:
            self.scopes.pop()
            self.env, self.catching, self.jumps = saved
        return Val(funcs=frozenset({f"user:{id(node)}"}))

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
                    if isinstance(part, ast.Starred):  # `a, *rest = ...`: rest is a new list
                        self.bind(part.value, self.new_container(part, element), node)
                    else:
                        self.bind(part, element, node)
        elif isinstance(target, ast.Subscript):
            receiver, key = self.expr(target.value), self.expr(target.slice)
            spliced = isinstance(target.slice, ast.Slice)  # `a[i:j] = b` puts b's elements in, not b
            self.store(receiver, key, self.elements(value, node) if spliced else value, target)
        else:
            unanalysable(target, f"a store into `{snippet(target)}`")

    # ---- expressions ---------------------------------------------------------------------------
    def expr(self, node: ast.expr) -> Val:
        self.spend(node)
        handler = HANDLERS.get(type(node))
        if handler is None:
            unanalysable(node, construct_name(node))
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
                self.escape(self.expr(part), node, "a table is a slice bound")
        return OTHER

    def constant(self, node: ast.Constant) -> Val:
        if isinstance(node.value, str):
            return Val(texts=frozenset({node.value}))
        return OTHER if isinstance(node.value, bytes) else DATUM  # a number, None, True: no `||` in its text

    def name(self, node: ast.Name) -> Val:
        if node.id in self.env:
            return self.env[node.id]
        functions = [i for i, (is_function, _) in enumerate(self.scopes) if is_function]
        if functions:
            return self.global_name(node, functions[-1])
        return self.unbound_name(node)

    def global_name(self, node: ast.Name, innermost: int) -> Val:
        """A name a function body reads that is not (yet) one of its own: it is looked up when called."""
        if any(node.id in names for _, names in self.scopes[innermost:]):
            return NOTHING  # its own local (or a comprehension's) read before it is bound: it raises
        if any(node.id in names for _, names in self.scopes[:innermost]):
            unanalysable(node, f"a closure over `{node.id}` (read when the function runs, not where it is "
                         "defined)")
        if node.id in self.stable:
            return self.stable[node.id]
        if node.id in self.bound:
            unanalysable(node, f"the global `{node.id}` read in a function (it may be rebound before the "
                         "function runs)")
        return self.unbound_name(node)

    def unbound_name(self, node: ast.Name) -> Val:
        if node.id == self.tools.answer:  # bound before the program starts
            return OTHER
        if node.id in self.tools.tools:
            return Val(funcs=frozenset({f"tool:{node.id}"}))
        if node.id in BUILTINS:
            return Val(funcs=frozenset({f"builtin:{node.id}"}))
        if node.id in self.tools.header or may_be_builtin(node.id):
            unanalysable(node, f"the name `{node.id}` (a builtin in some Python, or the agent's)")
        return NOTHING  # bound nowhere: NameError when run

    def unary(self, node: ast.UnaryOp) -> Val:
        value = self.expr(node.operand)
        if not isinstance(node.op, ast.Not):
            self.escape(value, node, f"`{snippet(node)}` computes on a table")
        return DATUM  # a number or a truth value

    def if_expression(self, node: ast.IfExp) -> Val:
        self.expr(node.test)
        return join(self.expr(node.body), self.expr(node.orelse))

    def literal(self, node: ast.List | ast.Tuple | ast.Set) -> Val:
        elements = [self.expr(e) for e in node.elts]
        if isinstance(node, ast.Tuple):
            return container(elements, positional=not any(isinstance(e, ast.Starred) for e in node.elts))
        return self.new_container(node, join_all(elements))

    def dictionary(self, node: ast.Dict) -> Val:
        keys, values = [], []
        for key, value in zip(node.keys, node.values):
            if key is None:  # {**other}: a table's entries are its columns, all of them
                inner = self.expr(value)
                self.escape(Val(tables=inner.tables, rows=inner.rows), node, "`**` copies every column of a table")
                keys.append(self.elements(inner, node))
                values.append(self.entries(inner))
            else:
                keys.append(self.expr(key))
                values.append(self.expr(value))
        return self.new_container(node, join_all(keys), join_all(values))

    def comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp) -> Val:
        saved = self.env
        self.env = dict(saved)
        targets = frozenset(n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name))
        self.scopes.append((False, targets))  # a lambda inside may not close over these
        try:
            for generator in node.generators:
                self.bind(generator.target, self.elements(self.expr(generator.iter), node), node)
                for condition in generator.ifs:
                    self.expr(condition)
            key = self.expr(node.key if isinstance(node, ast.DictComp) else node.elt)
            values = self.expr(node.value) if isinstance(node, ast.DictComp) else None
        finally:
            self.scopes.pop()
            if self.mixed():
                saved[MIXED] = OTHER
            self.env = saved  # its variables stay inside; what it adds to containers is in the heap
        return self.new_container(node, key, values)

    def generator(self, node: ast.GeneratorExp) -> Val:
        unanalysable(node, "a generator expression not consumed at once (it runs later, when iterated)")

    def argument(self, node: ast.expr, *, consumer: bool) -> Val:
        if consumer and isinstance(node, ast.GeneratorExp):
            return self.comprehension(node)
        return self.expr(node)

    def attribute(self, node: ast.Attribute) -> Val:
        base = self.expr(node.value)
        attr, parts = node.attr, []
        for q in sorted(f[4:] for f in base.funcs if f.startswith("lib:")):
            parts.append(self.library_member(q, attr, node))
        if base.funcs - {f for f in base.funcs if f.startswith("lib:")}:
            unanalysable(node, f"the attribute {attr!r} of a function")
        tables = base.tables | base.rows
        if tables:  # the database's values, as stored
            if attr in SAFE_TABLE_ATTRS or attr in TABLE_METHODS:
                parts.append(self.stored())
            elif any(attr in self.schema[t] for t in tables):
                self.read(tables, attr, node, snippet(node))
                parts.append(self.stored())
            elif attr in WHOLE_TABLE_ATTRS:
                self.read_whole(tables, node, f"`{snippet(node)}` exposes the whole table")
                parts.append(self.stored())
            else:
                unanalysable(node, f"the attribute {attr!r} of a table")
        if base.texts and attr not in STR_METHODS:
            unanalysable(node, f"the attribute {attr!r} of a string")
        if (base.locs or base.items is not None) and attr not in CONTAINER_METHODS:
            unanalysable(node, f"the attribute {attr!r} of a list, dict or set")
        if base.other and attr not in VALUE_ATTRS | VALUE_METHODS:
            unanalysable(node, f"the attribute {attr!r} of a run-time value")
        if base.texts or base.locs or base.items is not None or base.other:  # a part of it, a date's year, a method
            parts.append(Val(other=True, pipes=self.composed(base)))  # (calling that later is refused)
        return join_all(parts)

    def library_member(self, q: str, attr: str, node: ast.AST) -> Val:
        member = f"{q}.{attr}"
        if member not in LIBRARY:
            unanalysable(node, f"the attribute {attr!r} of {q} (not one of its listed members)")
        return _library_value(member)

    def subscript(self, node: ast.Subscript) -> Val:
        base, key = self.expr(node.value), self.expr(node.slice)
        if base.funcs:
            unanalysable(node, f"a subscript of a function or module `{snippet(node)}`")
        parts: list[Val] = []
        tables = base.tables | base.rows
        if tables:
            listed = node.slice.elts if isinstance(node.slice, (ast.List, ast.Tuple)) else []
            names = [single_text(self.expr(e)) for e in listed] if listed else [single_text(key)]
            if names and None not in names:
                for column in names:
                    self.read(tables, column or "", node, snippet(node))
            else:
                self.escape(base, node, f"`{snippet(node)}` indexes the table by something other than column names")
            parts.append(self.stored())
        if base.items is not None or base.locs:
            index = node.slice.value if isinstance(node.slice, ast.Constant) else None
            if base.fields is not None and isinstance(index, int) and -len(base.fields) <= index < len(base.fields):
                parts.append(base.fields[index])
            elif isinstance(node.slice, ast.Slice):
                parts.append(self.new_container(node, self.elements(Val(items=base.items, locs=base.locs), node)))
            else:
                parts.append(self.entries(Val(items=base.items, fields=base.fields, locs=base.locs)))
        if base.texts or base.other:  # a character or a slice of the text, an element of the value
            self.escape(key, node, "a table is used as a key")
            stepped = isinstance(node.slice, ast.Slice) and node.slice.step is not None  # '|a|'[::2] is '||'
            parts.append(Val(other=True, pipes=stepped or may_split(base)))
        return join_all(parts)

    def compare(self, node: ast.Compare) -> Val:
        operands = [self.expr(node.left)] + [self.expr(c) for c in node.comparators]
        for i, op in enumerate(node.ops):
            if not isinstance(op, (ast.Is, ast.IsNot)):
                self.escape(operands[i], node, f"`{snippet(node)}` compares a table")
                if not isinstance(op, (ast.In, ast.NotIn)):  # `'c' in row` looks at column labels only
                    self.escape(operands[i + 1], node, f"`{snippet(node)}` compares a table")
        return DATUM  # a truth value

    def binop(self, op: ast.operator, left: Val, right: Val, node: ast.AST) -> Val:
        if isinstance(op, ast.Add) and (left.texts or right.texts):
            return self.templates([self.parts(left, node), self.parts(right, node)], pipes=left.pipes or right.pipes)
        if isinstance(op, ast.Mod) and left.texts:  # the template may be something else too: that computes on right
            self.escape(join(Val(tables=left.tables, rows=left.rows), right), node, "a table is %-formatted into text")
            formatted = self.templates([{_percent_template(t) for t in left.texts}],
                                       pipes=left.pipes or self.composed(right))
            return formatted if is_text(left) else join(formatted, OTHER)
        sides = [v for v in (left, right) if v.locs or v.items is not None]
        if isinstance(op, CONTAINER_OPS) and sides:  # a side that may be a table too computes on the table
            others = [v for v in (left, right) if not (v.locs or v.items is not None)]
            tables = [Val(tables=v.tables, rows=v.rows) for v in sides]
            self.escape(join_all(others + tables), node, "arithmetic on a table")
            elements = join_all(self.elements(v, node) for v in sides)
            if any(loc in self.mapped for v in sides for loc in v.locs):  # `a | b` of dicts keeps their values
                return self.new_container(node, elements, join_all(self.entries(v) for v in sides))
            return self.new_container(node, elements)
        self.escape(join(left, right), node, "arithmetic on a table")
        joins = isinstance(op, (ast.Add, ast.Mult, ast.Mod))  # run-time texts joined, repeated or formatted
        return Val(other=True, pipes=joins or self.composed(left) or self.composed(right))

    def parts(self, value: Val, node: ast.AST) -> set[str]:
        """The strings a value may contribute to a template; run-time values become HOLE."""
        self.escape(value, node, "a table is formatted into text")
        known = single_text(value)
        if known is not None:
            return {known}
        return set(value.texts) | ({HOLE} if not is_text(value) else set())

    def templates(self, pieces: list[set[str]], *, pipes: bool) -> Val:
        """The strings the pieces joined may make; too many, or one too long, is a run-time value. `pipes`: a
        run-time part (HOLE) may hold `||` (Val.pipes)."""
        combined = {""}
        for options in pieces:
            if max(map(len, combined)) + max(map(len, options), default=0) > MAX_TEXT_CHARS:
                return OTHER
            combined = {a + b for a in combined for b in options}
            if len(combined) > MAX_TEXTS:
                return OTHER
        return Val(texts=frozenset(combined), pipes=pipes)

    def fstring(self, node: ast.JoinedStr) -> Val:
        pieces: list[set[str]] = []
        pipes = False
        for part in node.values:
            if isinstance(part, ast.FormattedValue):
                value = self.expr(part.value)
                options = self.parts(value, node)
                if part.format_spec is not None:
                    self.expr(part.format_spec)
                pieces.append(options if part.conversion == -1 and part.format_spec is None else {HOLE})
                pipes = pipes or part.format_spec is not None or self.composed(value)  # a spec may pad with `|`
            else:
                pieces.append({str(getattr(part, "value", ""))})
        return self.templates(pieces, pipes=pipes)

    def format(self, base: Val, node: ast.Call) -> Val:
        if not is_text(base) or any(HOLE in t for t in base.texts):
            unanalysable(node, "str.format on a template known only at run time (its fields could reach into "
                         "the arguments)")
        for template in base.texts:
            _check_format_fields(template, node)
        args, kwargs = self.args(node)
        self.escape(container(args + list(kwargs.values()), positional=False), node, "a table is formatted into text")
        pipes = base.pipes or self.composed(container(args + list(kwargs.values()), positional=False))
        try:
            return Val(texts=frozenset(_format_template(t, args, kwargs) for t in base.texts),
                       pipes=pipes or any(map(_has_spec, base.texts)))  # a spec may pad with `|`
        except (ValueError, IndexError, KeyError):
            return OTHER

    # ---- calls ---------------------------------------------------------------------------------
    def call(self, node: ast.Call) -> Val:
        if isinstance(node.func, ast.Attribute):
            return self.method(node)
        if self.raises_on_table(node):
            return NOTHING
        callee = self.expr(node.func)
        if callee == NOTHING:
            return NOTHING  # the callee raised: the arguments never run
        if callee != Val(funcs=callee.funcs):
            unanalysable(node, f"a call of `{snippet(node.func)}`, which is not a known function")
        results = []
        for function in sorted(callee.funcs):
            kind, _, name = function.partition(":")
            if kind == "tool":
                results.append(self.tool_call(name, node))
            elif kind == "builtin":
                results.append(self.builtin(name, node))
            elif kind == "lib":
                results.append(self.library_call(name, node))
            else:  # the program's function: it may change what it is given
                results.append(self.call_unknown(node, f"`{snippet(node.func)}`", handed=True))
        return join_all(results)

    def tool_call(self, name: str, node: ast.Call) -> Val:
        """A call of one of the agent's tools; every table it loads is noted as loaded by this call."""
        outer, self.loaded = self.loaded, {}
        try:
            result = self.tools.call(self, name, node)
            return self.stored() if result == DATUM else result  # a tool's value not composed: as stored
        finally:
            inner, self.loaded = self.loaded, outer
            for table, where in inner.items():
                outer.setdefault(table, where)
                self.load_sites.setdefault(table, set()).add(id(node))

    def raises_on_table(self, node: ast.Call) -> bool:
        """eval/exec/compile of a value that is certainly a table: a TypeError before anything runs."""
        name = node.func.id if isinstance(node.func, ast.Name) else ""
        shadowed = name in self.env or name in self.bound or any(name in names for _, names in self.scopes)
        if name not in RAISES_ON_TABLE or shadowed:
            return False
        if len(node.args) != 1 or node.keywords:
            return False
        value = self.expr(node.args[0])  # LoadDB and FilterDB give DataFrames; a "row" may be a column name
        if not value.tables or value != Val(tables=value.tables):
            return False
        self.notes.append(f"{at(node)}: {name}() of a table raises TypeError; nothing runs")
        return True

    def args(self, node: ast.Call, *, consumer: bool = False) -> tuple[list[Val], dict[str | None, Val]]:
        return ([self.argument(a, consumer=consumer and len(node.args) == 1) for a in node.args],
                {k.arg: self.expr(k.value) for k in node.keywords})

    def call_unknown(self, node: ast.Call, what: str, *, keeps: bool = False, handed: bool = False,
                     changes: Val = NOTHING) -> Val:
        """A call of code not modelled; `keeps`: its result holds `||` only if its arguments may (a function of
        the library: a number, a date, one of the values given); `handed`: the code may change what it is given
        (the program's own function); `changes`: a run-time value the call puts its arguments into (`.append`)."""
        args, kwargs = self.args(node)
        given = container(args + list(kwargs.values()), positional=False)
        self.mix(given, composed=handed)
        self.mix(changes, composed=self.composed(given))
        self.hand_over(given, node, f"a table is passed to {what}")
        return Val(other=True, pipes=not keeps or self.composed(given))

    def builtin(self, function: str, node: ast.Call) -> Val:
        if function in NO_REVEAL:
            self.args(node)
            return DATUM
        if function in VALUE_FUNCTIONS:
            result = self.call_unknown(node, f"{function}()", keeps=function in ("str", "repr"))
            return DATUM if function in NUMERIC else result
        args, kwargs = self.args(node, consumer=function in CONSUMERS)
        callbacks = [v for v in kwargs.values() if v.funcs] + [v for v in args if v.funcs]
        if callbacks or function in ("sum", "any", "all", "range"):  # the elements reach code not modelled
            self.mix(container(args + list(kwargs.values()), positional=False), composed=bool(callbacks))
            self.hand_over(container(args + list(kwargs.values()), positional=False), node, f"a table is passed to {function}()")
        if function in ("sum", "any", "all"):
            return OTHER if function == "sum" else DATUM
        elements = [self.elements(a, node) for a in args]
        if function in ("min", "max"):
            found = elements[0] if len(args) == 1 else join_all(args)
            return join(found, kwargs.get("default", NOTHING))
        if function == "enumerate":
            element = Val(fields=(DATUM, elements[0] if elements else NOTHING))
        elif function == "zip":
            element = Val(fields=tuple(elements))
        elif function == "dict":
            made = self.new_container(node, Val(texts=frozenset(k for k in kwargs if k)), join_all(kwargs.values()))
            for arg in args:
                self.merge_into(made, arg, node)
            return made
        elif function == "range":
            element = DATUM
        else:
            element = elements[0] if elements else NOTHING
        return self.new_container(node, element)

    def library_call(self, q: str, node: ast.Call) -> Val:
        kind = LIBRARY[q]
        if kind in ("module", "constant"):
            unanalysable(node, f"a call of {q}, which is not callable")
        if kind != "container":
            return self.call_unknown(node, q, keeps=True)
        args, kwargs = self.args(node)
        callables = [v for v in args + list(kwargs.values()) if v.funcs]  # defaultdict(factory)
        self.escape(join_all(callables), node, f"a function is handed to {q}")
        sources = [v for v in args if not v.funcs]
        if q == "collections.deque":
            return self.new_container(node, join_all(self.elements(v, node) for v in sources))
        made = self.new_container(node, Val(texts=frozenset(k for k in kwargs if k)), join_all(kwargs.values()))
        for source in sources:  # a Counter copies a mapping's keys and values, and counts a sequence's elements
            self.merge_into(made, source, node)
        if q in ("collections.Counter", "collections.defaultdict"):  # a count, or whatever the factory makes
            self.grow(self.mapped, id(node), OTHER)
        return made

    def method(self, node: ast.Call) -> Val:
        assert isinstance(node.func, ast.Attribute)
        attr = node.func.attr
        base = self.expr(node.func.value)
        if base == NOTHING:
            return NOTHING
        results = []
        for q in sorted(f[4:] for f in base.funcs if f.startswith("lib:")):
            member = f"{q}.{attr}"
            if member not in LIBRARY:
                unanalysable(node, f"the attribute {attr!r} of {q} (not one of its listed members)")
            results.append(self.library_call(member, node))
        if base.funcs - {f for f in base.funcs if f.startswith("lib:")}:
            unanalysable(node, f"the method {attr!r} of a function")
        if base.tables or base.rows:
            results.append(self.table_method(base, attr, node))
        if base.texts:
            results.append(self.text_method(base, attr, node))
        if base.locs or base.items is not None:
            results.append(self.container_method(Val(items=base.items, fields=base.fields, locs=base.locs), attr,
                                                 node))
        if base.other:
            if attr not in VALUE_METHODS:
                unanalysable(node, f"the method {attr!r} of a run-time value")
            if attr == "sort" and node.keywords:  # the key function is handed every element
                self.mix(base)
            result = self.call_unknown(node, f"`.{attr}()`", keeps=attr in KEEPING,
                                       changes=base if attr in ADDING else NOTHING)
            results.append(join(result, Val(other=True, pipes=self.composed(base))) if attr in KEEPING else result)
        return join_all(results)

    def table_method(self, base: Val, attr: str, node: ast.Call) -> Val:
        tables = base.tables | base.rows
        if attr == "iterrows" and base.tables and not node.args and not node.keywords:
            return Val(items=Val(items=Val(rows=tables, other=True), fields=(DATUM, Val(rows=tables))))
        key = single_text(self.expr(node.args[0])) if attr == "get" and node.args else None
        if key is not None:  # a missing column gives the default (None), never raises: read it as the value may be
            default = join_all([self.expr(a) for a in node.args[1:]] + [self.expr(k.value) for k in node.keywords])
            self.read(tables, key, node, snippet(node), runs=False)
            return join(self.stored(), default)
        if attr in TABLE_METHODS or attr == "get":
            self.read_whole(tables, node, f"`.{attr}()` reads the whole table")
            return self.call_unknown(node, f"`.{attr}()`", keeps=attr != "sum")  # sum joins a text column's values
        unanalysable(node, f"the method {attr!r} of a table")

    def text_method(self, base: Val, attr: str, node: ast.Call) -> Val:
        if attr == "format":
            return self.format(Val(texts=base.texts), node)
        if attr == "join":
            args, _ = self.args(node, consumer=True)
            self.escape(join_all(self.elements(a, node) for a in args), node, "a table is joined into text")
            return OTHER
        if attr not in STR_METHODS:
            unanalysable(node, f"the method {attr!r} of a string")
        result = self.call_unknown(node, f"`.{attr}()`", keeps=attr in SUBSTRING)
        return Val(other=True, pipes=may_split(base)) if attr in SUBSTRING and not result.pipes else result

    def container_method(self, base: Val, attr: str, node: ast.Call) -> Val:
        if attr not in CONTAINER_METHODS:
            unanalysable(node, f"the method {attr!r} of a list, dict or set")
        args, kwargs = self.args(node)
        if attr in ("append", "add", "appendleft", "insert"):
            self.store(base, NOTHING, join_all(args[1:] if attr == "insert" else args), node)
            return OTHER
        if attr in ("extend", "update"):
            for source in args:
                self.merge_into(base, source, node)
            self.store(base, Val(texts=frozenset(k for k in kwargs if k)), join_all(kwargs.values()), node)
            return OTHER
        if attr == "setdefault":
            self.store(base, join_all(args[:1]), join_all(args[1:] or [OTHER]), node)  # default None
            return join(self.entries(base), join_all(args[1:] or [OTHER]))
        if attr in ("get", "pop", "popleft"):  # a missing key gives get's default (None), or raises
            self.escape(join_all(args[:1]), node, "a table is used as a key")
            return join(self.entries(base), join_all(args[1:] or [OTHER if attr == "get" else NOTHING]))
        if attr == "copy":
            return base
        if attr in ("items", "keys", "values", "most_common"):  # read from the heap as it is once settled
            keys, values = self.elements(base, node), self.entries(base)
            return Val(items={"keys": keys, "values": values, "items": Val(fields=(keys, values)),
                              "most_common": Val(fields=(keys, values))}[attr])
        if attr in ("union", "intersection", "difference", "symmetric_difference"):
            element = self.elements(base, node)
            return self.new_container(node, join_all([element] + [self.elements(a, node) for a in args]))
        if attr == "sort" and kwargs.get("key", NOTHING).funcs:  # the key function sees every element
            self.mix(base)
            self.hand_over(base, node, "a table is handed to a sort key")
        self.escape(container(args + list(kwargs.values()), positional=False), node, f"a table is passed to `.{attr}()`")
        return OTHER


def _library_value(name: str) -> Val:
    return OTHER if LIBRARY[name] == "constant" else Val(funcs=frozenset({f"lib:{name}"}))



def _top_lookup(statement: ast.stmt) -> ast.Call | None:
    """`[target =] f(name, 'text')`: the shape of a top-level lookup that may end the program."""
    call = statement.value if isinstance(statement, (ast.Assign, ast.Expr)) else None
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name) or call.keywords or len(call.args) != 2:
        return None
    name, column = call.args
    if isinstance(name, ast.Name) and isinstance(column, ast.Constant) and isinstance(column.value, str):
        return call
    return None


def _load_of(statement: ast.stmt, name: str) -> ast.Call | None:
    """The call of `name = f(constants)`, a statement that binds only `name` and does nothing else."""
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return None
    target, call = statement.targets[0], statement.value
    if not (isinstance(target, ast.Name) and target.id == name and isinstance(call, ast.Call)):
        return None
    if isinstance(call.func, ast.Name) and not call.keywords and all(isinstance(a, ast.Constant) for a in call.args):
        return call
    return None


def _mentions(tree: ast.AST, name: str) -> int:
    """How many times the identifier appears in the tree, as a name read or bound in any scope."""
    return sum(1 for node in ast.walk(tree) if (named := node_name(node)) is not None and named[0] == name)


def _module_names(tree: ast.Module) -> tuple[dict[str, Val], frozenset[str]]:
    """Module names a function may read (bound only by one import, or by one def), and every bound name."""
    bindings: dict[str, list[tuple[str, object]]] = {}
    for name, how in _bindings(tree.body):
        bindings.setdefault(name, []).append(how)
    stable: dict[str, Val] = {}
    for name, hows in bindings.items():
        kind, what = hows[0]
        if kind == "import" and all(h == hows[0] for h in hows) and what in LIBRARY:
            stable[name] = _library_value(str(what))
        elif kind == "def" and len(hows) == 1:
            stable[name] = Val(funcs=frozenset({f"user:{what}"}))
    return stable, frozenset(bindings)


def _bound_names(body: list[ast.stmt]) -> frozenset[str]:
    return frozenset(name for name, _ in _bindings(body))


def _bindings(body: list[ast.stmt]) -> Iterable[tuple[str, tuple[str, object]]]:
    """(name, how) for every name the statements bind in their own scope (not inside functions)."""
    for node in body:
        if isinstance(node, ast.FunctionDef):
            yield node.name, ("def", id(node))
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                qualified = alias.name if isinstance(node, ast.Import) else f"{node.module}.{alias.name}"
                yield alias.asname or alias.name, ("import", qualified)
            continue
        targets = (node.targets if isinstance(node, ast.Assign) else
                   [node.target] if isinstance(node, (ast.AugAssign, ast.For)) else [])
        for target in targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Store):
                    yield name.id, ("other", None)
        for handler in getattr(node, "handlers", []):
            if handler.name:
                yield handler.name, ("other", None)
            yield from _bindings(handler.body)
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(node, field, None)
            if isinstance(inner, list):
                yield from _bindings(inner)


def _check_format_fields(template: str, node: ast.AST) -> None:
    """A str.format field may name an argument, never an attribute or item of it ('{0.x}', '{0[k]}')."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError:
        return  # str.format raises the same ValueError when run
    for _, field, spec, _ in parsed:
        if field is not None and not FIELD_NAME.fullmatch(field):
            unanalysable(node, f"the format field {{{field}}} (it reaches into an argument)")
        if spec:
            _check_format_fields(spec, node)



def _format_template(template: str, args: list[Val], kwargs: dict[str | None, Val]) -> str:
    """str.format on a template: constant arguments are filled in, anything else becomes HOLE; ValueError past
    MAX_TEXT_CHARS."""
    out, auto = [], 0
    for literal, field, spec, conversion in string.Formatter().parse(template):
        out.append(literal)
        if field is not None:
            if field == "":
                value, auto = args[auto], auto + 1
            else:
                value = args[int(field)] if field.isdigit() else kwargs[field]
            known = single_text(value)
            out.append(known if known is not None and not (spec or conversion) else HOLE)
        if sum(map(len, out)) > MAX_TEXT_CHARS:
            raise ValueError("the formatted string is too long to follow")
    return "".join(out)


def _percent_template(template: str) -> str:
    """`template % args` with every field a run-time value (HOLE); all of it HOLE if a `%` is not understood."""
    if HOLE in template:
        return HOLE  # a run-time part may hold a `%` that takes in the text after it
    out, start = [], 0
    for token in PERCENT_TOKEN.finditer(template):
        if token.group() == "%":
            return HOLE  # a form not modelled (%ls, %a, %*s, ...): CPython may read it differently
        out += [template[start:token.start()], "%" if token.group() == "%%" else HOLE]
        start = token.end()
    return "".join(out) + template[start:]


def _has_spec(template: str) -> bool:
    """Whether a str.format template has a field with a format spec (which may pad with any character)."""
    try:
        return any(spec for _, field, spec, _ in string.Formatter().parse(template) if field is not None)
    except ValueError:
        return True


def _join_envs(envs: list[dict[str, Val]]) -> dict[str, Val]:
    out: dict[str, Val] = {}
    for env in envs:
        for key, value in env.items():
            out[key] = join(out[key], value) if key in out else value
    return out
