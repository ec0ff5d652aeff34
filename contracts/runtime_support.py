"""Argument validation for frozen policies. Stdlib only: this file is copied verbatim into every
frozen policy module, so it must not import anything from veriguard.

A schema is a list of (name, type) where a type is one of:
  {"kind": "bool"} {"kind": "int"} {"kind": "str"} {"kind": "enum", "name": N, "values": [...]}
  {"kind": "record", "name": N, "fields": [[field, scalar type], ...]}
  {"kind": "list", "elem": scalar type or {"kind": "tuple", "items": [scalar types]}}
"""
from typing import Any, Dict, List, Mapping, Sequence, Tuple


class ArgumentError(ValueError):
    """A policy argument is missing, mistyped or outside the domain the proof covers."""

    def __init__(self, argument: str, reason: str) -> None:
        super().__init__(f"argument {argument!r}: {reason}")
        self.argument = argument
        self.reason = reason


def _scalar(where: str, t: Mapping[str, Any], value: Any) -> Any:
    kind = t["kind"]
    if kind == "bool":
        if not isinstance(value, bool):
            raise ArgumentError(where, f"expected true/false, got {type(value).__name__} {value!r}")
        return value
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ArgumentError(where, f"expected an integer, got {type(value).__name__} {value!r}")
        return value
    if not isinstance(value, str):
        raise ArgumentError(where, f"expected a string, got {type(value).__name__} {value!r}")
    if kind == "enum" and value not in t["values"]:
        raise ArgumentError(where, f"{value!r} is not a {t['name']} (one of {', '.join(map(repr, t['values']))})")
    return value


def _element(where: str, t: Mapping[str, Any], value: Any) -> Any:
    if t["kind"] != "tuple":
        return _scalar(where, t, value)
    items = t["items"]
    if not isinstance(value, (list, tuple)) or len(value) != len(items):
        raise ArgumentError(where, f"expected a {len(items)}-tuple, got {value!r}")
    return tuple(_scalar(f"{where}[{k}]", it, v) for k, (it, v) in enumerate(zip(items, value)))


def flatten_arguments(schema: Sequence[Tuple[str, Mapping[str, Any]]], args: Mapping[str, Any]) -> Dict[str, Any]:
    """Check `args` against `schema` and return the policy's flat parameters (records -> fields).

    Raises ArgumentError for a missing, extra or mistyped argument: the caller fails closed.
    """
    if not isinstance(args, Mapping):
        raise ArgumentError("<arguments>", f"expected an object, got {type(args).__name__}")
    known = {name for name, _ in schema}
    extra = sorted(str(k) for k in args if k not in known)
    if extra:
        raise ArgumentError(extra[0], "is not an argument of this policy")
    out: Dict[str, Any] = {}
    for name, t in schema:
        if name not in args:
            raise ArgumentError(name, "is missing")
        value = args[name]
        kind = t["kind"]
        if kind == "record":
            if not isinstance(value, Mapping):
                raise ArgumentError(name, f"expected an object with fields {[f for f, _ in t['fields']]}, got {value!r}")
            for field, ft in t["fields"]:
                if field not in value:
                    raise ArgumentError(f"{name}.{field}", "is missing")
                out[f"{name}_{field}"] = _scalar(f"{name}.{field}", ft, value[field])
            unknown = sorted(str(k) for k in value if k not in {f for f, _ in t["fields"]})
            if unknown:
                raise ArgumentError(f"{name}.{unknown[0]}", "is not a field of " + str(t["name"]))
        elif kind == "list":
            if not isinstance(value, (list, tuple)):
                raise ArgumentError(name, f"expected a list, got {type(value).__name__}")
            items: List[Any] = [_element(f"{name}[{i}]", t["elem"], v) for i, v in enumerate(value)]
            out[name] = items
        else:
            out[name] = _scalar(name, t, value)
    return out
