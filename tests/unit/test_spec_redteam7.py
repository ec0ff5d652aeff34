"""The seventh red-team pass on specs (helper C26, 2026-11-30).

1. A backslash ending a line of the contract (TOML's line continuation in a basic string) joins the next line to it.
   After a `#`, the rule the file shows on the next line became part of a comment: a spec showing `rule cap
   "Payments stay under 1000": amount < 1000` was proved, frozen and signed without it, and `check` allowed a
   payment of 1,000,000 (exit 0). The contract's text must be written in the file as it reads (spec.contract_escape).
2. Enum values that differ only by invisible characters that are not format characters (variation selectors, Hangul
   fillers, the combining grapheme joiner, Mongolian variation selectors) were two values that read the same; they are
   `spec.enum` now, read as the classifier reads text (enforce.textnorm.strip_invisible).
"""
import pytest

from veriguard.contracts.errors import SpecError
from veriguard.synth.specfile import load_spec
from tests.conftest import MINIMAL, write_spec

CAP = '''
name = "cap"
request = "Adults only, and payments under 1000."

[arguments]
age = "int"
amount = "int"

[contract]
rules = {quote}
rule adult "Users must be adults": age >= 18{tail}
rule cap "Payments stay under 1000": amount < 1000
{quote}

[[examples]]
name = "adult pays 10"
args = {{ age = 30, amount = 10 }}
allowed = true
violations = []
'''

CONTINUED = {
    "after a comment": '   # see the wiki \\',
    "after a comment, spaces after the backslash": '   # see the wiki \\   ',
    "after a comment, CRLF": '  # x \\\r',
    "after a comment holding quotes": '  # the "cap" rule is below \\',
}


def cap(tail, quote='"""', message="Users must be adults"):
    return CAP.format(quote=quote, tail=tail).replace("Users must be adults", message)


def refused(tmp_path, text, code):
    path = tmp_path / "cap.toml"
    path.write_bytes(text.encode("utf-8"))
    with pytest.raises(SpecError) as e:
        load_spec(path)
    assert e.value.code == code, e.value
    assert e.value.fix and e.value.pos.line > 0
    return e.value


@pytest.mark.parametrize("tail", CONTINUED.values(), ids=CONTINUED.keys())
def test_a_line_continuation_in_the_contract_is_refused(tmp_path, tail):
    e = refused(tmp_path, cap(tail), "spec.contract_escape")
    assert "backslash" in e.message and e.pos.line == 11
    e = refused(tmp_path, cap(tail, message="Adults # 18 and over"), "spec.contract_escape")   # a # in a message
    assert e.pos.line == 11


@pytest.mark.parametrize("first", ["# the rules of payments", 'rule seen "A rule" : age >= 0   # checked first'])
def test_a_continuation_after_an_earlier_comment_is_refused(tmp_path, first):
    """Every line of the contract is read: a comment without a backslash before it does not hide the one with it."""
    text = cap("   # see the wiki \\").replace('rules = """\n', 'rules = """\n' + first + "\n", 1)
    e = refused(tmp_path, text, "spec.contract_escape")
    assert e.pos.line == 12


def test_the_hidden_rule_names_the_line_with_the_backslash(tmp_path):
    e = refused(tmp_path, CAP.format(quote='"""', tail="   # see the wiki \\"), "spec.contract_escape")
    assert (e.pos.line, e.pos.col) == (11, 63)


ADULTS = "Users must be adults"
READS_AS_WRITTEN = {"basic": ('"""', "", ADULTS), "literal": ("'''", "", ADULTS),
                    "literal, a backslash after a comment": ("'''", "   # a literal string keeps \\", ADULTS),
                    "a continuation inside a rule": ('"""', " and \\\n   age < 200", ADULTS),
                    "a continuation after a # in a message": ('"""', " and \\\n   age < 200", "Adults # 18 and over")}


@pytest.mark.parametrize("quote, tail, message", READS_AS_WRITTEN.values(), ids=READS_AS_WRITTEN.keys())
def test_a_contract_written_as_it_reads_loads(tmp_path, quote, tail, message):
    path = tmp_path / "cap.toml"
    path.write_text(cap(tail, quote, message), encoding="utf-8")
    spec = load_spec(path)
    assert [d.id for d in spec.contract.rules] == ["adult", "cap"]


def test_a_crlf_spec_written_as_it_reads_loads(tmp_path):
    path = tmp_path / "cap.toml"
    path.write_bytes(CAP.format(quote='"""', tail="").replace("\n", "\r\n").encode())
    assert [d.id for d in load_spec(path).contract.rules] == ["adult", "cap"]


def test_an_inline_contract_with_a_continuation_is_refused(tmp_path):
    body = CAP.format(quote='"""', tail="").replace('[contract]\nrules = """', 'contract = { rules = """', 1) \
        .replace('amount < 1000\n"""', 'amount < 1000\n""" }', 1)
    head, contract = body.split("contract = {")
    inline = "contract = {" + contract[:contract.index('""" }') + 5] + "\n"
    rest = head.replace("[arguments]", inline + "\n[arguments]") + contract[contract.index('""" }') + 5:]
    path = tmp_path / "cap.toml"
    path.write_text(rest, encoding="utf-8")
    assert [d.id for d in load_spec(path).contract.rules] == ["adult", "cap"]   # the control
    path.write_text(rest.replace("age >= 18\n", "age >= 18 # \\\n", 1), encoding="utf-8")
    with pytest.raises(SpecError) as e:
        load_spec(path)
    assert e.value.code == "spec.contract_escape"


INVISIBLE = {"variation selector 16": "\ufe0f", "variation selector 1": "\ufe00", "Hangul filler": "\u3164",
             "Hangul choseong filler": "\u115f", "combining grapheme joiner": "\u034f",
             "Mongolian free variation selector": "\u180b", "halfwidth Hangul filler": "\uffa0",
             "zero-width space (a format character, refused before)": "\u200b"}


@pytest.mark.parametrize("ch", INVISIBLE.values(), ids=INVISIBLE.keys())
def test_enum_values_that_differ_by_an_invisible_character_are_refused(tmp_path, ch):
    path = write_spec(tmp_path, MINIMAL.replace('["admin", "user"]', f'["admin", "user", "admin{ch}"]'))
    with pytest.raises(SpecError) as e:
        load_spec(path)
    assert e.value.code == "spec.enum" and "read the same" in e.value.message


@pytest.mark.parametrize("values", ['["admin", "user", "adm\u00edn"]', '["admin", "user", "\u00e9t\u00e9"]',
                                    '["admin", "user", "\u2764\ufe0f"]'])
def test_enum_values_that_read_otherwise_load(tmp_path, values):
    load_spec(write_spec(tmp_path, MINIMAL.replace('["admin", "user"]', values)))
