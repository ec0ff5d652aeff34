"""Pass E27 on the EHRAgent log reader: an output whose form no value of the program's `answer` can have.

A message whose text is itself a program reading the database and setting `answer` was taken as the program behind
the output that follows, whatever that output was: `answer = len(GetValue(p, 'uniquepid'))` before the output
"essential hypertension" (what a hidden call reading diagnosis printed) was allowed, though str() of an integer is
never that text. Now, when every assignment to `answer` has a form whatever it reads (a comparison or `not`: True or
False; len, int or ord: an integer; float: a number), an output of another form is one the program did not make: the
log says so (`hidden`) and the code extractor counts every column as read. Still open: an output that has the form
(an id, a list, a string) but not the value.
"""
import pytest

from tests.unit.test_agent_logs_e25 import SECRET, log, refusal
from veriguard.enforce.agent_logs import parse_agent_log

LOAD = "p = LoadDB('patient')\n"
MISMATCHED = {
    "len_then_text": (LOAD + "answer = len(GetValue(p, 'uniquepid'))", SECRET),
    "int_then_text": (LOAD + "answer = int(GetValue(p, 'age'))", SECRET),
    "ord_then_text": (LOAD + "answer = ord(GetValue(p, 'gender')[0])", SECRET),
    "float_then_text": (LOAD + "answer = float(GetValue(p, 'admissionweight'))", SECRET),
    "comparison_then_text": (LOAD + "answer = GetValue(p, 'age') > 60", SECRET),
    "not_then_text": (LOAD + "answer = not GetValue(p, 'age')", SECRET),
    "two_forms_neither_fits": (LOAD + "if 1:\n    answer = len(p)\nelse:\n    answer = 3 > 2", SECRET),
    "int_then_a_list": (LOAD + "answer = len(GetValue(p, 'uniquepid'))", "['" + SECRET + "']"),
    "comparison_then_number": (LOAD + "answer = GetValue(p, 'age') == '70'", "70"),
    "sql_count_then_text": ("answer = int(SQLInterpreter('select count(*) from patient'))", SECRET),
}


@pytest.mark.parametrize(("program", "output"), MISMATCHED.values(), ids=MISMATCHED.keys())
def test_an_output_of_another_form_than_the_answer_is_hidden(program, output):
    refusal(log(program, output))


FITTING = {
    "len_then_integer": (LOAD + "answer = len(GetValue(p, 'uniquepid'))", "3"),
    "negative_integer": (LOAD + "answer = int(GetValue(p, 'age'))", "-1"),
    "float_then_number": (LOAD + "answer = float(GetValue(p, 'admissionweight'))", "72.5"),
    "float_then_integer_text": (LOAD + "answer = float(GetValue(p, 'admissionweight'))", "72"),
    "float_then_nan": (LOAD + "answer = float(GetValue(p, 'admissionweight'))", "nan"),
    "comparison_then_true": (LOAD + "answer = GetValue(p, 'age') > 60", "True"),
    "two_forms_one_fits": (LOAD + "if 1:\n    answer = len(p)\nelse:\n    answer = 3 > 2", "False"),
    "unknown_form": (LOAD + "answer = GetValue(p, 'uniquepid')", "007-1"),
    "form_then_unknown": (LOAD + "answer = len(p)\nanswer = GetValue(p, 'uniquepid')", "007-1"),
    "augmented": (LOAD + "answer = len(p)\nanswer += ' patients'", "3 patients"),
    "unpacked": (LOAD + "answer, b = GetValue(p, 'uniquepid'), 1\nanswer = answer", "007-1"),
    "loop_target": (LOAD + "answer = 0 > 1\nfor answer in GetValue(p, 'uniquepid'):\n    pass\nanswer = answer", "007-1"),
    "error_output": (LOAD + "answer = len(GetValue(p, 'nosuch'))", "Error: KeyError('nosuch')"),
    "never_set_zero": (LOAD + "x = len(p)\nanswer", "0"),
}


@pytest.mark.parametrize(("program", "output"), FITTING.values(), ids=FITTING.keys())
def test_an_output_of_the_answers_form_is_explained(program, output):
    assert parse_agent_log(log(program, output)).hidden == ""
