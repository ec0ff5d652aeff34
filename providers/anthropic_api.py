"""Claude through the official SDK (imported when a provider is built: it costs 1.7-3.3 s)."""
from __future__ import annotations

import json
import os
import time
from typing import Any, Literal

import httpx2

from veriguard.providers.errors import fail, status_error
from veriguard.providers.schema import checked, no_answer, parse_json
from veriguard.providers.types import TOOL_NAME, Completion, CompletionRequest, ProviderError

# claude-sonnet-4-5 reaches end of life on 2026-11-30 (SDK 2.12 deprecation table).
DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-5-5"

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
            raise fail("provider.refusal", f"{why}; rephrase the spec or prompt, or try another model", raw)
        texts = "".join(block.text for block in message.content if block.type == "text").strip()
        if self.structured == "tool":
            calls = [block.input for block in message.content if block.type == "tool_use" and block.name == TOOL_NAME]
            if not calls and texts:
                why = f"the model answered stage {request.stage!r} in prose, not via the {TOOL_NAME!r} tool"
                fix = "rephrase the prompt or try another model"
                raise fail("provider.refusal", f"{why}: {texts[:200]!r}; {fix}", raw)
            text = json.dumps(calls[0], ensure_ascii=False) if calls else ""
            answer: Any = calls[0] if calls else None
        else:
            text = texts
            answer = parse_json(text, request, stop_reason, raw) if text else None
        if answer is None:
            raise no_answer(request, stop_reason, raw)
        return Completion(
            data=checked(answer, request, stop_reason, raw),
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
            raise fail("provider.timeout", f"{why}; raise the provider's timeout or lower max_tokens", sent) from error
        except anthropic.APIConnectionError as error:
            why = f"cannot reach {self.base_url} ({error.__cause__ or error}; {tries})"
            fix = "check network, DNS and proxy settings, or run offline with provider 'replay'"
            raise fail("provider.network", f"{why}; {fix}", sent) from error
        except anthropic.APIStatusError as error:
            detail = error.api_message or str(error.body)[:200]
            headers, answered = error.response.headers, (body, error.body)
            raise status_error(error.status_code, headers, detail, "Anthropic", answered) from error
        except json.JSONDecodeError as error:
            why = f"{self.base_url} answered with a body that is not JSON ({error})"
            raise fail("provider.malformed", f"{why}; check base_url", sent) from error
