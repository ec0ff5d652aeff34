"""Where each key of a TOML file sits (tomllib gives values, not positions)."""
from __future__ import annotations

import re

from veriguard.contracts.errors import Pos

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
    for lineno, line in enumerate(_lines(text), start=1):
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
    lines = _lines(text)
    line = lines[pos.line - 1] if 0 < pos.line <= len(lines) else ""
    rest = line[pos.col - 1:]
    for quote in ('"""', "'''"):
        if rest.startswith(quote):
            if rest[3:].strip() == "":
                return pos.line, 0
            return pos.line - 1, pos.col + 2
    return pos.line - 1, pos.col


def escape_in_basic_string(text: str, pos: Pos) -> Pos | None:
    """Where the first escape of the basic string (quoted with one or three double quotes) whose value starts at
    `pos` is, or None; a backslash that ends a line (TOML's line continuation) is not one. A literal string has none."""
    lines = _lines(text)
    row, col = pos.line - 1, pos.col - 1
    if not 0 <= row < len(lines):
        return None
    rest = lines[row][col:]
    quote = '"' * 3 if rest.startswith('"' * 3) else '"' if rest.startswith('"') else ""
    if not quote:
        return None
    col += len(quote)
    while row < len(lines):
        line = lines[row]
        end = line.find(quote, col)
        slash = line.find("\\", col)
        if slash >= 0 and (end < 0 or slash < end):
            if line[slash + 1:].strip(" \t") or quote == '"':
                return Pos(row + 1, slash + 1)
        if end >= 0 and (slash < 0 or end < slash):
            return None
        row, col = row + 1, 0
    return None


def _lines(text: str) -> list[str]:
    """Lines as TOML counts them: only "\n" ends a line (str.splitlines also splits on \x0c, \u2028, ...)."""
    return [line.removesuffix("\r") for line in text.split("\n")]


def too_deep(text: str, limit: int) -> Pos | None:
    """Where arrays and inline tables first nest deeper than `limit` (strings and comments skipped), or None.

    tomllib recurses once per level and ends in RecursionError on deep input; this finds the place first.
    """
    depth, i, n = 0, 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if ch in "\"'":
            i = _string_end(text, i)
            continue
        if ch in "[{":
            depth += 1
            if depth > limit:
                line_start = text.rfind("\n", 0, i) + 1
                return Pos(text.count("\n", 0, i) + 1, i - line_start + 1)
        elif ch in "]}":
            depth = max(depth - 1, 0)
        i += 1
    return None


def _string_end(text: str, i: int) -> int:
    """The index just past the TOML string that starts at `i` (or the end of the line if unterminated)."""
    q = text[i]
    delim = q * 3 if text.startswith(q * 3, i) else q
    j = i + len(delim)
    while j < len(text):
        if q == '"' and text[j] == "\\":
            j += 2
            continue
        if text.startswith(delim, j):
            return j + len(delim)
        if len(delim) == 1 and text[j] == "\n":
            return j
        j += 1
    return j
