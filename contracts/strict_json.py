"""Strict JSON for data that decides something: UTF-8 only, no duplicate keys, no NaN or Infinity
(nor a number that overflows to it), no integer longer than the interpreter prints (4,300 digits),
bounded nesting. Two readers of the same bytes (this parser and an agent framework, or a person)
must not see different values, so anything a lenient parser would settle silently is an error here."""
from __future__ import annotations

import json
import math
from typing import Any


class StrictJSONError(ValueError):
    """Not strict JSON; `line` and `col` are 1-based, 0 when the parser gives no position."""

    def __init__(self, message: str, line: int = 0, col: int = 0) -> None:
        super().__init__(f"{line}:{col}: {message}" if line else message)
        self.message = message
        self.line = line
        self.col = col


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"duplicate key {key[:60]!r}")
            seen.add(key)
    return out


def _constant(word: str) -> Any:
    raise ValueError(f"{word} is not a JSON number")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:40]} is beyond the range of a float")
    return value


def loads(data: str | bytes) -> Any:
    """Parse `data` (bytes must be UTF-8); raises StrictJSONError and nothing else."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise StrictJSONError(f"not UTF-8 (byte {e.start}: {data[e.start:e.start + 1]!r})") from None
    try:
        return json.loads(data, object_pairs_hook=_unique, parse_constant=_constant,
                          parse_float=_float)
    except json.JSONDecodeError as e:
        raise StrictJSONError(e.msg, e.lineno, e.colno) from None
    except RecursionError:
        raise StrictJSONError("nested too deeply") from None
    except ValueError as e:  # a duplicate key, NaN / Infinity, an integer over the digit limit
        raise StrictJSONError(str(e).split(";")[0]) from None
