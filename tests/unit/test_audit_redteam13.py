"""The thirteenth red-team pass on loading (helper C32): look-alikes in another script, and a compared name inside a
URL, a mail address or percent-encoding.

C31's spelling key (contracts.shown.spelling_key) folds case, width, spaces, invisible characters, IDNA's dots, a root
dot and punycode; it maps no script to another. With `rule not_evil: recipient != "paypal.com"` and a table `blocked`
holding "bad.com" and "apple.com", c1d7034 allowed the all-Cyrillic `раураl.com`, `pаypal.com` with one Cyrillic а,
a Greek omicron, Cyrillic capitals `РАУРАL.СОМ`, Cherokee capitals, the punycode of `раураl.com` and `Ьаԁ.com`; with
`recipient != "josé.com"` it allowed `jos%C3%A9.com`, `https://JOSÉ.COM/path`, `user@JOSÉ.COM`, `mailto:`,
`JOSÉ.COM:8080` and `x@bad.com`. FrozenPolicy now also refuses (ArgumentError: deny) a string whose UTS #39 skeleton
(contracts.confusables: Unicode's confusables.txt as data) is a compared string's, when the two are not both ASCII, and
a URL, mail address or percent-encoded name whose host has a compared string's key or skeleton. Everyday names in
other scripts that look like no compared string are decided as before.
"""
import json
import unicodedata

import pytest

from veriguard.cli import main
from veriguard.enforce.loader import ArgumentError, load_policy
from veriguard.synth.freeze import write_build
from veriguard.synth.specfile import load_spec
from tests.unit.test_audit_redteam10 import pay, paying  # noqa: F401
from tests.unit.test_compile_and_freeze import fake_result
from tests.unit.test_spec_redteam9 import write


def built(tmp_path_factory, constant: str, table: str = '{"bad.com": true, "apple.com": true}'):
    folder = tmp_path_factory.mktemp("look")
    return write_build(fake_result(load_spec(write(folder, table=table, CONSTANT=constant))), folder / "out",
                       run_info={})[0]


@pytest.fixture(scope="module")
def paypal(tmp_path_factory):
    return built(tmp_path_factory, "paypal.com")


LOOK_ALIKES = {
    "all Cyrillic but the l": ("\u0440\u0430\u0443\u0440\u0430l.com", "paypal.com"),
    "one Cyrillic a": ("p\u0430ypal.com", "paypal.com"),
    "a Greek omicron": ("paypal.c\u03bfm", "paypal.com"),
    "Cyrillic capitals": ("\u0420\u0410\u0423\u0420\u0410L.\u0421\u041e\u041c", "paypal.com"),
    "the punycode of the Cyrillic name": ("xn--" + "\u0440\u0430\u0443\u0440\u0430l".encode("punycode").decode()
                                          + ".com", "paypal.com"),
    "Cyrillic soft sign for b, komi de for d (a table key)": ("\u042c\u0430\u0501.com", "bad.com"),
    "an Armenian o": ("paypal.c\u0585m", "paypal.com"),
    "Cherokee capitals": ("\u13e2\u13aaY\u13e2\u13aa\u13de.COM", "paypal.com"),
    "a Cyrillic palochka for l": ("\u0420\u0430\u0443\u0440\u0430\u04c0.com", "paypal.com"),
    "Cyrillic and a space after": ("\u0440\u0430\u0443\u0440\u0430l.com ", "paypal.com"),
    "Cyrillic a, p and e in a table key": ("\u0430\u0440\u0440l\u0435.com", "apple.com"),
    # variants written after the fix
    "a Cyrillic a and a root dot": ("p\u0430ypal.com.", "paypal.com"),
    "Greek capitals and Cyrillic": ("\u03a1\u0391YPAL.COM", "paypal.com"),
    "Cyrillic a and ie around Latin letters": ("\u0430ppl\u0435.com", "apple.com"),
    "a Cyrillic es inside a URL": ("https://p\u0430yp\u0430l.\u0441om/login", "paypal.com"),
    "a Cyrillic name as a mail address's host": ("billing@\u0440\u0430\u0443\u0440\u0430l.com", "paypal.com"),
    "a Cyrillic name and a zero-width space": ("\u0440\u0430\u0443\u200b\u0440\u0430l.com", "paypal.com"),
    "a Cyrillic a in a table key": ("b\u0430d.com", "bad.com"),
    "a percent-encoded Cyrillic look-alike": ("%D1%80%D0%B0%D1%83%D1%80%D0%B0l.com", "paypal.com"),
    "Greek alpha among Cyrillic letters": ("\u0440\u03b1\u0443pal.com", "paypal.com"),
    "HTTP in capitals and a Cyrillic host": ("HTTP://\u0440\u0430\u0443\u0440\u0430l.COM", "paypal.com"),
    "a look-alike table key in a mail address": ("x@b\u0430d.com", "bad.com"),
}


