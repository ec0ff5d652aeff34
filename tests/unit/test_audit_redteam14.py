"""The fourteenth red-team pass on loading (helper C33): another form of a compared IP address, and the host a mail
program reads out of a header value.

With `rule not_evil: recipient != "127.0.0.1"` and a table `blocked` holding "10.0.0.1", "::1" and "2001:db8::1",
8004e60 allowed 22 of 23 other forms of those addresses: `2130706433`, `0x7f.1`, `127.1`, `0177.0.0.1`, `127.0.0.01`,
`::ffff:127.0.0.1`, `[::ffff:7f00:1]`, `http://0x7f.1/`, `0:0:0:0:0:0:0:1`, `::1%eth0`, `[::1]:22`, `10.1`,
`user@[127.0.0.1]` (only the root dot of `127.0.0.1.` was refused). inet_aton, the WHATWG URL parser and a resolver
read each as the compared address. With a table holding "bad.com" it allowed `x@bad.com(comment)`, `x@(c)bad.com`,
`<x@bad.com>`, `Bob<x@bad.com>`, `x@bad.com,y@ok.com`, `x@bad.com;` and `x@[bad.com]`: a mail program drops RFC 5322's
comments, reads each address of a list and the address in angle brackets. FrozenPolicy now refuses (ArgumentError:
deny) a string, or a host read out of it, that is another form of a compared IP address (contracts.shown.address_keys;
a part with a leading zero is read both as octal and as decimal), and reads the hosts of a mail header value.
"""
import json
import time

import pytest

from veriguard.cli import main
from veriguard.contracts import shown
from veriguard.enforce.loader import ArgumentError, load_policy
from tests.unit.test_audit_redteam10 import paying
from tests.unit.test_audit_redteam13 import built


@pytest.fixture(scope="module")
def loopback(tmp_path_factory):
    return built(tmp_path_factory, "127.0.0.1", '{"10.0.0.1": true, "::1": true, "2001:db8::1": true, "bad.com": true}')


ADDRESSES = {
    "one decimal number": ("2130706433", "127.0.0.1"),
    "hex and a short form": ("0x7f.1", "127.0.0.1"),
    "two parts": ("127.1", "127.0.0.1"),
    "an octal first part": ("0177.0.0.1", "127.0.0.1"),
    "one hex number": ("0x7f000001", "127.0.0.1"),
    "a zero-padded part": ("127.0.0.01", "127.0.0.1"),
    "every part zero-padded": ("127.000.000.001", "127.0.0.1"),
    "IPv4-mapped IPv6": ("::ffff:127.0.0.1", "127.0.0.1"),
    "IPv4-mapped IPv6 in hex, in brackets": ("[::ffff:7f00:1]", "127.0.0.1"),
    "a URL's host in hex": ("http://0x7f.1/", "127.0.0.1"),
    "a URL's host as one number, with a port": ("http://2130706433:80/", "127.0.0.1"),
    "IPv6 written out": ("0:0:0:0:0:0:0:1", "::1"),
    "IPv6 with a zero-padded group": ("::0001", "::1"),
    "IPv6 with a zone": ("::1%eth0", "::1"),
    "IPv6 in brackets with a port": ("[::1]:22", "::1"),
    "IPv6 in capitals, written out": ("2001:DB8:0:0:0:0:0:1", "2001:db8::1"),
    "IPv6 compressed elsewhere": ("2001:db8::0:1", "2001:db8::1"),
    "a table key in two parts": ("10.1", "10.0.0.1"),
    "a table key as one number": ("167772161", "10.0.0.1"),
    "a table key in hex": ("0xa000001", "10.0.0.1"),
    "a mail address's domain literal": ("user@[127.0.0.1]", "127.0.0.1"),
    "a table key IPv4-mapped": ("::ffff:10.0.0.1", "10.0.0.1"),
    # variants written after the fix
    "a leading zero read as decimal": ("0127.0.0.1", "127.0.0.1"),
    "IPv4-mapped in a URL's brackets": ("http://[::ffff:127.0.0.1]:8080/x", "127.0.0.1"),
    "hex in capitals in a URL": ("https://0X7F.0.0.1/", "127.0.0.1"),
    "three parts": ("127.0.1", "127.0.0.1"),
    "every part hex": ("0x7f.0x0.0x0.0x1", "127.0.0.1"),
    "IPv4-mapped with a padded group": ("::ffff:7f00:0001", "127.0.0.1"),
    "IPv6 written out in brackets": ("[0:0:0:0:0:0:0:1]", "::1"),
    "a mail address's IPv6 literal": ("user@[IPv6:::1]", "::1"),
    "an FTP URL's short host": ("ftp://127.1/", "127.0.0.1"),
    "percent-encoded digits": ("%31%32%37.1", "127.0.0.1"),
    "a table key zero-padded (octal 8.0.0.1, decimal 10.0.0.1)": ("010.0.0.1", "10.0.0.1"),
    "user, hex part and port": ("http://user@0x0a.1:80/", "10.0.0.1"),
    "a percent-encoded zone in a URL": ("http://[::1%25eth0]/", "::1"),
    "a zero-padded mail domain literal": ("x@[010.0.0.1]", "10.0.0.1"),
    "a mail address at a hex address": ("x@0xa.0.0.1", "10.0.0.1"),
    "ssh as root at one number": ("ssh://root@2130706433", "127.0.0.1"),
    "IPv4-mapped hex in brackets with a port": ("[::ffff:a00:1]:443", "10.0.0.1"),
    "every part hex and zero-padded, with a port": ("0x7F.0x00.0x00.0x01:8080", "127.0.0.1"),
    "NAT64's well-known prefix": ("64:ff9b::7f00:1", "127.0.0.1"),
    "NAT64 with dotted IPv4, in a URL": ("http://[64:ff9b::10.0.0.1]/", "10.0.0.1"),
    "6to4": ("2002:a00:1::1", "10.0.0.1"),
}


