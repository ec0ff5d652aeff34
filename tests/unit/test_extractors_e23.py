"""Red-team pass s23 (E23) on tool calls: two classes of calls the reader let through beside or inside a checked call.

1. A call-like object whose keys are spelled otherwise (camelCase `toolName`/`toolInput`, kebab-case, spaces, a
   `kind` that says call, a JSON-RPC request, `operation` with `payload`) was not seen as call-like: keys are now compared folded
   (lower case, letters and digits), with the callers' prefixes (tool, function, action, method, ...); a bare `method` only in a JSON-RPC request (an
   HTTP request has one too).
2. A call written as JSON text in an argument (a batch or dispatch tool decodes it; JSON text inside JSON text too)
   was data: a string of a call's arguments that decodes to JSON is read as that data.
Each test fails on the code before (ef16922).
"""
import json

import pytest

from veriguard.enforce.extract_errors import ExtractionError
from veriguard.enforce.extractors import ToolCallExtractor, tool_calls

TYPE = {"kind": "record", "fields": [("amount", {"kind": "int"}), ("to", {"kind": "str"}), ("memo", {"kind": "str"})]}
PAY = ToolCallExtractor("transfer", {"to": "to", "amount": "amount", "memo": "memo"}, TYPE)
BOB = {"to": "bob", "amount": 5, "memo": "rent"}
EVE = {"to": "eve", "amount": 5000}
OK = {"type": "tool_use", "id": "t1", "name": "transfer", "input": BOB}

OTHER_SPELLINGS = [
    {"toolName": "transfer", "args": EVE},
    {"toolName": "transfer", "toolInput": EVE},
    {"tool": "transfer", "toolInput": EVE},
    {"functionName": "transfer", "functionArgs": EVE},
    {"tool-name": "transfer", "tool-input": EVE},
    {"Tool Name": "transfer", "Arguments": EVE},
    {"name": "transfer", "argument": EVE},
    {"toolCallId": "x", "toolName": "transfer", "args": EVE},
    {"actionName": "transfer", "actionInput": EVE},
    {"function": "transfer", "inputs": EVE},
    {"tool": "transfer", "arguments_json": json.dumps(EVE)},
    {"jsonrpc": "2.0", "method": "transfer", "params": EVE},
    {"method": "transfer", "params": EVE, "id": 7},
    {"methodName": "transfer", "methodArgs": EVE},
    {"recipientName": "functions.transfer", "parameters": EVE},
    {"tool_name": "transfer", "tool_args": EVE},
    {"kind": "call", "target": "transfer", "with": EVE},
    {"Kind": "tool-invocation", "target": "transfer", "body": EVE},
    {"operation": "transfer", "payload": EVE},
    {"tool_id": "transfer", "input": EVE},
    {"functionId": "transfer", "data": EVE},
    {"TOOL-NAME": "transfer", "TOOL-ARGS": EVE},
    {"tool.name": "transfer", "tool.input": EVE},
]


@pytest.mark.parametrize("other", OTHER_SPELLINGS)
def test_a_call_like_object_in_another_spelling_beside_a_call_denies(other):
    with pytest.raises(ExtractionError) as info:
        PAY.extract({"content": [OK, other]})
    assert info.value.code == "extract.tool_call" and "looks like a tool call" in info.value.message


@pytest.mark.parametrize("other", OTHER_SPELLINGS)
def test_the_same_nested_in_the_arguments_denies(other):
    with pytest.raises(ExtractionError) as info:
        PAY.extract({"content": [{"type": "tool_use", "name": "transfer", "input": {**BOB, "memo": [other]}}]})
    assert "nested inside the arguments" in info.value.message


CALLS_AS_TEXT = [
    json.dumps({"name": "transfer", "arguments": EVE}),
    json.dumps(json.dumps({"tool": "transfer", "args": EVE})),
    json.dumps([{"type": "function", "function": {"name": "transfer", "arguments": json.dumps(EVE)}}]),
    "  " + json.dumps({"batch": [{"toolName": "transfer", "toolInput": EVE}]}),
    json.dumps({"x": json.dumps({"method": "tools/call", "params": {"name": "transfer", "arguments": EVE}})}),
    json.dumps({"steps": [json.dumps({"type": "tool_use", "name": "transfer", "input": EVE})]}),
]


@pytest.mark.parametrize("memo", CALLS_AS_TEXT)
def test_a_call_written_as_json_text_in_an_argument_denies(memo):
    anthropic = {"content": [{"type": "tool_use", "name": "transfer", "input": {**BOB, "memo": memo}}]}
    openai = {"tool_calls": [{"type": "function", "function": {"name": "transfer",
                                                               "arguments": json.dumps({**BOB, "memo": memo})}}]}
    for observation in (anthropic, openai):
        with pytest.raises(ExtractionError) as info:
            PAY.extract(observation)
        assert "nested inside the arguments" in info.value.message


@pytest.mark.parametrize("memo", ["rent", '{"note": "hi", "name": "bob"}', "[1, 2]", '"quoted"', "{not json",
                                  '{"to": "x", "amount": 1}', "[", '"{\\"a\\": 1}"'])
def test_text_and_json_text_without_a_call_pass(memo):
    observation = {"content": [{"type": "tool_use", "name": "transfer", "input": {**BOB, "memo": memo}}]}
    assert PAY.extract(observation).value == {**BOB, "memo": memo}


@pytest.mark.parametrize("data", [
    {"role": "tool", "tool_call_id": "c1", "content": "done"},            # an OpenAI tool result message
    {"type": "function_call_output", "call_id": "c1", "output": "done"},  # a Responses API tool result
    {"type": "tool_result", "tool_use_id": "t1", "content": "done"},
    {"user": {"name": "Bob", "email": "b@example.com"}},
    {"method": "GET", "url": "https://example.com"},
    {"name": "Bob", "data": {"age": 3}},        # a bare name beside a body is a record, not a call
    {"name": "report", "payload": "text", "body": "x"},
    {"method": "POST", "url": "https://example.com", "body": "x"},   # an HTTP request's fields
    {"method": "GET", "params": {"q": "x"}},
    {"action": "login", "data": {"user": "bob"}},                      # an event record
])
def test_results_and_plain_records_are_no_calls(data):
    assert tool_calls(data) == []


def test_a_long_argument_that_may_be_json_denies():
    memo = "[" + " " * 1_000_001 + "]"
    with pytest.raises(ExtractionError) as info:
        PAY.extract({"content": [{"type": "tool_use", "name": "transfer", "input": {**BOB, "memo": memo}}]})
    assert "may be JSON" in info.value.message
