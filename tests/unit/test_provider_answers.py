"""One answer, read strictly, whole: what the providers refuse in a reply (red-team findings).

Duplicate keys and NaN in a body or an answer, several answers or something beside the answer, an
answer cut off at max_tokens, and `structured="auto"` giving up the server's JSON Schema constraint on
an unrelated error. Each case is a provider.malformed (or the status error), never the first answer.
"""
from __future__ import annotations

import json

import httpx2
import pytest

from tests.unit.test_providers import (
    ANSWER, REQUEST, THINKING, Server, anthropic, chat, failure, local, message, text_block, tool_use,
)
from veriguard.providers.types import CompletionRequest

OTHER = {"verdict": "allow", "rules": []}
DUPLICATE = '{"verdict": "deny", "rules": [], "verdict": "allow"}'


def raw_message(content_json: str, stop_reason: str = "tool_use") -> httpx2.Response:
    """A Messages API reply whose content is written as JSON text (so it can hold what json.dumps cannot)."""
    body = ('{"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-5-5", '
            f'"content": {content_json}, "stop_reason": "{stop_reason}", "stop_sequence": null, '
            '"usage": {"input_tokens": 10, "output_tokens": 5}}')
    return httpx2.Response(200, content=body.encode(), headers={"content-type": "application/json"})


def tool_json(input_json: str, name: str = "respond") -> str:
    return f'[{{"type": "tool_use", "id": "toolu_01", "name": "{name}", "input": {input_json}}}]'


# --- strict JSON: duplicate keys and NaN are refused wherever they are ---------------------------

@pytest.mark.parametrize("content_json", [
    tool_json(DUPLICATE),
    tool_json('{"verdict": "deny", "rules": [], "confidence": NaN}'),
    tool_json(json.dumps(ANSWER)) + ', "content": ' + tool_json(json.dumps(OTHER)),  # the content key twice
])
def test_anthropic_tool_input_comes_from_the_strictly_read_body(content_json):
    error = failure(anthropic(Server(raw_message(content_json)), structured="tool"))
    assert error.code == "provider.malformed" and "not strict JSON" in error.message


def test_anthropic_text_answer_with_a_duplicate_key_is_refused():
    error = failure(anthropic(Server(message([text_block(DUPLICATE)]))))
    assert error.code == "provider.malformed" and "duplicate key 'verdict'" in error.message


@pytest.mark.parametrize("structured", ["json_schema", "json_object", "tools"])
def test_openai_answer_with_a_duplicate_key_is_refused(structured):
    if structured == "tools":
        call = {"id": "c1", "type": "function", "function": {"name": "respond", "arguments": DUPLICATE}}
        reply = chat(None)
        body = json.loads(reply.content)
        body["choices"][0]["message"]["tool_calls"] = [call]
        reply = httpx2.Response(200, json=body)
    else:
        reply = chat(DUPLICATE)
    error = failure(local(Server(reply), structured=structured))
    assert error.code == "provider.malformed" and "duplicate key 'verdict'" in error.message


def test_openai_body_with_a_duplicate_key_is_refused():
    body = chat(json.dumps(ANSWER)).content.decode()
    twice = body.replace('"choices":', '"choices": [], "choices":', 1)
    error = failure(local(Server(httpx2.Response(200, content=twice.encode()))))
    assert error.code == "provider.malformed" and "not strict JSON" in error.message


# --- exactly one answer, nothing beside it -----------------------------------------------------

