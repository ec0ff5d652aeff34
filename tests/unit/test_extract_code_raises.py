"""A lookup that certainly raises, uncaught, at the top level ends the program for the analysis.

With a complete schema, GetValue/FilterDB naming a constant column the table lacks raises (EHRAgent's
tools say "The column name ... is incorrect"), so nothing after it runs; a table touched by nothing
but that lookup reads nothing. Anything short of certain (the lookup inside try/if/loop/function/
lambda/comprehension/and/or/if-expression, a run-time column, a callee that may be something else,
the table aliased, stored, passed or read before, loaded elsewhere too) keeps the whole-table rule.
"""
import json

import pytest

from veriguard.enforce.extract_code import extract_accesses
from veriguard.enforce.monitor import Monitor
from veriguard.synth.freeze import write_build
from veriguard.synth.specfile import load_spec
from tests.conftest import SHIPPED
from tests.unit.test_compile_and_freeze import fake_result
from tests.unit.test_extract_code_failopen import log

SCHEMA = json.loads((next(p for p in SHIPPED if p.stem == "eicu_ac").parent / "eicu_ac" / "schema.json")
                    .read_text(encoding="utf-8"))["databases"]


def pairs(code: str, *, complete: bool = True) -> set[tuple[str, str]]:
    return set(extract_accesses(code, SCHEMA, complete=complete).pairs)


def whole(table: str) -> set[tuple[str, str]]:
    return {(table, column) for column in SCHEMA[table]}


# ---- the shapes EHRAgent writes: the lookup raises, the agent retries ------------------------------
ENDED = {
    "GetValue of a missing column with an aggregation":
        "labs = LoadDB('lab')\nnames = GetValue(labs, 'labstring, list')\ncounts = {}\nfor n in names:\n"
        "    counts[n] = counts.get(n, 0) + 1\nanswer = sorted(counts.items(), key=lambda x: x[1])[:3]",
    "FilterDB on a missing column, then a missing column":
        "from collections import Counter\nmeds = LoadDB('medication')\nrecent = FilterDB(meds, 'drugyear<=2104')\n"
        "names = GetValue(recent, 'drugstring, list')\nanswer = Counter(names).most_common(3)",
    "FilterDB on a missing column, then a column it has":
        "import datetime\ncare = LoadDB('treatment')\nlater = FilterDB(care, 'treatmentendyear>=2100')\n"
        "answer = GetValue(later, 'treatmentname, list')",
    "the lookup as an expression statement": "d = LoadDB('diagnosis')\nGetValue(d, 'diagnosisstring')\n"
                                             "answer = d['diagnosisname']",
}


@pytest.mark.parametrize("code", ENDED.values(), ids=ENDED.keys())
def test_a_top_level_lookup_of_a_missing_column_ends_the_program(code):
    assert pairs(code) == set()


def test_nothing_after_the_failing_lookup_is_read_but_what_came_before_is():
    code = ("p = LoadDB('patient')\nx = GetValue(FilterDB(p, 'uniquepid=1'), 'age')\nd = LoadDB('diagnosis')\n"
            "f = FilterDB(d, 'diagnosisname=copd||diagnosisyear=2104')\nanswer = GetValue(LoadDB('lab'), 'labname')")
    assert pairs(code) == {("patient", "uniquepid"), ("patient", "age"), ("diagnosis", "diagnosisname")}


def test_with_an_incomplete_schema_the_missing_column_is_still_refused():
    with pytest.raises(Exception) as info:
        pairs("d = LoadDB('diagnosis')\nx = GetValue(d, 'diagnosisstring')", complete=False)
    assert getattr(info.value, "code", "") == "extract.code.unknown_column"


# ---- not certain, or the table used otherwise: the whole table still counts -----------------------
STILL_WHOLE = {
    "inside try": "try:\n    GetValue(d, 'nosuch')\nexcept Exception:\n    pass",
    "inside try, nothing caught": "try:\n    GetValue(d, 'nosuch')\nfinally:\n    pass",
    "inside if": "if q:\n    GetValue(d, 'nosuch')",
    "inside for": "for i in range(3):\n    GetValue(d, 'nosuch')",
    "inside while": "while q:\n    GetValue(d, 'nosuch')",
    "inside a conditional expression": "x = GetValue(d, 'nosuch') if q else 0",
    "inside a comprehension": "x = [GetValue(d, 'nosuch') for i in range(n)]",
    "after and": "x = q and GetValue(d, 'nosuch')",
    "after or": "x = q or GetValue(d, 'nosuch')",
    "nested in another call": "x = len(GetValue(d, 'nosuch'))",
    "a run-time column": "x = GetValue(d, c)",
    "a column the other table has": "t = d if q else LoadDB('lab')\nx = GetValue(t, 'labname')",
    "a callee that may be another function": "g = GetValue if q else len\nx = g(d, 'nosuch')",
    "an aggregation the tool lacks": "x = GetValue(d, 'nosuch, count')",
    "after an alias": "e = d\nx = GetValue(d, 'nosuch')",
    "on an alias": "e = d\nx = GetValue(e, 'nosuch')",
    "after a container holds it": "keep = [d]\nx = GetValue(d, 'nosuch')",
    "after a call argument": "n = len(d)\nx = GetValue(d, 'nosuch')",
    "after a read in a function defined before it": "def f(t):\n    return t\ny = f(d)\nx = GetValue(d, 'nosuch')",
    "bound twice": "d = LoadDB('diagnosis')\nx = GetValue(d, 'nosuch')",
    "loaded elsewhere too": "e = LoadDB('diagnosis')\nn = len(e)\nx = GetValue(d, 'nosuch')",
    "loaded by SQL too": "r = SQLInterpreter('select count(*) from diagnosis')\nx = GetValue(d, 'nosuch')",
    "the lookup rebinds the name": "d = GetValue(d, 'nosuch')",
}


