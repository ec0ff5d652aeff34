"""Providers driven through their real HTTP code paths, served by httpx2.MockTransport."""

import json

import httpx2
import pytest

from veriguard.providers.anthropic_api import AnthropicProvider
from veriguard.providers.config import provider_from_config
from veriguard.providers.openai_api import OpenAICompatibleProvider
from veriguard.providers.prices import cost_usd
from veriguard.providers.replay import ReplayProvider
from veriguard.providers.schema import validate
from veriguard.providers.types import CompletionRequest, ProviderError, request_hash

SCHEMA = {
    "type": "object",
    "required": ["verdict", "rules"],
    "properties": {
        "verdict": {"type": "string", "enum": ["allow", "deny"]},
        "rules": {"type": "array", "items": {"type": "string"}},
        "confidence": {"type": "number"},
    },
}
REQUEST = CompletionRequest(
    stage="formalize",
    system="You write contracts.",
    prompt="Spec: no refunds over $100.",
    schema=SCHEMA,
    max_tokens=512,
)
ANSWER = {"verdict": "deny", "rules": ["amount <= 100"]}




class Server:
    """Scripted HTTP replies plus a log of the requests that reached the transport."""

    def __init__(self, *replies):
        self.replies = list(replies)
        self.requests = []

    def __call__(self, request):
        self.requests.append(request)
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        if callable(reply):
            return reply(request)
        return reply

    def client(self):
        return httpx2.Client(transport=httpx2.MockTransport(self))

    def bodies(self):
        return [json.loads(request.content) for request in self.requests]


def message(content, stop_reason="end_turn", usage=(120, 40)):
    return httpx2.Response(
        200,
        json={
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-5-5",
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
        },
    )


THINKING = {"type": "thinking", "thinking": "The spec caps refunds.", "signature": "c2lnbmF0dXJl"}


def text_block(data):
    return {"type": "text", "text": data if isinstance(data, str) else json.dumps(data)}


def tool_use(data):
    return {"type": "tool_use", "id": "toolu_01", "name": "respond", "input": data}


def answer_in(mode, data):
    """The Messages API content that carries `data` for each structured-output method."""
    return [tool_use(data)] if mode == "tool" else [THINKING, text_block(data)]


def api_error(status, kind, text, headers=None):
    body = {"type": "error", "error": {"type": kind, "message": text}}
    return httpx2.Response(status, json=body, headers=headers or {})


def anthropic(server, **kwargs):
    kwargs.setdefault("max_retries", 0)
    return AnthropicProvider(api_key="sk-ant-test", http_client=server.client(), **kwargs)


def failure(provider, request=REQUEST):
    with pytest.raises(ProviderError) as info:
        provider.complete(request)
    return info.value


MODES = pytest.mark.parametrize("mode", ["output_config", "tool"])


# --- Anthropic ---------------------------------------------------------------------------


def test_anthropic_json_schema_output_is_the_default():
    server = Server(message([THINKING, text_block(ANSWER)]))
    completion = anthropic(server).complete(REQUEST)

    assert completion.data == ANSWER
    assert json.loads(completion.text) == ANSWER
    assert completion.model == "claude-sonnet-5-5"
    assert (completion.input_tokens, completion.output_tokens) == (120, 40)
    assert completion.stop_reason == "end_turn"
    assert completion.raw_response["id"] == "msg_01"
    (sent,) = server.requests
    assert sent.url.path == "/v1/messages"
    assert sent.headers["authorization"] == "Bearer sk-ant-test"
    body = json.loads(sent.content)
    assert body == completion.raw_request
    assert body == {
        "model": "claude-sonnet-5-5",
        "max_tokens": 512,
        "system": REQUEST.system,
        "messages": [{"role": "user", "content": REQUEST.prompt}],
        "output_config": {"format": {"type": "json_schema", "schema": SCHEMA}},
    }


def test_anthropic_forced_tool_answer():
    server = Server(message([THINKING, text_block(" "), tool_use(ANSWER)], stop_reason="tool_use"))
    completion = anthropic(server, structured="tool", model="claude-haiku-4-5").complete(REQUEST)

    assert completion.data == ANSWER
    assert json.loads(completion.text) == ANSWER
    body = json.loads(server.requests[0].content)
    assert body["tools"] == [{"name": "respond", "description": "Return the answer.", "input_schema": SCHEMA}]
    assert body["tool_choice"] == {"type": "tool", "name": "respond", "disable_parallel_tool_use": True}
    assert "output_config" not in body and "temperature" not in body


