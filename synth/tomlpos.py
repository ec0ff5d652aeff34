"""Where each key of a TOML file sits (tomllib gives values, not positions)."""
from __future__ import annotations

import tomllib

from veriguard.contracts.errors import Pos

Key = tuple[object, ...]

_BARE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_NESTING = 64   # deeper values are skipped whole (the spec loader refuses more than 32 levels before this runs)


def key_positions(text: str) -> dict[Key, Pos]:
    """Map key paths to the 1-based position where their value starts, read as TOML reads the file: strings (all
    four kinds, escapes included), comments, arrays and inline tables are skipped as units, so a line inside a
    string that looks like a header or a key is never taken for one (it was: a fake `rules = ...` inside a later
    multi-line string moved the contract's place, and the escape check looked at the fake). Keys of inline tables
    and the items of arrays get their own paths (a key inside an inline table is placed at the key, as messages point
    there; scan_keys gives where its value starts): `contract = { rules = "..." }` is ("contract", "rules"),
    `examples = [{...}, {...}]` gives ("examples", 0), ("examples", 1). Arrays of tables get an index the same way:
    `[[examples]]` entries are ("examples", 0), ("examples", 1), ... Quoted keys are decoded ("ru\\u006ces" is
    "rules"). A key path met twice (which TOML forbids) is in scan_keys's second result."""
    scan = _Scan(text)
    scan.run()
    return scan.out


def scan_keys(text: str) -> tuple[dict[Key, Pos], dict[Key, Pos], set[Key]]:
    """key_positions; where each key's value starts (for a key of an inline table too, whose key_positions entry is
    the key itself, as messages point there); and the key paths the scan met more than once: never in a file
    tomllib reads, so a sign that the scan misread it (where such a key is written cannot be told)."""
    scan = _Scan(text)
    scan.run()
    return scan.out, scan.values, scan.twice


class _Scan:
    def __init__(self, text: str) -> None:
        self.text, self.i, self.n = text, 0, len(text)
        self.out: dict[Key, Pos] = {}      # where messages point: the value, or the key inside an inline table
        self.values: dict[Key, Pos] = {}   # where each value starts
        self.twice: set[Key] = set()
        self.counters: dict[Key, int] = {}

    def run(self) -> None:
        table: Key = ()
        try:
            while self._blank(newlines=True) < self.n:
                start = self.i
                if self.text[self.i] == "[":
                    table = self._header()
                else:
                    self._keyval(table, 0)
                if self.i == start:   # not TOML: the loader reports it; the scan moves on
                    self._to_line_end()
        except IndexError:
            # a file that ends inside a construct: tomllib refuses it, and the keys placed so far stand (a contract
            # left unplaced is spec.contract_escape, so nothing is read unchecked)
            return

    def _pos(self, at: int) -> Pos:
        line_start = self.text.rfind("\n", 0, at) + 1
        return Pos(self.text.count("\n", 0, at) + 1, at - line_start + 1)

    def _put(self, key: Key, at: int, shown: int | None = None) -> None:
        if key in self.values:
            self.twice.add(key)
        self.values[key] = self._pos(at)
        self.out[key] = self._pos(at if shown is None else shown)

    def _blank(self, *, newlines: bool) -> int:
        """Skip spaces, tabs, comments (and line breaks when `newlines`); the index after them."""
        while self.i < self.n:
            ch = self.text[self.i]
            if ch in " \t" or (newlines and ch in "\r\n"):
                self.i += 1
            elif ch == "#":
                self._to_line_end(keep_newline=True)
            else:
                break
        return self.i

    def _to_line_end(self, *, keep_newline: bool = False) -> None:
        end = self.text.find("\n", self.i)
        self.i = self.n if end < 0 else end + (0 if keep_newline else 1)

    def _header(self) -> Key:
        at = self.i
        array = self.text.startswith("[[", self.i)
        self.i += 2 if array else 1
        self._blank(newlines=False)
        path: Key = self._key()
        self._blank(newlines=False)
        self.i += 2 if array else 1   # `]` or `]]`
        if array:
            index = self.counters.get(path, 0)
            self.counters[path] = index + 1
            path = (*path, index)
        self._put(path, at)
        return path

    def _keyval(self, prefix: Key, depth: int, *, inline: bool = False) -> None:
        start = self.i
        key = (*prefix, *self._key())
        self._blank(newlines=False)
        if self.i >= self.n or self.text[self.i] != "=":
            return
        self.i += 1
        self._blank(newlines=False)
        self._put(key, self.i, start if inline else None)
        self._value(key, depth)

    def _key(self) -> tuple[str, ...]:
        parts: list[str] = []
        while self.i < self.n:
            parts.append(self._key_part())
            self._blank(newlines=False)
            if self.i < self.n and self.text[self.i] == ".":
                self.i += 1
                self._blank(newlines=False)
                continue
            break
        return tuple(parts)

    def _key_part(self) -> str:
        ch, start = self.text[self.i], self.i
        if ch in "\"'":
            self.i = _string_end(self.text, self.i)
            raw = self.text[start:self.i]
            try:
                return next(iter(tomllib.loads(raw + " = 0")))   # a quoted key as TOML decodes it
            except (tomllib.TOMLDecodeError, StopIteration):
                return raw.strip("\"'")
        while self.i < self.n and self.text[self.i] in _BARE:
            self.i += 1
        return self.text[start:self.i]

    def _value(self, key: Key, depth: int) -> None:
        ch = self.text[self.i]
        if ch in "\"'":
            self.i = _string_end(self.text, self.i)
        elif ch in "[{" and depth >= _NESTING:
            self.i = _skip_nested(self.text, self.i)
        elif ch == "[":
            self.i += 1
            index = 0
            while self._blank(newlines=True) < self.n and self.text[self.i] != "]":
                if self.text[self.i] == ",":
                    self.i += 1
                    continue
                start = self.i
                self._put((*key, index), self.i)
                self._value((*key, index), depth + 1)
                index += 1
                if self.i == start:
                    self.i += 1
            self.i += 1
        elif ch == "{":
            self.i += 1
            while self._blank(newlines=False) < self.n and self.text[self.i] not in "}\n":
                if self.text[self.i] == ",":
                    self.i += 1
                    continue
                start = self.i
                self._keyval(key, depth + 1, inline=True)
                if self.i == start:
                    self.i += 1
            self.i += 1
        else:   # a number, a boolean, a date: up to what ends a value
            while self.i < self.n and self.text[self.i] not in ",]}\n#":
                self.i += 1


