"""The eleventh red-team pass on loading (helper C30, 2026-11-30): an argument that shows the rule's text and is not it.

With `rule not_evil: recipient != "josé.com"` frozen, 5795103 allowed `josé.com` U+200B, a soft hyphen, a word joiner or a
byte-order mark inside it, and full-width, mathematical, circled, squared or modifier forms of its letters: a reader
and IDNA take each for josé.com, the policy compared other code points. FrozenPolicy (the one door of the monitor,
`check`, the hook and the MCP proxy) now refuses (ArgumentError: deny) an argument holding an invisible character
beside ASCII text, or a compatibility form of an ASCII letter or digit where it reads as ASCII (joined to ASCII, or in
a text of nothing else): contracts/shown.py, which synth's spec checks read too. Emoji sequences, Persian ZWNJ, a
variation selector before a space, Japanese text with full-width Latin, ™ and ² are decided as before.
Case (`JOSÉ.COM`), spaces around it and punycode are C31's (test_audit_redteam12): another spelling of a compared value.
"""
import json

import pytest

from veriguard.cli import main
from veriguard.enforce.loader import ArgumentError, load_policy
from tests.unit.test_audit_redteam10 import pay, paying  # noqa: F401

SHOWN_OTHERWISE = {
    "a zero-width space at the end": "jos\u00e9.com\u200b",
    "a zero-width space inside": "jos\u200b\u00e9.com",
    "a word joiner before the dot": "jos\u00e9\u2060.com",
    "a soft hyphen": "jo\u00ads\u00e9.com",
    "a byte-order mark first": "\ufeffjos\u00e9.com",
    "a Mongolian vowel separator": "jos\u00e9.c\u180eom",
    "a variation selector in a word": "jos\u00e9.co\ufe0fm",
    "a zero-width joiner after the dot": "jos\u00e9.\u200dcom",
    "a zero-width non-joiner before the dot": "jos\u00e9\u200c.com",
    "a tag letter": "jos\u00e9.com\U000e0065",
    "a combining grapheme joiner": "jos\u00e9.c\u034fom",
    "a Hangul filler": "jos\u00e9.com\u3164",
    "full-width letters": "\uff4a\uff4f\uff53\u00e9.com",
    "a mathematical j": "\U0001d423os\u00e9.com",
    "a circled j": "\u24d9os\u00e9.com",
    "a modifier m": "jos\u00e9.co\u1d50",
    "a squared C": "jos\u00e9.\U0001f132om",
    # variants written after the fix
    "a negative squared J": "\U0001f179os\u00e9.com",
    "a parenthesized o": "j\u24aas\u00e9.com",
    "a full-width digit": "jos\u00e9\uff11.com",
    "a left-to-right mark": "jos\u00e9.com\u200e",
    "an invisible separator": "jos\u00e9\u2063.com",
    "only invisible characters": "\u200b\u200b",
    "a whole full-width domain": "\uff45\uff56\uff49\uff4c\uff0e\uff43\uff4f\uff4d",
    "a superscript n joined to ASCII": "jose\u207f.com",
}


@pytest.mark.parametrize("recipient", SHOWN_OTHERWISE.values(), ids=SHOWN_OTHERWISE.keys())
@pytest.mark.parametrize("entry", ["evaluate", "evaluate_checked"])
def test_an_argument_that_shows_other_text_is_refused(pay, recipient, entry):  # noqa: F811
    with pytest.raises(ArgumentError) as e:
        getattr(load_policy(pay), entry)(paying(recipient))
    odd = next(c for c in recipient if not c.isascii() and c != "\u00e9")
    assert e.value.argument == "recipient" and f"U+{ord(odd):04X}" in e.value.reason, e.value


def test_check_denies_it_with_exit_2_and_the_character(pay, capsys):  # noqa: F811
    assert main(["check", str(pay), "--args", json.dumps(paying("jos\u00e9.com\u200b"))]) == 2
    out = json.loads(capsys.readouterr().out)
    assert out["allowed"] is False and "U+200B" in out["reason"], out


DECIDED = {
    "the rule's own spelling": ("jos\u00e9.com", False),
    "an emoji sequence with joiners": ("\U0001f468\u200d\U0001f469\u200d\U0001f467.ws", True),
    "Persian with a non-joiner": ("\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645.ir", True),
    "a heart with its selector before a space": ("I \u2764\ufe0f NY", True),
    "a Russian domain": ("\u043f\u0440\u0438\u043c\u0435\u0440.\u0440\u0444", True),
    "Japanese with full-width Latin": ("\uff21\uff22\uff23\u682a\u5f0f\u4f1a\u793e", True),
    "Japanese with full-width digits": ("\uff12\uff10\uff12\uff14\u5e74", True),
    "a trade mark sign": ("Acme\u2122.com", True),
    "a superscript two": ("m\u00b2.com", True),
    "another domain's capitals (JOSÉ.COM is refused: test_audit_redteam12)": ("ACME.COM", True),
}


@pytest.mark.parametrize("recipient, allowed", DECIDED.values(), ids=DECIDED.keys())
def test_text_that_reads_as_written_is_decided(pay, recipient, allowed):  # noqa: F811
    d = load_policy(pay).evaluate_checked(paying(recipient))
    assert (d.allowed, d.violations) == (allowed, () if allowed else ("not_evil",)), d