def test_anthropic_effort_is_sent_in_output_config():
    server = Server(message([text_block(ANSWER)]))
    anthropic(server, effort="low").complete(REQUEST)
    assert json.loads(server.requests[0].content)["output_config"]["effort"] == "low"


def test_anthropic_sends_explicit_short_timeouts():
    server = Server(message([text_block(ANSWER)]))
    anthropic(server, timeout=12.0, connect_timeout=2.0).complete(REQUEST)
    timeouts = server.requests[0].extensions["timeout"]
    assert timeouts["connect"] == 2.0
    assert timeouts["read"] == 12.0


def test_anthropic_no_key(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ProviderError) as info:
        AnthropicProvider()
    assert info.value.code == "provider.no_key"
    assert "export ANTHROPIC_API_KEY=" in info.value.message


def test_anthropic_base_url_from_environment(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://gateway.internal:8080")
    server = Server(message([text_block(ANSWER)]))
    anthropic(server).complete(REQUEST)
    assert str(server.requests[0].url) == "http://gateway.internal:8080/v1/messages"


def test_anthropic_key_from_environment(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-env")
    server = Server(message([text_block(ANSWER)]))
    AnthropicProvider(http_client=server.client(), max_retries=0).complete(REQUEST)
    assert server.requests[0].headers["authorization"] == "Bearer sk-ant-env"


@MODES
def test_anthropic_refusal_stop_reason(mode):
    server = Server(message([text_block("I can't help with that.")], stop_reason="refusal"))
    error = failure(anthropic(server, structured=mode))
    assert error.code == "provider.refusal"
    assert error.raw_response["stop_reason"] == "refusal"


def test_anthropic_prose_instead_of_tool_call_is_a_refusal():
    server = Server(message([text_block("Sorry, no.")]))
    error = failure(anthropic(server, structured="tool"))
    assert error.code == "provider.refusal"
    assert "Sorry, no." in error.message


@MODES
@pytest.mark.parametrize("content", [[], [THINKING], [text_block("  ")]])
def test_anthropic_empty_answer(mode, content):
    error = failure(anthropic(Server(message(content)), structured=mode))
    assert error.code == "provider.empty"


@MODES
@pytest.mark.parametrize(
    "bad",
    [
        {"rules": ["x"]},
        {"verdict": "maybe", "rules": []},
        {"verdict": "deny", "rules": "amount <= 100"},
        {"verdict": "deny", "rules": [1]},
        {"verdict": "deny", "rules": [], "confidence": True},
    ],
)
def test_anthropic_answer_that_fails_the_schema(mode, bad):
    error = failure(anthropic(Server(message(answer_in(mode, bad), usage=(100, 7))), structured=mode))
    assert error.code == "provider.malformed"
    assert "does not satisfy its schema" in error.message
    assert error.raw_request["model"] == "claude-sonnet-5-5"
    assert (error.input_tokens, error.output_tokens) == (100, 7)


@pytest.mark.parametrize("text", ["Sure! The verdict is deny.", '{"verdict": "deny", ', "[1, 2]"])
def test_anthropic_text_that_is_not_a_json_object(text):
    error = failure(anthropic(Server(message([text_block(text)]))))
    assert error.code == "provider.malformed"


@MODES
def test_anthropic_truncated_answer_says_raise_max_tokens(mode):
    content = [tool_use({"verdict": "deny"})] if mode == "tool" else [text_block('{"verdict": "de')]
    error = failure(anthropic(Server(message(content, stop_reason="max_tokens")), structured=mode))
    assert error.code == "provider.malformed"
    assert "max_tokens=512" in error.message


def test_anthropic_truncated_during_thinking():
    error = failure(anthropic(Server(message([THINKING], stop_reason="max_tokens"))))
    assert error.code == "provider.malformed"
    assert "raise max_tokens" in error.message


def test_anthropic_rate_limited_with_retry_after():
    server = Server(api_error(429, "rate_limit_error", "Too many requests", {"retry-after": "7"}))
    error = failure(anthropic(server))
    assert error.code == "provider.rate_limited"
    assert error.retry_after == 7.0
    assert "retry after 7s" in error.message


def test_anthropic_retries_once_honouring_retry_after():
    server = Server(
        api_error(429, "rate_limit_error", "slow down", {"retry-after-ms": "5"}),
        message([text_block(ANSWER)]),
    )
    assert anthropic(server, max_retries=1).complete(REQUEST).data == ANSWER
    assert len(server.requests) == 2


@pytest.mark.parametrize(
    ("status", "kind", "code"),
    [
        (500, "api_error", "provider.server"),
        (529, "overloaded_error", "provider.server"),
        (401, "authentication_error", "provider.auth"),
        (403, "permission_error", "provider.auth"),
        (400, "invalid_request_error", "provider.bad_request"),
        (404, "not_found_error", "provider.bad_request"),
    ],
)
def test_anthropic_status_errors(status, kind, code):
    error = failure(anthropic(Server(api_error(status, kind, "details here"))))
    assert error.code == code
    assert "details here" in error.message
    assert error.raw_response["error"]["type"] == kind


def test_anthropic_timeout():
    server = Server(httpx2.ReadTimeout("timed out"))
    error = failure(anthropic(server, timeout=3.0))
    assert error.code == "provider.timeout"
    assert "3s" in error.message
    assert error.raw_request["model"] == "claude-sonnet-5-5"


def test_anthropic_connection_error():
    server = Server(httpx2.ConnectError("[Errno -2] Name or service not known"))
    error = failure(anthropic(server))
    assert error.code == "provider.network"
    assert "Name or service not known" in error.message
    assert "replay" in error.message


def test_anthropic_body_that_is_not_json():
    error = failure(anthropic(Server(httpx2.Response(200, text="<html>proxy login</html>"))))
    assert error.code == "provider.malformed"


def test_request_schema_must_be_an_object_schema():
    with pytest.raises(ValueError, match="object schema"):
        CompletionRequest("clarify", "s", "p", {"type": "string"})


# --- OpenAI-compatible -------------------------------------------------------------------


def chat(content, finish_reason="stop", refusal=None, *, usage=True):
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "qwen2.5-7b-instruct",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content, "refusal": refusal},
             "finish_reason": finish_reason}
        ],
    }
    if usage:
        body["usage"] = {"prompt_tokens": 80, "completion_tokens": 20, "total_tokens": 100}
    return httpx2.Response(200, json=body)


