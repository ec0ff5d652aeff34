"""Which (database, column) pairs an agent's program reads, found statically: no LLM, no execution.

The pieces: the abstract values (code_values.py), the subset of Python followed (code_subset.py),
the interpreter (code_interpreter.py), the agent's tool table chosen by the spec's [extraction]
`language` (ehragent_tools.py: "ehragent-python", the only one so far) and the SQL reader
(sql_columns.py). This module is the entry point and the `code` extractor.

The program must stay inside a subset of Python the interpreter follows completely; anything else is refused
with `extract.code.unanalysable` ("unanalysable code: <construct> at line L:C"). Allowlists, not
denylists:
* statements: assignment to names, tuples, lists and subscripts, augmented assignment, expressions,
  if, for, while, break, continue, pass, try/except/else/finally, raise, assert, return, imports from
  LIBRARY, def (no decorators, annotations) and lambda. Not with, class, del, global, nonlocal,
  match, async, yield, `:=`, annotated assignment, attribute stores, `*args`/`**kwargs` in calls.
* names: the tools, the builtins in BUILTINS, and names the program binds. Other builtins (eval,
  getattr, type, open, vars, map, ...), dunders, read or bound by any means (an import's alias, def, parameter,
  `except ... as`: after `import statistics as __builtins__` a function finds statistics' sys as a builtin), and
  the modules EHRAgent's header binds (tabtools, calculator) are refused. A program starts with exactly the names EHRAgent's run_code gives it
  (CodeHeader's tools and modules, `answer`), so a name bound nowhere raises NameError and reads nothing.
  eval/exec/compile of a value that is certainly a DataFrame raise TypeError before running anything.
* modules and their members: only those in LIBRARY (`collections._sys`, `calendar` are refused).
* attributes and methods, by the kind of value they are taken from: a table or row (SAFE_TABLE_ATTRS,
  columns, WHOLE_TABLE_ATTRS, TABLE_METHODS), a string (STR_METHODS), a container the program made
  (CONTAINER_METHODS), a library object (LIBRARY), any other run-time value (VALUE_ATTRS,
  VALUE_METHODS). Reflection (gi_frame, f_globals, __globals__, base, ...) is in no list.
* functions and lambdas read only their parameters, their own locals and globals that cannot change
  before a call: tools and builtins the program never rebinds, imported modules, functions defined
  once. A closure, or a global bound elsewhere, is refused: it would be read when the function runs.
* a generator expression only where it is consumed at once (CONSUMERS, str.join): it runs late.
* str.format only on a constant template whose fields index nothing ('{0.x}', '{0[k]}' are refused).

What counts as reading a column:
* GetValue(db, 'col[, agg]') reads col. FilterDB(db, cond) reads every column its conditions name,
  max(col)/min(col) selectors included: which rows survive reveals those columns. Each `||` part is
  read as EHRAgent's data_filter reads it (ehragent_tools.py); a part outside the grammar on which
  the two agree is refused.
* db['col'], db[['a', 'b']], db.col, row['col'], row.get('col') read those columns; rows come from
  iterating a table (treated as iterating its rows) or from .iterrows().
* SQLInterpreter reads every column the query names in any clause (select, where, join, group,
  order, having, subqueries, CTEs); `*` and `t.*` read every column they cover. Unqualified columns
  are resolved against the tables in scope with the schema (sqlglot); an ambiguous one is an error.
  Calendar's argument is SQL too: EHRAgent runs "select datetime(current_time, '<argument>')".
* A table that is loaded (LoadDB, or FROM in SQL) but of which no column is named counts as read
  whole: its data is in the agent's hands and nothing shows that less was used (count(*), len()).
* A table handed to code not modelled here (printed, formatted into text, returned as the answer,
  passed to a function, a callback or a whole-table method, stored where it is not tracked) counts as
  read whole, and confidence drops to 0.5.
* A log with an output that no program in it can have made (EHRAgent logs a message's text, not its function call:
  agent_logs.AgentOutput.hidden) reads every column of every database, with confidence 0.5.
* len(), isinstance(), `is`, `'c' in row`, truth tests and .empty/.shape/.columns reveal no value.
* Both branches of an `if` count, dead or not. Function bodies are read where they are defined, with
  unknown parameters; a table passed to one counts as read whole.
* Containers (lists, sets; dicts, Counter and defaultdict included, with keys and values apart; `a | b`
  of dicts keeps their values) are tracked by the place that makes them,
  so every alias sees what is added through any other (`b = a; b.append(t)` puts t in a), read again
  until nothing changes. The state at a break, a continue or any statement of a try body flows on; a finally
  block starts from any state of its try statement (a break, a continue, an exception no handler catches, one
  raised in else or a handler all leave through it), and a break or continue in the try leaves after it.
  A container handed to code not modelled (a function of the program or its default arguments, a callback,
  a library function, a method of a run-time value) may be changed there or come back under another name
  (`f(a)` returning a, statistics.median_low([a])): from then on it may hold anything.
* `{**t}` copies every column of the table; a value that may be a table computes on all of it in `%`, `+`, `*`.
* A column the schema does not have fails closed (`extract.code.unknown_column`), unless the caller
  says the schema lists every column of each database (`complete`): then the tool raises when run
  and nothing is read; such a failed lookup names no use of the table (the whole-table rule stands). GetValue with
  an aggregation the tool does not know raises, reading nothing.
* A lookup that certainly raises ends the program: a top-level `[x =] GetValue/FilterDB(name, 'constant')`
  statement (not inside try, if, a loop, a function, a lambda, a comprehension, and/or or an if-expression), its
  callee certainly the tool, `name` certainly a table, and a column none of its tables has (complete schema) in
  GetValue or in a FilterDB part that surely runs: data_filter returns at once, without raising, when a part
  leaves no row, so only the first part naming a column, or the one after a first `=` part, surely runs.
  Nothing after it is read. A table whose only use is that lookup reads nothing: loaded by one top-level
  `name = LoadDB('t')` and by no other call (SQL included), `name` mentioned nowhere else before (no alias,
  container, call argument or other read). Short of any of these the whole-table rule stands.
Fail closed: ExtractionError for empty or invalid code, code costlier to follow than MAX_STEPS statements and
expressions read (loops read their bodies again), a value of more than MAX_SIZE parts (`u = (u, u)` repeated), SQL that does not parse or is not a query,
unknown tables, a table argument not traceable to LoadDB, SQL with any run-time part (a value built at run
time may carry SQL: chr(39) ends a string literal, a UNION may follow a number).
* A string built longer than MAX_TEXT_CHARS (100,000) is a run-time value, like one with more than 16 possible texts.
* `template % args` gives each field as a run-time value; a `%` form not modelled (%ls, %a, %*s, %.s,
  a key with parentheses) or a run-time part of the template makes the whole result run-time.
* A run-time part of a FilterDB condition may hold `||`, which data_filter splits on: a condition on any column of
  the table. Each run-time value is marked (Val.pipes) with whether the program may have composed its text: a tool's
  result (GetValue; Calendar of an argument without a quote; not SQLInterpreter, whose query may compute any text),
  a column's values, a number, one character, and str()/repr()/int() of such a value, its elements, slices (no step)
  and split()/strip() parts are not composed; concatenating or repeating run-time values, join, replace, padding, a
  format spec, a function of the program, an exception's text are. Once code that may put composed text into a
  value not composed (an append, a store, `+=`, a function or callback it is handed to) has run, no value counts as
  not composed (MIXED). A FilterDB condition with a composed run-time part, or with a run-time part next to another
  or to an odd run of `|` (`'x=' + v + '|y=1'`: v may end in `|`), reads the whole table.
A value as the database stores it (GetValue's and Calendar's results, a column's values, a row's fields, a table's
attributes) may hold `||` too ('bob||diagnosis=flu' in a name column, filtered on with FilterDB(t, 'name=' + x), adds a
condition on diagnosis), and counts as composed, unless the schema file declares `"no_pipes_in_values": true`: whoever
writes that has checked, for each text column, `select count(*) from <table> where instr(<column>, '||') = 0` (and
that no column name holds `||`), and keeps it so. Numbers (int(), len(), a date's year) never count as composed.
"""
from __future__ import annotations