@pytest.mark.parametrize("recipient, compared", LOOK_ALIKES.values(), ids=LOOK_ALIKES.keys())
def test_a_look_alike_of_a_compared_string_is_refused(paypal, recipient, compared):
    with pytest.raises(ArgumentError) as e:
        load_policy(paypal).evaluate_checked(paying(recipient))
    assert e.value.argument == "recipient" and f"another spelling of {compared!r}" in e.value.reason, e.value


def test_check_denies_a_look_alike_with_exit_2(paypal, capsys):
    assert main(["check", str(paypal), "--args", json.dumps(paying("\u0440\u0430\u0443\u0440\u0430l.com"))]) == 2
    out = json.loads(capsys.readouterr().out)
    assert out["allowed"] is False and "letters of another script" in out["reason"], out


EVERYDAY = ["\u043f\u0440\u0438\u043c\u0435\u0440.\u0440\u0444", "\u043c\u043e\u0441\u043a\u0432\u0430.\u0440\u0444",
            "\u6771\u4eac.jp", "\u03c0\u03b1\u03c1\u03ac\u03b4\u03b5\u03b9\u03b3\u03bc\u03b1.gr",
            "\u041f\u0440\u0438\u0432\u0435\u0442, \u043a\u0430\u043a \u0434\u0435\u043b\u0430?",
            "\u05e9\u05dc\u05d5\u05dd.com", "\u0645\u062b\u0627\u0644.com", "\u0440\u0430\u0443.com",
            "\u0410\u043b\u0435\u043a\u0441\u0430\u043d\u0434\u0440", "\u0421\u0430\u043d\u043a\u0442-\u041f\u0435\u0442\u0435\u0440\u0431\u0443\u0440\u0433",
            "\u0391\u03b8\u03ae\u03bd\u03b1", "\u10d7\u10d1\u10d8\u10da\u10d8\u10e1\u10d8", "\u0535\u0580\u0587\u0561\u0576",
            "M\u00fcnchen", "apple pie", "paypa1.com", "paypal.com.au", "mail.paypal.com"]


@pytest.mark.parametrize("recipient", EVERYDAY)
def test_everyday_names_that_look_like_no_compared_string_are_decided_as_written(paypal, recipient):
    assert load_policy(paypal).evaluate_checked(paying(recipient)).allowed is True


def test_the_compared_strings_themselves_reach_the_rules(paypal):
    policy = load_policy(paypal)
    for recipient in ("paypal.com", "bad.com", "apple.com"):
        assert policy.evaluate_checked(paying(recipient)).allowed is False


@pytest.fixture(scope="module")
def cyrillic(tmp_path_factory):
    return built(tmp_path_factory, "\u0441\u043e\u0441\u043e.\u0440\u0444", table='{"bad.com": true}')


def test_latin_letters_that_look_like_a_cyrillic_compared_string_are_refused(cyrillic):
    policy = load_policy(cyrillic)
    assert policy.evaluate_checked(paying("\u0441\u043e\u0441\u043e.\u0440\u0444")).allowed is False
    with pytest.raises(ArgumentError) as e:
        policy.evaluate_checked(paying("coco.\u0440\u0444"))
    assert "another spelling of '\u0441\u043e\u0441\u043e.\u0440\u0444'" in e.value.reason


J = "jos\u00e9"
HELD = {
    "percent-encoded": "jos%C3%A9.com",
    "percent-encoded capitals": "JOS%C3%89.COM",
    "a URL in capitals": "https://JOS\u00c9.COM/path",
    "a URL with the exact host": f"https://{J}.com/",
    "a mail address": "user@JOS\u00c9.COM",
    "a mailto URL": "mailto:x@JOS\u00c9.COM",
    "a URL with who, port, query and fragment in punycode": "https://user:pw@xn--jos-dma.com:443/a?b#c",
    "a scheme-relative URL": "//JOS\u00c9.COM/x",
    "a host and a port": "JOS\u00c9.COM:8080",
    "a URL of a table key": "https://bad.com",
    "a mail address at a table key": "x@bad.com",
    "a URL in capitals with a root dot": "HTTPS://BAD.COM./",
    "a percent-encoded letter of a table key": "%62ad.com",
    # variants written after the fix
    "an FTP URL": "ftp://bad.com/pub",
    "a percent-encoded host in a URL": "https://jos%c3%a9.com/",
    "a host, a port and a path": "bad.com:443/x",
    "a URL with an empty who": "https://@bad.com",
    "a mail address with a plus": "a+b@BAD.COM",
    "who with two @": "https://a@b@bad.com",
    "a percent-encoded dot": "bad%2ecom",
    "a URL and a tab after it": "https://bad.com\t",
}


