"""The twelfth red-team pass on loading (helper C31): an argument that is another spelling of a string the policy compares.

With `rule not_evil: recipient != "josé.com"` and a table `blocked` holding "bad.com" frozen, 6d7c2a0 allowed
`JOSÉ.COM`, `José.com`, `josé.com` with a space of any kind before or after it (plain, tab, U+00A0, U+3000, Ogham),
small capitals, a DNS root dot (`josé.com.`), punycode (`xn--jos-dma.com`) and `BAD.COM`: a mail server, IDNA or a
tool takes each for the compared name, and the policy compares strings as written (the contract language has only
equality on strings). FrozenPolicy (the door of the monitor, `check`, the hook and the MCP proxy) now refuses
(ArgumentError: deny) a string that is not itself a compared string but has one's contracts.shown.spelling_key. What is
proved is unchanged; a string no rule, assumption, property or table names is decided as before, whatever its case.
"""
import json
from pathlib import Path

import pytest

from veriguard.cli import main
from veriguard.enforce import loader
from veriguard.enforce.loader import ArgumentError, load_policy
from veriguard.synth.freeze import write_build
from veriguard.synth.specfile import load_spec
from tests.unit.test_audit_redteam10 import pay, paying  # noqa: F401
from tests.unit.test_compile_and_freeze import fake_result
from tests.unit.test_spec_redteam9 import write

SPECS = Path(__file__).resolve().parents[2] / "specs"
J = "jos\u00e9"
SPELLINGS = {
    "upper case": ("JOS\u00c9.COM", J + ".com"),
    "title case": ("Jos\u00e9.com", J + ".com"),
    "a plain space after": (J + ".com ", J + ".com"),
    "a plain space before": (" " + J + ".com", J + ".com"),
    "a no-break space after": (J + ".com\u00a0", J + ".com"),
    "an ideographic space after": (J + ".com\u3000", J + ".com"),
    "an Ogham space mark after": (J + ".com\u1680", J + ".com"),
    "small capitals": ("\u1d0a\u1d0fs\u00e9.com", J + ".com"),
    "a DNS root dot": (J + ".com.", J + ".com"),
    "punycode": ("xn--jos-dma.com", J + ".com"),
    "punycode in capitals": ("XN--JOS-DMA.COM", J + ".com"),
    "a table key in capitals": ("BAD.COM", "bad.com"),
    "a table key capitalised": ("Bad.com", "bad.com"),
    "a table key and a tab": ("bad.com\t", "bad.com"),
    "a table key and a newline": ("bad.com\n", "bad.com"),
    "a table key and a line separator": ("bad.com\u2028", "bad.com"),
    "an em space before a table key": ("\u2003bad.com", "bad.com"),
    # variants written after the fix
    "upper case and a root dot": ("JOS\u00c9.COM.", J + ".com"),
    "mixed case after a no-break space": ("\u00a0JoS\u00e9.CoM", J + ".com"),
    "a table key in mixed case": ("bAd.CoM", "bad.com"),
    "punycode in mixed case": ("Xn--Jos-Dma.Com", J + ".com"),
    "a figure space after": ("bad.com\u2007", "bad.com"),
    "a medium mathematical space before": ("\u205fbad.com", "bad.com"),
    "small capitals for a table key": ("\u0299\u1d00\u1d05.com", "bad.com"),
    "no-break spaces around": ("\u00a0bad.com\u00a0", "bad.com"),
    "a vertical tab": ("bad.com\x0b", "bad.com"),
    "two root dots": ("bad.com..", "bad.com"),
    "5,000 spaces before a table key": (" " * 5000 + "bad.com", "bad.com"),
    "capitals and 5,000 no-break spaces after": ("BAD.COM" + "\u00a0" * 5000, "bad.com"),
    "a tab before and a carriage return after": ("\tbad.com\r", "bad.com"),
    "punycode and a root dot": ("xn--jos-dma.com.", J + ".com"),
}


@pytest.mark.parametrize("recipient, compared", SPELLINGS.values(), ids=SPELLINGS.keys())
@pytest.mark.parametrize("entry", ["evaluate", "evaluate_checked"])
def test_another_spelling_of_a_compared_string_is_refused(pay, recipient, compared, entry):  # noqa: F811
    with pytest.raises(ArgumentError) as e:
        getattr(load_policy(pay), entry)(paying(recipient))
    assert e.value.argument == "recipient" and f"another spelling of {compared!r}" in e.value.reason, e.value


def test_check_denies_it_with_exit_2_naming_the_compared_string(pay, capsys):  # noqa: F811
    assert main(["check", str(pay), "--args", json.dumps(paying("JOS\u00c9.COM"))]) == 2
    out = json.loads(capsys.readouterr().out)
    assert out["allowed"] is False and "another spelling of 'jos\\u00e9.com'" in json.dumps(out["reason"]), out


@pytest.fixture(scope="module")
def payments(tmp_path_factory):
    d = tmp_path_factory.mktemp("payments")
    return load_policy(write_build(fake_result(load_spec(SPECS / "payments.toml")), d, run_info={})[0])


def _paying_approved(recipient):
    return {"user": {"role": "clerk", "sent_today_cents": 0, "mfa": False},
            "payment": {"recipient": recipient, "amount_cents": 45000, "currency": "USD", "method": "ach",
                        "human_approved": True}}


def test_a_spelling_inside_a_record_is_refused_even_where_a_rule_would_allow_any_name(payments):
    """The shipped allowlist: a human-approved payment may go to anyone, but not to a capitalised allowlisted
    vendor (fail closed: the loader does not know which rule compares which argument)."""
    assert payments.evaluate_checked(_paying_approved("acme-supplies")).allowed
    assert payments.evaluate_checked(_paying_approved("Initrode Ltd")).allowed
    with pytest.raises(ArgumentError, match="another spelling of 'acme-supplies'") as e:
        payments.evaluate_checked(_paying_approved("ACME-SUPPLIES"))
    assert e.value.argument == "payment"


