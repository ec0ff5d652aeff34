"""Any OpenAI-compatible `/v1/chat/completions` server (vLLM, llama.cpp server, Ollama): plain HTTP, no SDK."""
from __future__ import annotations

import time
from typing import Any, Literal

import httpx2

from veriguard.providers.errors import fail, status_error
from veriguard.providers.schema import checked, no_answer, parse_json
from veriguard.providers.types import TOOL_NAME, Completion, CompletionRequest, canonical_json

StructuredMode = Literal["auto", "json_schema", "json_object", "tools"]


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
        self._client = http_client or httpx2.Client()

    def complete(self, request: CompletionRequest) -> Completion:
        started = time.monotonic()
        mode = "json_schema" if self.structured in ("auto", "json_schema") else self.structured
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
            raise status_error(response.status_code, response.headers, str(detail)[:200], self.base_url, raw)
        if not isinstance(payload, dict) or not payload.get("choices"):
            why = f"{self.base_url} answered without 'choices' ({str(payload)[:120]!r})"
            raise fail("provider.malformed", f"{why}; is it an OpenAI-compatible /v1/chat/completions endpoint?", raw)
        choice = payload["choices"][0]
        message = choice.get("message") or {}
        stop_reason = choice.get("finish_reason")
        if message.get("refusal") or stop_reason == "content_filter":
            why = f"the model refused stage {request.stage!r}: {str(message.get('refusal') or stop_reason)[:200]!r}"
            raise fail("provider.refusal", f"{why}; rephrase the prompt or try another model", raw)
        text = _tool_arguments(message, request, raw) if mode == "tools" else message.get("content") or ""
        if not text.strip():
            raise no_answer(request, stop_reason, raw)
        data = parse_json(text, request, stop_reason, raw)
        usage = payload.get("usage") or {}
        return Completion(
            data=checked(data, request, stop_reason, raw),
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
            return self._client.post(url, json=body, headers=self._headers, timeout=self._timeout)
        except httpx2.TimeoutException as error:
            why = f"no answer from {url} within {self.timeout:g}s"
            raise fail("provider.timeout", f"{why}; raise the provider's timeout or lower max_tokens", sent) from error
        except httpx2.TransportError as error:
            fix = "is the server running (`vllm serve`, `llama-server`, `ollama serve`) and is base_url right?"
            raise fail("provider.network", f"cannot reach {url} ({error}); {fix}", sent) from error


def _tool_arguments(message: dict[str, Any], request: CompletionRequest, raw: Any) -> str:
    """The JSON text of the forced `respond` call's arguments ("" when there is none); prose is a refusal."""
    calls = [c.get("function") or {} for c in message.get("tool_calls") or [] if isinstance(c, dict)]
    mine = [f.get("arguments") for f in calls if isinstance(f, dict) and f.get("name") == TOOL_NAME]
    if not mine and (message.get("content") or "").strip():
        why = f"the model answered stage {request.stage!r} in prose, not via the {TOOL_NAME!r} tool"
        raise fail("provider.refusal", f"{why}: {message['content'][:200]!r}; rephrase the prompt or try another "
                   "model", raw)
    if not mine:
        return ""
    return str(mine[0]) if isinstance(mine[0], str) else canonical_json(mine[0])