def local(server, **kwargs):
    url = "http://127.0.0.1:8000/v1"
    return OpenAICompatibleProvider(url, "qwen2.5-7b-instruct", http_client=server.client(), **kwargs)


def test_openai_json_schema_answer():
    server = Server(chat(json.dumps(ANSWER)))
    completion = local(server, api_key="local-key").complete(REQUEST)

    assert completion.data == ANSWER
    assert (completion.input_tokens, completion.output_tokens) == (80, 20)
    assert completion.stop_reason == "stop"
    (sent,) = server.requests
    assert str(sent.url) == "http://127.0.0.1:8000/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer local-key"
    body = json.loads(sent.content)
    assert body["response_format"] == {"type": "json_schema", "json_schema": {"name": "respond", "schema": SCHEMA}}
    assert body["messages"][0] == {"role": "system", "content": REQUEST.system}
    assert body["temperature"] == 0.0 and body["max_tokens"] == 512
    assert cost_usd("openai", completion.model, 80, 20) == 0.0


def test_openai_base_url_without_v1():
    server = Server(chat(json.dumps(ANSWER)))
    OpenAICompatibleProvider("http://localhost:11434", "llama3", http_client=server.client()).complete(REQUEST)
    assert server.requests[0].url.path == "/v1/chat/completions"


def test_openai_falls_back_to_json_object_and_remembers():
    rejected = httpx2.Response(400, json={"error": {"message": "response_format json_schema not supported"}})
    server = Server(rejected, chat(json.dumps(ANSWER)), chat(json.dumps(ANSWER)))
    provider = local(server)

    assert provider.complete(REQUEST).data == ANSWER
    assert provider.complete(REQUEST).data == ANSWER
    first, fallback, later = server.bodies()
    assert first["response_format"]["type"] == "json_schema"
    assert fallback["response_format"] == {"type": "json_object"}
    assert '"required":["verdict","rules"]' in fallback["messages"][0]["content"]
    assert later["response_format"] == {"type": "json_object"}
    assert provider.structured == "json_object"


