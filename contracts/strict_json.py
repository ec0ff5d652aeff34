"""Strict JSON for data that decides something: UTF-8 only, no duplicate keys, no NaN or Infinity
(nor a number that overflows to it), no integer longer than the interpreter prints (4,300 digits),
bounded nesting, no lone surrogate (`"\\ud800"`: an escape may name half of a UTF-16 pair, which is no
character: Python keeps it, lossy readers make it U+FFFD, serde_json refuses it). Two readers of the same bytes
(this parser and an agent framework, or a person) must not see different values, so anything a lenient parser
would settle silently is an error here."""
from __future__ import annotations

import json
import math
import re
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


# after a successful parse every backslash is inside a string: `\\` pairs are skipped as one token, so an escape is
# read where the parser read it; a high half followed by a low half is one character (the parser joins them)
_ESCAPES = re.compile(r"\\\\|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_CANDIDATE = re.compile(r"\\u[dD][89a-fA-F]")   # no escape of a surrogate at all: the common case, one scan
_SURROGATE = re.compile("[\ud800-\udfff]")


def _lone_surrogate(text: str, *, decoded: bool) -> StrictJSONError | None:
    """The first lone surrogate in `text` (JSON that parsed): escaped, or, unless `text` was decoded from UTF-8 here
    (which holds none), a raw one (a str decoded with surrogateescape, e.g. a command-line argument that was not UTF-8)."""
    raw = None if decoded else _SURROGATE.search(text)
    if raw:
        return _at(text, raw.start(), f"a lone surrogate U+{ord(raw.group()):04X} (not a character; bytes that were not "
                   "UTF-8?)")
    candidate = _CANDIDATE.search(text)
    if candidate is None:
        return None
    start = candidate.start()
    while start and text[start - 1] == "\\":   # from the start of its run of backslashes, whose pairs are skipped
        start -= 1
    for m in _ESCAPES.finditer(text, start):
        if len(m.group()) == 6:
            return _at(text, m.start(), f"a lone surrogate escape {m.group()!r} (half of a UTF-16 pair, no character; "
                       "readers disagree on it)")
    return None


def _at(text: str, index: int, message: str) -> StrictJSONError:
    line = text.count("\n", 0, index) + 1
    return StrictJSONError(message, line, index - (text.rfind("\n", 0, index) + 1) + 1)


def loads_passing_surrogates(data: str | bytes) -> Any:
    """loads(data) that keeps lone surrogates: for a relay that passes the text on as the same escapes (the MCP proxy)
    and a reader that must not refuse what it only records (the decision log's records), never for data that
    decides."""
    return loads(data, lone_surrogates=True)


def loads(data: str | bytes, *, lone_surrogates: bool = False) -> Any:
    """Parse `data` (bytes must be UTF-8); raises StrictJSONError and nothing else. `lone_surrogates`: keep them
    (see loads_passing_surrogates), else each is an error with its place."""
    decoded = isinstance(data, bytes)
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise StrictJSONError(f"not UTF-8 (byte {e.start}: {data[e.start:e.start + 1]!r})") from None
    try:
        value = json.loads(data, object_pairs_hook=_unique, parse_constant=_constant, parse_float=_float)
    except json.JSONDecodeError as e:
        raise StrictJSONError(e.msg, e.lineno, e.colno) from None
    except RecursionError:
        raise StrictJSONError("nested too deeply") from None
    except ValueError as e:  # a duplicate key, NaN / Infinity, an integer over the digit limit
        raise StrictJSONError(str(e).split(";")[0]) from None
    lone = None if lone_surrogates else _lone_surrogate(data, decoded=decoded)
    if lone:
        raise lone
    return value