import ast
import json
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from veriguard.enforce.code_interpreter import MAX_STEPS, CodeAccess, Interpreter, ToolTable
from veriguard.enforce.code_values import fail, unanalysable
from veriguard.enforce.ehragent_tools import EHRAGENT
from veriguard.enforce.extract_errors import ExtractionError
from veriguard.enforce.extractors import Extracted, SpecFiles, _path, spec_file

TOOL_TABLES = {table.language: table for table in (EHRAGENT,)}
DEFAULT_LANGUAGE = EHRAGENT.language  # specs written before the key was read name no language


def extract_accesses(code: str | Sequence[str], schema: Mapping[str, Sequence[str]], *,
                     complete: bool = False, language: str = DEFAULT_LANGUAGE,
                     pipe_free_values: bool = False) -> CodeAccess:
    """The (database, column) pairs `code` reads; ExtractionError when that cannot be told for sure.

    `code` is one program or several (each run on its own, as EHRAgent runs each attempt); the pairs
    of all count. `complete` says `schema` lists every column each database has. `language` names the
    agent's tool table (TOOL_TABLES). `pipe_free_values` says no value stored in the databases (nor a column
    name) holds `||`: without it a stored value in a FilterDB condition reads the whole table.
    """
    tools = tool_table(language)
    programs = [code] if isinstance(code, str) else list(code)
    if not programs:
        fail("extract.code.empty", "line 1", "there is no generated code: nothing to check")
    results, steps = [], [MAX_STEPS]  # one budget for every program: a log cannot buy more with more programs
    for number, program in enumerate(programs, 1):
        try:
            results.append(_analyse(program, schema, steps, tools, complete=complete,
                                    pipe_free_values=pipe_free_values))
        except ExtractionError as e:
            if len(programs) == 1:
                raise
            raise ExtractionError(e.code, f"program {number} of {len(programs)}: {e.message}") from None
    return _merge(results)