@pytest.mark.parametrize("recipient", HELD.values(), ids=HELD.keys())
def test_a_compared_name_held_in_a_url_a_mail_address_or_percent_encoding_is_refused(pay, recipient):  # noqa: F811
    with pytest.raises(ArgumentError) as e:
        load_policy(pay).evaluate_checked(paying(recipient))
    assert e.value.argument == "recipient" and "names " in e.value.reason and "another spelling of" in e.value.reason


NOT_A_HOST = ["https://example.com/jos\u00e9.com", f"see {J}.com docs", f"mail.{J}.com", "user@example.com", "100%",
              "https://example.com/?q=bad.com", "ls/bad", "C:\\bad.com", "50% of bad", "bad.com.au:80"]


@pytest.mark.parametrize("recipient", NOT_A_HOST)
def test_text_that_names_no_compared_host_is_decided_as_written(pay, recipient):  # noqa: F811
    assert load_policy(pay).evaluate_checked(paying(recipient)).allowed is True


def test_named_hosts_reads_only_a_whole_url_mail_address_or_percent_encoded_name():
    from veriguard.contracts.shown import named_hosts   # imported here: the start commit lacks it, and the rest runs
    assert named_hosts("https://user:pw@[::1]:8/x") == ["::1"]   # the address inside the brackets (C33: its forms are compared as one address)
    assert named_hosts("see https://bad.com") == [] and named_hosts("bad.com") == []
    assert named_hosts("ls:1") == []   # no dot and no scheme: not a domain


def test_the_confusables_data_holds_only_characters_a_normalized_text_can_hold():
    """contracts.confusables keeps a line of confusables.txt when NFKC and NFD leave its source as it is."""
    from veriguard.contracts import confusables
    from veriguard.contracts.shown import look_alike_key
    assert len(confusables.PROTOTYPES) == 2527
    assert all(unicodedata.normalize("NFD", unicodedata.normalize("NFKC", s)) == s for s in confusables.PROTOTYPES)
    assert confusables.PROTOTYPES["\u0430"] == "a" and confusables.PROTOTYPES["m"] == "rn"
    assert look_alike_key("\u0420\u0410\u0423\u0420\u0410L.\u0421\u041e\u041c") == look_alike_key("paypal.com")


SEEDED = """
from veriguard.contracts.shown import look_alike_key
from veriguard.enforce.loader import _another_spelling, spellings_of
both = spellings_of(frozenset({"paypal.com", "\\u0440\\u0430\\u0443\\u0440\\u0430l.com"}))
print(both.looks[look_alike_key("paypal.com")] == "\\u0440\\u0430\\u0443\\u0440\\u0430l.com",
      _another_spelling("paypa1.com", both) is not None)
"""


@pytest.mark.parametrize("seed", ["0", "1", "2", "3"])
def test_a_look_alike_key_two_compared_strings_share_keeps_the_one_not_ascii_whatever_the_hash_seed(seed):
    """A policy comparing `paypal.com` and Cyrillic `раураl.com` (one look-alike key) kept whichever a frozenset
    walked last, by the process's hash seed: `paypa1.com` was denied in some processes and allowed in others. The
    text that is not ASCII is kept, so it is denied in every one (seeds 0, 2 and 3 allowed it before)."""
    import os
    import subprocess
    import sys
    ran = subprocess.run([sys.executable, "-c", SEEDED], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONHASHSEED": seed})
    assert ran.returncode == 0 and ran.stdout.split() == ["True", "True"], (ran.stdout, ran.stderr)


def test_a_percent_encoded_host_with_an_invisible_character_is_read_as_its_spelling(pay):  # noqa: F811
    """`jos%C3%A9%E2%80%8B.com` names josé.com and a zero-width space, decoded after the text's invisible characters
    were read: the host is read without them too, so it is refused as another spelling (before: as a look-alike)."""
    with pytest.raises(ArgumentError) as e:
        load_policy(pay).evaluate_checked(paying("jos%C3%A9%E2%80%8B.com"))
    assert e.value.argument == "recipient" and "names 'jos\u00e9.com'" in e.value.reason, e.value.reason
    assert "invisible characters" in e.value.reason and "another script" not in e.value.reason, e.value.reason
