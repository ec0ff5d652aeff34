"""The lead's pass after C32 (ninth session): URL forms a browser reads as a compared host.

C32's named_hosts read a URL's host as Python's urlsplit or a mail server would. The WHATWG URL parser, which browsers
and many agent tools follow, also drops C0 controls and spaces around a URL and tabs and line breaks anywhere in it,
and for a special scheme (http, https, ws, wss, ftp, file) reads `\\` as `/` and takes any number of slashes after the
colon. On C32's code (c7b89c2..de8ea85) every row of BROWSER_FORMS was allowed where the rule denies paypal.com.
"""
import pytest

from veriguard.enforce.loader import ArgumentError, load_policy
from tests.unit.test_audit_redteam10 import paying
from tests.unit.test_audit_redteam13 import paypal  # noqa: F401

BROWSER_FORMS = {
    "a tab inside the host": "https://pay\tpal.com/",
    "a line break inside the host": "https://pay\npal.com/",
    "a carriage return before the path": "http://paypal.com\r/",
    "backslashes for the slashes": "https:\\\\paypal.com",
    "a slash and a backslash": "https:/\\paypal.com/x",
    "no slashes after a special scheme": "https:paypal.com",
    "a control character before the scheme": "\x01https://paypal.com",
    "three slashes": "https:///paypal.com/login",
    "a tab in the scheme": "ht\ttps://paypal.com",
    "websocket, backslashes and a tab": "wss:\\\\pay\tpal.com\\x",
}


@pytest.mark.parametrize("recipient", BROWSER_FORMS.values(), ids=BROWSER_FORMS.keys())
def test_a_url_a_browser_reads_as_a_compared_host_is_refused(paypal, recipient):  # noqa: F811
    with pytest.raises(ArgumentError) as e:
        load_policy(paypal).evaluate_checked(paying(recipient))
    assert "names 'paypal.com'" in e.value.reason and "another spelling of 'paypal.com'" in e.value.reason, e.value


def test_both_readings_of_a_url_parsers_disagree_on_are_refused(paypal):  # noqa: F811
    """Python's urlsplit reads this host as paypal.com, a browser as example.com: either reading denies."""
    with pytest.raises(ArgumentError):
        load_policy(paypal).evaluate_checked(paying("https://example.com\\@paypal.com"))


CONTROLS = ["https://example.org/paypal.com", "mailto:me@example.org", "C:\\paypal", "note:\tpaypal is fine",
            "https:\\\\example.org\\paypal.com", "x\ty"]


@pytest.mark.parametrize("recipient", CONTROLS)
def test_urls_of_other_hosts_are_decided_as_written(paypal, recipient):  # noqa: F811
    assert load_policy(paypal).evaluate_checked(paying(recipient)).allowed is True
