"""The lead's variants after C30's pass (seventh session): an argument whose separator is a form of an ASCII one
(`josé｡com`, `josé．com`, `josé․com`: IDNA and NFKC map each to `josé.com`) compared as another string than a rule's
`recipient != "josé.com"` and was allowed; refused now like C30's full-width letters joined to ASCII. Controls: the
same signs in other scripts' text, and ASCII text."""
from __future__ import annotations

import pytest

from veriguard.contracts.shown import SIGN_BLOCKS, _folds_to_sign
from veriguard.enforce.loader import ArgumentError, load_policy
from veriguard.synth.freeze import write_build
from veriguard.synth.specfile import load_spec
from tests.unit.test_compile_and_freeze import fake_result
from tests.unit.test_spec_redteam9 import write


@pytest.fixture(scope="module")
def policy(tmp_path_factory):
    d = tmp_path_factory.mktemp("lead30")
    made, _ = write_build(fake_result(load_spec(write(d, CONSTANT="jos\u00e9.com"))), d / "out", run_info={})
    return load_policy(made)


def _decide(policy, recipient: str) -> str:
    try:
        return "allowed" if policy.evaluate_checked({"recipient": recipient, "role": "clerk", "amount": 5}).allowed \
            else "denied"
    except ArgumentError as e:
        return "refused: " + e.reason


@pytest.mark.parametrize("recipient, sign", [
    ("jos\u00e9\uff61com", "."),    # halfwidth ideographic full stop (IDNA: a label separator)
    ("jos\u00e9\u3002com", "."),    # ideographic full stop
    ("jos\u00e9\uff0ecom", "."),    # full-width full stop
    ("jos\u00e9\ufe52com", "."),    # small full stop
    ("jos\u00e9\u2024com", "."),    # one dot leader
    ("pay\uff20jos\u00e9.com", "@"),  # full-width commercial at
    ("https\uff1a//jos\u00e9.com", ":"),  # full-width colon
])
def test_a_separator_in_another_form_joined_to_ascii_is_refused(policy, recipient, sign):
    got = _decide(policy, recipient)
    assert got.startswith("refused") and f"the ASCII separator {sign!r}" in got, (recipient, got)


@pytest.mark.parametrize("recipient", [
    "\u6771\u4eac\u3002",              # Japanese sentence end
    "\u682a\u5f0f\u4f1a\u793e\uff0e",   # full-width stop after Han
    "acme.com",
    "Acme Corp. \u2014 invoice 12",
    "\u3053\u308c\u306f ABC \u3002",   # a stop after a space
])
def test_other_scripts_text_and_ascii_load(policy, recipient):
    assert _decide(policy, recipient) == "allowed"


def test_a_sentence_ending_after_ascii_digits_in_japanese_loads(policy):
    assert _decide(policy, "\u30d0\u30fc\u30b8\u30e7\u30f3\u306f3.12\u3002\u6b21") == "allowed"


def test_every_character_that_folds_to_an_ascii_sign_is_in_the_blocks_read():
    blocks = [(lo, hi) for lo, hi in SIGN_BLOCKS]
    outside = [hex(cp) for cp in range(0x80, 0x110000) if _folds_to_sign(chr(cp))
               and not any(lo <= cp <= hi for lo, hi in blocks)]
    assert outside == []
