"""Which (table, column) pairs a SQL query reads, found statically with sqlglot's SQLite dialect.

Every column the query names in any clause counts (select, where, join, group, order, having,
subqueries, CTEs); `*` and `t.*` read every column they cover. Unqualified columns are resolved
against the tables in scope with the schema; an ambiguous one is an error. Every table the query
scans is reported too, so a caller can count a table of which no column is named as read whole.
Fail closed: SQL that does not parse or is not a query, unknown tables or columns, and a run-time
value (HOLE in the text) anywhere but where a value goes.
"""
from __future__ import annotations

import functools
from collections.abc import Mapping

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, traverse_scope
from sqlglot.tokens import TokenType

from veriguard.enforce.code_values import HOLE, fail

SQL_HOLE = "987654321012345"


@functools.lru_cache(maxsize=1024)  # agents retry: the same query comes back attempt after attempt
def cached_sql_reads(text: str, schema: tuple[tuple[str, frozenset[str]], ...],
                      where: str) -> tuple[tuple[str, str, str], ...]:
    return tuple(sql_reads(text, dict(schema), where))


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


def _first_line(error: Exception) -> str:
    return " ".join(str(error).split("\n")[0].split())
