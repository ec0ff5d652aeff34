"""Any OpenAI-compatible `/v1/chat/completions` server (vLLM, llama.cpp server, Ollama): plain HTTP, no SDK."""
from __future__ import annotations

import time
from typing import Any, Literal

import httpx2

from veriguard.contracts.strict_json import StrictJSONError
from veriguard.contracts.strict_json import loads as strict_loads
from veriguard.providers.errors import fail, status_error
from veriguard.providers.http import BodyRefused, cap_bodies, environment_client, not_json
from veriguard.providers.schema import checked, no_answer, parse_json, refuse_cut_off, several_answers
from veriguard.providers.types import (
    TOOL_NAME, Completion, CompletionRequest, Raw, canonical_json, model_name, token_count, tokens_reported,
)

StructuredMode = Literal["auto", "json_schema", "json_object", "tools"]
UNSUPPORTED = ("support", "unknown", "unrecognized", "not implemented", "not permitted", "not allowed")
# finish reasons of a whole answer: OpenAI's, and TGI's ends of generation; "length" is a cut, and anything else
# ("abort", "error", none) did not finish: refused as the Anthropic provider refuses such a stop_reason. A call
# ends in tool_calls or function_call (or stop: vLLM's forced call); an answer in the message's text never says a
# tool was called.
ENDS_OF_TEXT = ("stop", "eos_token", "stop_sequence")
FINISHED = {"tools": (*ENDS_OF_TEXT, "tool_calls", "function_call"), "json_schema": ENDS_OF_TEXT,
            "json_object": ENDS_OF_TEXT}


