"""The tenth red-team pass on builds and loading (helper C29, 2026-11-30): an argument spelt otherwise than the rule.

A build of `rule not_evil: recipient != "josé.com"` allowed `"jose\u0301.com"` on e1e32b1: the same text in Unicode's
decomposed form (NFD), which a reader, macOS and IDNA take for josé.com, compared as another string. synth now holds a
compared value to NFC (test_spec_redteam10), and FrozenPolicy refuses an argument holding a string that is not NFC
(ArgumentError, so the monitor and `check` deny), at any depth. It does not normalise: the tool receives the agent's code
points, and on ext4 the two spellings of a file name are two files. NFC text of any script, combining marks that have no
composed form and emoji sequences are decided as before.
"""
import json

import pytest

from veriguard.cli import main
from veriguard.enforce.loader import ArgumentError, load_policy
from veriguard.synth.freeze import write_build
from veriguard.synth.specfile import load_spec
from tests.unit.test_compile_and_freeze import fake_result
from tests.unit.test_signed_builds import build, keys, no_trust_from_the_environment, signed  # noqa: F401
from tests.unit.test_spec_redteam9 import write


@pytest.fixture(scope="module")
def pay(tmp_path_factory):
    """A build of the ninth pass's pay spec whose rule denies josé.com (NFC, as synth now requires)."""
    folder = tmp_path_factory.mktemp("pay")
    made, _ = write_build(fake_result(load_spec(write(folder, CONSTANT="jos\u00e9.com"))), folder / "out",
                          run_info={})
    return made


def paying(recipient):
    return {"recipient": recipient, "role": "clerk", "amount": 5}


DECOMPOSED = {
    "e and a combining acute": "jose\u0301.com",
    "capital A and a combining ring": "A\u030angstrom.com",
    "Hangul as conjoining jamo": "\u1112\u1161\u11ab.kr",
    "an Angstrom sign (NFC is another letter)": "\u212bngstrom.com",
    # variants written after the fix, each allowed on e1e32b1 where the rule's own NFC spelling is denied
    "Vietnamese stacked marks": "Vie\u0323\u0302t.vn",
    "marks in non-canonical order": "a\u0301\u0302.vn",
    "Greek oxia for tonos": "\u1f71.gr",
    "a Devanagari letter with nukta NFC keeps apart": "\u0958.in",
    "a CJK compatibility ideograph": "\uf900.cn",
    "an Ohm sign": "\u2126.gr",
}


@pytest.mark.parametrize("recipient", DECOMPOSED.values(), ids=DECOMPOSED.keys())
@pytest.mark.parametrize("entry", ["evaluate", "evaluate_checked"])
def test_an_argument_not_in_nfc_is_refused(pay, recipient, entry):
    with pytest.raises(ArgumentError) as e:
        getattr(load_policy(pay), entry)(paying(recipient))
    assert e.value.argument == "recipient" and "NFC" in e.value.reason, e.value


def test_a_decomposed_string_inside_a_list_is_refused(build):
    with pytest.raises(ArgumentError) as e:
        load_policy(build).evaluate_checked({"role": "admin", "age": 30, "items": [["db", "x"], ["db", "cafe\u0301"]]})
    assert e.value.argument == "items", e.value


def test_check_denies_it_with_exit_2(pay, capsys):
    assert main(["check", str(pay), "--args", json.dumps(paying("jose\u0301.com"))]) == 2
    out = json.loads(capsys.readouterr().out)
    assert out["allowed"] is False and "NFC" in out["reason"], out


COMPOSED = {
    "the rule's own spelling": ("jos\u00e9.com", False),
    "ASCII": ("acme.com", True),
    "a Russian domain": ("\u043f\u0440\u0438\u043c\u0435\u0440.\u0440\u0444", True),
    "Hangul syllables": ("\ud55c\uad6d.kr", True),
    "a combining mark with no composed form": ("q\u0301.com", True),
    "an emoji sequence with joiners": ("\U0001f468\u200d\U0001f469\u200d\U0001f467.ws", True),
}


@pytest.mark.parametrize("recipient, allowed", COMPOSED.values(), ids=COMPOSED.keys())
def test_composed_text_is_decided_as_before(pay, recipient, allowed):
    d = load_policy(pay).evaluate_checked(paying(recipient))
    assert (d.allowed, d.violations) == (allowed, () if allowed else ("not_evil",)), d


def test_a_list_that_holds_itself_is_decided_by_the_frozen_checks(build):
    """The walk for decomposed text must end: a list holding itself (an in-process caller's) is walked once, and the
    frozen module's own checks refuse it."""
    items = [["db", "x"]]
    items.append(items)
    with pytest.raises(ArgumentError):
        load_policy(build).evaluate_checked({"role": "admin", "age": 30, "items": items})


def test_a_str_subclass_that_says_it_is_ascii_is_still_read(pay):
    class Ascii(str):
        def isascii(self):
            return True

    with pytest.raises(ArgumentError) as e:
        load_policy(pay).evaluate_checked(paying(Ascii("jose\u0301.com")))
    assert "NFC" in e.value.reason, e.value
