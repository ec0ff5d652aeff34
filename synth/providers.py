"""LLM providers for the synthesis loop: structured output in, structured output out.

Every provider answers a `CompletionRequest` (a prompt plus the JSON Schema the answer must
satisfy) with a `Completion` whose `data` has been checked against that schema, or raises a
`ProviderError` with a stable dotted `code` and a message that says how to fix the problem.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import os
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

import httpx2

# claude-sonnet-4-5 reaches end of life on 2026-11-30 (SDK 2.12 deprecation table).
DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-5-5"
TOOL_NAME = "respond"

# LIST PRICES, USD per million (input, output) tokens, from the model pages on platform.claude.com
# as read on 2026-11-22. UPDATE THIS TABLE when prices change. Batch, cache and regional (inference_geo)
# rates are not modelled. A model missing here costs None (unknown), never 0.
ANTHROPIC_PRICES_USD_PER_MTOK: dict[str, tuple[float, float]] = {
    "claude-sonnet-5-5": (2.00, 10.00),
    "claude-sonnet-5": (2.00, 10.00),
    "claude-opus-5-5": (4.00, 20.00),
    "claude-opus-5": (5.00, 25.00),
    "claude-fable-5-1": (10.00, 50.00),
    "claude-haiku-4-5": (1.00, 5.00),
    "claude-sonnet-4-5": (3.00, 15.00),
    "claude-opus-4-5": (5.00, 25.00),
}


Raw = tuple[Mapping[str, Any] | None, Any]
"""(raw request body, raw response body) of one provider call, kept on errors for the transcript."""


class ProviderError(Exception):
    """A provider call failed; `code` is stable (e.g. `provider.timeout`), the message says what to do."""

    def __init__(
        self, code: str, message: str, *, retry_after: float | None = None,
        raw_request: Mapping[str, Any] | None = None, raw_response: Any = None,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.retry_after = retry_after
        self.raw_request = dict(raw_request) if raw_request is not None else None
        self.raw_response = raw_response
        usage = raw_response.get("usage") if isinstance(raw_response, dict) else None
        usage = usage if isinstance(usage, dict) else {}
        # Tokens spent on an answer that was then rejected (malformed, refusal) still cost money.
        self.input_tokens = int(usage.get("input_tokens") or usage.get("prompt_tokens") or 0)
        self.output_tokens = int(usage.get("output_tokens") or usage.get("completion_tokens") or 0)


@dataclass(frozen=True)
class CompletionRequest:
    stage: str
    system: str
    prompt: str
    schema: Mapping[str, Any]
    """JSON Schema (an object schema) the parsed answer must satisfy."""
    max_tokens: int = 8192
    """Includes any (adaptive) thinking the model does before answering."""
    temperature: float = 0.0
    """Sent to OpenAI-compatible servers only: Claude 5 models reject sampling parameters."""
    round: int = 0
    """Repair round within the stage; recorded in transcripts, never sent to the model."""

    def __post_init__(self) -> None:
        if self.schema.get("type") != "object":
            raise ValueError(
                f"stage {self.stage!r}: the answer schema must be an object schema (type 'object'), "
                f"got type {self.schema.get('type')!r}; wrap the value in a property"
            )


@dataclass(frozen=True)
class Completion:
    data: dict[str, Any]
    text: str
    model: str
    input_tokens: int
    output_tokens: int
    latency_s: float
    stop_reason: str | None
    raw_request: dict[str, Any] = field(repr=False)
    raw_response: dict[str, Any] = field(repr=False)


class Provider(Protocol):
    name: str
    model: str

    def complete(self, request: CompletionRequest) -> Completion: ...


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def request_hash(request: CompletionRequest) -> str:
    """sha256 over system, prompt and schema: what a replayed exchange must match."""
    return _hash_parts(request.system, request.prompt, request.schema)


def _hash_parts(system: str, prompt: str, schema: Mapping[str, Any]) -> str:
    payload = {"system": system, "prompt": prompt, "schema": schema}
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


def cost_usd(provider: str, model: str, input_tokens: int, output_tokens: int) -> float | None:
    """Token cost at list price; 0 for local/replayed calls, None for an unpriced Anthropic model."""
    if provider != "anthropic" or input_tokens == output_tokens == 0:
        return 0.0
    price = ANTHROPIC_PRICES_USD_PER_MTOK.get(re.sub(r"-\d{8}$", "", model))  # drop a date suffix
    if price is None:
        return None
    price_in, price_out = price
    return (input_tokens * price_in + output_tokens * price_out) / 1_000_000


# --- minimal JSON Schema validation: type, required, properties, items, enum ---------------

_TYPE_CHECKS: dict[str, Any] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
}


def validate(instance: Any, schema: Mapping[str, Any], path: str = "$") -> list[str]:
    """Return every violation as 'path: problem'; an empty list means the instance is valid."""
    expected = schema.get("type")
    if expected is not None:
        names = [expected] if isinstance(expected, str) else list(expected)
        if not any(_TYPE_CHECKS.get(name, lambda v: True)(instance) for name in names):
            return [f"{path}: expected {'|'.join(names)}, got {type(instance).__name__} {instance!r:.60}"]
    errors: list[str] = []
    if "enum" in schema and instance not in schema["enum"]:
        errors.append(f"{path}: {instance!r:.60} is not one of {schema['enum']!r}")
    if isinstance(instance, dict):
        missing = [name for name in schema.get("required", []) if name not in instance]
        errors += [f"{path}: missing required property {name!r}" for name in missing]
        for name, subschema in schema.get("properties", {}).items():
            if name in instance:
                errors += validate(instance[name], subschema, f"{path}.{name}")
    if isinstance(instance, list) and isinstance(schema.get("items"), Mapping):
        for index, item in enumerate(instance):
            errors += validate(item, schema["items"], f"{path}[{index}]")
    return errors


def _fail(code: str, message: str, raw: Raw) -> ProviderError:
    return ProviderError(code, message, raw_request=raw[0], raw_response=raw[1])


def _cut_off(request: CompletionRequest, stop_reason: str | None) -> str | None:
    if stop_reason in ("max_tokens", "length"):
        return f"the answer was cut off at max_tokens={request.max_tokens} (thinking counts too); raise max_tokens"
    return None


def _checked(data: Any, request: CompletionRequest, stop_reason: str | None, raw: Raw) -> dict[str, Any]:
    errors = validate(data, request.schema)
    if not errors and isinstance(data, dict):
        return data
    errors = errors or [f"$: expected an object, got {type(data).__name__}"]
    hint = _cut_off(request, stop_reason) or "tighten the prompt or simplify the schema"
    shown = "; ".join(errors[:5]) + (f" (+{len(errors) - 5} more)" if len(errors) > 5 else "")
    message = f"answer for stage {request.stage!r} does not satisfy its schema: {shown}; {hint}"
    raise _fail("provider.malformed", message, raw)


def _parse_json(text: str, request: CompletionRequest, stop_reason: str | None, raw: Raw) -> Any:
    stripped = text.strip()
    if stripped.startswith("```") and stripped.endswith("```"):  # some local models fence their JSON
        stripped = stripped.split("\n", 1)[-1].rsplit("```", 1)[0]
    try:
        return json.loads(stripped)
    except json.JSONDecodeError as error:
        hint = _cut_off(request, stop_reason) or "use a model or server that supports JSON Schema output"
        message = f"the answer for stage {request.stage!r} is not JSON ({error}): {text[:120]!r}; {hint}"
        raise _fail("provider.malformed", message, raw) from error


def _no_answer(request: CompletionRequest, stop_reason: str | None, raw: Raw) -> ProviderError:
    cut_off = _cut_off(request, stop_reason)
    if cut_off:
        return _fail("provider.malformed", f"no answer for stage {request.stage!r}: {cut_off}", raw)
    message = f"the model returned no answer for stage {request.stage!r} (stop_reason {stop_reason!r}); retry"
    return _fail("provider.empty", message, raw)


def _retry_after(headers: httpx2.Headers) -> float | None:
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return float(value) * scale
        except ValueError:
            parsed = email.utils.parsedate_tz(value)
            if parsed is not None:
                return max(0.0, email.utils.mktime_tz(parsed) - time.time())
    return None


def _status_error(status: int, headers: httpx2.Headers, detail: str, where: str, raw: Raw) -> ProviderError:
    if status == 429:
        wait = _retry_after(headers)
        when = f"retry after {wait:g}s" if wait is not None else "retry later"
        message = f"{where} rate-limited the request (HTTP 429: {detail}); {when}, or run fewer syntheses at once"
        error = _fail("provider.rate_limited", message, raw)
        error.retry_after = wait
        return error
    if status in (401, 403):
        code, fix = "provider.auth", "check that the API key is valid and allowed to use this model"
    elif status >= 500:
        code, fix = "provider.server", "the service failed or is overloaded; retry later"
    else:
        code, fix = "provider.bad_request", "check the model name, max_tokens and the schema"
    return _fail(code, f"{where} answered HTTP {status}: {detail}; {fix}", raw)


# --- Anthropic -----------------------------------------------------------------------------

AnthropicStructured = Literal["output_config", "tool"]


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
        self.base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com"
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
        raw_response, message = self._send(body)
        latency = time.monotonic() - started
        raw = (body, raw_response)
        stop_reason = message.stop_reason
        if stop_reason == "refusal":
            why = f"the model refused stage {request.stage!r} (stop_reason 'refusal')"
            raise _fail("provider.refusal", f"{why}; rephrase the spec or prompt, or try another model", raw)
        texts = "".join(block.text for block in message.content if block.type == "text").strip()
        if self.structured == "tool":
            calls = [block.input for block in message.content if block.type == "tool_use" and block.name == TOOL_NAME]
            if not calls and texts:
                why = f"the model answered stage {request.stage!r} in prose, not via the {TOOL_NAME!r} tool"
                fix = "rephrase the prompt or try another model"
                raise _fail("provider.refusal", f"{why}: {texts[:200]!r}; {fix}", raw)
            text = json.dumps(calls[0], ensure_ascii=False) if calls else ""
            answer: Any = calls[0] if calls else None
        else:
            text = texts
            answer = _parse_json(text, request, stop_reason, raw) if text else None
        if answer is None:
            raise _no_answer(request, stop_reason, raw)
        return Completion(
            data=_checked(answer, request, stop_reason, raw),
            text=text,
            model=message.model or self.model,
            input_tokens=message.usage.input_tokens,
            output_tokens=message.usage.output_tokens,
            latency_s=latency,
            stop_reason=stop_reason,
            raw_request=body,
            raw_response=raw_response,
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
            body["tool_choice"] = {"type": "tool", "name": TOOL_NAME}
        else:
            output_config["format"] = {"type": "json_schema", "schema": dict(request.schema)}
        if output_config:
            body["output_config"] = output_config
        return body

    def _send(self, body: dict[str, Any]) -> tuple[dict[str, Any], Any]:
        import anthropic

        tries, sent = f"{self.max_retries + 1} attempt(s)", (body, None)
        try:
            raw = self._client.messages.with_raw_response.create(**body)
            return raw.http_response.json(), raw.parse()
        except anthropic.APITimeoutError as error:
            why = f"no answer from {self.base_url} within {self.timeout:g}s ({tries})"
            raise _fail("provider.timeout", f"{why}; raise the provider's timeout or lower max_tokens", sent) from error
        except anthropic.APIConnectionError as error:
            why = f"cannot reach {self.base_url} ({error.__cause__ or error}; {tries})"
            fix = "check network, DNS and proxy settings, or run offline with provider 'replay'"
            raise _fail("provider.network", f"{why}; {fix}", sent) from error
        except anthropic.APIStatusError as error:
            detail = error.api_message or str(error.body)[:200]
            headers, answered = error.response.headers, (body, error.body)
            raise _status_error(error.status_code, headers, detail, "Anthropic", answered) from error
        except json.JSONDecodeError as error:
            why = f"{self.base_url} answered with a body that is not JSON ({error})"
            raise _fail("provider.malformed", f"{why}; check base_url", sent) from error


# --- OpenAI-compatible (vLLM, llama.cpp server, Ollama) -----------------------------------

StructuredMode = Literal["auto", "json_schema", "json_object"]


class OpenAICompatibleProvider:
    """Any `/v1/chat/completions` server; JSON via `response_format`, falling back to json_object."""

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
        if structured not in ("auto", "json_schema", "json_object"):
            raise ValueError(f"structured must be 'auto', 'json_schema' or 'json_object', got {structured!r}")
        url = httpx2.URL(base_url)
        if url.path in ("", "/"):
            url = url.copy_with(path="/v1")
        self.base_url = str(url).rstrip("/")
        self.model = model
        self.timeout = timeout
        self.structured: StructuredMode = structured
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._timeout = httpx2.Timeout(timeout, connect=min(5.0, timeout))
        self._client = http_client or httpx2.Client()

    def complete(self, request: CompletionRequest) -> Completion:
        started = time.monotonic()
        mode = "json_schema" if self.structured in ("auto", "json_schema") else "json_object"
        body = self._body(request, mode)
        response = self._post(body)
        if mode == "json_schema" and self.structured == "auto" and response.status_code in (400, 404, 422, 501):
            # The server rejected json_schema (older llama.cpp/Ollama); remember and use json_object.
            self.structured = "json_object"
            body = self._body(request, "json_object")
            response = self._post(body)
        latency = time.monotonic() - started
        try:
            payload = response.json()
        except ValueError:
            payload = response.text
        raw = (body, payload)
        if response.status_code >= 400:
            detail = payload.get("error", payload) if isinstance(payload, dict) else payload
            raise _status_error(response.status_code, response.headers, str(detail)[:200], self.base_url, raw)
        if not isinstance(payload, dict) or not payload.get("choices"):
            why = f"{self.base_url} answered without 'choices' ({str(payload)[:120]!r})"
            raise _fail("provider.malformed", f"{why}; is it an OpenAI-compatible /v1/chat/completions endpoint?", raw)
        choice = payload["choices"][0]
        message = choice.get("message") or {}
        stop_reason = choice.get("finish_reason")
        if message.get("refusal") or stop_reason == "content_filter":
            why = f"the model refused stage {request.stage!r}: {str(message.get('refusal') or stop_reason)[:200]!r}"
            raise _fail("provider.refusal", f"{why}; rephrase the prompt or try another model", raw)
        text = message.get("content") or ""
        if not text.strip():
            raise _no_answer(request, stop_reason, raw)
        data = _parse_json(text, request, stop_reason, raw)
        usage = payload.get("usage") or {}
        return Completion(
            data=_checked(data, request, stop_reason, raw),
            text=text,
            model=str(payload.get("model") or self.model),
            input_tokens=int(usage.get("prompt_tokens") or 0),
            output_tokens=int(usage.get("completion_tokens") or 0),
            latency_s=latency,
            stop_reason=stop_reason,
            raw_request=body,
            raw_response=payload,
        )

    def _body(self, request: CompletionRequest, mode: str) -> dict[str, Any]:
        system = request.system
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
            return self._client.post(url, json=body, headers=self._headers, timeout=self._timeout)
        except httpx2.TimeoutException as error:
            why = f"no answer from {url} within {self.timeout:g}s"
            raise _fail("provider.timeout", f"{why}; raise the provider's timeout or lower max_tokens", sent) from error
        except httpx2.TransportError as error:
            fix = "is the server running (`vllm serve`, `llama-server`, `ollama serve`) and is base_url right?"
            raise _fail("provider.network", f"cannot reach {url} ({error}); {fix}", sent) from error


# --- Replay --------------------------------------------------------------------------------


class ReplayProvider:
    """Answers from recorded exchanges, in order, checking each request against the recording.

    An exchange is a mapping as exported by `synth.transcripts` (`stage`, `request_hash`,
    `system`, `prompt`, `schema`, `data`, `text`, ..., `error`). One with no `request_hash` and
    no texts is checked on its stage only, which makes hand-scripted answers easy.
    """

    name = "replay"
    needs_key = False

    def __init__(self, exchanges: Sequence[Mapping[str, Any]], *, model: str = "replay") -> None:
        self.exchanges = list(exchanges)
        self.model = model
        self.position = 0

    @classmethod
    def from_file(cls, path: str | Path) -> ReplayProvider:
        transcript = json.loads(Path(path).read_text(encoding="utf-8"))
        return cls(transcript["exchanges"], model=str(transcript.get("synthesis", {}).get("model", "replay")))

    def complete(self, request: CompletionRequest) -> Completion:
        index = self.position
        if index >= len(self.exchanges):
            why = f"exchange {index + 1} (stage {request.stage!r}) diverged from the recording, which has only"
            fix = "the loop asked for more than was recorded; re-record with a live provider"
            raise ProviderError("provider.replay_mismatch", f"{why} {len(self.exchanges)} exchanges; {fix}")
        recorded = self.exchanges[index]
        self._check(index, recorded, request)
        self.position += 1
        error = recorded.get("error")
        if error:
            raise _fail(error["code"], error["message"], (recorded.get("request"), recorded.get("response")))
        if not isinstance(recorded.get("data"), Mapping):
            why = f"exchange {index + 1} has neither an answer ('data' object) nor an 'error'"
            raise ProviderError("provider.replay_mismatch", f"{why}; the transcript is incomplete, re-record it")
        return Completion(
            data=dict(recorded["data"]),
            text=str(recorded.get("text") or canonical_json(recorded["data"])),
            model=str(recorded.get("model") or self.model),
            input_tokens=int(recorded.get("input_tokens") or 0),
            output_tokens=int(recorded.get("output_tokens") or 0),
            latency_s=0.0,
            stop_reason=recorded.get("stop_reason"),
            raw_request=dict(recorded.get("request") or {}),
            raw_response=dict(recorded.get("response") or {}),
        )

    def _check(self, index: int, recorded: Mapping[str, Any], request: CompletionRequest) -> None:
        problems = []
        if recorded.get("stage") != request.stage:
            problems.append(f"stage is {request.stage!r}, recorded {recorded.get('stage')!r}")
        expected_hash = recorded.get("request_hash")
        if expected_hash is None and "prompt" in recorded:
            expected_hash = _hash_parts(recorded["system"], recorded["prompt"], recorded["schema"])
        if expected_hash is not None and expected_hash != request_hash(request):
            current = {"system": request.system, "prompt": request.prompt, "schema": request.schema}
            differing = [part for part, now in current.items() if part in recorded and recorded[part] != now]
            problems.append(
                f"request hash {request_hash(request)[:12]} != recorded {str(expected_hash)[:12]}"
                + (f" ({', '.join(differing)} changed)" if differing else "")
            )
        if problems:
            raise ProviderError(
                "provider.replay_mismatch",
                f"exchange {index + 1} of {len(self.exchanges)} diverged from the recording: "
                f"{'; '.join(problems)}. The spec, prompts or loop changed since recording; "
                "re-record with a live provider or replay with the matching veriguard version",
            )


# --- configuration ------------------------------------------------------------------------

_CONFIG_KEYS = {
    "anthropic": {
        "provider", "model", "base_url", "timeout", "connect_timeout", "max_retries", "api_key_env", "structured",
        "effort",
    },
    "openai": {"provider", "model", "base_url", "timeout", "structured", "api_key_env"},
    "replay": {"provider", "path", "exchanges", "model"},
}


def provider_from_config(config: Mapping[str, Any], *, http_client: httpx2.Client | None = None) -> Provider:
    """Build a provider from e.g. {"provider": "anthropic", "model": "claude-sonnet-5-5"}."""
    kind = config.get("provider")
    if kind not in _CONFIG_KEYS:
        raise ProviderError(
            "provider.config",
            f"unknown provider {kind!r}; use one of {sorted(_CONFIG_KEYS)}, e.g. {{'provider': 'anthropic'}}",
        )
    unknown = sorted(set(config) - _CONFIG_KEYS[kind])
    if unknown:
        raise ProviderError(
            "provider.config",
            f"unknown key(s) {unknown} for provider {kind!r}; allowed: {sorted(_CONFIG_KEYS[kind])}",
        )
    api_key = os.environ.get(config["api_key_env"]) if "api_key_env" in config else None
    if kind == "anthropic":
        return AnthropicProvider(
            str(config.get("model", DEFAULT_ANTHROPIC_MODEL)),
            timeout=float(config.get("timeout", 60.0)),
            connect_timeout=float(config.get("connect_timeout", 5.0)),
            max_retries=int(config.get("max_retries", 1)),
            api_key=api_key,
            base_url=config.get("base_url"),
            structured=config.get("structured", "output_config"),
            effort=config.get("effort"),
            http_client=http_client,
        )
    if kind == "openai":
        missing = [key for key in ("base_url", "model") if key not in config]
        if missing:
            raise ProviderError(
                "provider.config",
                f"provider 'openai' needs {missing}, e.g. {{'provider': 'openai', "
                "'base_url': 'http://localhost:8000/v1', 'model': 'qwen2.5-7b-instruct'}",
            )
        return OpenAICompatibleProvider(
            str(config["base_url"]),
            str(config["model"]),
            api_key=api_key,
            timeout=float(config.get("timeout", 60.0)),
            structured=config.get("structured", "auto"),
            http_client=http_client,
        )
    if "path" in config:
        return ReplayProvider.from_file(config["path"])
    if "exchanges" in config:
        return ReplayProvider(config["exchanges"], model=str(config.get("model", "replay")))
    raise ProviderError(
        "provider.config",
        "provider 'replay' needs 'path' (a transcript JSON from `TranscriptStore.export`) or 'exchanges'",
    )