def _skip_nested(text: str, i: int) -> int:
    """The index just past the array or inline table that starts at `i`, strings and comments skipped."""
    depth = 0
    while i < len(text):
        ch = text[i]
        if ch in "\"'":
            i = _string_end(text, i)
            continue
        if ch == "#":
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        depth += ch in "[{"
        depth -= ch in "]}"
        i += 1
        if depth == 0:
            return i
    return i


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
    return basic_string_escapes(text, pos)[0]


def basic_string_escapes(text: str, pos: Pos) -> tuple[Pos | None, Pos | None]:
    """escape_in_basic_string; and, from the same walk of a multi-line basic string without escapes, where a line
    ends with a backslash after a comment (`#` outside the contract's double-quoted strings), or None. TOML joins the
    next line to such a line, so the file shows on that next line what the contract reads as part of the comment.
    Every line is read: a comment without the backslash on an earlier line hides nothing."""
    lines = _lines(text)
    row, col = pos.line - 1, pos.col - 1
    if not 0 <= row < len(lines):
        return None, None
    rest = lines[row][col:]
    quote = '"' * 3 if rest.startswith('"' * 3) else '"' if rest.startswith('"') else ""
    if not quote:
        return None, None
    col += len(quote)
    comment: Pos | None = None
    while row < len(lines):
        line = lines[row]
        end = line.find(quote, col)
        slash = line.find("\\", col)
        if slash >= 0 and (end < 0 or slash < end):
            if line[slash + 1:].strip(" \t") or quote == '"':
                return Pos(row + 1, slash + 1), None
        if comment is None and quote != '"':   # a one-line string ends at a line break: it has no continuation
            comment = _comment_continued(line, row, col, end)
        if end >= 0 and (slash < 0 or end < slash):
            return None, comment
        row, col = row + 1, 0
    return None, comment


def _comment_continued(line: str, row: int, col: int, end: int) -> Pos | None:
    """Where the backslash is that ends a comment on `line` (the string's part from `col`, up to `end` where it
    closes): the line continuation; None when the line holds no comment or its comment does not end so."""
    body = line[col:] if end < 0 else line[col:end]
    quoted = False
    for ch in body:
        quoted = quoted != (ch == '"')
        if ch == "#" and not quoted:
            stripped = body.rstrip(" \t")
            return Pos(row + 1, col + len(stripped)) if end < 0 and stripped.endswith("\\") else None
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
            end = j + len(delim)
            if len(delim) == 3:   # """a""""" is a"" : up to two quotes of the content may touch the closing three
                while end < len(text) and end - j < 5 and text[end] == q:
                    end += 1
            return end
        if len(delim) == 1 and text[j] == "\n":
            return j
        j += 1
    return j
