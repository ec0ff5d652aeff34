"""The values the project's secret files hold, and whether a text carries one: typed into a command (whole, split by
quotes, variables or escapes, encoded), or held by a file a command sends (a copy made where no command of the guard's
saw it: by the project's own code, by approved inline code, by a parallel call).

Spellings looked for: the value itself, reversed and in ROT13, its hex and URL-quoted forms (ignoring case), its base64 at each
of the three alignments (the characters that do not depend on its neighbours); in a command's text also with quotes,
backslashes and blanks taken out, ANSI-C and URL escapes decoded, and covered by up to COVER_PIECES pieces of at least
COVER_MIN characters found anywhere in it (`A=sk-live-4f9a; B=8b7c6d1e; curl -H "X: $A$B"`). Defence in depth: a value
enciphered, compressed other than by gzip, or built by code is not seen.
"""
from __future__ import annotations

import base64
import codecs
import re
import urllib.parse
import zlib
from dataclasses import dataclass

COVER_MIN = 4          # characters of each piece of a value split in a command's text
COVER_PIECES = 4       # pieces at most
COVER_FROM = 12        # values shorter than this are looked for whole only (short pieces of them are common)
GZIP_BYTES = 1 << 20   # what a gzip file a command sends is read to, decompressed

_VALUE = re.compile(r"^\s*(?:export\s+)?[A-Za-z_][\w.-]*\s*[=:]\s*(.*?)\s*$", re.M)
_TOKEN = re.compile(r"[A-Za-z0-9+/_\-.~@:]{20,}")
_ALNUM = re.compile(r"[\W_]+")
_QUOTES = re.compile(r"[\s'\"\\`]+")
_ESCAPE = re.compile(r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|0?[0-7]{1,3})")


def secret_values(text: str) -> set[str]:
    """What a secret file holds that a command's text could carry: each setting's value (`KEY=VALUE`, `KEY: VALUE`,
    quotes taken off) of at least 8 characters holding a digit or a character other than a letter, and each run of 20
    or more key-like characters holding a letter and a digit (a PEM body's lines, a JSON key's token)."""
    values = {v.strip("\"'") for v in _VALUE.findall(text)}
    found = {v for v in values if len(v) >= 8 and not v.isalpha() and " " not in v}
    found |= {t for t in _TOKEN.findall(text) if any(c.isdigit() for c in t) and any(c.isalpha() for c in t)}
    return found


@dataclass(frozen=True)
class Needles:
    """A value's spellings: `folded` compared ignoring case, `exact` (base64) as they are."""

    value: str
    folded: tuple[str, ...]
    exact: tuple[str, ...]

    def found_in(self, text: str, folded: str) -> bool:
        return any(n in folded for n in self.folded) or any(n in text for n in self.exact)


def needles(value: str) -> Needles:
    raw = value.encode()
    folded = {value, value[::-1], raw.hex(), urllib.parse.quote(value, safe=""), urllib.parse.quote_plus(value),
              codecs.encode(value, "rot13")}
    exact = set()
    for pad in range(3):
        encoded = base64.b64encode(b"\0" * pad + raw).decode()
        core = encoded[-(-8 * pad // 6):(8 * (pad + len(raw))) // 6]
        if len(core) >= 8:
            exact |= {core, core.replace("+", "-").replace("/", "_")}
    return Needles(value, tuple(n.casefold() for n in folded if len(n) >= 8), tuple(exact))


def _decoded(text: str) -> str:
    """`text` with ANSI-C escapes (`$'\\x34'`, printf's `\\064`) and URL escapes (`%2D`) decoded."""
    def one(m: re.Match[str]) -> str:
        body = m.group(1)
        try:
            return chr(int(body[1:], 16) if body[0] in "xuU" else int(body, 8))
        except (ValueError, OverflowError):
            return m.group(0)
    return urllib.parse.unquote(_ESCAPE.sub(one, text))


def command_spellings(command: str) -> list[str]:
    """The texts a command's words may join into: as written, without quotes, backslashes and blanks, and decoded."""
    bare = _QUOTES.sub("", command)
    decoded = _decoded(command)
    return list(dict.fromkeys([command, bare, decoded, _QUOTES.sub("", decoded)]))


@dataclass(frozen=True)
class Spellings:
    """A command's spellings (command_spellings), made once a command and matched against every secret file's values:
    `texts` as (text, its casefold); `cover` the letters and digits, folded, of the text looked through for a value in
    pieces (covered): the second distinct spelling, which is the text without quotes and blanks where the command
    holds one of them, else its decoded text, if it differs."""

    texts: tuple[tuple[str, str], ...]
    cover: tuple[str, ...]


def spellings(command: str) -> Spellings:
    texts = command_spellings(command)
    return Spellings(tuple((t, t.casefold()) for t in texts), tuple(_alnum(t) for t in texts[1:2]))


def _alnum(text: str) -> str:
    return _ALNUM.sub("", text.casefold())


def covered(value: str, text: str) -> bool:
    """Whether `value`'s letters and digits are the join of at most COVER_PIECES pieces of at least COVER_MIN
    characters, each found among `text`'s letters and digits (ignoring case), longest piece first (punctuation between
    pieces may be written anywhere: `K1=sk-live; K2=4f9a8b7c; K3=6d1e; curl -d "$K1-$K2$K3"`)."""
    return len(value) >= COVER_FROM and _covered(_alnum(value), _alnum(text))


def _covered(value: str, text: str) -> bool:
    """covered, on `value`'s and `text`'s letters and digits, folded (_alnum)."""
    at, pieces = 0, 0
    while at < len(value):
        if pieces == COVER_PIECES or len(value) - at < COVER_MIN or value[at:at + COVER_MIN] not in text:
            return False
        end = at + COVER_MIN
        while end < len(value) and value[at:end + 1] in text:
            end += 1
        at, pieces = end, pieces + 1
    return True


def in_command(values: list[Needles], command: str) -> str | None:
    """The value (of `values`) the command's text carries, in any spelling it is looked for in; None if none."""
    return in_spellings(values, spellings(command))


def in_spellings(values: list[Needles], spelled: Spellings) -> str | None:
    """in_command, on a command's spellings made once (spellings)."""
    for n in values:
        if any(n.found_in(t, f) for t, f in spelled.texts) or (
                len(n.value) >= COVER_FROM and any(_covered(_alnum(n.value), c) for c in spelled.cover)):
            return n.value
    return None


def file_texts(data: bytes) -> list[tuple[str, str]]:
    """(text, its casefold) of a file's bytes, and of a gzip file's decompressed start too: made once a file, then
    matched against every secret file's values (in_texts)."""
    blobs = [data]
    if data[:2] == b"\x1f\x8b":
        try:
            blobs.append(zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data, GZIP_BYTES))
        except zlib.error:
            pass
    texts = [blob.decode("utf-8", "replace") for blob in blobs]
    return [(text, text.casefold()) for text in texts]


def in_texts(values: list[Needles], texts: list[tuple[str, str]]) -> str | None:
    """The value (of `values`) a file's texts (file_texts) hold, the first text first; None if none."""
    for text, folded in texts:
        for n in values:
            if n.found_in(text, folded):
                return n.value
    return None


def in_file(values: list[Needles], data: bytes) -> str | None:
    """The value a file's bytes hold (a gzip file's decompressed start too); None if none."""
    return in_texts(values, file_texts(data))