class OpenAICompatibleProvider:
    """Any `/v1/chat/completions` server; JSON via `response_format`, falling back to json_object.

    `structured="tools"` uses one forced function tool named `respond` instead (servers whose function
    calling is constrained by the schema while their response_format is not)."""

    name = "openai"
    needs_key = False

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 60.0,
        structured: StructuredMode = "auto",
        http_client: httpx2.Client | None = None,
    ) -> None:
        if structured not in ("auto", "json_schema", "json_object", "tools"):
            raise ValueError(f"structured must be 'auto', 'json_schema', 'json_object' or 'tools', got {structured!r}")
        url = httpx2.URL(base_url)
        if url.path in ("", "/"):
            url = url.copy_with(path="/v1")
        self.base_url = str(url).rstrip("/")
        self.model = model
        self.timeout = timeout
        self.structured: StructuredMode = structured
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._timeout = httpx2.Timeout(timeout, connect=min(5.0, timeout))
        self._client = cap_bodies(http_client or environment_client(self.base_url), timeout)

    def complete(self, request: CompletionRequest) -> Completion:
        started = time.monotonic()
        mode = "json_schema" if self.structured in ("auto", "json_schema") else self.structured
        body = self._body(request, mode)
        response = self._post(body)
        if mode == "json_schema" and self.structured == "auto" and _refuses_json_schema(response, request):
            mode, body = "json_object", self._body(request, "json_object")
            response = self._post(body)
            if response.status_code == 200:  # older llama.cpp/Ollama: remember, and ask json_object from now on
                self.structured = "json_object"
        latency = time.monotonic() - started
        payload, problem = _read_body(response)
        raw = (body, payload)
        if response.status_code >= 400:
            detail = payload.get("error", payload) if isinstance(payload, dict) else payload
            raise status_error(response.status_code, response.headers, str(detail)[:200], self.base_url, raw)
        message, stop_reason = self._choice(response.status_code, response.headers, payload, problem, raw)
        if message.get("refusal") or stop_reason == "content_filter":
            why = f"the model refused stage {request.stage!r}: {str(message.get('refusal') or stop_reason)[:200]!r}"
            raise fail("provider.refusal", f"{why}; rephrase the prompt or try another model", raw)
        refuse_cut_off(request, stop_reason, raw)
        if stop_reason not in FINISHED[mode]:
            why = (f"the answer for stage {request.stage!r} did not finish as a {mode!r} answer does (finish_reason "
                   f"{str(stop_reason)[:40]!r}, not one of {list(FINISHED[mode])})")
            raise fail("provider.malformed", f"{why}; retry, or check the server's log", raw)
        text = _tool_arguments(message, request, raw) if mode == "tools" else _content(message, request, raw)
        if not text.strip():
            raise no_answer(request, stop_reason, raw)
        data = parse_json(text, request, stop_reason, raw)
        usage = payload.get("usage")
        return Completion(
            data=checked(data, request, stop_reason, raw),
            text=text,
            model=model_name(payload.get("model"), self.model),
            input_tokens=token_count(usage, "prompt_tokens"),
            output_tokens=token_count(usage, "completion_tokens"),
            latency_s=latency,
            stop_reason=stop_reason,
            raw_request=body,
            raw_response=payload,
            tokens_reported=tokens_reported(usage, "prompt_tokens", "completion_tokens"),
        )

    def _choice(self, status: int, headers: httpx2.Headers, payload: Any, problem: str,
                raw: Raw) -> tuple[dict[str, Any], Any]:
        """The message and finish reason of the one choice of a 200 answer."""
        where = f"{self.base_url} answered"
        fix = "is it an OpenAI-compatible /v1/chat/completions endpoint?"
        if status != 200:
            raise fail("provider.malformed", f"{where} HTTP {status}, not 200 (only a 200 carries an answer; "
                       f"redirects are not followed); {fix}", raw)
        if problem:
            raise fail("provider.malformed", f"{where} with a body that is not strict JSON ({problem}); {fix}", raw)
        media = not_json(headers)
        if media:
            raise fail("provider.malformed", f"{where} with {media}; {fix}", raw)
        if not isinstance(payload, dict) or not payload.get("choices"):
            raise fail("provider.malformed", f"{where} without 'choices' ({str(payload)[:120]!r}); {fix}", raw)
        if payload.get("error"):
            raise fail("provider.malformed", f"{where} with an error beside its choices "
                       f"({str(payload['error'])[:120]!r}); retry, or check the server's log", raw)
        choices = payload["choices"]
        if not isinstance(choices, list) or len(choices) != 1:
            count = f"{len(choices)} choices" if isinstance(choices, list) else f"choices as a {type(choices).__name__}"
            raise fail("provider.malformed", f"{where} with {count}, not one: none is taken (the first could be "
                       "the wrong one); do not ask the server for several (n=1)", raw)
        choice = choices[0]
        if isinstance(choice, dict) and choice.get("index", 0) != 0:  # one of several the server made, the rest withheld
            raise fail("provider.malformed", f"{where} with one choice whose index is {str(choice.get('index'))[:20]}, "
                       "not 0: the server made several and sent one, which may not be the first; none is taken", raw)
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            raise fail("provider.malformed", f"{where} with a choice that has no message ({str(choice)[:120]!r}); "
                       f"{fix}", raw)
        # only an assistant's message in a chat completion is an answer (a user, system or tool message echoed back,
        # or a stream's chunk, is not one), as the Anthropic provider takes only an assistant's message
        kind = payload.get("object", "chat.completion")
        if message.get("role") != "assistant" or kind != "chat.completion":
            raise fail("provider.malformed", f"{where} with a message of role {str(message.get('role'))[:40]!r} in "
                       f"an object {str(kind)[:40]!r}, not an assistant's message in a 'chat.completion'; {fix}", raw)
        return message, choice.get("finish_reason")

    def _body(self, request: CompletionRequest, mode: str) -> dict[str, Any]:
        system = request.system
        if mode == "tools":
            function = {"name": TOOL_NAME, "description": "Return the answer.", "parameters": dict(request.schema)}
            return {"model": self.model, "max_tokens": request.max_tokens, "temperature": request.temperature,
                    "messages": [{"role": "system", "content": system}, {"role": "user", "content": request.prompt}],
                    "tools": [{"type": "function", "function": function}],
                    "tool_choice": {"type": "function", "function": {"name": TOOL_NAME}}}
        if mode == "json_schema":
            response_format: dict[str, Any] = {
                "type": "json_schema",
                "json_schema": {"name": TOOL_NAME, "schema": dict(request.schema)},
            }
        else:
            response_format = {"type": "json_object"}
            schema = canonical_json(request.schema)
            system += f"\n\nAnswer with one JSON object that satisfies this JSON Schema:\n{schema}"
        return {
            "model": self.model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": request.prompt}],
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "response_format": response_format,
        }

    def _post(self, body: dict[str, Any]) -> httpx2.Response:
        url, sent = f"{self.base_url}/chat/completions", (body, None)
        try:
            with self._client.stream("POST", url, json=body, headers=self._headers, timeout=self._timeout) as streamed:
                content = streamed.read()
        except BodyRefused as error:  # over the cap, or in an encoding not asked for; an error's body too
            raise fail("provider.malformed", f"{error}; check base_url", sent) from None
        except httpx2.TimeoutException as error:
            why = f"no answer from {url} within {self.timeout:g}s"
            raise fail("provider.timeout", f"{why}; raise the provider's timeout or lower max_tokens", sent) from error
        except httpx2.TransportError as error:
            fix = "is the server running (`vllm serve`, `llama-server`, `ollama serve`) and is base_url right?"
            raise fail("provider.network", f"cannot reach {url} ({error}); {fix}", sent) from error
        # the body as read (decoded); the headers that described its encoding on the wire no longer apply
        headers = [(k, v) for k, v in streamed.headers.multi_items()
                   if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")]
        return httpx2.Response(streamed.status_code, headers=headers, content=content, request=streamed.request)


def _read_body(response: httpx2.Response) -> tuple[Any, str]:
    """(the body read strictly, "") or (its text, what is wrong with it as strict JSON)."""
    try:
        return strict_loads(response.content), ""
    except StrictJSONError as error:
        return response.text, str(error)


def _refuses_json_schema(response: httpx2.Response, request: CompletionRequest) -> bool:
    """Whether the server says it does not support `response_format` json_schema (404 and 501: no such
    feature at all). Any other 400 or 422 is an error (e.g. a text over the model's context), never a
    reason to stop constraining answers; nor is an error that only echoes the agent's text."""
    if response.status_code in (404, 501):
        return True
    if response.status_code not in (400, 422):
        return False
    said = response.text.lower()
    named = [word for word in ("response_format", "json_schema") if word in said]
    echoed = any(word in request.prompt.lower() for word in named)
    return bool(named) and any(word in said for word in UNSUPPORTED) and not echoed


def _content(message: dict[str, Any], request: CompletionRequest, raw: Raw) -> str:
    """The message's text, the one answer: a tool or function call beside it competes with it."""
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise fail("provider.malformed", f"the message's content is a {type(content).__name__}, not a string "
                   f"({str(content)[:120]!r}); use a server that answers chat completions with text", raw)
    competing = [f"the message has {name}" for name in ("tool_calls", "function_call") if message.get(name)]
    if competing:
        raise several_answers(request, competing, raw)
    return content or ""


def _tool_arguments(message: dict[str, Any], request: CompletionRequest, raw: Raw) -> str:
    """The JSON text of the one forced `respond` call's arguments ("" when there is none); prose alone is a
    refusal, and another call or prose beside the call competes with it."""
    listed = message.get("tool_calls") or []
    calls = listed if isinstance(listed, list) else [listed]
    content = message.get("content")
    prose = content.strip() if isinstance(content, str) else str(content or "")
    if not calls and prose:
        why = f"the model answered stage {request.stage!r} in prose, not via the {TOOL_NAME!r} tool"
        raise fail("provider.refusal", f"{why}: {prose[:200]!r}; rephrase the prompt or try another model", raw)
    if not calls:
        return ""
    competing = [f"{len(calls)} tool calls"] if len(calls) > 1 else []
    competing += [f"a call of {_function(c).get('name')!r}" for c in calls if _function(c).get("name") != TOOL_NAME]
    competing += [f"prose {prose[:80]!r}"] if prose else []
    competing += ["a function_call"] if message.get("function_call") else []
    if competing:
        raise several_answers(request, competing, raw)
    arguments = _function(calls[0]).get("arguments")
    if not isinstance(arguments, str):  # the API sends the model's JSON text; an object is the server's own reading
        raise fail("provider.malformed", f"the {TOOL_NAME!r} call's arguments are a {type(arguments).__name__}, not "
                   f"the JSON text an OpenAI-compatible server sends ({str(arguments)[:120]!r}); none is taken: check "
                   "that the server speaks the chat-completions API", raw)
    return arguments


def _function(call: Any) -> dict[str, Any]:
    function = call.get("function") if isinstance(call, dict) else None
    return function if isinstance(function, dict) else {}
