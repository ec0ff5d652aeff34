"""EHRAgent's tool table: what each of its tools reads when a program calls it (`language = "ehragent-python"`).

EHRAgent's run_code starts every program with `answer = 0` and CodeHeader's names: the tools below
and the modules tabtools and calculator (refused: not modelled).
* GetValue(db, 'col[, agg]') reads col; with an aggregation the tool does not know it raises, reading
  nothing. FilterDB(db, cond) reads every column its conditions name, max(col)/min(col) selectors
  included: which rows survive reveals those columns. Each `||` part is parsed as tabtools.data_filter
  parses it (_condition_column); parts outside the grammar on which both agree are refused. A missing
  column raises surely only in a part data_filter surely reaches (_runs_surely). A run-time part the program may
  have composed (Val.pipes), or one next to another or to an odd run of `|` (NEW_SPLIT), may hold `||` and so add a
  condition on any column: the whole table is read. GetValue and Calendar (an argument without a quote, which stays
  inside datetime()'s string literal) give values as the database answers them, which may hold `||` too unless the
  schema declares `"no_pipes_in_values": true` (enforce/extract_code.py; numbers stay exact).
* LoadDB(name) loads a table (it must be a constant name in the schema); FilterDB and GetValue take a
  table traceable to a LoadDB.
* SQLInterpreter(query) reads what enforce/sql_columns.py finds in the query, which must be known
  statically. Calendar's argument is SQL too: EHRAgent runs "select datetime(current_time, '<argument>')".
* Calculate parses arithmetic only: a table handed to it counts as read whole.
"""
from __future__ import annotations

import ast
import re
from typing import NoReturn

from veriguard.enforce.code_interpreter import Interpreter, ToolTable
from veriguard.enforce.code_values import DATUM, HOLE, OTHER, Val, at, fail, is_text, single_text, snippet
from veriguard.enforce.sql_columns import cached_sql_reads

TOOLS = frozenset({"LoadDB", "FilterDB", "GetValue", "SQLInterpreter", "Calendar", "Calculate"})
HEADER = frozenset({"tabtools", "calculator"})  # what EHRAgent's CodeHeader imports beside the tools
AGGREGATIONS = ("mean", "max", "min", "sum", "list")
FILTER_OPERATORS = (">=", "<=", ">", "<", "=", " in ")  # data_filter's branches, in the order it tests them
SELECTORS = ("max", "min")  # its branches after those: a part holding one of these selects by it
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A run-time part that may end or start with `|` joins a `|` next to it into a new `||` when the run of `|` there is
# odd (or another run-time part is next to it); next to an even run it only shifts a `|` into the following part,
# whose column is then no identifier (the tool raises) or the one inside its max()/min(), read already.
NEW_SPLIT = re.compile(r"(?<!\|)\|(?:\|\|)*\x00|\x00\|(?:\|\|)*(?!\|)|\x00\x00")


def _tool(interp: Interpreter, function: str, node: ast.Call) -> Val:
    if function == "Calculate":  # EHRAgent's calculator parses arithmetic, nothing else
        return interp.call_unknown(node, function)
    count = 2 if function in ("FilterDB", "GetValue") else 1
    if len(node.args) != count or node.keywords:
        fail("extract.code.call", at(node), f"`{snippet(node)}` needs exactly {count} positional argument(s)")
    if function == "SQLInterpreter":
        _sql(interp, interp.expr(node.args[0]), node)
        return OTHER
    if function == "Calendar":  # runs "select datetime(current_time, '<argument>')"
        shift = interp.parts(interp.expr(node.args[0]), node)
        _sql(interp, interp.templates([{"select datetime(current_time, '"}, shift, {"')"}], pipes=True), node)
        if any("'" in text for text in shift):  # the argument ends the literal: the query may select any text
            return OTHER
        return DATUM  # SQLite's datetime(): a date and time, or None
    if function == "LoadDB":
        return _load_db(interp, node, interp.expr(node.args[0]))
    table = interp.expr(node.args[0])
    tables = table.tables | table.rows
    if not tables:
        fail("extract.code.unresolved_table", at(node), f"{function} on `{snippet(node.args[0])}`: cannot "
             "tell which table it holds (it is not traceable to a LoadDB)")
    _columns_of(interp, function, tables, interp.expr(node.args[1]), node)
    return Val(tables=tables) if function == "FilterDB" else DATUM  # GetValue: the column's values, as stored


def _load_db(interp: Interpreter, node: ast.Call, name: Val) -> Val:
    if not is_text(name) or any(HOLE in t for t in name.texts):
        fail("extract.code.unresolved_table", at(node), f"LoadDB({snippet(node.args[0])}): the name is not a "
             "constant, so the table cannot be determined")
    for table in sorted(name.texts):
        if table not in interp.schema:
            fail("extract.code.unknown_table", at(node), f"LoadDB: no database named {table!r} in the schema")
        interp.loaded.setdefault(table, f"{snippet(node)} line {node.lineno}")
    return Val(tables=name.texts)


