"""Where each key of a TOML file sits (tomllib gives values, not positions)."""
from __future__ import annotations

import re

from contracts.errors import Pos

Key = tuple[object, ...]

_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEYVAL = re.compile(r'^\s*((?:[A-Za-z0-9_-]+|"[^"]*")(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"))*)\s*=\s*')


def _split_key(raw: str) -> tuple[str, ...]:
    return tuple(p.strip().strip('"') for p in re.findall(r'"[^"]*"|[^.]+', raw))


def key_positions(text: str) -> dict[Key, Pos]:
    """Map key paths to the 1-based position where their value starts.

    Arrays of tables get an index: `[[examples]]` entries are ("examples", 0), ("examples", 1), ...
    """
    out: dict[Key, Pos] = {}
    table: Key = ()
    counters: dict[Key, int] = {}
    in_string = ""
    for lineno, line in enumerate(text.splitlines(), start=1):
        if in_string:
            if line.count(in_string) % 2 == 1:
                in_string = ""
            continue
        header = _HEADER.match(line)
        if header and not _KEYVAL.match(line):
            path = _split_key(header.group(2))
            if header.group(1) == "[[":
                index = counters.get(path, 0)
                counters[path] = index + 1
                table = (*path, index)
            else:
                table = path
            out[table] = Pos(lineno, line.index("[") + 1)
            continue
        kv = _KEYVAL.match(line)
        if not kv:
            continue
        key = (*table, *_split_key(kv.group(1)))
        out[key] = Pos(lineno, kv.end() + 1)
        rest = line[kv.end():]
        for quote in ('"""', "'''"):
            if rest.startswith(quote) and rest.count(quote) == 1:
                in_string = quote
    return out


def string_offsets(text: str, pos: Pos) -> tuple[int, int]:
    """(line offset, column offset) that map positions inside the string value at `pos` to the file."""
    line = text.splitlines()[pos.line - 1]
    rest = line[pos.col - 1:]
    for quote in ('"""', "'''"):
        if rest.startswith(quote):
            if rest[3:].strip() == "":
                return pos.line, 0
            return pos.line - 1, pos.col + 2
    return pos.line - 1, pos.col
