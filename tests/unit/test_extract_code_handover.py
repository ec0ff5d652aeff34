"""Red-team findings (third pass) where the code extractor failed open, each closed as a class.

c1: a container handed to code not modelled (a function of the program, a default argument, a callback,
a library function that returns one of its arguments) was changed there unseen; c2: a table's columns
reached through `{**t}`, and a value that may be a table or a template (`(t if c else '%s') % x`);
c3: a FilterDB part after one that may leave no row taken to raise surely (data_filter returns early);
c4: a big expression read again in nested loops took minutes: the budget counts expressions too.
"""
import json
import time

import pytest

from veriguard.enforce.extract_code import extract_accesses
from veriguard.enforce.extract_errors import ExtractionError
from tests.conftest import SHIPPED

SCHEMA = json.loads((next(p for p in SHIPPED if p.stem == "eicu_ac").parent / "eicu_ac" / "schema.json")
                    .read_text(encoding="utf-8"))["databases"]
PRE = "t = LoadDB('patient')\nx = GetValue(t, 'uniquepid')\n"
AFTER = "d = LoadDB('diagnosis')\nanswer = d[cols[-1]]"  # reads what `cols` holds last


def pairs(code: str, *, complete: bool = True) -> set[tuple[str, str]]:
    return set(extract_accesses(code, SCHEMA, complete=complete).pairs)


# ---- c1: containers changed by code the interpreter does not follow -------------------------------------
CHANGED = {
    "a function appends": "def f(a):\n    a.append('diagnosisname')\nf(cols)\n",
    "a function stores by index": "def f(a):\n    a[0] = 'diagnosisname'\nf(cols)\n",
    "a lambda appends": "f = lambda a: a.append('diagnosisname')\nf(cols)\n",
    "a default argument": "def f(a=cols):\n    a.append('diagnosisname')\nf()\n",
    "a function returns its argument": "def f(a):\n    return a\nf(cols).append('diagnosisname')\n",
    "a function inside a list": "fs = [lambda a: a.append('diagnosisname')]\nfs[0](cols)\n",
    "a sort key": "sorted([cols], key=lambda a: a.append('diagnosisname'))\n",
    "a min key": "min([cols], key=lambda a: a.append('diagnosisname'))\n",
    "list.sort with a key": "box = [cols]\nbox.sort(key=lambda a: a.append('diagnosisname'))\n",
    "statistics returns an element": "import statistics\nstatistics.median_low([cols]).append('diagnosisname')\n",
    "sum returns an element": "sum([[cols]], [])[0].append('diagnosisname')\n",
    "get of a run-time value returns the default": "def f():\n    return {}\nf().get('k', cols).append("
                                                   "'diagnosisname')\n",
    "nested in a tuple handed over": "def f(p):\n    p[1].append('diagnosisname')\nf((1, cols))\n",
    "stored into a run-time value": "o = GetValue(LoadDB('patient'), 'uniquepid, list')\no[0] = cols\n"
                                    "o[0].append('diagnosisname')\n",
    "stored in a dict in a run-time value": "o = GetValue(LoadDB('patient'), 'uniquepid, list')\no[0] = {'k': cols}\n"
                                            "o[0]['k'].append('diagnosisname')\n",
}


@pytest.mark.parametrize("change", CHANGED.values(), ids=CHANGED.keys())
def test_a_container_handed_to_code_not_followed_may_hold_anything(change):
    code = "cols = ['patientunitstayid']\n" + change + AFTER
    assert ("diagnosis", "diagnosisname") in pairs(code)


def test_a_container_only_read_keeps_its_contents():
    code = "cols = ['patientunitstayid']\nn = len(cols)\nanswer = LoadDB('diagnosis')[cols[0]]"
    assert pairs(code) == {("diagnosis", "patientunitstayid")}


# ---- c2: a table's columns through ** and a value that may be a table or a template -----------------
@pytest.mark.parametrize("code", [
    PRE + "answer = {**t}['age']",
    PRE + "d = {**t}\nfor k, v in d.items():\n    answer = v",
    PRE + "answer = (t if x else '%s') % 1000",
    PRE + "answer = (t if x else [1]) * 2",
], ids=["dict of a table", "items of a table's dict", "% on a table or a template", "* on a table or a list"])
def test_every_column_counts_when_a_table_is_spread_or_computed_on(code):
    assert ("patient", "age") in pairs(code)


# ---- c3: FilterDB parts after one that may leave no row ---------------------------------------------
@pytest.mark.parametrize("condition", [
    "patientunitstayid<0||AGE=1",          # `<` may leave no row: data_filter returns, AGE is never looked up
    "max(age)||AGE=1",
    "uniquepid=1||gender=x||AGE=1",        # a second `=` may leave no row while its value is in the column
])
def test_a_missing_column_after_a_part_that_may_leave_no_row_does_not_end_the_program(condition):
    code = PRE + f"y = FilterDB(t, '{condition}')\nd = LoadDB('diagnosis')\nanswer = GetValue(d, 'diagnosisname')"
    assert ("diagnosis", "diagnosisname") in pairs(code)


