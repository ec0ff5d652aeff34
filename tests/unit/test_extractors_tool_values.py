"""Red-team pass s21 on tool calls: an argument value the tool's own JSON reader may read otherwise than the policy.

An integer past ±(2**53 - 1) is another number to a reader of doubles (JavaScript: 9007199254740993 is
9007199254740992), a lone surrogate is no character a reader must accept, and a NUL ends the text for a tool written
in C ('eve\\u0000x' passes a policy that denies 'eve', and pays eve). The policy must not check a value the tool does
not act on: such a value denies.
"""
import json

import pytest

from veriguard.enforce.extract_errors import ExtractionError
from veriguard.enforce.extractors import FieldExtractor, ToolCallExtractor

TYPE = {"kind": "record", "fields": [("amount", {"kind": "int"}), ("to", {"kind": "str"})]}
PAY = ToolCallExtractor("pay", {"amount": "amount", "to": "to"}, TYPE)


def openai(arguments: str) -> dict:
    return {"tool_calls": [{"type": "function", "function": {"name": "pay", "arguments": arguments}}]}


def anthropic(arguments: dict) -> dict:
    return {"content": [{"type": "tool_use", "name": "pay", "input": arguments}]}


READ_OTHERWISE = [
    openai('{"amount": 9007199254740993, "to": "bob"}'),
    openai('{"amount": -9007199254740993, "to": "bob"}'),
    openai('{"amount": 1' + "0" * 400 + ', "to": "bob"}'),
    anthropic({"amount": 2**64 + 5, "to": "bob"}),
    openai('{"amount": 5, "to": "eve\\u0000x"}'),
    openai('{"amount": 5, "to": "bob\\ud800"}'),
    openai('{"amount": 5, "to": "\\udc00bob"}'),
    anthropic({"amount": 5, "to": "eve\x00"}),
]


@pytest.mark.parametrize("observation", READ_OTHERWISE)
def test_a_value_a_tool_may_read_otherwise_denies(observation):
    with pytest.raises(ExtractionError) as info:
        PAY.extract(observation)
    assert info.value.code == "extract.type"


@pytest.mark.parametrize("amount", [2**53 - 1, -(2**53 - 1), 0, 5])
def test_integers_every_reader_agrees_on_pass(amount):
    assert PAY.extract(openai(json.dumps({"amount": amount, "to": "bob"}))).value["amount"] == amount


def test_text_outside_the_basic_plane_passes_as_one_character():
    assert PAY.extract(openai('{"amount": 5, "to": "bob\\ud83d\\ude00"}')).value["to"] == "bob\U0001F600"


def test_a_field_outside_a_tool_call_keeps_its_value():
    """Only a tool's arguments are read again by the tool; the agent data's own fields are the policy's input."""
    assert FieldExtractor("n", {"kind": "int"}).extract({"n": 2**60}).value == 2**60
