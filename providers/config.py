"""A provider from a configuration mapping (a spec, a CLI, a test)."""
from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from veriguard.providers.types import Provider, ProviderError

if TYPE_CHECKING:
    import httpx2

_CONFIG_KEYS = {
    "anthropic": {
        "provider", "model", "base_url", "timeout", "connect_timeout", "max_retries", "api_key_env", "structured",
        "effort",
    },
    "openai": {"provider", "model", "base_url", "timeout", "structured", "api_key_env"},
    "replay": {"provider", "path", "exchanges", "model"},
}


def _named_key(config: Mapping[str, Any]) -> str | None:
    """The key in the variable `api_key_env` names (None when it names none). A named variable that is unset is an
    error: the Anthropic provider would send ANTHROPIC_API_KEY to the configured server instead, and an
    OpenAI-compatible one no key at all, neither of which is what the configuration says."""
    if "api_key_env" not in config:
        return None
    name = str(config["api_key_env"])
    key = os.environ.get(name)
    if not key:
        raise ProviderError("provider.no_key", f"the API key variable {name} (api_key_env) is not set; no other "
                            f"key is sent in its place. Export {name}=..., or remove api_key_env to use the "
                            "provider's default key")
    return key


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
    api_key = _named_key(config)
    if kind == "anthropic":
        from veriguard.providers.anthropic_api import DEFAULT_ANTHROPIC_MODEL, AnthropicProvider

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
        from veriguard.providers.openai_api import OpenAICompatibleProvider

        return OpenAICompatibleProvider(
            str(config["base_url"]),
            str(config["model"]),
            api_key=api_key,
            timeout=float(config.get("timeout", 60.0)),
            structured=config.get("structured", "auto"),
            http_client=http_client,
        )
    from veriguard.providers.replay import ReplayProvider

    if "path" in config:
        return ReplayProvider.from_file(config["path"])
    if "exchanges" in config:
        return ReplayProvider(config["exchanges"], model=str(config.get("model", "replay")))
    raise ProviderError(
        "provider.config",
        "provider 'replay' needs 'path' (a transcript JSON from `TranscriptStore.export`) or 'exchanges'",
    )
