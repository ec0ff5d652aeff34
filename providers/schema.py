"""The answer against its JSON Schema: a minimal validator (type, required, properties, items, enum)
and the checks every provider applies to what the model returned."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from veriguard.contracts.strict_json import StrictJSONError
from veriguard.contracts.strict_json import loads as strict_loads
from veriguard.providers.errors import fail
from veriguard.providers.types import CompletionRequest, ProviderError, Raw

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
        if schema.get("additionalProperties") is False:
            extra = sorted(str(name) for name in instance if name not in schema.get("properties", {}))
            errors += [f"{path}: unexpected property {name!r:.60}" for name in extra]
        for name, subschema in schema.get("properties", {}).items():
            if name in instance:
                errors += validate(instance[name], subschema, f"{path}.{name}")
    if isinstance(instance, list) and isinstance(schema.get("items"), Mapping):
        for index, item in enumerate(instance):
            errors += validate(item, schema["items"], f"{path}[{index}]")
    return errors


def cut_off(request: CompletionRequest, stop_reason: str | None) -> str | None:
    if stop_reason in ("max_tokens", "length"):
        return f"the answer was cut off at max_tokens={request.max_tokens} (thinking counts too); raise max_tokens"
    return None


def checked(data: Any, request: CompletionRequest, stop_reason: str | None, raw: Raw) -> dict[str, Any]:
    errors = validate(data, request.schema)
    if not errors and isinstance(data, dict):
        return data
    errors = errors or [f"$: expected an object, got {type(data).__name__}"]
    hint = cut_off(request, stop_reason) or "tighten the prompt or simplify the schema"
    shown = "; ".join(errors[:5]) + (f" (+{len(errors) - 5} more)" if len(errors) > 5 else "")
    message = f"answer for stage {request.stage!r} does not satisfy its schema: {shown}; {hint}"
    raise fail("provider.malformed", message, raw)


def refuse_cut_off(request: CompletionRequest, stop_reason: str | None, raw: Raw) -> None:
    """A cut-off answer is refused even when what was cut off happens to satisfy the schema."""
    cut = cut_off(request, stop_reason)
    if cut:
        raise fail("provider.malformed", f"the answer for stage {request.stage!r} was cut off "
                   f"(stop reason {stop_reason!r}): {cut}", raw)


def parse_json(text: str, request: CompletionRequest, stop_reason: str | None, raw: Raw) -> Any:
    """The answer's JSON, read strictly (contracts.strict_json: no duplicate keys, no NaN, bounded nesting)."""
    stripped = text.strip()
    if stripped.startswith("```") and stripped.endswith("```"):  # some local models fence their JSON
        stripped = stripped.split("\n", 1)[-1].rsplit("```", 1)[0]
    try:
        return strict_loads(stripped)
    except StrictJSONError as error:
        hint = cut_off(request, stop_reason) or "use a model or server that supports JSON Schema output"
        message = f"the answer for stage {request.stage!r} is not strict JSON ({error}): {text[:120]!r}; {hint}"
        raise fail("provider.malformed", message, raw) from error


def several_answers(request: CompletionRequest, competing: list[str], raw: Raw) -> ProviderError:
    """A reply with more than the one answer, or something beside it: which one the model meant is unknown."""
    return fail("provider.malformed", f"the reply for stage {request.stage!r} holds more than one answer: "
                f"{', '.join(competing)}; none is taken (the first could be the wrong one): retry, or check that "
                "the server sends one answer and nothing beside it", raw)


def no_answer(request: CompletionRequest, stop_reason: str | None, raw: Raw) -> ProviderError:
    cut = cut_off(request, stop_reason)
    if cut:
        return fail("provider.malformed", f"no answer for stage {request.stage!r}: {cut}", raw)
    message = f"the model returned no answer for stage {request.stage!r} (stop_reason {stop_reason!r}); retry"
    return fail("provider.empty", message, raw)