def _analyse(code: str, schema: Mapping[str, Sequence[str]], steps: list[int], tools: ToolTable, *,
             complete: bool, pipe_free_values: bool) -> CodeAccess:
    if not code or not code.strip():
        fail("extract.code.empty", "line 1", "the generated code is empty: nothing to check")
    try:
        with warnings.catch_warnings():  # invalid escapes in strings warn; they do not stop the code
            warnings.simplefilter("ignore")
            tree = ast.parse(code)
    except SyntaxError as e:
        fail("extract.code.syntax", f"line {e.lineno}:{e.offset}", f"the generated code is not valid Python: {e.msg}")
    except (ValueError, RecursionError, MemoryError) as e:
        unanalysable(None, f"code Python itself cannot parse ({type(e).__name__})")
    if not tree.body:
        fail("extract.code.empty", "line 1", "the generated code has no statements (only comments)")
    analyzer = Interpreter(schema, steps, tools, complete=complete, pipe_free_values=pipe_free_values)
    try:
        analyzer.run(tree)
    except RecursionError:
        unanalysable(None, "code nested too deeply to follow")
    return analyzer.result()


def _merge(results: list[CodeAccess]) -> CodeAccess:
    if len(results) == 1:
        return results[0]
    how: dict[tuple[str, str], list[str]] = {}
    for number, result in enumerate(results, 1):
        for pair, line in zip(result.pairs, result.provenance):
            how.setdefault(pair, []).append(f"program {number}: {line}")
    pairs = tuple(sorted(how))
    provenance = tuple(how[p][0] + (f" (+{len(how[p]) - 1} more)" if len(how[p]) > 1 else "") for p in pairs)
    notes = tuple(dict.fromkeys(f"program {n}: {note}" for n, r in enumerate(results, 1) for note in r.notes))
    return CodeAccess(pairs, provenance, min(r.confidence for r in results), notes)


def tool_table(language: object) -> ToolTable:
    table = TOOL_TABLES.get(language) if isinstance(language, str) else None
    if table is None:
        raise ExtractionError("extract.config", f"[extraction] language = {language!r} has no tool table: write "
                              f"one of {', '.join(repr(t) for t in sorted(TOOL_TABLES))}")
    return table


@dataclass(frozen=True)
class CodeExtractor:
    """(database, column) pairs the agent's code reads (Python + SQL), from its code or its whole log."""

    schema: Mapping[str, Any]
    source: str = "log"          # observation field: a full EHRAgent log ("log") or bare code ("code")
    complete: bool = False       # the schema lists every column: a column outside it does not exist
    language: str = DEFAULT_LANGUAGE
    pipe_free_values: bool = False  # the schema declares that no stored value holds `||` (`no_pipes_in_values`)
    kind: str = "code"

    def extract(self, observation: Mapping[str, Any]) -> Extracted:
        from veriguard.enforce.agent_logs import parse_agent_log

        text = _path(observation, self.source)
        if not isinstance(text, str):
            raise ExtractionError("extract.type", f"{self.source!r} must be text")
        log = parse_agent_log(text) if self.source == "log" else None
        access = extract_accesses(text if log is None else log.code, self.schema, complete=self.complete,
                                  language=self.language, pipe_free_values=self.pipe_free_values)
        pairs = [list(p) for p in access.pairs]
        how = "code: " + "; ".join(access.provenance) if access.provenance else "code: reads no column"
        if log is not None and log.hidden:  # a program the log does not show ran: it may have read any column
            every = sorted(set(access.pairs) | {(str(db), str(c)) for db, cs in self.schema.items() for c in cs})
            return Extracted([list(p) for p in every], f"{how}; every column: {log.hidden}", 0.5, self.kind)
        return Extracted(pairs, how, access.confidence, self.kind)


def build_code_extractor(cfg: Mapping[str, Any], base: Path, *, files: SpecFiles | None = None) -> CodeExtractor:
    """The extractor of one `from = "code"` entry: `schema` (JSON, relative to `base`, or its certified bytes in
    a build's `files`), `source`, `language`."""
    language = tool_table(cfg.get("language", DEFAULT_LANGUAGE)).language
    data = spec_file(files, cfg["schema"], "the code extractor's schema")
    db = json.loads(((base / str(cfg["schema"])).read_bytes() if data is None else data).decode("utf-8"))
    return CodeExtractor(db.get("databases", db), str(cfg.get("source", "log")), complete=db.get("complete") is True,
                         language=language, pipe_free_values=db.get("no_pipes_in_values") is True)
