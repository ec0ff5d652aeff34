"""Pass s26 on the EHRAgent log reader: every text is parsed once, and the parse budget pays for every parse.

The reader parsed one message up to five times (whether the call parses, whether it is a literal, whether it explains
its output, and again as a candidate program) and charged the budget for some of those parses and not for others
(_explains parsed outside it), so the budget neither bounded the work nor matched it.
"""
import ast
import json
from collections import Counter

import pytest

from veriguard.enforce import agent_logs
from veriguard.enforce.agent_logs import SECTION_SEPARATOR, parse_agent_log
from veriguard.enforce.extract_errors import ExtractionError

HEAD = "q" + SECTION_SEPARATOR + "a" + SECTION_SEPARATOR + "(END OF EXAMPLES)\nKnowledge:\n- k\nQuestion: q\nSolution: "
READS = "p = LoadDB('patient')\nanswer = GetValue(p, 'uniquepid')"
FAILS = "p = LoadDB('patient)"


def log(*sections: str) -> str:
    return HEAD + SECTION_SEPARATOR + SECTION_SEPARATOR.join(sections + ("TERMINATE",)) + SECTION_SEPARATOR


# a failed call, a call logged as its bare program, an output that is a literal, and a call that worked
LOG = log(json.dumps({"cell": FAILS}), "Error: SyntaxError: unterminated string literal (detected at line 1) (<string>, line 1)", READS, "['007-1']",
          json.dumps({"cell": READS + "\nanswer = answer"}), "007-1")


def parsed_texts(monkeypatch: pytest.MonkeyPatch, text: str) -> Counter[str]:
    seen: Counter[str] = Counter()
    real = ast.parse

    def counting(source, *args, **kwargs):
        seen[source if isinstance(source, str) else repr(source)] += 1
        return real(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counting)
    parse_agent_log(text)
    monkeypatch.setattr(ast, "parse", real)
    return seen


def test_each_text_of_a_log_is_parsed_once(monkeypatch):
    seen = parsed_texts(monkeypatch, LOG)
    assert READS in seen
    assert {text: n for text, n in seen.items() if n > 1} == {}


def test_the_budget_pays_for_every_parse_and_for_nothing_twice(monkeypatch):
    needed = sum(len(text) for text in parsed_texts(monkeypatch, LOG))
    monkeypatch.setattr(agent_logs, "PARSE_BUDGET", needed)
    assert parse_agent_log(LOG).code
    monkeypatch.setattr(agent_logs, "PARSE_BUDGET", needed - 1)
    with pytest.raises(ExtractionError) as info:
        parse_agent_log(LOG)
    assert info.value.code == "extract.log.structure"


def test_a_literal_output_is_still_no_program_and_a_bare_program_still_one():
    code = parse_agent_log(LOG).code
    assert READS in code and "['007-1']" not in code and "007-1" not in code


DIAG = "d = LoadDB('diagnosis')\nanswer = GetValue(d, 'diagnosisname')"
SECRET = "essential hypertension"
# Logs of pass s26 that held at c915136 and after: each denies, or reads a diagnosis column (regressions)
HELD = {
    "error_output_after_a_text_program": log(READS.replace("uniquepid", "x"), "Error: KeyError('essential hypertension')"),
    "cell_spelled_with_escapes": log('{"cell": "d = \\u004coadDB(\'diagnosis\')\\nanswer = GetValue(d, \'diagnosisname\')"}',
                                     SECRET),
    "carriage_return_in_a_cell": log(json.dumps({"cell": "p = LoadDB('patient')\ranswer = GetValue(LoadDB('diagnosis'), "
                                                         "'diagnosisname')"}), SECRET),
    "two_cells_in_one_message": log(json.dumps({"cell": READS}) + "\n" + json.dumps({"cell": DIAG}), SECRET),
    "cell_nested_in_another_key": log(json.dumps({"code": {"cell": DIAG}}), SECRET),
    "text_after_a_cell": log(json.dumps({"cell": DIAG}) + " // x", SECRET),
    "duplicate_cell_keys": log('{"cell": ' + json.dumps(READS) + ', "cell": ' + json.dumps(DIAG) + "}", SECRET),
    "crlf_separators": log(json.dumps({"cell": DIAG}), SECRET).replace("\n", "\r\n"),
    "text_beside_a_cell": log("Here is code:\n" + json.dumps({"cell": READS}), SECRET),
    "cell_and_a_second_object": log(json.dumps({"cell": READS}) + '\n{"cell2": 1}', SECRET),
    "a_cut_that_is_no_json": log('{"cell": "' + READS.replace("\n", "\\n") + '", "x": 1', SECRET),
}


@pytest.mark.parametrize("text", HELD.values(), ids=list(HELD))
def test_a_log_hiding_a_read_of_diagnosis_still_denies_or_reads_it(text):
    from veriguard.enforce.extract_code import CodeExtractor
    from tests.conftest import SHIPPED

    schema = json.loads((next(p for p in SHIPPED if p.stem == "eicu_ac").parent / "eicu_ac" / "schema.json")
                        .read_text(encoding="utf-8"))["databases"]
    try:
        pairs = CodeExtractor(schema, complete=True, pipe_free_values=True).extract({"log": text}).value
    except ExtractionError:
        return
    assert any(db == "diagnosis" for db, _ in pairs), pairs
