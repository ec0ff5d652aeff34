"""The ninth red-team pass on specs (helper C28, 2026-11-30): letters that show one thing and compare as another.

A rule `recipient != "еvil.com"` whose `е` is Cyrillic shows a person "evil.com denied"; the policy compares with the
Cyrillic spelling, so the real evil.com is allowed, and Nagini proves that policy. On b0ab452 the spec loaded, as did
a table of blocked domains keyed `bаd.com` (Cyrillic а) or `bad.cοm` (Greek ο), an enum value `mаnager`, a rule's
message, the request or an example's name with such a letter, a full-width `ｅvil.com`, and `evil` U+200B `.com`
(a zero-width space, written as is). Each is now `spec.hidden_text` with its place: a word may not mix ASCII with
letters that only look like ASCII ones, and no invisible character may sit beside ASCII text. Words of other scripts
(Платежи, αβγ, José) load as before.
"""
import json

import pytest

from veriguard.contracts.errors import SpecError
from veriguard.synth.specfile import load_spec

SPEC = '''name = "pay"
request = REQUEST
[types]
Role = { enum = ["clerk", ROLE] }
[arguments]
recipient = "str"
role = "Role"
amount = "int"
[tables.blocked]
file = "blocked.FORMAT"
signature = "(str) -> bool"
[contract]
rules = """
rule not_evil MESSAGE: recipient != CONSTANT
rule not_blocked "Blocked recipients are never paid": not blocked(recipient)
rule small "Payments stay small": amount < 1000
"""
[[examples]]
name = EXAMPLE
args = { recipient = "acme.com", role = "clerk", amount = 5 }
allowed = true
violations = []
'''
PLAIN = {"REQUEST": "Pay invoices; never pay evil.com.", "ROLE": "manager", "MESSAGE": "No payments to evil.com",
         "CONSTANT": "evil.com", "EXAMPLE": "ok"}


def write(tmp_path, table='{"bad.com": true}', fmt="json", **over):
    text = SPEC.replace("FORMAT", fmt)
    for k, v in {**PLAIN, **over}.items():
        text = text.replace(k, json.dumps(v, ensure_ascii=False))
    (tmp_path / f"blocked.{fmt}").write_text(table, encoding="utf-8")
    (tmp_path / "pay.toml").write_text(text, encoding="utf-8")
    return tmp_path / "pay.toml"


SHOWN_OTHERWISE = {
    "a rule's constant with a Cyrillic e": dict(CONSTANT="\u0435vil.com"),
    "a rule's constant with a Greek omicron": dict(CONSTANT="evil.c\u03bfm"),
    "a rule's constant with a full-width e": dict(CONSTANT="\uff45vil.com"),
    "a rule's constant with a mathematical bold e": dict(CONSTANT="\U0001d41evil.com"),
    "a rule's constant with a Cherokee letter": dict(CONSTANT="\u13aaCME.com"),
    "a rule's constant with a small capital": dict(CONSTANT="\u1d00cme.com"),
    "a rule's constant with a zero-width space": dict(CONSTANT="evil\u200b.com"),
    "a rule's constant ending in a zero-width joiner": dict(CONSTANT="evil.com\u200d"),
    "a rule's constant with a soft hyphen": dict(CONSTANT="ev\u00adil.com"),
    "a rule's constant with a word joiner": dict(CONSTANT="evil\u2060.com"),
    "a rule's message with a Cyrillic P": dict(MESSAGE="\u0420ayments to evil.com are denied"),
    "an enum value with a Cyrillic a": dict(ROLE="m\u0430nager"),
    "an enum value with a variation selector after ASCII": dict(ROLE="manager\ufe0f"),
    "the request with a Cyrillic e": dict(REQUEST="Never pay \u0435vil.com."),
    "an example's name with a Cyrillic a": dict(EXAMPLE="\u0430dult"),
    "a digit beside a Cyrillic O": dict(CONSTANT="1\u041e0.com"),
}


@pytest.mark.parametrize("over", SHOWN_OTHERWISE.values(), ids=SHOWN_OTHERWISE.keys())
def test_a_spec_word_that_shows_other_letters_is_refused_with_its_place(tmp_path, over):
    with pytest.raises(SpecError) as e:
        load_spec(write(tmp_path, **over))
    assert e.value.code == "spec.hidden_text" and e.value.fix and e.value.pos.line > 0, e.value


def test_the_place_is_the_rules_line(tmp_path):
    with pytest.raises(SpecError) as e:
        load_spec(write(tmp_path, CONSTANT="\u0435vil.com"))
    assert (e.value.pos.line, "'\u0435vil'" in str(e.value)) == (14, True), e.value


TABLES = {
    "a JSON key with a Cyrillic a": ('{"b\u0430d.com": true}', "json"),
    "a JSON key with a Greek omicron": ('{"bad.c\u03bfm": true}', "json"),
    "a JSON list item with Cyrillic o's": ('{"x": true, "g\u043e\u043egle.com": true}', "json"),
    "a CSV cell with a Cyrillic e": ("domain,blocked\n\u0435vil.com,true\n", "csv"),
    "a CSV cell with a zero-width space": ("domain,blocked\nevil\u200b.com,true\n", "csv"),
}


@pytest.mark.parametrize("table, fmt", TABLES.values(), ids=TABLES.keys())
def test_a_table_cell_that_shows_other_letters_is_refused(tmp_path, table, fmt):
    with pytest.raises(SpecError) as e:
        load_spec(write(tmp_path, table=table, fmt=fmt))
    assert e.value.code == "spec.hidden_text" and e.value.file.endswith(f"blocked.{fmt}"), e.value


BENIGN = {
    "Russian words in a message": dict(MESSAGE="\u041f\u043b\u0430\u0442\u0435\u0436\u0438 \u0437\u0430\u043f"
                                               "\u0440\u0435\u0449\u0435\u043d\u044b"),
    "a Greek word in a message": dict(MESSAGE="\u03b1\u03b2\u03b3 rule"),
    "an accented name": dict(CONSTANT="jos\u00e9.com"),
    "German and Polish names": dict(CONSTANT="stra\u00dfe-\u0142\u00f3d\u017a.pl"),
    "an emoji sequence with joiners in the request": dict(
        REQUEST="Pay invoices \U0001f468\u200d\U0001f469\u200d\U0001f467 safely"),
    "a Persian word with its non-joiner": dict(MESSAGE="\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645 no"),
    "micro and degree signs": dict(REQUEST="Under 5\u00b5s at 20\u00b0C, x\u00b2."),
    "a Cyrillic word beside an ASCII one": dict(MESSAGE="\u043d\u0435\u0442 evil.com"),
}


@pytest.mark.parametrize("over", BENIGN.values(), ids=BENIGN.keys())
def test_words_of_other_scripts_load(tmp_path, over):
    load_spec(write(tmp_path, **over))


def test_a_table_of_other_scripts_loads(tmp_path):
    load_spec(write(tmp_path, table='{"\u043f\u0440\u0438\u043c\u0435\u0440.\u0440\u0444": true, "jos\u00e9.com": '
                                      'true}'))
