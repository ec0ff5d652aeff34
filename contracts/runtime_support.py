"""Argument validation for frozen policies. Stdlib only: this file is copied verbatim into every
frozen policy module, so it must not import anything from veriguard.

A schema is a list of (name, type) where a type is one of:
  {"kind": "bool"} {"kind": "int"} {"kind": "str"} {"kind": "enum", "name": N, "values": [...]}
  {"kind": "record", "name": N, "fields": [[field, scalar type], ...]}
  {"kind": "list", "elem": scalar type or {"kind": "tuple", "items": [scalar types]}}
"""
from typing import Any, Callable, Dict, Mapping, Sequence, Tuple

# Exact types only: a subclass of int or str can override ==, < or hash and answer the policy's
# comparisons differently from the value it prints as (bool cannot be subclassed).


class ArgumentError(ValueError):
    """A policy argument is missing, mistyped or outside the domain the proof covers."""

    def __init__(self, argument: str, reason: str) -> None:
        super().__init__(f"argument {argument!r}: {reason}")
        self.argument = argument
        self.reason = reason


def _show(value: Any) -> str:
    """The value for an error message, without running a caller's __repr__ or printing megabytes."""
    kind = type(value)
    if kind in (bool, int, float, str, type(None)):
        try:
            text = repr(value)
        except ValueError:  # an int beyond the interpreter's digit limit for str()
            return f"an int of {value.bit_length()} bits"
        return f"{kind.__name__} {text[:60]}{'...' if len(text) > 60 else ''}"
    if kind in (list, tuple, dict):
        return f"a {kind.__name__} of {len(value)} item(s)"
    return f"an object of type {kind.__name__}"


def _key(key: Any) -> str:
    return key if type(key) is str else _show(key)


class _Bad(Exception):
    """A value that fails its type; the caller knows where it sits and raises ArgumentError."""

    def __init__(self, reason: str, where: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.where = where  # a suffix inside the value, e.g. "[1]" for a tuple's second item


def _scalar_check(t: Mapping[str, Any]) -> Callable[[Any], Any]:
    """A checker for one scalar: returns the value or raises _Bad."""
    kind = t["kind"]
    if kind == "bool":
        def check_bool(value: Any) -> Any:
            if value is True or value is False:
                return value
            raise _Bad(f"expected true/false, got {_show(value)}")
        return check_bool
    if kind == "int":
        def check_int(value: Any) -> Any:
            if type(value) is int:
                return value
            raise _Bad(f"expected an integer, got {_show(value)}")
        return check_int
    values = frozenset(t["values"]) if kind == "enum" else None

    def check_str(value: Any) -> Any:
        if type(value) is not str:
            raise _Bad(f"expected a string, got {_show(value)}")
        if values is not None and value not in values:
            raise _Bad(f"{value[:60]!r} is not a {t['name']} (one of {', '.join(map(repr, t['values']))})")
        return value
    return check_str


def _element_check(t: Mapping[str, Any]) -> Callable[[Any], Any]:
    """A checker for one element of a list argument: a scalar, or a tuple of scalars."""
    if t["kind"] != "tuple":
        return _scalar_check(t)
    checks = [_scalar_check(it) for it in t["items"]]

    def check_tuple(value: Any) -> Any:
        if (type(value) is not list and type(value) is not tuple) or len(value) != len(checks):
            raise _Bad(f"expected a {len(checks)}-tuple, got {_show(value)}")
        out = []
        for k, (check, v) in enumerate(zip(checks, value)):
            try:
                out.append(check(v))
            except _Bad as e:
                raise _Bad(e.reason, f"[{k}]") from None
        return tuple(out)
    return check_tuple


def argument_checker(schema: Sequence[Tuple[str, Mapping[str, Any]]]) -> Callable[[Mapping[str, Any]], Dict[str, Any]]:
    """Compile `schema` once into a function that checks nested arguments and returns the policy's
    flat parameters (records -> fields). It raises ArgumentError for a missing, extra or mistyped
    argument: the caller fails closed."""
    known = frozenset(name for name, _ in schema)
    steps = [_argument_step(name, t) for name, t in schema]

    def flatten(args: Mapping[str, Any]) -> Dict[str, Any]:
        if type(args) is not dict:
            raise ArgumentError("<arguments>", f"expected an object (dict), got {_show(args)}")
        if len(args) != len(known) or not known.issuperset(args):
            extra = sorted(_key(k) for k in args if k not in known)
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
        fields = [(f, f"{name}_{f}", _scalar_check(ft)) for f, ft in t["fields"]]
        names = frozenset(f for f, _ in t["fields"])

        def record(args: Mapping[str, Any], out: Dict[str, Any]) -> None:
            if name not in args:
                raise ArgumentError(name, "is missing")
            value = args[name]
            if type(value) is not dict:
                raise ArgumentError(name, f"expected an object (dict) with fields {[f for f, _ in t['fields']]}, "
                                    f"got {_show(value)}")
            for field, key, check in fields:
                if field not in value:
                    raise ArgumentError(f"{name}.{field}", "is missing")
                try:
                    out[key] = check(value[field])
                except _Bad as e:
                    raise ArgumentError(f"{name}.{field}", e.reason) from None
            if len(value) != len(names):
                unknown = sorted(_key(k) for k in value if k not in names)
                raise ArgumentError(f"{name}.{unknown[0]}", "is not a field of " + str(t["name"]))
        return record
    if kind == "list":
        element = _element_check(t["elem"])

        def listed(args: Mapping[str, Any], out: Dict[str, Any]) -> None:
            if name not in args:
                raise ArgumentError(name, "is missing")
            value = args[name]
            if type(value) is not list and type(value) is not tuple:
                raise ArgumentError(name, f"expected a list, got {_show(value)}")
            items = []
            for i, v in enumerate(value):
                try:
                    items.append(element(v))
                except _Bad as e:
                    raise ArgumentError(f"{name}[{i}]{e.where}", e.reason) from None
            out[name] = items
        return listed
    check = _scalar_check(t)

    def scalar(args: Mapping[str, Any], out: Dict[str, Any]) -> None:
        if name not in args:
            raise ArgumentError(name, "is missing")
        try:
            out[name] = check(args[name])
        except _Bad as e:
            raise ArgumentError(name, e.reason) from None
    return scalar


def flatten_arguments(schema: Sequence[Tuple[str, Mapping[str, Any]]], args: Mapping[str, Any]) -> Dict[str, Any]:
    """Check `args` against `schema` and return the policy's flat parameters (see argument_checker)."""
    return argument_checker(schema)(args)