@pytest.mark.parametrize("content,what", [
    ([tool_use(ANSWER), {**tool_use(OTHER), "id": "toolu_02"}], "2 tool calls"),
    ([text_block("I cannot help with this."), tool_use(ANSWER)], "prose 'I cannot help"),
    ([tool_use(ANSWER), text_block("Actually: allow.")], "prose 'Actually"),
    ([{**tool_use(ANSWER), "name": "Respond"}], "a call of 'Respond'"),
    ([{"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}}, tool_use(ANSWER)],
     "a 'server_tool_use' block"),
])
def test_anthropic_tool_mode_takes_one_respond_call_and_nothing_beside_it(content, what):
    error = failure(anthropic(Server(message(content, stop_reason="tool_use")), structured="tool"))
    assert error.code == "provider.malformed" and what in error.message and "none is taken" in error.message


@pytest.mark.parametrize("content,what", [
    ([text_block('{"verdict": "deny", '), text_block('"rules": []}')], "2 text blocks"),
    ([tool_use(OTHER), text_block(ANSWER)], "a 'tool_use' block"),
])
def test_anthropic_text_mode_takes_one_text_block(content, what):
    error = failure(anthropic(Server(message([THINKING, *content]))))
    assert error.code == "provider.malformed" and what in error.message


def openai_reply(message_fields, choices=None, **top):
    body = json.loads(chat(json.dumps(ANSWER)).content)
    body["choices"][0]["message"] |= message_fields
    if choices is not None:
        body["choices"] = choices
    return httpx2.Response(200, json=body | top)


def call(arguments, name="respond", id="c1"):
    return {"id": id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


@pytest.mark.parametrize("structured,reply,what", [
    ("json_schema", openai_reply({}, choices=[
        {"index": 0, "message": {"role": "assistant", "content": json.dumps(OTHER)}, "finish_reason": "stop"},
        {"index": 1, "message": {"role": "assistant", "content": json.dumps(ANSWER)}, "finish_reason": "stop"}]),
     "2 choices"),
    ("json_schema", openai_reply({"tool_calls": [call(OTHER)]}), "the message has tool_calls"),
    ("json_object", openai_reply({"content": [{"type": "text", "text": json.dumps(ANSWER)}]}), "not a string"),
    ("tools", openai_reply({"content": None, "tool_calls": [call(ANSWER), call(OTHER, id="c2")]}), "2 tool calls"),
    ("tools", openai_reply({"content": "I refuse: deny.", "tool_calls": [call(OTHER)]}), "prose 'I refuse"),
    ("tools", openai_reply({"content": None, "tool_calls": [call(ANSWER, name="other")]}), "a call of 'other'"),
    ("json_schema", openai_reply({}, error={"message": "overloaded"}), "an error beside its choices"),
    ("json_schema", openai_reply({}, choices={"0": {}}), "choices as a dict"),
])
def test_openai_takes_one_choice_with_one_answer(structured, reply, what):
    error = failure(local(Server(reply), structured=structured))
    assert error.code == "provider.malformed" and what in error.message


def test_openai_answer_in_a_redirect_is_refused():
    body = json.loads(chat(json.dumps(ANSWER)).content)
    error = failure(local(Server(httpx2.Response(302, json=body))))
    assert error.code == "provider.malformed" and "HTTP 302, not 200" in error.message


# --- an answer cut off is refused even when it satisfies the schema --------------------------------

@pytest.mark.parametrize("structured", ["output_config", "tool"])
@pytest.mark.parametrize("stop_reason,what", [("max_tokens", "cut off"), ("pause_turn", "did not finish")])
def test_anthropic_refuses_an_answer_that_did_not_finish(structured, stop_reason, what):
    content = [tool_use(ANSWER)] if structured == "tool" else [text_block(ANSWER)]
    error = failure(anthropic(Server(message(content, stop_reason=stop_reason)), structured=structured))
    assert error.code == "provider.malformed" and what in error.message


@pytest.mark.parametrize("finish_reason", ["abort", "error", None])
def test_openai_refuses_an_answer_that_did_not_finish(finish_reason):
    error = failure(local(Server(chat(json.dumps(ANSWER), finish_reason=finish_reason))))
    assert error.code == "provider.malformed" and "did not finish" in error.message


def test_openai_refuses_an_answer_cut_off_at_length():
    error = failure(local(Server(chat(json.dumps(ANSWER), finish_reason="length"))))
    assert error.code == "provider.malformed" and "cut off" in error.message and "max_tokens=512" in error.message


# --- structured="auto" falls back to json_object only when json_schema is what the server refuses ---

def rejected(status, text):
    return httpx2.Response(status, json={"error": {"message": text}})


def test_auto_does_not_fall_back_on_another_400():
    server = Server(rejected(400, "This model's maximum context length is 8192 tokens"), chat(json.dumps(ANSWER)))
    provider = local(server)
    assert failure(provider).code == "provider.bad_request"
    assert provider.structured == "auto" and len(server.requests) == 1
    assert provider.complete(REQUEST).data == ANSWER
    assert [b["response_format"]["type"] for b in server.bodies()] == ["json_schema", "json_schema"]


def test_auto_does_not_fall_back_on_an_error_that_echoes_the_agent_text():
    echo = CompletionRequest(REQUEST.stage, REQUEST.system, "response_format json_schema is not supported",
                             REQUEST.schema)
    server = Server(rejected(422, "invalid input: 'response_format json_schema is not supported' is too long"))
    provider = local(server)
    assert failure(provider, echo).code == "provider.bad_request" and len(server.requests) == 1
    assert provider.structured == "auto"


@pytest.mark.parametrize("reply", [rejected(400, "response_format type json_schema is not supported"),
                                   rejected(422, "unknown field: response_format.json_schema"),
                                   rejected(501, "not implemented")])
def test_auto_falls_back_when_the_server_refuses_json_schema(reply):
    server = Server(reply, chat(json.dumps(ANSWER)))
    provider = local(server)
    assert provider.complete(REQUEST).data == ANSWER and provider.structured == "json_object"


def test_auto_keeps_json_schema_when_the_fallback_fails_too():
    server = Server(rejected(404, "model 'qwen' not found"), rejected(404, "model 'qwen' not found"))
    provider = local(server)
    assert failure(provider).code == "provider.bad_request" and provider.structured == "auto"
