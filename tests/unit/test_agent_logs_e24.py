"""Red-team pass s24 on the EHRAgent log parser: programs that ran but were not among those read.

1. A call logged as its bare cell (main.py writes argums['cell'] when the arguments are a dict) that holds `: "`
   itself: only its `: "` cut was read, never the whole program. Every run of whole sections is now read in full too.
2. A markdown code fence in a message: EHRAgent's user proxy has code_execution_config set, so autogen runs the code
   blocks of a message without a function call (python, sh, ...). Such a block is no cell and no cut; it is refused.
3. A text message with output after it, whose `: "` cut or an embedded cell object parsed: EHRAgent logs the text
   of a message that also has a function call, so the call that ran is not in the log. Only a call ('{' with a cell
   key) or a program in full (Python, more than a literal) may stand before output now.
"""
import json

import pytest

from veriguard.enforce.agent_logs import SECTION_SEPARATOR, parse_agent_log
from veriguard.enforce.extract_errors import ExtractionError

HEAD = "q\n['a']\nexamples\n(END OF EXAMPLES)\nKnowledge:\n- k\nQuestion: what?\nSolution: "
BENIGN = "d = LoadDB('patient')\nanswer = GetValue(d, 'uniquepid')"
EVIL = "d = LoadDB('diagnosis')\nanswer = GetValue(d, 'diagnosisname')"
RAN = "exitcode: 0 (execution succeeded)\nCode output: flu"


def log(*sections: str) -> str:
    return HEAD + SECTION_SEPARATOR + SECTION_SEPARATOR.join(sections + ("TERMINATE",)) + "\n"


def cell(code: str) -> str:
    return json.dumps({"cell": code})


def refused(text: str) -> str:
    with pytest.raises(ExtractionError) as info:
        parse_agent_log(text)
    return info.value.code


# ---- 1: a bare cell that holds `: "` is read whole -------------------------------------------------------------
BARE = {
    "dict_literal_after": EVIL + "\ns = {'k': \"x = 1\", 'j': 2}",
    "print_before": "print('a: \"b')\n" + EVIL,
    "string_before": "s = 'x: \"y'\n" + EVIL,
}


@pytest.mark.parametrize("code", BARE.values(), ids=list(BARE))
def test_a_bare_cell_holding_the_cut_marker_is_read_whole(code):
    assert code in parse_agent_log(log(code, "['flu']")).code


def test_a_later_bare_cell_is_read_whole_beside_an_earlier_json_cell():
    later = EVIL + "\nm = {1: \"answer = 2\", 2: 3}"
    assert parse_agent_log(log(cell(BENIGN), "['x']", later, "['flu']")).code[:2] == (BENIGN, later)


# ---- 2: markdown code blocks, which autogen's code execution runs --------------------------------------------
FENCED = {
    "python_beside_a_cut": "Plan: \"answer = 1\", ok\n```python\n" + EVIL + "\n```",
    "python_beside_a_cell": "Plan " + cell(BENIGN) + "\n```python\n" + EVIL + "\n```",
    "sh": "```sh\nsqlite3 eicu.db 'select diagnosisname from diagnosis'\n```",
    "no_language": "```\n" + EVIL + "\n```",
    "nested_in_markdown": "````markdown\n```python\n" + EVIL + "\n```\n````",
    "after_a_json_block": "```json\n" + cell(BENIGN) + "\n```\n```python\n" + EVIL + "\n```",
    "crlf": "answer = 1\n```python\r\n" + EVIL + "\r\n```",
}


@pytest.mark.parametrize("message", FENCED.values(), ids=list(FENCED))
def test_a_code_block_in_a_message_is_refused(message):
    assert refused(log(message, RAN)) == "extract.log.code_block"


def test_a_code_block_in_a_later_message_or_an_output_is_refused():
    assert refused(log(cell(BENIGN), "['x']", "```bash\ncat /data/eicu.db\n```", RAN)) == "extract.log.code_block"
    assert refused(log(cell(BENIGN), "```python\n" + EVIL + "\n```")) == "extract.log.code_block"


def test_a_code_block_in_the_terminate_message_is_not_run_and_passes():
    text = HEAD + SECTION_SEPARATOR + SECTION_SEPARATOR.join([cell(BENIGN), "['x']", "```\nx\n```\nTERMINATE"]) + "\n"
    assert parse_agent_log(text).code == (BENIGN,)


# ---- 3: a text message before output: the call that ran is not in the log -------------------------------------
HIDDEN = {
    "quoted_code": "Let me compute: \"answer = 1\", then report.",
    "embedded_cell": "I will run " + cell(BENIGN) + " now",
    "python_dict_of_a_cell": "{'cell': " + repr(EVIL) + "}",
    "json_with_another_key": json.dumps({"CELL": EVIL}),
    "a_literal": "42",
}


@pytest.mark.parametrize("message", HIDDEN.values(), ids=list(HIDDEN))
def test_text_before_output_is_refused(message):
    assert refused(log(message, "['flu']")) == "extract.log.structure"


def test_text_with_empty_output_still_passes_and_a_bare_program_is_read():
    assert parse_agent_log(log(cell(BENIGN), "['x']", "I am done: \"ok\", thanks", "")).code[0] == BENIGN
    assert parse_agent_log(log(BENIGN, "['x']")).code == (BENIGN,)
