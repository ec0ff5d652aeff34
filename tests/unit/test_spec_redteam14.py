"""The fourteenth red-team pass on specs (helper C33): an IP address a rule or table compares, written otherwise.

A rule `recipient != "0177.0.0.1"` or a blocked table keyed `127.000.000.001` shows a reader 127.0.0.1 (or 177.0.0.1),
and inet_aton and the WHATWG URL parser read it as 127.0.0.1; the policy compares the string, so the agent's
`127.0.0.1` never equals it and is allowed. On 8004e60 such a spec loaded. Each is now `spec.hidden_text` with its
place and the address to write; canonical addresses, versions and other dotted numbers load as before.
"""
import pytest

from veriguard.contracts.errors import SpecError
from veriguard.synth.specfile import load_spec
from tests.unit.test_spec_redteam9 import write

WRITTEN_OTHERWISE = {
    "a rule's constant with an octal part": dict(CONSTANT="0177.0.0.1"),
    "a rule's constant zero-padded": dict(CONSTANT="127.000.000.001"),
    "a rule's constant in hex": dict(CONSTANT="0x7f.0.0.1"),
    "a rule's constant in capital hex": dict(CONSTANT="0X7F.0.0.1"),
    "a rule's constant read 8.0.0.1 or 10.0.0.1": dict(CONSTANT="010.0.0.1"),
    "a table key with an octal part": dict(table='{"0177.0.0.1": true}'),
    "a table key zero-padded": dict(table='{"10.0.0.01": true}'),
    "a CSV table key in hex": dict(table="key,value\n0xa.0.0.1,true\n", fmt="csv"),
}


@pytest.mark.parametrize("over", WRITTEN_OTHERWISE.values(), ids=WRITTEN_OTHERWISE.keys())
def test_an_address_written_otherwise_is_refused_with_its_place(tmp_path, over):
    with pytest.raises(SpecError) as e:
        load_spec(write(tmp_path, **over))
    assert e.value.code == "spec.hidden_text" and "written otherwise" in str(e.value) and e.value.pos.line > 0, e.value


def test_the_message_names_the_address_to_write(tmp_path):
    with pytest.raises(SpecError) as e:
        load_spec(write(tmp_path, CONSTANT="127.000.000.001"))
    assert "write the address as 127.0.0.1" in str(e.value), e.value


@pytest.mark.parametrize("constant", ["127.0.0.1", "10.0.0.1", "1.2.3", "3.14", "2024.12.31", "v1.0.0.1", "1.2.3.4",
                                      "::1", "2001:db8::1", "www.example.co.uk", "1.example.com.x", "0.0.0.0"])
def test_canonical_addresses_and_other_dotted_text_load(tmp_path, constant):
    assert load_spec(write(tmp_path, CONSTANT=constant)).name == "pay"
