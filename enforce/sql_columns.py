"""Which (table, column) pairs a SQL query reads, found statically with sqlglot's SQLite dialect.

Every column the query names in any clause counts (select, where, join, group, order, having,
subqueries, CTEs); `*` and `t.*` read every column they cover. Unqualified columns are resolved
against the tables in scope with the schema; an ambiguous one is an error. Every table the query
scans is reported too, so a caller can count a table of which no column is named as read whole.
An ORDER BY expression names a table's column where sqlglot reads a result alias of the same name: SQLite takes a
bare ORDER BY term as the alias, but a name inside a larger term (`order by age + 0`, `-age`) as the column first.
Fail closed: SQL that does not parse or is not a query, unknown tables or columns, and any run-time
value (HOLE) in the text: even where a value goes, it may carry SQL (a quote made with chr(39) closes
its string literal, a number may be followed by a UNION), so the query's shape is not known.
"""
from __future__ import annotations

import functools
from collections.abc import Mapping

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, traverse_scope

from veriguard.enforce.code_values import HOLE, fail


# SQLite's built-in functions (core, date and time, aggregate, window, math, JSON) that sqlglot reads as a call it does
# not know; any other name is a function the connection registered (what it reads is unknown) or load_extension
SQLITE_FUNCTIONS = frozenset((
    "abs changes char coalesce concat concat_ws format glob hex ifnull iif instr last_insert_rowid length like "
    "likelihood likely lower ltrim max min nullif octet_length printf quote random randomblob replace round rtrim sign "
    "soundex sqlite_version substr substring total_changes trim typeof unhex unicode unlikely upper zeroblob "
    "date time datetime julianday unixepoch strftime timediff "
    "avg count group_concat string_agg sum total "
    "row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value "
    "acos acosh asin asinh atan atan2 atanh ceil ceiling cos cosh degrees exp floor ln log log2 log10 mod pi pow power "
    "radians sin sinh sqrt tan tanh trunc "
    "json jsonb json_array json_array_length json_error_position json_extract json_insert json_object json_patch "
    "json_pretty json_remove json_replace json_set json_type json_valid json_quote json_group_array json_group_object"
).split())


@functools.lru_cache(maxsize=1024)  # agents retry: the same query comes back attempt after attempt
def cached_sql_reads(text: str, schema: tuple[tuple[str, frozenset[str]], ...],
                      where: str) -> tuple[tuple[str, str, str], ...]:
    return tuple(sql_reads(text, dict(schema), where))


def sql_reads(text: str, schema: Mapping[str, frozenset[str]], where: str) -> list[tuple[str, str, str]]:
    """(table, column, how) for every column the query reads; (table, "", how) for every table it scans."""
    if HOLE in text:
        fail("extract.sql.dynamic", where, f"a run-time value forms part of the SQL {_shown(text)!r}: it may carry "
             "SQL itself (a quote built at run time ends its string, a UNION may follow a number), so what the "
             "query reads is unknown; build the query from constants")
    try:
        statements = [s for s in sqlglot.parse(text, read="sqlite") if s is not None]
    except SqlglotError as e:
        fail("extract.sql.syntax", where, f"the SQL does not parse: {_first_line(e)}")
    if not statements:
        fail("extract.sql.syntax", where, "the SQL is empty")
    found: list[tuple[str, str, str]] = []
    for statement in statements:
        if not isinstance(statement, exp.Query):
            fail("extract.sql.statement", where, f"the SQL is a {statement.key.upper()} statement; only queries "
                 "are allowed")
        for call in statement.find_all(exp.Anonymous):
            if call.name.lower() not in SQLITE_FUNCTIONS:
                fail("extract.sql.function", where, f"the SQL calls {call.name}(), not one of SQLite's built-in "
                     "functions: what a function the connection adds (or load_extension) reads is unknown")
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
        found += _order_columns_under_aliases(statement, schema, ctes)
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


def _order_columns_under_aliases(statement: exp.Expression, schema: Mapping[str, frozenset[str]],
                                 ctes: set[str]) -> list[tuple[str, str, str]]:
    """The table columns SQLite reads for names inside ORDER BY expressions that are also result aliases: sqlglot
    resolves them to the alias, SQLite to a column of the tables the SELECT reads, when one has it."""
    found = []
    for select in statement.find_all(exp.Select):
        aliases = {p.alias.lower() for p in select.expressions if isinstance(p, exp.Alias)}
        order = select.args.get("order")
        if not aliases or order is None:
            continue
        tables = [t.name.lower() for t in _direct_tables(select) if t.name.lower() not in ctes]
        for term in order.expressions:
            bare = term.this if isinstance(term, exp.Ordered) else term
            while isinstance(bare, (exp.Paren, exp.Collate)):
                bare = bare.this
            for column in term.find_all(exp.Column):
                name = column.name.lower()
                if column is bare or column.table or name not in aliases or column.find_ancestor(exp.Select) is not select:
                    continue
                found += [(t, name, f"SQL column {name} in ORDER BY {term.sql()} (a column before an alias)")
                          for t in tables if name in schema.get(t, ())]
    return found


def _direct_tables(select: exp.Select) -> list[exp.Table]:
    sources = [select.args.get("from_", select.args.get("from"))] + list(select.args.get("joins") or [])
    return [s.this for s in sources if s is not None and isinstance(s.this, exp.Table)]


def _source_table(scope: Scope | None, alias: str) -> str | None:
    if not alias:
        return None  # an output alias (ORDER BY n), not a table column
    while scope is not None:
        source = scope.sources.get(alias)
        if source is not None:
            return source.name.lower() if isinstance(source, exp.Table) else None
        scope = scope.parent
    fail("extract.sql.column", "SQL", f"column qualifier {alias!r} does not name a table in scope")


def _shown(text: str) -> str:
    shown = text.replace(HOLE, "{…}")
    return shown if len(shown) <= 120 else shown[:117] + "..."


def _first_line(error: Exception) -> str:
    return " ".join(str(error).split("\n")[0].split())