@pytest.mark.parametrize("recipient, compared", ADDRESSES.values(), ids=ADDRESSES.keys())
def test_another_form_of_a_compared_address_is_refused(loopback, recipient, compared):
    with pytest.raises(ArgumentError) as e:
        load_policy(loopback).evaluate_checked(paying(recipient))
    assert e.value.argument == "recipient" and f"another spelling of {compared!r}" in e.value.reason, e.value


MAIL = {
    "a comment after the host": "x@bad.com(comment)",
    "a comment before the host": "x@(c)bad.com",
    "angle brackets": "<x@bad.com>",
    "a display name without a space": "Bob<x@bad.com>",
    "a bracket after the host": "x@bad.com>",
    "a domain literal": "x@[bad.com]",
    "the first of a list": "x@bad.com,y@ok.com",
    "a semicolon after it": "x@bad.com;",
    # variants written after the fix
    "a display name with spaces": "Bob Smith <x@bad.com>",
    "a comment after a space": "x@bad.com (Bob)",
    "a quoted display name and capitals": '"Bob" <x@BAD.COM>',
    "the second of a list, after a space": "x@ok.com; y@bad.com",
    "nested comments": "x@bad.com((nested)c)",
    "mailto with a percent-encoded display name": "mailto:Bob%20<x@bad.com>",
    "a quoted local part holding a comma": '"a,b"@bad.com',
    "a root dot and a comment": "x@bad.com.(c)",
    "an encoded-word display name": "=?utf-8?q?Bob?= <x@bad.com>",
    "mailto in angle brackets": "<mailto:x@bad.com>",
    "capitals and a comment in a list": "x@BAD.COM(c),y@ok.com",
}


@pytest.mark.parametrize("recipient", MAIL.values(), ids=MAIL.keys())
def test_a_mail_header_value_naming_a_compared_host_is_refused(loopback, recipient):
    with pytest.raises(ArgumentError) as e:
        load_policy(loopback).evaluate_checked(paying(recipient))
    assert "names " in e.value.reason and "another spelling of 'bad.com'" in e.value.reason, e.value


EVERYDAY = ["64:ff9c::7f00:1", "2002:a00:2::1", "127.0.0.2", "10.0.0.2", "12", "::2", "acme.com", "1000", "2024-01-01", "v1.2.3", "3.14", "+1 555 0100",
            "1.2.3", "10", "2024.1", "x@ok.com (note)", "meeting at 10.30", "v10.0.0.1", "192.168.0.1", "fe80::1%eth0",
            "a@b.c, d@e.f", "0.0.0.0", "1270001", "127.0.0.10", "Bob Smith <bob@acme.com>", '"bad.com"@evil.com']


@pytest.mark.parametrize("recipient", EVERYDAY)
def test_other_addresses_numbers_and_mail_are_decided_as_written(loopback, recipient):
    assert load_policy(loopback).evaluate_checked(paying(recipient)).allowed


def test_the_compared_address_itself_reaches_its_rule(loopback):
    decision = load_policy(loopback).evaluate_checked(paying("127.0.0.1"))
    assert (decision.allowed, decision.violations) == (False, ("not_evil",))


def test_check_denies_another_form_with_exit_2(loopback, capsys):
    assert main(["check", str(loopback), "--args", json.dumps(paying("0x7f.1"))]) == 2
    out = json.loads(capsys.readouterr().out)
    assert out["allowed"] is False and "another form of one IP address" in out["reason"], out


@pytest.mark.parametrize("text", ["1000", "0x3e8", "127.1", "0177.0.0.1", "127.000.000.001", "3.14", "fass.de"])
def test_a_compared_string_is_an_address_only_when_written_as_one(text):
    """An argument `1000` is no other spelling of a compared `0x3e8`: only canonical addresses are compared as such."""
    assert shown.compared_address(text) is None


@pytest.mark.parametrize("name", ["", ".", "1..2", "08.0.0.1x", "0x", "256.256.256.256.256", "1.2.3.4.5", "::g",
                                  "[", "[]", "%", "4294967296", "0x1" + "0" * 40, "1" * 5000, "\u0661\u0662\u0667.1"])
def test_address_keys_of_odd_text_is_nothing_or_an_address(name):
    keys = shown.address_keys(name)
    assert all(isinstance(k, str) and (k.count(".") == 3 or ":" in k) for k in keys), keys


def test_nested_comments_are_read_in_linear_time(loopback):
    """20,000 nested comments before a mail address took 9.4 s when each pass removed the innermost ones."""
    policy = load_policy(loopback)
    started = time.process_time()
    with pytest.raises(ArgumentError):
        policy.evaluate_checked(paying("(" * 20000 + ")" * 20000 + "x@bad.com"))
    assert time.process_time() - started < 2.0


@pytest.fixture(scope="module")
def mapped(tmp_path_factory):
    return load_policy(built(tmp_path_factory, "::ffff:127.0.0.1", '{"bad.com": true}'))


@pytest.mark.parametrize("recipient", ["127.0.0.1", "0x7f.1", "[::FFFF:7F00:1]", "64:ff9b::7f00:1"])
def test_a_compared_ipv6_form_is_compared_as_the_address_it_is(mapped, recipient):
    """A rule comparing `::ffff:127.0.0.1` denies 127.0.0.1 in each form (the compared string is read as an address)."""
    with pytest.raises(ArgumentError) as e:
        mapped.evaluate_checked(paying(recipient))
    assert "another spelling of '::ffff:127.0.0.1'" in e.value.reason, e.value