def test_openai_json_schema_mode_does_not_fall_back():
    server = Server(httpx2.Response(400, json={"error": {"message": "bad response_format"}}))
    error = failure(local(server, structured="json_schema"))
    assert error.code == "provider.bad_request"
    assert len(server.requests) == 1


def test_openai_accepts_fenced_json():
    server = Server(chat("```json\n" + json.dumps(ANSWER) + "\n```", usage=False))
    completion = local(server).complete(REQUEST)
    assert completion.data == ANSWER
    assert (completion.input_tokens, completion.output_tokens) == (0, 0)


@pytest.mark.parametrize(
    ("reply", "code"),
    [
        (chat(None, refusal="I cannot assist."), "provider.refusal"),
        (chat("", finish_reason="content_filter"), "provider.refusal"),
        (chat(""), "provider.empty"),
        (chat("   "), "provider.empty"),
        (chat("not json at all"), "provider.malformed"),
        (chat('{"verdict": "deny", "rules"'), "provider.malformed"),
        (chat(json.dumps({"verdict": "allow"})), "provider.malformed"),
        (chat("[1, 2]"), "provider.malformed"),
        (httpx2.Response(200, json={"object": "list"}), "provider.malformed"),
        (httpx2.Response(200, text="oops"), "provider.malformed"),
        (httpx2.Response(500, json={"error": {"message": "CUDA out of memory"}}), "provider.server"),
        (httpx2.Response(401, json={"error": {"message": "bad key"}}), "provider.auth"),
        (httpx2.ReadTimeout("timed out"), "provider.timeout"),
        (httpx2.ConnectError("[Errno 111] Connection refused"), "provider.network"),
    ],
)
def test_openai_errors(reply, code):
    error = failure(local(Server(reply), structured="json_object"))
    assert error.code == code


def test_openai_rate_limited_with_retry_after():
    server = Server(httpx2.Response(429, json={"error": {"message": "busy"}}, headers={"retry-after": "2"}))
    error = failure(local(server))
    assert error.code == "provider.rate_limited"
    assert error.retry_after == 2.0
    assert len(server.requests) == 1


def test_openai_connection_error_names_the_server():
    error = failure(local(Server(httpx2.ConnectError("[Errno 111] Connection refused"))))
    assert "http://127.0.0.1:8000/v1/chat/completions" in error.message


# --- Replay ------------------------------------------------------------------------------


def recorded(request, data, **extra):
    return {
        "stage": request.stage,
        "request_hash": request_hash(request),
        "system": request.system,
        "prompt": request.prompt,
        "schema": request.schema,
        "data": data,
        "text": json.dumps(data),
        "model": "claude-sonnet-4-5-20250929",
        "input_tokens": 10,
        "output_tokens": 5,
        "stop_reason": "tool_use",
        "error": None,
        **extra,
    }


def test_replay_answers_in_order():
    second = CompletionRequest("implement", "sys", "write code", {"type": "object"})
    replay = ReplayProvider([recorded(REQUEST, ANSWER), recorded(second, {"code": "pass"})])
    assert replay.complete(REQUEST).data == ANSWER
    completion = replay.complete(second)
    assert completion.data == {"code": "pass"}
    assert completion.model == "claude-sonnet-4-5-20250929"
    assert completion.latency_s == 0.0


def test_replay_reraises_recorded_errors():
    replay = ReplayProvider([recorded(REQUEST, None, error={"code": "provider.timeout", "message": "slow"})])
    assert failure(replay).code == "provider.timeout"


def test_replay_mismatch_names_the_exchange_and_the_change():
    changed = CompletionRequest(REQUEST.stage, REQUEST.system, "Spec: no refunds over $200.", SCHEMA)
    replay = ReplayProvider([recorded(REQUEST, ANSWER), recorded(REQUEST, ANSWER)])
    replay.complete(REQUEST)
    error = failure(replay, changed)
    assert error.code == "provider.replay_mismatch"
    assert "exchange 2 of 2" in error.message
    assert "prompt changed" in error.message


def test_replay_stage_mismatch():
    error = failure(ReplayProvider([recorded(REQUEST, ANSWER)]), CompletionRequest("clarify", "s", "p", SCHEMA))
    assert error.code == "provider.replay_mismatch"
    assert "'clarify', recorded 'formalize'" in error.message


def test_replay_exhausted():
    replay = ReplayProvider([recorded(REQUEST, ANSWER)])
    replay.complete(REQUEST)
    error = failure(replay)
    assert error.code == "provider.replay_mismatch"
    assert "exchange 2" in error.message


