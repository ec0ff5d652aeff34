"""Red-team pass s21 on the code extractor: two classes that read fewer (database, column) pairs than the code.

1. A name bound nowhere was taken to raise NameError when the analysing Python has no builtin of that name; the agent
   may run another version (PythonFinalizationError and _IncompleteInputError are builtins of 3.13), so the call's
   arguments, skipped as never run, do run there.
2. SQLite reads a name inside an ORDER BY expression as a table's column before a result alias of the same name
   (`select uniquepid as age from patient order by age + 0` orders by patient.age); sqlglot read the alias.
"""
import json
import sqlite3

import pytest

from veriguard.enforce.extract_code import extract_accesses
from veriguard.enforce.extract_errors import ExtractionError
from tests.conftest import SHIPPED

SCHEMA = json.loads((next(p for p in SHIPPED if p.stem == "eicu_ac").parent / "eicu_ac" / "schema.json")
                    .read_text(encoding="utf-8"))["databases"]
LOADED = "d = LoadDB('patient')\nx = GetValue(d, 'uniquepid')\n"


def pairs(code: str) -> set[tuple[str, str]]:
    return set(extract_accesses(code, SCHEMA, complete=True, pipe_free_values=True).pairs)


# ---- 1: builtins of another Python ---------------------------------------------------------------
@pytest.mark.parametrize("name", ["PythonFinalizationError", "_IncompleteInputError", "FutureThingError",
                                  "SomeNewWarning", "_private_helper", "NewExceptionGroup"])
def test_a_name_another_python_may_bind_as_a_builtin_is_refused(name):
    code = LOADED + f"answer = {name}(GetValue(d, 'age'))"
    with pytest.raises(ExtractionError) as info:
        pairs(code)
    assert info.value.code == "extract.code.unanalysable" and f"`{name}`" in info.value.message


def test_the_same_name_read_in_a_function_is_refused():
    with pytest.raises(ExtractionError):
        pairs(LOADED + "def f():\n    return PythonFinalizationError\nanswer = 1")


@pytest.mark.parametrize("name", ["first_chloride", "blood", "datetime", "male"])
def test_a_plain_name_bound_nowhere_still_raises_and_reads_nothing(name):
    """The gold logs hold such names (text read as code): they stay NameErrors, so the figures stand."""
    assert ("patient", "age") not in pairs(LOADED + f"answer = {name}(GetValue(d, 'age'))")


# ---- 2: ORDER BY expressions read the column before the alias --------------------------------------
def _sql(query: str) -> str:
    return f"answer = SQLInterpreter({query!r})"


ORDERED_BY_COLUMN = [
    "select uniquepid as age from patient order by age + 0 desc limit 1",
    "select uniquepid as age from patient order by -age limit 1",
    "select p.uniquepid as age from patient p order by abs(age) desc limit 1",
    "select uniquepid as age from patient join lab on lab.patientunitstayid = patient.patientunitstayid "
    "order by age * 2 desc limit 1",
    "select uniquepid from (select uniquepid as age, uniquepid from patient order by age + 0 desc limit 1)",
]


@pytest.mark.parametrize("query", ORDERED_BY_COLUMN)
def test_a_name_inside_an_order_by_expression_reads_the_column(query):
    assert ("patient", "age") in pairs(_sql(query))


ORDERED_BY_ALIAS = [  # SQLite takes a bare term as the alias: nothing of patient.age is read
    "select uniquepid as age from patient order by age",
    "select uniquepid as age from patient order by (age) desc",
    "select uniquepid as age from patient order by age collate nocase",
]


@pytest.mark.parametrize("query", ORDERED_BY_ALIAS)
def test_a_bare_order_by_term_stays_the_alias(query):
    assert ("patient", "age") not in pairs(_sql(query))


def test_sqlite_itself_orders_by_the_column_in_an_expression_and_by_the_alias_when_bare():
    """What the rule above follows, measured on SQLite: ages 50 and 10 for uniquepid 5 and 6."""
    con = sqlite3.connect(":memory:")
    con.execute("create table patient (uniquepid, age)")
    con.execute("insert into patient values (5, 50), (6, 10)")
    assert con.execute("select uniquepid as age from patient order by age + 0 desc limit 1").fetchall() == [(5,)]
    assert con.execute("select uniquepid as age from patient order by (age) desc limit 1").fetchall() == [(6,)]


# ---- 3: a tuple made position by position (zip, enumerate, .items()) read as nothing when indexed -----------
TUPLES = {
    "zip": LOADED + "for p in zip([d]):\n    answer = p[0]['age']",
    "enumerate": LOADED + "for p in enumerate([d]):\n    answer = p[1]['age']",
    "list of zip": LOADED + "answer = list(zip([d], [1]))[0][0]['age']",
    ".items()": LOADED + "m = {'k': d}\nfor p in m.items():\n    answer = p[1]['age']",
    "a negative index": LOADED + "for p in zip([1], [d]):\n    answer = p[-1]['age']",
    "a slice": LOADED + "for p in zip([1], [d]):\n    answer = p[1:][0]['age']",
    "an index known at run time": LOADED + "i = 1\nfor p in zip([1], [d]):\n    answer = p[i]['age']",
    "a method's argument": LOADED + "for p in zip([1]):\n    answer = p.index(GetValue(d, 'age'))",
    "a tool taken out of it": LOADED + "for p in enumerate([GetValue]):\n    answer = p[1](d, 'age')",
}


@pytest.mark.parametrize("code", TUPLES.values(), ids=list(TUPLES))
def test_a_tuple_made_position_by_position_is_read_like_any_tuple(code):
    assert ("patient", "age") in pairs(code)


# ---- 4: a table's .get(column, default) never raises and gives the default, which was never read -----------
GETS = {
    "a table as the default": LOADED + "t = d.get('nosuch', LoadDB('diagnosis'))\nanswer = t['diagnosisname']",
    "a keyword default": LOADED + "t = d.get('nosuch', default=LoadDB('diagnosis'))\nanswer = t['diagnosisname']",
    "a read in the default": LOADED + "answer = d.get('uniquepid', GetValue(LoadDB('diagnosis'), 'diagnosisname'))",
    "a row's get": LOADED + "for i, r in d.iterrows():\n    answer = r.get('nosuch', GetValue(LoadDB('diagnosis'), "
                            "'diagnosisname'))",
}


@pytest.mark.parametrize("code", GETS.values(), ids=list(GETS))
def test_the_default_of_a_tables_get_is_read(code):
    assert ("diagnosis", "diagnosisname") in pairs(code)


def test_the_same_tables_default_counts_as_the_table():
    assert ("patient", "age") in pairs(LOADED + "t = d.get('nosuch', d)\nanswer = t['age']")
