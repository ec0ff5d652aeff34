"""Nagini counterexamples (printed model values) -> argument values, and back to concrete inputs."""
from __future__ import annotations

import ast
import itertools
import re
from typing import Any

from veriguard.contracts.types import BoolT, EnumT, IntT, ListT, TupleT, Type
from veriguard.contracts.signature import element_types

_TUPLE_PART = re.compile(r"None\[(\d+)\] -> ((?:'(?:[^'\\]|\\.)*')|(?:\"(?:[^\"\\]|\\.)*\")|[^,)]+)")


def _scalar(text: Any) -> Any:
    """A printed model value: "'admin'" -> 'admin', 18 -> 18; None when opaque or unconstrained."""
    if isinstance(text, (bool, int)):
        return text
    if not isinstance(text, str):
        return None
    s = text.strip()
    if s in ("True", "False"):
        return s == "True"
    try:
        value = ast.literal_eval(s)
    except (ValueError, SyntaxError):
        return None  # '?', 'str0', 'Decision0': no concrete value in the model
    return value if isinstance(value, (str, int, bool)) else None


def _element(text: Any) -> Any:
    if isinstance(text, str) and text.strip().startswith("( len("):
        parts = {int(i): _scalar(v) for i, v in _TUPLE_PART.findall(text)}
        return tuple(parts.get(k) for k in range(max(parts) + 1)) if parts else None
    return _scalar(text)


def decode(raw: dict[str, Any] | None, params: list[tuple[str, Type]] | None = None) -> dict[str, Any]:
    """Input values of a counterexample. Lists become {"length": n, "items": {index: element}}."""
    if not raw:
        return {}
    inputs = raw.get("inputs") or {}
    heap = raw.get("old_heap") or {}
    heap_now = raw.get("heap") or {}
    names = [n for n, _ in params] if params else list(inputs)
    out: dict[str, Any] = {}
    for name in names:
        if name not in inputs:
            continue
        value = inputs[name]
        if isinstance(value, str) and value.startswith("?") and (value in heap or value in heap_now):
            cells = {**heap.get(value, {}), **heap_now.get(value, {})}
            length = cells.get(f"len({value})")
            items = {}
            for key, cell in cells.items():
                m = re.fullmatch(re.escape(value) + r"\[(\d+)\]", key)
                if m:
                    items[int(m.group(1))] = _element(cell)
            out[name] = {"length": length if isinstance(length, int) else None, "items": items}
        else:
            out[name] = _scalar(value)
    return out


def _default(t: Type) -> Any:
    if isinstance(t, BoolT):
        return False
    if isinstance(t, IntT):
        return 0
    if isinstance(t, EnumT):
        return t.values[0]
    return "x"


def candidates(values: dict[str, Any], params: list[tuple[str, Type]], pools: dict[str, list[Any]],
               limit: int = 300) -> list[dict[str, Any]]:
    """Concrete inputs for a counterexample with holes (values the model left open): the default
    filling first, then fillings drawn from `pools` ("str", "int") of constants the contract mentions."""
    first = concretize(values, params)
    holes: list[tuple[str, int | None, int | None, Type]] = []
    for name, t in params:
        v = values.get(name)
        if isinstance(t, ListT):
            types = element_types(t)
            items = v.get("items", {}) if isinstance(v, dict) else {}
            for item_row, index in enumerate(sorted(items)):
                el = items[index]
                parts = el if isinstance(el, tuple) else (el,)
                for part, et in enumerate(types):
                    if part >= len(parts) or parts[part] is None:
                        holes.append((name, item_row, part, et))
        elif v is None:
            holes.append((name, None, None, t))
    out = [first]
    options = [_options(t, pools) for *_, t in holes]
    for combo in itertools.islice(itertools.product(*options), limit):
        filled = {k: [list(x) if isinstance(x, tuple) else x for x in v] if isinstance(v, list) else v
                  for k, v in first.items()}
        for (name, row, k, t), value in zip(holes, combo):
            if row is None:
                filled[name] = value
            elif isinstance(filled[name][row], list):
                filled[name][row][k] = value
            else:
                filled[name][row] = value
        out.append({k: [tuple(x) if isinstance(x, list) else x for x in v] if isinstance(v, list) else v
                    for k, v in filled.items()})
    return out


def _options(t: Type, pools: dict[str, list[Any]]) -> list[Any]:
    if isinstance(t, BoolT):
        return [False, True]
    if isinstance(t, EnumT):
        return list(t.values)
    if isinstance(t, IntT):
        return pools.get("int") or [0]
    return (pools.get("str") or []) + ["x"]


def concretize(values: dict[str, Any], params: list[tuple[str, Type]]) -> dict[str, Any]:
    """Flat arguments to replay a counterexample: unknown values get defaults, and a list keeps only
    the elements the model fixed (the clauses are per element, so those are the ones that matter)."""
    out: dict[str, Any] = {}
    for name, t in params:
        v = values.get(name)
        if isinstance(t, ListT):
            types = element_types(t)
            items = v.get("items", {}) if isinstance(v, dict) else {}
            rows = []
            for index in sorted(items):
                el = items[index]
                parts = el if isinstance(el, tuple) else (el,)
                fixed = tuple(p if p is not None else _default(et) for p, et in zip(parts, types))
                fixed += tuple(_default(et) for et in types[len(fixed):])
                rows.append(fixed if isinstance(t.elem, TupleT) else fixed[0])
            out[name] = rows
        else:
            out[name] = v if v is not None else _default(t)
    return out


def render(values: dict[str, Any]) -> str:
    """A one-line human rendering: role='nursing', accessed[8240]=('diagnosis', 'icd9code') (of 8241)."""
    parts = []
    for name, v in values.items():
        if isinstance(v, dict) and "items" in v:
            shown = ", ".join(f"{name}[{i}]={el!r}" for i, el in sorted(v["items"].items()))
            parts.append((shown or f"{name}=[]") + (f" (length {v['length']})" if v.get("length") is not None else ""))
        else:
            parts.append(f"{name}={'any value' if v is None else repr(v)}")
    return ", ".join(parts)