def _columns_of(interp: Interpreter, function: str, tables: frozenset[str], argument: Val, node: ast.Call) -> None:
    how = snippet(node)
    if not is_text(argument):
        interp.escape(argument, node, f"{how}: a table is its argument")
    if single_text(argument) is None and not is_text(argument):
        interp.read_whole(tables, node, f"{how}: its argument is not known statically")
    elif function == "FilterDB" and any(HOLE in t for t in argument.texts) and (
            argument.pipes or interp.mixed() or any(NEW_SPLIT.search(t) for t in argument.texts)):
        interp.read_whole(tables, node, f"{how}: a run-time value in the condition may hold `||` (text the program "
                          "composed, or one next to a `|`), which data_filter splits into conditions on any column")
    for template in sorted(argument.texts):
        parts = [template] if function == "GetValue" else template.split("||")
        before: list[str | None] = []  # the operators of the parts before that name a column
        for part in parts:
            if function == "GetValue":
                column = _getvalue_column(part, how, node)
            else:
                column = _condition_column(part, node, complete=interp.complete)
            if column is None:
                interp.read_whole(tables, node, f"{how}: a column name is only known at run time")
            elif column:
                interp.read(tables, column, node, how, runs=_runs_surely(before))
            if column != "":
                before.append(next((op for op in FILTER_OPERATORS if op in part), None) if HOLE not in part else None)


def _runs_surely(before: list[str | None]) -> bool:
    """Whether data_filter surely reaches a part, given the operators of the parts before it that name a column.

    It returns at once, without raising, when a part leaves no row (unless that part is `=` and its value is
    not in the column). The first such part leaves rows or raises when it is `=`; any other may leave none.
    """
    return not before or before == ["="]


def _sql(interp: Interpreter, query: Val, node: ast.Call) -> None:
    if not is_text(query):
        fail("extract.sql.unresolved", at(node), f"SQLInterpreter({snippet(node.args[0])}): the query is not "
             "known statically, so its tables cannot be determined")
    for text in sorted(query.texts):
        for table, column, how in cached_sql_reads(text, interp.schema_key, at(node)):
            if column:
                interp.read_one(table, column, f"{snippet(node)} line {node.lineno}: {how} -> {table}.{column}")
            else:
                interp.loaded.setdefault(table, f"{snippet(node)} line {node.lineno}")


def _condition_column(part: str, node: ast.AST, *, complete: bool) -> str | None:
    """The column EHRAgent's data_filter reads for one `||` part: "" for none, None when only known at run time.

    data_filter takes the first of FILTER_OPERATORS that the part holds and reads the text before it,
    else for `max`/`min` the text inside `max(...)`/`min(...)`; a part holding none of these it skips.
    Accepted: `<name><operator><value>`, exactly `max(<name>)`/`min(<name>)`, and constant parts it
    skips. The name is taken as data_filter takes it (no trimming); it must be an identifier unless the
    schema is complete, where any other text is no column and the tool raises. Anything else is refused.
    """
    operator = next((op for op in FILTER_OPERATORS if op in part), None)
    selector = next((s for s in SELECTORS if s in part), None)
    chosen = re.fullmatch(rf"{selector}\(([^()]*)\)", part) if selector else None
    if operator is not None:
        name = part[:part.index(operator)]
    elif HOLE in part:
        return None  # a run-time value decides which branch data_filter takes
    elif selector is None:
        return ""
    elif chosen is None:
        _refuse_condition(part, node)
    else:
        name = chosen.group(1)
    if HOLE in name:
        return None
    if not complete and not IDENTIFIER.fullmatch(name):
        _refuse_condition(part, node)
    return name


def _refuse_condition(part: str, node: ast.AST) -> NoReturn:
    fail("extract.code.filter_syntax", at(node), f"the FilterDB condition {part.replace(HOLE, '{…}')!r} is "
         "refused: EHRAgent's data_filter may read it otherwise (each part between || must be "
         "<column><op><value>, op the first of >=, <=, >, <, =, ' in ' that it holds, or exactly max(<column>) "
         "or min(<column>))")


def _getvalue_column(argument: str, how: str, node: ast.AST) -> str | None:
    """The column GetValue reads; "" when the tool raises before reading anything."""
    last = argument.split(", ")[-1]
    if ", " in argument and HOLE not in last and not any(a in last for a in AGGREGATIONS):
        return ""  # get_value knows only these aggregations and raises on any other
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


EHRAGENT = ToolTable("ehragent-python", TOOLS, HEADER, "answer", _tool)