@pytest.mark.parametrize("condition", ["AGE=1", "uniquepid=1||AGE=1", "foo||AGE=1"])
def test_a_missing_column_that_surely_runs_still_ends_the_program(condition):
    code = PRE + f"y = FilterDB(t, '{condition}')\nd = LoadDB('diagnosis')\nanswer = GetValue(d, 'diagnosisname')"
    assert ("diagnosis", "diagnosisname") not in pairs(code)


# ---- c4: the budget counts what is read, not only statements ----------------------------------------
def test_a_big_expression_in_nested_loops_is_refused_quickly():
    depth, size = 6, 30_000
    code = "".join(f"c{i} = ''\n" for i in range(depth))
    for i in range(depth):
        code += "    " * i + f"for v{i} in [1, 2]:\n" + "    " * (i + 1) + f"c{i} = c{i} + 'a'\n"
    code += "    " * depth + "y = [" + ", ".join(["1"] * size) + "]\n"
    started = time.monotonic()
    with pytest.raises(ExtractionError, match="too costly"):
        pairs(code)
    assert time.monotonic() - started < 20  # took about 5 minutes before


# ---- c5: strings built longer and longer (memory), c6: values whose tree doubles (time) ---------------
@pytest.mark.parametrize("double", ["s = s + s", "s = f'{s}{s}'", "s = '{0}{0}'.format(s)"])
def test_a_string_built_past_the_limit_is_a_run_time_value(double):
    code = "s = 'age'\n" + f"{double}\n" * 60 + "t = LoadDB('patient')\nanswer = t[s]"
    assert pairs(code) == {("patient", column) for column in SCHEMA["patient"]}  # every column: s is unknown


@pytest.mark.parametrize("nest", ["u = (u, u)", "u = tuple(zip(u, u))", "u = (u, (u,))"])
def test_a_value_whose_tree_doubles_is_refused(nest):
    code = "t = LoadDB('patient')\nanswer = t['age']\nu = ('a', 'b')\n" + f"{nest}\n" * 40 + "print(u)"
    with pytest.raises(ExtractionError, match="nested too deeply"):
        pairs(code)


def test_a_long_tuple_literal_keeps_what_it_holds():
    code = "t = LoadDB('patient')\ncols = (" + "'uniquepid', " * 100 + "'age')\nanswer = t[cols[100]]"
    assert ("patient", "age") in pairs(code)


# ---- c7: a run-time part of SQL carries SQL (a quote made at run time, a UNION after a number) -------
@pytest.mark.parametrize("code", [
    "q = \"select uniquepid from patient where uniquepid = '\" + chr(39) + \" union select diagnosisname from "
    "diagnosis --'\"\nanswer = SQLInterpreter(q)",
    "x = ''.join(chr(c) for c in [48, 32, 117])\nanswer = SQLInterpreter('select uniquepid from patient where age > ' + x)",
    "answer = SQLInterpreter(\"select uniquepid from patient where uniquepid = '%s union select diagnosisname from "
    "diagnosis --'\" % chr(39))",
    "answer = Calendar(chr(39) + '), (select group_concat(diagnosisname) from diagnosis) --')",
], ids=["quote by concatenation", "after a number", "quote by %", "calendar"])
def test_sql_with_a_run_time_part_is_refused(code):
    with pytest.raises(ExtractionError) as e:
        pairs(code)
    assert e.value.code == "extract.sql.dynamic"


# ---- c9: a finally block runs on paths that leave the try early ------------------------------------
FINALLY = {
    "break": "for i in [1]:\n    try:\n        break\n    finally:\n        c = 'age'\n    c = 'uniquepid'\n",
    "continue": "for i in [1]:\n    try:\n        continue\n    finally:\n        c = 'age'\n    c = 'uniquepid'\n",
    "an exception no handler of the try catches":
        "try:\n    try:\n        c = 'age'\n        1 / 0\n        c = 'uniquepid'\n    except ValueError:\n"
        "        c = 'uniquepid'\n    finally:\n        d = c\nexcept ZeroDivisionError:\n    c = d\n",
    "an exception raised in else": "try:\n    try:\n        pass\n    except ZeroDivisionError:\n        pass\n"
                                   "    else:\n        c = 'age'\n        raise ValueError\n        c = 'uniquepid'\n"
                                   "    finally:\n        d = c\nexcept ValueError:\n    c = d\n",
}


@pytest.mark.parametrize("flow", FINALLY.values(), ids=FINALLY.keys())
def test_a_finally_block_starts_from_every_way_out_of_the_try(flow):
    code = "t = LoadDB('patient')\nc = 'uniquepid'\nd = 'uniquepid'\n" + flow + "answer = t[c]"
    assert ("patient", "age") in pairs(code)
