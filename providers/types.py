"""What every provider exchanges: a request (prompt plus the JSON Schema of the answer), a checked
completion, and the error with a stable dotted code. Standard library only."""
from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeGuard

from veriguard.contracts.errors import EnvironmentProblem

TOOL_NAME = "respond"

Raw = tuple[Mapping[str, Any] | None, Any]
"""(raw request body, raw response body) of one provider call, kept on errors for the transcript."""


class ProviderError(EnvironmentProblem):
    """A provider call failed; `code` is stable (e.g. `provider.timeout`), the message says what to do."""

    def __init__(
        self, code: str, message: str, *, retry_after: float | None = None,
        raw_request: Mapping[str, Any] | None = None, raw_response: Any = None,
    ) -> None:
        super().__init__(code, message)
        self.retry_after = retry_after
        self.raw_request = dict(raw_request) if raw_request is not None else None
        self.raw_response = raw_response
        usage = raw_response.get("usage") if isinstance(raw_response, dict) else None
        # Tokens spent on an answer that was then rejected (malformed, refusal) still cost money.
        self.input_tokens = token_count(usage, "input_tokens", "prompt_tokens")
        self.output_tokens = token_count(usage, "output_tokens", "completion_tokens")
        self.cache_tokens = cache_tokens(usage)


MAX_TOKENS_COUNTED = 10_000_000   # no one call reads or writes more; a larger count is the server's invention


def _is_count(value: Any) -> TypeGuard[int]:
    """Whether a `usage` value is a token count: an int (not a bool), from 0 to MAX_TOKENS_COUNTED."""
    return type(value) is int and 0 <= value <= MAX_TOKENS_COUNTED


def token_count(usage: Any, *keys: str) -> int:
    """The first of `keys` in a response's `usage` that holds a count; 0 when none does (a server's own shape).
    A count over MAX_TOKENS_COUNTED is not one (10**30 output tokens made the stats and list-price costs absurd)."""
    if not isinstance(usage, Mapping):
        return 0
    for key in keys:
        value = usage.get(key)
        if _is_count(value):
            return value
    return 0


def tokens_reported(usage: Any, input_key: str, output_key: str) -> bool:
    """Whether a response's `usage` holds both counts as token_count takes them: a server that leaves them out, or
    writes them as strings, floats, negatives or absurd numbers, said nothing of what the call cost (priced as 0
    tokens, the call read as free)."""
    return isinstance(usage, Mapping) and all(_is_count(usage.get(key)) for key in (input_key, output_key))


# Anthropic reports the prompt tokens it wrote to or read from its prompt cache apart from `input_tokens`: a call's
# input is all three, each at its own price (prices.cost_usd)
CACHE_KEYS = ("cache_creation_input_tokens", "cache_read_input_tokens")


def cache_tokens(usage: Any) -> tuple[int, int]:
    """(cache write, cache read) input tokens of a response's `usage` (Anthropic's CACHE_KEYS; 0 when absent)."""
    return (token_count(usage, CACHE_KEYS[0]), token_count(usage, CACHE_KEYS[1]))


def cache_reported(usage: Any) -> bool:
    """Whether the cache counts a response's `usage` holds, if any, are counts (absent or null: none cached): a
    server that writes them as strings, floats, negatives or absurd numbers said nothing of what the call cost."""
    return not isinstance(usage, Mapping) or all(
        usage.get(key) is None or _is_count(usage[key]) for key in CACHE_KEYS)


MAX_MODEL_NAME = 200   # characters of a model name a server reports; longer is not a name


def model_name(reported: Any, requested: str) -> str:
    """The model a server says answered, as the record keeps it: a printable name of at most MAX_MODEL_NAME
    characters, else the requested model with a note. A server's own text goes into the decision record and the
    `how` shown to people: a megabyte there, or a line break and "SYSTEM: allowed", or a terminal escape, is not a
    model's name."""
    if not isinstance(reported, str) or not reported:
        return requested
    if len(reported) > MAX_MODEL_NAME or not reported.isprintable():
        return f"{requested} (the server named another model in {len(reported)} characters, not printable or too long)"
    return reported


# a dated snapshot an alias resolves to: claude-haiku-4-5-20251001, gpt-4o-2024-08-06
# (a date of this century: -99999999 is no snapshot, it is another name)
_SNAPSHOT = re.compile(r"-20\d\d(-?)(0[1-9]|1[0-2])\1(0[1-9]|[12]\d|3[01])")


def other_model(reported: Any, requested: str) -> str:
    """What is wrong with the model a server says answered, for an answer asked of `requested` ("" when it is that
    model: the same name, or the name of a dated snapshot of it). No name, or another one (another family, another
    case, a trailing space), is not the answer of the model asked for, whatever it says."""
    if not isinstance(reported, str) or not reported:
        return "the server named no model"
    if reported == requested or (reported.startswith(requested) and _SNAPSHOT.fullmatch(reported[len(requested):])):
        return ""
    return f"the server says model {reported[:MAX_MODEL_NAME]!r} answered, not {requested!r}"


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
    tokens_reported: bool = True
    """False when the server's `usage` did not give both counts (types.tokens_reported): the cost is unknown."""
    cache_tokens: tuple[int, int] = (0, 0)
    """Input tokens written to and read from the server's prompt cache, beside `input_tokens` (cache_tokens)."""


class Provider(Protocol):
    name: str
    model: str

    def complete(self, request: CompletionRequest) -> Completion: ...


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def request_hash(request: CompletionRequest) -> str:
    """sha256 over system, prompt and schema: what a replayed exchange must match."""
    return hash_parts(request.system, request.prompt, request.schema)


def hash_parts(system: str, prompt: str, schema: Mapping[str, Any]) -> str:
    payload = {"system": system, "prompt": prompt, "schema": schema}
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()
