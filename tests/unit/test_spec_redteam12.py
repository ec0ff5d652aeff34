"""The twelfth red-team pass on specs (helper C31): what a reader sees of a rule and of a value the policy compares.

On 6d7c2a0 these loaded: a rule whose message runs past a reader's window before its body on the same line (the
reader sees the message and not what the rule says), and a compared value with a space around it (`"evil.com "`, a
CSV written `name, bad.com`): the value shows as evil.com, and evil.com itself never equals it. Now each is
spec.hidden_text with its line. Controls: long messages with the body on the next line, a body at column 100, a value
with a space inside, mixed case.
"""
import pytest

from veriguard.contracts.errors import SpecError
from veriguard.synth.specfile import load_spec
from tests.unit.test_spec_redteam9 import write

REFUSED = {
    "a 300-character message before the body": dict(MESSAGE="No payments " + "x" * 300),
    "a 10,000-character message before the body": dict(MESSAGE="m" * 10000),
    "a message of words past the edge": dict(MESSAGE="Payments to evil.com are never sent. " * 5),
    "a compared value with a space after it": dict(CONSTANT="evil.com "),
    "a compared value with a space before it": dict(CONSTANT=" evil.com"),
    "a table key with a space after it": dict(table='{"bad.com ": true}'),
    "a table key with a space before it": dict(table='{" bad.com": true}'),
    "a CSV cell aligned with a space": dict(table="name,blocked\nacme.com,false\n bad.com,true\n", fmt="csv"),
    "an enum value with a space after it": dict(ROLE="manager "),
}


@pytest.mark.parametrize("over", REFUSED.values(), ids=REFUSED.keys())
def test_what_a_reader_does_not_see_is_refused(tmp_path, over):
    with pytest.raises(SpecError) as e:
        load_spec(write(tmp_path, **over))
    assert e.value.code == "spec.hidden_text" and e.value.pos.line > 0, e.value


def test_the_error_says_where_the_body_begins(tmp_path):
    with pytest.raises(SpecError, match=r"the body of rule not_evil begins at column \d+ of its line") as e:
        load_spec(write(tmp_path, MESSAGE="x" * 200))
    assert e.value.pos.col > 200


def test_the_error_names_the_space_around_a_table_key(tmp_path):
    with pytest.raises(SpecError, match="begins or ends with a space"):
        load_spec(write(tmp_path, table='{"bad.com ": true}'))


def test_a_long_message_with_the_body_on_the_next_line_loads(tmp_path):
    spec = write(tmp_path, MESSAGE="m" * 400)
    spec.write_text(spec.read_text(encoding="utf-8").replace('": recipient !=', '":\n    recipient !='), encoding="utf-8")
    assert load_spec(spec).name == "pay"


LOADS = {
    "a body at column 100": dict(MESSAGE="No payments to evil.com " + "x" * 50),
    "a compared value with a space inside": dict(CONSTANT="evil corp"),
    "a compared value in capitals": dict(CONSTANT="EVIL.COM"),
    "a table key in mixed case with a space inside": dict(table='{"Acme Corp": true}'),
    "a CSV without spaces after its commas": dict(table="name,blocked\nacme.com,false\nbad.com,true\n", fmt="csv"),
}


@pytest.mark.parametrize("over", LOADS.values(), ids=LOADS.keys())
def test_what_a_reader_sees_loads(tmp_path, over):
    assert load_spec(write(tmp_path, **over)).name == "pay"
