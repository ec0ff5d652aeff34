"""Claude through the official SDK (imported when a provider is built: it costs 1.7-3.3 s)."""
from __future__ import annotations

import json
import os
import time
from typing import Any, Literal

import httpx2

from veriguard.contracts.strict_json import StrictJSONError
from veriguard.contracts.strict_json import loads as strict_loads
from veriguard.providers.errors import fail, status_error
from veriguard.providers.extraction import ANTHROPIC_API_URL
from veriguard.providers.http import BodyRefused, cap_bodies, environment_client, not_json
from veriguard.providers.schema import checked, no_answer, parse_json, refuse_cut_off, several_answers
from veriguard.providers.types import (
    TOOL_NAME, Completion, CompletionRequest, ProviderError, Raw, cache_reported, cache_tokens, model_name, token_count,
    tokens_reported,
)

# claude-sonnet-4-5 reaches end of life on 2026-11-30 (SDK 2.12 deprecation table).
DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-5-5"

AnthropicStructured = Literal["output_config", "tool"]
FINISHED = ("end_turn", "tool_use")   # stop reasons of a whole answer
SILENT = ("thinking", "redacted_thinking")   # blocks beside the answer that say nothing to us


class AnthropicProvider:
    """Claude through the official SDK.

    Structured output is `output_config.format` (JSON Schema) by default: it works on every
    current model, while a forced `tool_choice` returns HTTP 400 on Claude Sonnet 5.5 and later.
    `structured="tool"` uses one forced tool named `respond` instead, for older models and gateways.
    """

    name = "anthropic"
    needs_key = True
    key_env_var = "ANTHROPIC_API_KEY"

    def __init__(
        self,
        model: str = DEFAULT_ANTHROPIC_MODEL,
        *,
        timeout: float = 60.0,
        connect_timeout: float = 5.0,
        max_retries: int = 1,
        api_key: str | None = None,
        base_url: str | None = None,
        structured: AnthropicStructured = "output_config",
        effort: str | None = None,
        http_client: httpx2.Client | None = None,
    ) -> None:
        import anthropic  # slow import (1.7-3.3 s): pay it only when this provider is used

        key = api_key or os.environ.get(self.key_env_var)
        if not key:
            raise ProviderError(
                "provider.no_key",
                f"no Anthropic API key found. Set one with `export {self.key_env_var}=sk-ant-...` or pass "
                "api_key=...; to run offline use provider 'replay' (a recorded transcript) or 'openai' "
                "(a local OpenAI-compatible server)",
            )
        if structured not in ("output_config", "tool"):
            raise ValueError(f"structured must be 'output_config' or 'tool', got {structured!r}")
        self.model = model
        self.timeout = timeout
        self.max_retries = max_retries
        self.structured: AnthropicStructured = structured
        self.effort = effort
        self.base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or ANTHROPIC_API_URL
        http_client = cap_bodies(http_client or environment_client(self.base_url), timeout)
        self._client = anthropic.Anthropic(
            api_key=key,
            base_url=self.base_url,
            timeout=httpx2.Timeout(timeout, connect=connect_timeout),
            max_retries=max_retries,
            http_client=http_client,
        )

    def complete(self, request: CompletionRequest) -> Completion:
        body = self._body(request)
        started = time.monotonic()
        payload = self._send(body)
        latency = time.monotonic() - started
        raw = (body, payload)
        stop_reason = payload.get("stop_reason")
        if stop_reason == "refusal":
            why = f"the model refused stage {request.stage!r} (stop_reason 'refusal')"
            raise fail("provider.refusal", f"{why}; rephrase the spec or prompt, or try another model", raw)
        refuse_cut_off(request, stop_reason, raw)
        if stop_reason not in FINISHED:
            why = f"the answer for stage {request.stage!r} did not finish (stop_reason {stop_reason!r})"
            raise fail("provider.malformed", f"{why}; retry, or check that base_url is the Messages API", raw)
        blocks = _blocks(payload, raw)
        if self.structured == "tool":
            answer = _tool_input(blocks, request, raw)
            text = json.dumps(answer, ensure_ascii=False) if answer is not None else ""
        else:
            text = _answer_text(blocks, request, raw)
            answer = parse_json(text, request, stop_reason, raw) if text else None
        if answer is None:
            raise no_answer(request, stop_reason, raw)
        data = checked(answer, request, stop_reason, raw)
        _stop_agrees(blocks, stop_reason, raw)
        usage, model = payload.get("usage"), payload.get("model")
        return Completion(
            data=data,
            text=text,
            model=model_name(model, self.model),
            input_tokens=token_count(usage, "input_tokens"),
            output_tokens=token_count(usage, "output_tokens"),
            latency_s=latency,
            stop_reason=stop_reason,
            raw_request=body,
            raw_response=payload,
            tokens_reported=tokens_reported(usage, "input_tokens", "output_tokens") and cache_reported(usage),
            cache_tokens=cache_tokens(usage),
        )

    def _body(self, request: CompletionRequest) -> dict[str, Any]:
        # Sampling parameters are not sent: SDK 2.12 has no `temperature` and Claude 5 models reject it.
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_tokens,
            "system": request.system,
            "messages": [{"role": "user", "content": request.prompt}],
        }
        output_config: dict[str, Any] = {"effort": self.effort} if self.effort else {}
        if self.structured == "tool":
            tool = {"name": TOOL_NAME, "description": "Return the answer.", "input_schema": dict(request.schema)}
            body["tools"] = [tool]
            body["tool_choice"] = {"type": "tool", "name": TOOL_NAME, "disable_parallel_tool_use": True}
        else:
            output_config["format"] = {"type": "json_schema", "schema": dict(request.schema)}
        if output_config:
            body["output_config"] = output_config
        return body

    def _send(self, body: dict[str, Any]) -> dict[str, Any]:
        """The response body, read strictly (contracts.strict_json), not the SDK's lenient parse of it."""
        import anthropic

        tries, sent = f"{self.max_retries + 1} attempt(s)", (body, None)
        try:
            with self._client.messages.with_streaming_response.create(**body) as raw:  # status errors raise here
                content, status = raw.http_response.read(), raw.http_response.status_code
                media = not_json(raw.http_response.headers)
            if media:
                raise fail("provider.malformed", f"{self.base_url} answered with {media}; check base_url", sent)
            payload = strict_loads(content)
        except BodyRefused as error:  # over the cap, or in an encoding not asked for; an error's body too
            raise fail("provider.malformed", f"{error}; check base_url", sent) from None
        except (anthropic.APITimeoutError, httpx2.TimeoutException) as error:  # httpx2's: while the body streams
            why = f"no answer from {self.base_url} within {self.timeout:g}s ({tries})"
            raise fail("provider.timeout", f"{why}; raise the provider's timeout or lower max_tokens", sent) from error
        except (anthropic.APIConnectionError, httpx2.TransportError) as error:
            why = f"cannot reach {self.base_url} ({error.__cause__ or error}; {tries})"
            fix = "check network, DNS and proxy settings, or run offline with provider 'replay'"
            raise fail("provider.network", f"{why}; {fix}", sent) from error
        except anthropic.APIStatusError as error:
            detail = error.api_message or str(error.body)[:200]
            headers, answered = error.response.headers, (body, error.body)
            raise status_error(error.status_code, headers, detail, "Anthropic", answered) from error
        except StrictJSONError as error:
            why = f"{self.base_url} answered with a body that is not strict JSON ({error})"
            fix = "check base_url; a duplicate key or NaN in an answer is refused, whichever reader would be right"
            raise fail("provider.malformed", f"{why}; {fix}", sent) from error
        if not isinstance(payload, dict):
            why = f"{self.base_url} answered with a JSON {type(payload).__name__}, not a message object"
            raise fail("provider.malformed", f"{why}; check base_url", (body, payload))
        # only a 200 carrying an assistant's message is an answer (a 201, an error object, another role are not)
        shape = (status, payload.get("type"), payload.get("role"))
        if shape == (200, "message", "assistant") and "error" in payload:  # no message carries one: a partial answer
            why = f"{self.base_url} answered a message with an error beside it ({str(payload['error'])[:120]!r})"
            raise fail("provider.malformed", f"{why}; retry, or check base_url", (body, payload))
        if shape != (200, "message", "assistant"):
            why = f"{self.base_url} answered HTTP {status} with type {str(shape[1])[:40]!r} and role {str(shape[2])[:40]!r}"
            raise fail("provider.malformed", f"{why}, not HTTP 200 with an assistant's message; check base_url",
                       (body, payload))
        return payload