DECIDED = {
    "the rule's own spelling": (J + ".com", False),
    "the table's own spelling": ("bad.com", False),
    "a name no rule compares, in capitals": ("ACME.COM", True),
    "a mixed-case name": ("iPhone", True),
    "an e-mail address in other case": ("Bob@Example.com", True),
    "an enum value's capitals in a string argument": ("Manager", True),
    "a subdomain of the compared name": ("mail." + J + ".com", True),
    "a longer name ending otherwise": (J + ".com.au", True),
    "a sentence's stop after one word": ("Done.", True),
    "Japanese text": ("\u682a\u5f0f\u4f1a\u793e", True),
    "a punycode label too long for DNS": ("xn--" + "a" * 5000, True),
    "another accent in capitals": ("JOS\u00c8.COM", True),
    "a dotted capital I (IDNA keeps its dot)": ("\u0130stanbul.com", True),
    "5,000 spaces before another name": (" " * 5000 + "acme.com", True),
    "a label that is not punycode": ("xn--\u00e9.com".encode("ascii", "replace").decode(), True),
}


@pytest.mark.parametrize("recipient, allowed", DECIDED.values(), ids=DECIDED.keys())
def test_other_strings_are_decided_as_written(pay, recipient, allowed):  # noqa: F811
    d = load_policy(pay).evaluate_checked(paying(recipient))
    assert d.allowed is allowed, d


def test_the_compared_strings_are_the_literals_and_table_cells_not_ids_or_messages(pay):  # noqa: F811
    policy = load_policy(pay)
    assert loader.compared_texts(policy.module, policy.certificate) == {J + ".com", "bad.com"}


RU = "\u043f\u0440\u0438\u043c\u0435\u0440.\u0440\u0444"   # пример.рф
RUSSIAN = {
    "in capitals": "\u041f\u0420\u0418\u041c\u0415\u0420.\u0420\u0424",
    "a zero-width space between its letters": "\u043f\u200b\u0440\u0438\u043c\u0435\u0440.\u0440\u0444",
    "300 zero-width spaces between its letters": "\u043f" + "\u200b" * 300 + "\u0440\u0438\u043c\u0435\u0440.\u0440\u0444",
    "punycode": "xn--e1afmkfd.xn--p1ai",
}


@pytest.fixture(scope="module")
def russian(tmp_path_factory):
    d = tmp_path_factory.mktemp("russian")
    return load_policy(write_build(fake_result(load_spec(write(d, CONSTANT=RU))), d / "out", run_info={})[0])


@pytest.mark.parametrize("recipient", RUSSIAN.values(), ids=RUSSIAN.keys())
def test_another_spelling_of_a_russian_name_is_refused(russian, recipient):
    """A zero-width space between two Cyrillic letters is beside no ASCII one, which C30's check reads."""
    with pytest.raises(ArgumentError, match=f"another spelling of {RU!r}"):
        russian.evaluate_checked(paying(recipient))


def test_a_russian_sentence_is_decided(russian):
    assert russian.evaluate_checked(paying("\u041f\u0440\u0438\u0432\u0435\u0442, \u043c\u0438\u0440")).allowed


@pytest.fixture(scope="module")
def twins(tmp_path_factory):
    """A rule comparing with "small", which is also a rule's id, and a table holding both Acme and acme."""
    d = tmp_path_factory.mktemp("twins")
    spec = write(d, CONSTANT="small", table='{"bad.com": true, "Acme": true, "acme": true}')
    return load_policy(write_build(fake_result(load_spec(spec)), d / "out", run_info={})[0])


def test_a_literal_that_is_also_an_id_is_compared(twins):
    with pytest.raises(ArgumentError, match="another spelling of 'small'"):
        twins.evaluate_checked(paying("Small"))


@pytest.mark.parametrize("recipient", ["Acme", "acme"])
def test_each_of_two_compared_spellings_is_decided_as_written(twins, recipient):
    assert twins.evaluate_checked(paying(recipient)).violations == ("not_blocked",)


def test_a_third_spelling_of_two_compared_ones_is_refused(twins):
    with pytest.raises(ArgumentError, match="another spelling of 'acme'|another spelling of 'Acme'"):
        twins.evaluate_checked(paying("ACME"))


@pytest.fixture(scope="module")
def room(tmp_path_factory):
    d = tmp_path_factory.mktemp("room")
    return load_policy(write_build(fake_result(load_spec(write(d, CONSTANT="room2.example"))), d / "out", run_info={})[0])


@pytest.mark.parametrize("recipient", ["room\u00b2.example", "room\u2461.example", "room\u2082.example"],
                         ids=["a superscript two", "a circled two", "a subscript two"])
def test_a_digit_in_another_form_of_a_compared_string_is_refused(room, recipient):
    """C30's check decides ² and ② as written (they are no decimal digits); NFKC, IDNA and a reader take each for 2."""
    with pytest.raises(ArgumentError, match="another spelling of 'room2.example'"):
        room.evaluate_checked(paying(recipient))


@pytest.mark.parametrize("recipient", ["m\u00b2 of room", "\U0001f1f7\U0001f1f4\U0001f1f4\U0001f1f22.example"],
                         ids=["a superscript elsewhere", "regional indicators (flags, which IDNA refuses)"])
def test_signs_that_respell_no_compared_string_are_decided(room, recipient):
    assert room.evaluate_checked(paying(recipient)).allowed