def test_replay_scripted_exchange_checks_stage_only():
    replay = ReplayProvider([{"stage": "formalize", "data": ANSWER}])
    assert replay.complete(REQUEST).data == ANSWER


def test_replay_exchange_without_an_answer():
    error = failure(ReplayProvider([{"stage": "formalize"}]))
    assert error.code == "provider.replay_mismatch"
    assert "neither an answer" in error.message


def test_replay_recomputes_the_hash_from_recorded_texts():
    exchange = recorded(REQUEST, ANSWER)
    del exchange["request_hash"]
    assert ReplayProvider([exchange]).complete(REQUEST).data == ANSWER
    changed = CompletionRequest(REQUEST.stage, "Another system prompt.", REQUEST.prompt, SCHEMA)
    error = failure(ReplayProvider([exchange]), changed)
    assert error.code == "provider.replay_mismatch"
    assert "system changed" in error.message


# --- schema validation, config, prices ---------------------------------------------------


def test_validate_reports_paths():
    errors = validate({"verdict": "maybe", "rules": ["a", 3]}, SCHEMA)
    assert errors == [
        "$.verdict: 'maybe' is not one of ['allow', 'deny']",
        "$.rules[1]: expected string, got int 3",
    ]
    assert validate({"n": 1.5}, {"properties": {"n": {"type": ["integer", "null"]}}}) != []
    assert validate({"n": None}, {"properties": {"n": {"type": ["integer", "null"]}}}) == []
    assert validate(True, {"type": "integer"}) != []
    assert validate(3, {"type": "number"}) == []


def test_validate_refuses_unexpected_properties_only_when_the_schema_says_so():
    closed = {"type": "object", "properties": {"a": {"type": "boolean"}}, "additionalProperties": False}
    assert validate({"a": True, "b": 1, "c": 2}, closed) == ["$: unexpected property 'b'", "$: unexpected property 'c'"]
    assert validate({"a": True}, closed) == []
    assert validate({"a": True, "b": 1}, {**closed, "additionalProperties": True}) == []
    assert validate({"a": True, "b": 1}, {"type": "object", "properties": {"a": {"type": "boolean"}}}) == []


def test_provider_from_config(monkeypatch, tmp_path):
    monkeypatch.setenv("MY_KEY", "sk-ant-config")
    provider = provider_from_config({"provider": "anthropic", "model": "claude-haiku-4-5", "api_key_env": "MY_KEY"})
    assert (provider.name, provider.model) == ("anthropic", "claude-haiku-4-5")

    local_provider = provider_from_config({"provider": "openai", "base_url": "http://localhost:8080/v1", "model": "m"})
    assert (local_provider.name, local_provider.base_url) == ("openai", "http://localhost:8080/v1")

    path = tmp_path / "t.json"
    path.write_text(json.dumps({"synthesis": {"model": "claude-x"}, "exchanges": [recorded(REQUEST, ANSWER)]}))
    replay = provider_from_config({"provider": "replay", "path": str(path)})
    assert (replay.name, replay.model) == ("replay", "claude-x")
    assert replay.complete(REQUEST).data == ANSWER


@pytest.mark.parametrize(
    "config",
    [{}, {"provider": "gpt"}, {"provider": "anthropic", "temperature": 1}, {"provider": "openai", "model": "m"},
     {"provider": "replay"}],
)
def test_provider_from_config_errors(config):
    with pytest.raises(ProviderError) as info:
        provider_from_config(config)
    assert info.value.code == "provider.config"


def test_cost_table():
    assert cost_usd("anthropic", "claude-sonnet-4-5-20250929", 1_000_000, 1_000_000) == pytest.approx(18.0)
    assert cost_usd("anthropic", "claude-sonnet-5-5", 1_000_000, 1_000_000) == pytest.approx(12.0)
    assert cost_usd("anthropic", "claude-sonnet-5-7", 10, 10) is None
    assert cost_usd("anthropic", "claude-haiku-4-5", 2_000, 1_000) == pytest.approx(0.007)
    assert cost_usd("anthropic", "claude-unknown-9", 10, 10) is None
    assert cost_usd("anthropic", "claude-unknown-9", 0, 0) == 0.0
    assert cost_usd("replay", "anything", 10, 10) == 0.0
