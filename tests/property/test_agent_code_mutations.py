"""Benign agent programs and logs with random constructs and characters put in: the code extractor
returns pairs from the schema or raises ExtractionError, never any other exception."""
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veriguard.enforce.agent_logs import SECTION_SEPARATOR, parse_agent_log
from veriguard.evaluation import EICU_DIR, benchmark_data
from veriguard.enforce.extract_code import CodeAccess, extract_accesses
from veriguard.enforce.extract_errors import ExtractionError
from tests.unit.test_agent_logs import cell, log
from tests.unit.test_extract_code_allowlist import COUNTED, UNANALYSABLE
from tests.conftest import examples

SCHEMA = {
    "patient": ["patientunitstayid", "uniquepid", "age", "hospitaladmittime", "hospitaldischargetime"],
    "lab": ["patientunitstayid", "labname", "labresult", "labresulttime"],
    "diagnosis": ["patientunitstayid", "diagnosisname", "diagnosistime"],
    "cost": ["uniquepid", "patienthealthsystemstayid", "cost", "chargetime"],
}
BENIGN = [  # written in the style of EHRAgent's programs
    ("patient_db = LoadDB('patient')\nfiltered = FilterDB(patient_db, 'uniquepid=002-1||max(hospitaladmittime)')\n"
     "stay = GetValue(filtered, 'patientunitstayid')\nlab_db = LoadDB('lab')\n"
     "labs = FilterDB(lab_db, 'patientunitstayid={}||labname=mcv'.format(stay))\nanswer = GetValue(labs, 'labresult, mean')"),
    ("from datetime import datetime\nlab = FilterDB(LoadDB('lab'), 'labname=mcv')\n"
     "times = GetValue(lab, 'labresulttime, list')\nby_month = {}\nfor i in range(len(times)):\n"
     "    month = datetime.strptime(times[i], '%Y-%m-%d %H:%M:%S').month\n"
     "    if month not in by_month:\n        by_month[month] = times[i]\nanswer = by_month"),
    ("from collections import Counter\nd = LoadDB('diagnosis')\nnames = GetValue(d, 'diagnosisname, list')\n"
     "top = sorted(Counter(names).items(), key=lambda x: x[1], reverse=True)[:3]\nanswer = [t[0] for t in top]"),
    ("date = Calendar('-1 year')\ncost_db = LoadDB('cost')\ntotal = 0\nfor pid in ['1', '2']:\n"
     "    rows = FilterDB(cost_db, 'patienthealthsystemstayid={}||chargetime>{}'.format(pid, date))\n"
     "    total += GetValue(rows, 'cost, sum')\nanswer = total"),
    "answer = SQLInterpreter(\"select count(distinct patient.uniquepid) from patient where patient.age > 60\")",
    ("labs = LoadDB('lab')\ntry:\n    value = float(GetValue(labs, 'labresult, max'))\nexcept ValueError:\n"
     "    value = None\nfor index, row in labs.iterrows():\n    if isinstance(row, dict):\n"
     "        name = row['labname']\nanswer = value"),
]
CONSTRUCTS = sorted(UNANALYSABLE.values()) + sorted(COUNTED.values()) + [
    "x = t", "t = LoadDB('diagnosis')", "LoadDB = GetValue", "answer = answer.x", "import math\ny = math.pi",
    "def f(a):\n    return a", "f = lambda r: r['labname']", "for x in answer:\n    pass", "del answer",
    "x = {**{}}", "x = [*range(3)]", "x = '{}'.format", "x = f'{answer!r:>{3}}'", "y = (yield)", "raise",
]
NOISE = st.lists(st.sampled_from(list("()[]{}'\"\\:.,=*@#\n\t _-+%|<>!~`$\u0000é") + ["LoadDB", "cell", "__",
                                      "lambda"]),
                 max_size=8).map("".join)
ALL_PAIRS = {(table, column) for table, columns in SCHEMA.items() for column in columns}


def extracts_or_refuses(code) -> None:
    try:
        access = extract_accesses(code, SCHEMA)
    except ExtractionError as e:
        assert e.code.startswith("extract.") and e.message
        return
    assert isinstance(access, CodeAccess) and set(access.pairs) <= ALL_PAIRS


def insert(text: str, at: int, piece: str) -> str:
    at %= len(text) + 1
    return text[:at] + piece + text[at:]


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(BENIGN), st.integers(0, 40), st.sampled_from(CONSTRUCTS), st.integers(0, 3))
def test_a_construct_put_between_the_lines(program, line, construct, indent):
    lines = program.split("\n")
    at = line % (len(lines) + 1)
    lines[at:at] = ["    " * indent + part for part in construct.split("\n")]
    extracts_or_refuses("\n".join(lines))


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(BENIGN), st.lists(st.tuples(st.integers(0, 2000), NOISE), min_size=1, max_size=4))
def test_characters_put_anywhere(program, edits):
    for at, piece in edits:
        program = insert(program, at, piece)
    extracts_or_refuses(program)


PIECES = st.sampled_from([SECTION_SEPARATOR, "TERMINATE", '{"cell": ', '"cell"', "{", "}", '"', "\\", ': "', '", ',
                          "Solution:", "Error: ", "\n", "Ground-Truth Answer ---> 1"])


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(BENIGN), min_size=1, max_size=3),
       st.lists(st.tuples(st.integers(0, 5000), st.one_of(PIECES, NOISE)), max_size=4))
def test_a_log_with_pieces_put_anywhere(programs, edits):
    sections = [part for program in programs for part in (cell(program), "Error: x")][:-1] + ["1", "TERMINATE"]
    text = log(*sections)
    for at, piece in edits:
        text = insert(text, at, piece)
    try:
        extracts_or_refuses(parse_agent_log(text).code)
    except ExtractionError:
        pass


EICU_LOGS = benchmark_data() / EICU_DIR / "ehragent" / "logs"
REAL = sorted(EICU_LOGS.glob("*.txt"))[:60] if EICU_LOGS.exists() else []


@pytest.mark.skipif(not REAL, reason="the EICU-AC logs are not part of the repository and are absent here")
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 59), st.lists(st.tuples(st.integers(0, 30000), st.one_of(PIECES, NOISE)), min_size=1,
                                    max_size=3))
def test_a_real_log_with_pieces_put_anywhere(number, edits):
    text = REAL[number % len(REAL)].read_text(encoding="utf-8")
    schema = json.loads((EICU_LOGS.parent.parent / "derived" / "eicu_schema.json").read_text())["databases"]
    for at, piece in edits:
        text = insert(text, at, piece)
    try:
        extract_accesses(parse_agent_log(text).code, schema)
    except ExtractionError:
        pass