def _blocks(payload: dict[str, Any], raw: Raw) -> list[dict[str, Any]]:
    """The message's content blocks, each an object with a string `type`."""
    content = payload.get("content")
    if not isinstance(content, list) or not all(isinstance(b, dict) and isinstance(b.get("type"), str)
                                                for b in content):
        raise fail("provider.malformed", f"the message's content is not a list of blocks ({str(content)[:120]!r}); "
                   "check base_url", raw)
    return content


def _stop_agrees(blocks: list[dict[str, Any]], stop_reason: str, raw: Raw) -> None:
    """The stop reason says how the turn ended, and must agree with what the message holds: a tool call ends in
    tool_use and nothing else does. A call whose turn says it ended (end_turn), or text whose turn says a tool was
    called, is not how the Messages API ends a reply: the body was not written by one model turn."""
    called = any(b["type"] == "tool_use" for b in blocks)
    if called != (stop_reason == "tool_use"):
        said = "a tool call" if called else "no tool call"
        raise fail("provider.malformed", f"the reply holds {said} but its stop_reason is {stop_reason!r}; the two "
                   "disagree, so the body is not one model turn's answer; check that base_url is the Messages API",
                   raw)


def _spoken(blocks: list[dict[str, Any]]) -> list[str]:
    return [str(b.get("text") or "") for b in blocks if b["type"] == "text" and str(b.get("text") or "").strip()]


