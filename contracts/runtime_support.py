"""Argument validation for frozen policies. Stdlib only: this file is copied verbatim into every
frozen policy module, so it must not import anything from veriguard.

A schema is a list of (name, type) where a type is one of:
  {"kind": "bool"} {"kind": "int"} {"kind": "str"} {"kind": "enum", "name": N, "values": [...]}
  {"kind": "record", "name": N, "fields": [[field, scalar type], ...]}
  {"kind": "list", "elem": scalar type or {"kind": "tuple", "items": [scalar types]}}
"""
from typing import Any, Callable, Dict, List, Mapping, Sequence, Tuple


class ArgumentError(ValueError):
    """A policy argument is missing, mistyped or outside the domain the proof covers."""

    def __init__(self, argument: str, reason: str) -> None:
        super().__init__(f"argument {argument!r}: {reason}")
        self.argument = argument
        self.reason = reason


def _scalar_check(where: str, t: Mapping[str, Any]) -> Callable[[Any], Any]:
    """A checker for one scalar: returns the value or raises ArgumentError."""
    kind = t["kind"]
    if kind == "bool":
        def check_bool(value: Any) -> Any:
            if value is True or value is False:
                return value
            raise ArgumentError(where, f"expected true/false, got {type(value).__name__} {value!r}")
        return check_bool
    if kind == "int":
        def check_int(value: Any) -> Any:
            if type(value) is int or (isinstance(value, int) and not isinstance(value, bool)):
                return value
            raise ArgumentError(where, f"expected an integer, got {type(value).__name__} {value!r}")
        return check_int
    values = frozenset(t["values"]) if kind == "enum" else None
    listed = ", ".join(map(repr, t.get("values", ())))

    def check_str(value: Any) -> Any:
        if not isinstance(value, str):
            raise ArgumentError(where, f"expected a string, got {type(value).__name__} {value!r}")
        if values is not None and value not in values:
            raise ArgumentError(where, f"{value!r} is not a {t['name']} (one of {listed})")
        return value
    return check_str


def _element_check(where: str, t: Mapping[str, Any]) -> Callable[[int, Any], Any]:
    """A checker for the i-th element of a list argument (a scalar or a tuple of scalars)."""
    if t["kind"] != "tuple":
        kind = t["kind"]
        return lambda i, value: _scalar_check(f"{where}[{i}]", t)(value) if not _fast_ok(kind, value) else value
    items = t["items"]
    kinds = [it["kind"] for it in items]

    def check_tuple(i: int, value: Any) -> Any:
        if not isinstance(value, (list, tuple)) or len(value) != len(items):
            raise ArgumentError(f"{where}[{i}]", f"expected a {len(items)}-tuple, got {value!r}")
        if all(_fast_ok(k, v) for k, v in zip(kinds, value)) and not any(k == "enum" for k in kinds):
            return tuple(value)
        return tuple(_scalar_check(f"{where}[{i}][{k}]", it)(v) for k, (it, v) in enumerate(zip(items, value)))
    return check_tuple


def _fast_ok(kind: str, value: Any) -> bool:
    """The common, well-typed case without building a checker (enums still need their check)."""
    if kind == "bool":
        return value is True or value is False
    if kind == "int":
        return type(value) is int
    return kind == "str" and type(value) is str


def argument_checker(schema: Sequence[Tuple[str, Mapping[str, Any]]]) -> Callable[[Mapping[str, Any]], Dict[str, Any]]:
    """Compile `schema` once into a function that checks nested arguments and returns the policy's
    flat parameters (records -> fields). It raises ArgumentError for a missing, extra or mistyped
    argument: the caller fails closed."""
    known = frozenset(name for name, _ in schema)
    steps: List[Callable[[Mapping[str, Any], Dict[str, Any]], None]] = []
    for name, t in schema:
        steps.append(_argument_step(name, t))

    def flatten(args: Mapping[str, Any]) -> Dict[str, Any]:
        if not isinstance(args, Mapping):
            raise ArgumentError("<arguments>", f"expected an object, got {type(args).__name__}")
        if len(args) != len(known) or not known.issuperset(args):
            extra = sorted(str(k) for k in args if k not in known)
            if extra:
                raise ArgumentError(extra[0], "is not an argument of this policy")
        out: Dict[str, Any] = {}
        for step in steps:
            step(args, out)
        return out
    return flatten


def _argument_step(name: str, t: Mapping[str, Any]) -> Callable[[Mapping[str, Any], Dict[str, Any]], None]:
    kind = t["kind"]
    if kind == "record":
        fields = [(f, f"{name}_{f}", _scalar_check(f"{name}.{f}", ft)) for f, ft in t["fields"]]
        names = frozenset(f for f, _ in t["fields"])

        def record(args: Mapping[str, Any], out: Dict[str, Any]) -> None:
            if name not in args:
                raise ArgumentError(name, "is missing")
            value = args[name]
            if not isinstance(value, Mapping):
                raise ArgumentError(name, f"expected an object with fields {[f for f, _ in t['fields']]}, got {value!r}")
            for field, key, check in fields:
                if field not in value:
                    raise ArgumentError(f"{name}.{field}", "is missing")
                out[key] = check(value[field])
            if len(value) != len(names):
                unknown = sorted(str(k) for k in value if k not in names)
                raise ArgumentError(f"{name}.{unknown[0]}", "is not a field of " + str(t["name"]))
        return record
    if kind == "list":
        element = _element_check(name, t["elem"])

        def listed(args: Mapping[str, Any], out: Dict[str, Any]) -> None:
            if name not in args:
                raise ArgumentError(name, "is missing")
            value = args[name]
            if not isinstance(value, (list, tuple)):
                raise ArgumentError(name, f"expected a list, got {type(value).__name__}")
            out[name] = [element(i, v) for i, v in enumerate(value)]
        return listed
    check = _scalar_check(name, t)

    def scalar(args: Mapping[str, Any], out: Dict[str, Any]) -> None:
        if name not in args:
            raise ArgumentError(name, "is missing")
        out[name] = check(args[name])
    return scalar


def flatten_arguments(schema: Sequence[Tuple[str, Mapping[str, Any]]], args: Mapping[str, Any]) -> Dict[str, Any]:
    """Check `args` against `schema` and return the policy's flat parameters (see argument_checker)."""
    return argument_checker(schema)(args)