@pytest.mark.parametrize("code", STILL_WHOLE.values(), ids=STILL_WHOLE.keys())
def test_short_of_a_certain_uncaught_failure_on_an_untouched_table_the_whole_table_counts(code):
    assert whole("diagnosis") <= pairs("d = LoadDB('diagnosis')\n" + code)


READ_AFTER = {  # the lookup is not certain to end the program: what follows it is read
    "inside try (a Counter holding the table)":
        "import collections\nd = LoadDB('diagnosis')\ntry:\n    GetValue(d, 'nosuchcolumn')\nexcept Exception:\n"
        "    pass\nc = collections.Counter(k=d)\nx = c['k']\nanswer = x['diagnosisname'].tolist()",
    "inside try (a Counter of a dict)":
        "import collections\nd = LoadDB('diagnosis')\ntry:\n    GetValue(d, 'nosuchcolumn')\nexcept Exception:\n"
        "    pass\nc = collections.Counter({'k': d})\nanswer = c['k']['diagnosisname'].tolist()",
    "inside if": "d = LoadDB('diagnosis')\nif q:\n    GetValue(d, 'nosuch')\nanswer = d['diagnosisname']",
    "inside a function": "d = LoadDB('diagnosis')\ndef f():\n    GetValue(LoadDB('diagnosis'), 'nosuch')\nf()\n"
                         "answer = d['diagnosisname']",
    "inside a lambda": "d = LoadDB('diagnosis')\nf = lambda: GetValue(LoadDB('diagnosis'), 'nosuch')\nf()\n"
                       "answer = d['diagnosisname']",
    "a callee that may be another function": "d = LoadDB('diagnosis')\ng = GetValue if q else len\nx = g(d, 'nosuch')\n"
                                             "answer = d['diagnosisname']",
}


@pytest.mark.parametrize("code", READ_AFTER.values(), ids=READ_AFTER.keys())
def test_a_lookup_that_may_not_raise_does_not_end_the_program(code):
    assert ("diagnosis", "diagnosisname") in pairs(code)


def test_a_function_defined_before_the_failure_is_read_where_it_is_defined():
    code = ("def f():\n    t = LoadDB('diagnosis')\n    return t['diagnosisname']\nd = LoadDB('diagnosis')\n"
            "x = GetValue(d, 'nosuch')\nanswer = f()")
    assert pairs(code) == {("diagnosis", "diagnosisname")}


def test_an_alias_made_before_the_failure_is_not_lost():
    code = "d = LoadDB('diagnosis')\ne = d\nx = GetValue(d, 'nosuch')\nanswer = e['diagnosisname']"
    assert ("diagnosis", "diagnosisname") in pairs(code)


# ---- through the monitor ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def monitor(tmp_path_factory):
    spec = load_spec(next(p for p in SHIPPED if p.stem == "eicu_ac"))
    build, _ = write_build(fake_result(spec), tmp_path_factory.mktemp("b"), run_info={})
    return Monitor.from_build(build, log=tmp_path_factory.mktemp("log") / "log.jsonl")


def test_the_monitor_allows_a_program_that_fails_before_reading(monitor):
    code = "d = LoadDB('diagnosis')\nnames = GetValue(d, 'diagnosisstring, list')\nanswer = names[:5]"
    decision = monitor.check({"identity": "physician", "log": log(code)})
    assert decision.allowed and decision.arguments["accessed"] == []


def test_the_monitor_still_denies_the_counter_after_a_caught_failure(monitor):
    code = ("import collections\nd = LoadDB('diagnosis')\ntry:\n    GetValue(d, 'nosuchcolumn')\nexcept Exception:\n"
            "    pass\nc = collections.Counter(k=d)\nanswer = c['k']['diagnosisname'].tolist()")
    decision = monitor.check({"identity": "nursing", "log": log(code)})
    assert not decision.allowed and ["diagnosis", "diagnosisname"] in decision.arguments["accessed"]