def _others(blocks: list[dict[str, Any]], answer_type: str) -> list[str]:
    return [b["type"] for b in blocks if b["type"] not in (answer_type, "text", *SILENT)]


def _tool_input(blocks: list[dict[str, Any]], request: CompletionRequest, raw: Raw) -> Any:
    """The input of the one `respond` call (None when there is none); prose alone is a refusal, and prose,
    another call or another block beside the call is a competing answer."""
    calls = [b for b in blocks if b["type"] == "tool_use"]
    texts = _spoken(blocks)
    if not calls and texts:
        why = f"the model answered stage {request.stage!r} in prose, not via the {TOOL_NAME!r} tool"
        raise fail("provider.refusal", f"{why}: {''.join(texts)[:200]!r}; rephrase the prompt or try another model",
                   raw)
    competing = [f"{len(calls)} tool calls"] if len(calls) > 1 else []
    competing += [f"a call of {c.get('name')!r}" for c in calls if c.get("name") != TOOL_NAME]
    competing += [f"prose {''.join(texts)[:80]!r}"] if calls and texts else []
    competing += [f"a {kind!r} block" for kind in _others(blocks, "tool_use")]
    if competing:
        raise several_answers(request, competing, raw)
    return calls[0].get("input") if calls else None


def _answer_text(blocks: list[dict[str, Any]], request: CompletionRequest, raw: Raw) -> str:
    """The text of the one text block that holds the answer ("" when there is none)."""
    texts = _spoken(blocks)
    competing = [f"{len(texts)} text blocks"] if len(texts) > 1 else []
    competing += [f"a {kind!r} block" for kind in _others(blocks, "text")]
    if competing:
        raise several_answers(request, competing, raw)
    return texts[0] if texts else ""
