"""Constant tables beside a spec (JSON or CSV) -> `Table` values."""
from __future__ import annotations

import csv
import functools
import hashlib
import io
import json
import re
import unicodedata
from pathlib import Path
from typing import Any

from veriguard.contracts import strict_json
from veriguard.contracts.errors import NOWHERE, Pos, SpecError
from veriguard.contracts.parse import MAX_INT_DIGITS
from veriguard.contracts.regular_file import FileRefused, read_regular_file
from veriguard.contracts.signature import Table, Value
from veriguard.contracts.types import MAX_TEXT, BoolT, EnumT, IntT, Scalar
from veriguard.contracts.shown import (ENCLOSED_RANGES, address_written_otherwise, ascii_form, invisible_beside,
                                       joined_to_ascii, latin_compat, latin_form)
from veriguard.enforce.textnorm import map_lookalikes

SHOWN_FIX = "delete the character (or write the text without it): a spec must read as it is shown"


# scripts with letters that read as Latin ones (enforce.textnorm's look-alikes): Cyrillic а, Greek ο, Cherokee Ꭺ ...
_LATIN_LOOKING_SCRIPTS = ("CYRILLIC", "GREEK", "ARMENIAN", "CHEROKEE", "LISU", "LATIN LETTER SMALL CAPITAL")
# symbols that frame a Latin letter (circled ⓔ, parenthesized ⒠, squared 🄴, negative 🅴) read as the letter in a word;
# Unicode keeps them in its two Enclosed Alphanumerics blocks (regional indicators are flags, not letters)
_FRAMED = frozenset(c for lo, hi in ENCLOSED_RANGES for c in map(chr, range(lo, hi + 1))
                    if not c.isalnum() and latin_form(c) is not None)
_WORD = re.compile(rf"(?:[^\W_]|[{re.escape(''.join(sorted(_FRAMED)))}])+")


def _shows_as_ascii(ch: str, scripts: tuple[str, ...], *, digits: bool) -> bool:
    """A character that is not ASCII but shows as an ASCII letter (or, with `digits`, a decimal digit): a full-width or
    mathematical form (NFKC folds it to ASCII), or a look-alike (enforce.textnorm) whose name starts with one of
    `scripts`."""
    if ch.isascii():
        return False
    folded = unicodedata.normalize("NFKC", ch)
    return ch in _FRAMED or (folded.isascii() and (folded.isalpha() or (digits and ch.isdecimal()))) or (
        map_lookalikes(ch).isascii() and unicodedata.name(ch, "").startswith(scripts))


def _reads_as_latin(ch: str) -> bool:
    """A letter that is not ASCII but shows as an ASCII one: a full-width or mathematical letter (NFKC folds it to
    ASCII), or a letter of another script that looks Latin (Cyrillic е, Greek ο)."""
    return _shows_as_ascii(ch, _LATIN_LOOKING_SCRIPTS, digits=False)


# letters a person cannot tell from ASCII ones in a word written wholly with them (`сор` reads cop, `ΚΑΙ` KAI): those of
# enforce.textnorm's look-alikes whose shapes match, not the ones that merely resemble (Cyrillic т н к, Greek α β γ ι)
_SAME_SHAPE = frozenset("аеорсухіјѕһԁԛԝӏүАВЕКМНОРСТХІЈЅҮԚԜ" "οϲϳρχνΑΒΕΖΗΙΚΜΝΟΡΤΥΧϹ" "օսհոՕՍ")
_SAME_SHAPE_SCRIPTS = ("CHEROKEE", "LISU", "LATIN LETTER SMALL CAPITAL")


def _same_shape(ch: str) -> bool:
    """A character that is not ASCII and shows as an ASCII letter or digit: a full-width, mathematical or ligature
    form (NFKC folds it to ASCII), a letter of _SAME_SHAPE, or a Cherokee, Lisu or small-capital look-alike."""
    return ch in _SAME_SHAPE or _shows_as_ascii(ch, _SAME_SHAPE_SCRIPTS, digits=True)   # _SAME_SHAPE: none ASCII


# scripts a word may mix with ASCII letters (UTS 39's highly restrictive level: Latin with Han, kana or Hangul)
_MIXES_WITH_LATIN = ("LATIN", "CJK", "HIRAGANA", "KATAKANA", "HANGUL", "HALFWIDTH KATAKANA", "HALFWIDTH HANGUL")


def _other_script_letter(word: str) -> str | None:
    """In a word holding ASCII letters, a letter of a script that does not mix with Latin (Coptic ⲟ in `gⲟⲟgle`), or
    None: browsers refuse such labels whatever the letter's shape, since no list of look-alikes is complete."""
    if not any(c.isascii() and c.isalpha() for c in word):
        return None
    return next((c for c in word if c.isalpha() and not c.isascii()
                 and not _of_scripts(unicodedata.name(c, ""), _MIXES_WITH_LATIN)), None)


def _of_scripts(name: str, scripts: tuple[str, ...]) -> bool:
    """A letter's Unicode name of one of `scripts` (_MIXES_WITH_LATIN, _RECOMMENDED), or of a sign used as a letter
    (micro: `5µs`)."""
    return name.startswith(scripts) or " SIGN" in name


def _no_other_script(text: str) -> bool:
    """Whether nothing in `text` shows another script: each letter or digit is ASCII or _same_shape (`сор`, `ехе
    files`). Beside letters only other scripts have (`ООО Ромашка`), a reader knows the script."""
    return all(c.isascii() or _same_shape(c) for c in text if c.isalnum())   # framed letters: _same_shape, none fails


def shown_otherwise(text: str) -> tuple[str, str] | None:
    """Why `text` shows a person other letters than the ones it compares with, and the word or character that does
    (None when none does): a word that mixes ASCII letters or digits with letters that only look like them
    (`еvil.com` with a Cyrillic е shows evil.com and never equals it), or an invisible character beside ASCII text
    (`evil` U+200B `.com`) or in a text with nothing visible, or a word written wholly with letters of _SAME_SHAPE
    where it reads as ASCII (joined_to_ascii or _no_other_script: `сор`, `ｅｖｉｌ.com`). A rule `recipient != "еvil.com"` showed evil.com denied
    and was proved allowing it. Other scripts' own words (Платежи, José, αβγ) and the invisible joiners and selectors
    between their characters (emoji sequences, Persian ZWNJ, ❤ U+FE0F) read as written."""
    if text.isascii():   # neither check can fire: no letter or invisible character here is other than ASCII
        return None
    no_other_script: bool | None = None
    for m in _WORD.finditer(text):
        word = m.group()
        if word.isascii():
            continue
        if any(c.isascii() for c in word):
            odd = next((c for c in word if _reads_as_latin(c)), None)
            if odd is not None:
                return (f"the word {word!r} mixes ASCII with {_named(odd)}, which looks like the ASCII letter "
                        f"{_latin_of(odd)!r} and is not it", word)
            digit = next((c for c in word if not c.isascii() and c.isdecimal()), None)
            if digit is not None:   # UTS 39: one word, one numbering system (Devanagari ० in g००gle shows as o or 0)
                return (f"the word {word!r} mixes ASCII with {_named(digit)}, a digit of another numbering system, "
                        "which shows as an ASCII letter or digit and is not one", word)
            other = _other_script_letter(word)
            if other is not None:
                return (f"the word {word!r} mixes ASCII letters with {_named(other)}, a letter of another script: "
                        "a look-alike no list holds (Coptic ⲟ) shows as the ASCII letter", word)
        elif word.isdecimal() and joined_to_ascii(text, *m.span()):   # `०.com`, `١٢٣-45`
            return (f"the word {word!r} is written with digits of another numbering system ({_named(word[0])}) "
                    "joined to ASCII text, where they show as ASCII letters or digits and are not", word)
        elif all(_same_shape(c) for c in word):
            # read as an ASCII word: joined to ASCII (joined_to_ascii), or nothing in `text` shows another script;
            # that second answer does not depend on the word, so it is read once, when first needed
            if not joined_to_ascii(text, *m.span()):
                if no_other_script is None:
                    no_other_script = _no_other_script(text)
                if not no_other_script:
                    continue
            return (f"the word {word!r} is written wholly with letters that look like ASCII ones "
                    f"({', '.join(_named(c) for c in dict.fromkeys(word))[:200]}): it shows "
                    f"{''.join(_latin_of(c) for c in word)!r} and never equals it", word)
    hidden = invisible_beside(text)
    return None if hidden is None else (f"{_named(hidden)} is invisible: the text shows without it, and compares with it",
                                        hidden)


def compared_otherwise(value: str) -> str | None:
    """Why a value the policy compares with `==` (a rule's string, an enum value, a table's cell) shows what it does
    not equal, or None: not in NFC (`josé` with a combining accent shows as the agent's josé and never equals it) or a
    space that is not U+0020 or a line break (`rm` U+00A0 `-rf` and `rm` TAB `-rf` show as `rm -rf`). The policy compares code points; only what reads
    as written can be denied as written. (shown_otherwise is the callers': read alone, a rule's `"сор"` is refused
    though another rule's message is Russian.)"""
    plain = value.isascii()
    # str.isspace holds for every Zs character (Python defines it so), so it needs no category test
    space = next((c for c in "\t\r\v\f" if c in value), None) or (None if plain else next(
        (c for c in value if not c.isascii() and c.isspace()), None))
    if space is not None:
        return f"it holds {_named(space)}, which shows as a space and is not one"
    if value != value.strip():
        return ("it begins or ends with a space or a line break, which shows as nothing (in a table's cell, a JSON key) "
                "and which a tool strips: the agent's name never equals it")
    if plain:
        readings = address_written_otherwise(value)
        if readings is None:
            return None
        address = " or ".join(readings)
        return (f"it is the IP address {address} written otherwise (octal, hex or zero-padded parts): a tool reads it "
                f"as {address} and an agent's {address} never equals it; write the address as {readings[0]}")
    if not unicodedata.is_normalized("NFC", value):
        return (f"it is not in Unicode's composed form (NFC): it shows as {unicodedata.normalize('NFC', value)!r}, "
                "which an agent's text spells with other code points, and never equals it")
    compat = latin_compat(value, where_read_as_ascii=True)
    if compat is not None:
        return (f"it holds {_named(compat)}, a compatibility form of the ASCII {ascii_form(compat)!r}: it shows "
                "(and IDNA reads it) as that character, and never equals the agent's")
    rare = None if _SURELY_RECOMMENDED.fullmatch(value) else next(
        (c for c in value if c.isalpha() and not _recommended(c)), None)
    if rare is not None:
        return (f"it holds {_named(rare)}, a letter of a script Unicode does not recommend for identifiers (UAX 31): "
                "no list tells its letters from Latin ones (Coptic ⲥⲟⲣ shows cop)")
    return None


# UAX 31's recommended scripts (Table 5) by the names of their letters, with the modifier letters and signs used as
# letters (µ) that Latin text holds: a value the policy compares may be written in any of them
_RECOMMENDED = _MIXES_WITH_LATIN + (
    "MODIFIER LETTER", "ARABIC", "ARMENIAN", "BENGALI", "BOPOMOFO", "CYRILLIC", "DEVANAGARI", "ETHIOPIC", "GEORGIAN",
    "GREEK", "GUJARATI", "GURMUKHI", "IDEOGRAPHIC", "HEBREW", "KANNADA", "KHMER", "LAO", "MALAYALAM", "MYANMAR", "ORIYA",
    "SINHALA", "TAMIL", "TELUGU", "THAANA", "THAI", "TIBETAN")


# Latin, IPA, Greek (bar its Coptic letters, U+03E2-03EF), Cyrillic and Armenian: no letter here needs a name read
_SURELY_RECOMMENDED = re.compile("[\x00-\u03e1\u03f0-\u058f]*")


@functools.lru_cache(maxsize=4096)   # read once per letter: a 100,000-row table repeats its alphabet
def _recommended(letter: str) -> bool:
    """Whether a letter (its compatibility form's first letter: full-width Ａ is Latin) is of _RECOMMENDED."""
    name = unicodedata.name(unicodedata.normalize("NFKC", letter)[:1] or letter, "")
    return _of_scripts(name, _RECOMMENDED)


COMPARED_FIX = ("write it in NFC (composed accents) with plain spaces (U+0020), ASCII letters for Latin ones and letters of "
                "a script UAX 31 recommends: the policy compares it as written")


def compared_problem(value: str) -> tuple[str, str] | None:
    """Why a value the policy compares shows what it does not equal (shown_otherwise, then compared_otherwise) and its
    fix (SHOWN_FIX or COMPARED_FIX), or None. (specfile.compared_literals gives COMPARED_FIX for either.)"""
    shown = shown_otherwise(value)
    if shown is not None:
        return shown[0], SHOWN_FIX
    odd = compared_otherwise(value)
    return None if odd is None else (odd, COMPARED_FIX)


def _named(ch: str) -> str:
    return f"U+{ord(ch):04X} ({unicodedata.name(ch, _CONTROL_NAMES.get(ch, 'unnamed')).lower()})"


_CONTROL_NAMES = {"\t": "tab", "\r": "carriage return", "\v": "line tabulation", "\f": "form feed"}


def _latin_of(ch: str) -> str:
    folded = unicodedata.normalize("NFKC", ch)
    return folded if folded.isascii() else map_lookalikes(ch)


def _line_of(raw: str, value: object) -> Pos:
    needle = json.dumps(value) if isinstance(value, str) else str(value)
    idx = raw.find(needle)
    if idx < 0 and isinstance(value, str) and value.strip():
        idx = raw.find(value)   # a CSV cell, or JSON text holding the letters unescaped
    if idx < 0:
        return Pos(0, 0)
    line = raw.count("\n", 0, idx) + 1
    return Pos(line, idx - (raw.rfind("\n", 0, idx) + 1) + 1)


class _Reader:
    def __init__(self, name: str, file: Path, raw: str, params: tuple[Scalar, ...], result: Scalar) -> None:
        self.name, self.file, self.raw, self.params, self.result = name, file, raw, params, result

    def fail(self, message: str, value: object, fix: str, code: str = "spec.table") -> SpecError:
        return SpecError(code, f"table {self.name}: {message}", file=str(self.file),
                         pos=_line_of(self.raw, value), fix=fix)

    def convert(self, value: Any, t: Scalar, what: str) -> Value:
        if isinstance(t, BoolT):
            if isinstance(value, bool):
                return value
            if isinstance(value, str) and value.lower() in ("true", "false"):
                return value.lower() == "true"
            raise self.fail(f"{what} {value!r} is not a bool", value, "write true or false")
        if isinstance(t, IntT):
            if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 10 ** MAX_INT_DIGITS:
                return value
            if isinstance(value, str) and re.fullmatch(rf"\s*-?[0-9]{{1,{MAX_INT_DIGITS}}}\s*", value):
                return int(value)
            shown = value if not isinstance(value, int) or abs(value) < 10 ** 30 else "(a huge number)"
            raise self.fail(f"{what} {shown!r} is not an integer of at most {MAX_INT_DIGITS} digits", shown,
                            "write a whole number")
        if not isinstance(value, str):
            raise self.fail(f"{what} {value!r} is not a string", value, "quote it")
        problem = compared_problem(value)
        if problem is not None:
            raise self.fail(f"{what} {value!r}: {problem[0]}", value, problem[1], code="spec.hidden_text")
        if len(value) > MAX_TEXT:
            raise self.fail(f"{what} {value[:30]!r}... has {len(value):,} characters; at most {MAX_TEXT} are supported",
                            value, "keep the table's strings short (names, ids, paths)")
        if isinstance(t, EnumT) and value not in t.values:
            raise self.fail(f"{what} {value!r} is not a value of {t.name}", value,
                            f"use one of {', '.join(map(repr, t.values))}, or add it to the enum")
        return value

    def key(self, parts: list[Any]) -> tuple[Value, ...]:
        return tuple(self.convert(v, t, f"key {i + 1}") for i, (v, t) in enumerate(zip(parts, self.params)))

    def from_nested(self, data: Any, prefix: list[Any]) -> list[tuple[tuple[Value, ...], Value]]:
        depth = len(prefix)
        relation = isinstance(self.result, BoolT)
        if depth == len(self.params) - 1 and relation and isinstance(data, list):
            return [(self.key(prefix + [v]), True) for v in data]
        if depth == len(self.params):
            return [(self.key(prefix), self.convert(data, self.result, "value"))]
        if not isinstance(data, dict):
            raise self.fail(f"expected an object keyed by parameter {depth + 1} ({self.params[depth]}), got {data!r}",
                            data, "nest one object level per parameter; a relation's last level may be a list")
        rows = []
        for k, v in data.items():
            if _is_note(k, v, leaf=depth == len(self.params) - 1):
                continue
            rows += self.from_nested(v, prefix + [k])
        return rows

    def comment(self, row: list[str], line: int) -> bool:
        """Whether a CSV row whose first cell starts with `#` is a comment: only where that cell can be no key of
        the first parameter (an int, a bool, an enum without that value). In a table keyed by str it could be either,
        and a key read as a comment silently took the table's default (a value table's, perhaps its most permissive)."""
        first = self.params[0]
        if isinstance(first, (IntT, BoolT)) or (isinstance(first, EnumT) and row[0] not in first.values):
            return True
        if isinstance(first, EnumT):
            return False
        raise SpecError("spec.table", f"table {self.name}: the row {','.join(row)[:60]!r} starts with '#': in a table "
                        "keyed by str it may be a key or a comment", file=str(self.file), pos=Pos(line, 1),
                        fix="delete the comment lines of this table (a key that starts with # is then read as a key)")

    def header(self, rows: list[list[str]]) -> None:
        """SpecError when the first row, which is read as the header and dropped, reads as a row of data in a column
        whose header could never: a table written without a header lost its first row (to the default)."""
        if not rows:
            return
        columns = (*self.params, self.result)[:len(rows[0])]
        if len(rows[0]) not in (len(self.params), len(self.params) + 1) or \
                not any(isinstance(t, (IntT, BoolT)) for t in columns):
            return
        try:
            self.from_rows([list(rows[0])])
        except SpecError:
            return
        raise SpecError("spec.table_csv", f"table {self.name}: the first line {','.join(rows[0])[:80]!r} is read as "
                        "the header and dropped, but it reads as a row of the table", file=str(self.file), pos=Pos(1, 1),
                        fix="add a header line naming the columns (e.g. `key,value`) above the first row, or set "
                            "`header = false` on the table when every line is a row")

    def from_rows(self, rows: list[list[Any]]) -> list[tuple[tuple[Value, ...], Value]]:
        n = len(self.params)
        relation = isinstance(self.result, BoolT)
        out: list[tuple[tuple[Value, ...], Value]] = []
        for row in rows:
            if not isinstance(row, list):
                raise self.fail(f"row {row!r} is not a list", row, "write each row as a list of values")
            if relation and len(row) == n:
                out.append((self.key(row), True))
            elif len(row) == n + 1:
                out.append((self.key(row[:n]), self.convert(row[n], self.result, "value")))
            else:
                raise self.fail(f"row {row!r} has {len(row)} columns, expected {n}" + ("" if not relation else
                                f" (or {n + 1} with a result)"), row[0] if row else row, "fix the row")
        return out


def _is_note(key: str, value: Any, *, leaf: bool) -> bool:
    """A note such as `"_note": "..."`: a key starting with `_` holding a string where the table has objects (or a
    relation's lists), so no row. Where a string could be a row (the last parameter's level) every key is data: a
    key `_vip` read as a note silently took the table's default."""
    return key.startswith("_") and isinstance(value, str) and not leaf


def _strict_json(name: str, file: Path, raw: str) -> Any:
    """The table's JSON, read strictly (contracts/strict_json.py): a key twice in one object, NaN or Infinity,
    an integer of thousands of digits or nesting the parser cannot follow is an error at the file, not a value
    another reader of the same bytes would not see."""
    try:
        return strict_json.loads(raw)
    except strict_json.StrictJSONError as e:
        fix = ("keep the key once in its object, with the value the table means" if e.message.startswith("duplicate key")
               else "write strict JSON: each key once per object, whole numbers of at most 4,300 digits, no NaN or "
                    "Infinity, nested objects keyed by the table's parameters")
        raise SpecError("spec.table_json", f"table {name}: {e.message}", file=str(file),
                        pos=Pos(e.line, e.col) if e.line else NOWHERE, fix=fix) from None


def load_table(name: str, file: Path, params: tuple[Scalar, ...], result: Scalar, *, path: str = "",
               default: Value | None = None, doc: str = "", pos: Pos = NOWHERE, header: bool = True) -> Table:
    """Read `file` (JSON nested objects / row lists, or CSV) into a Table. A CSV's first line is its header, dropped,
    unless `header` is False (the spec's `header = false`): then every line is a row."""
    try:
        data_bytes = read_regular_file(file)
    except FileRefused as e:
        raise SpecError("spec.table_file", f"table {name}: {e.why}", file=str(file),
                        fix=f"{e.fix}: put the table beside the spec and give its path relative to the spec") from None
    try:
        raw = data_bytes.decode("utf-8")
        if file.suffix.lower() == ".csv":   # a byte-order mark is no part of the first cell (with header = false, a key)
            raw = raw.removeprefix("\ufeff")
    except UnicodeDecodeError as e:
        raise SpecError("spec.table_file", f"table {name}: {file.name} is not UTF-8 text (byte {e.start})",
                        file=str(file), fix="save the table as UTF-8 JSON or CSV") from None
    reader = _Reader(name, file, raw, params, result)
    if file.suffix.lower() == ".csv":
        try:
            cells = csv.reader(io.StringIO(raw))
            lines = [(cells.line_num, r) for r in cells]   # (the row's last line, the row)
        except csv.Error as e:
            raise SpecError("spec.table_csv", f"table {name}: {e}", file=str(file), fix="fix the CSV") from None
        if header:
            reader.header([r for _, r in lines[:1]])
        rows = [r for line, r in lines[1 if header else 0:]
                if r and not (r[0].startswith("#") and reader.comment(r, line))]
        data_rows = reader.from_rows(rows)
    else:
        data = _strict_json(name, file, raw)
        for part in filter(None, path.split(".")):
            if not isinstance(data, dict) or part not in data:
                raise SpecError("spec.table_path", f"table {name}: key {part!r} not found in {file.name}", pos=pos,
                                fix="set `path` to the dotted key that holds the table, or remove it")
            data = data[part]
        data_rows = reader.from_rows(data) if isinstance(data, list) and data and isinstance(data[0], list) \
            else reader.from_nested(data, [])
    if isinstance(result, BoolT):
        default_value: Value = False if default is None else default
    elif default is None:
        raise SpecError("spec.table_default", f"table {name} returns {result}; it needs a `default` for missing keys",
                        pos=pos, fix="add e.g. `default = 0` to the table")
    else:
        default_value = reader.convert(default, result, "default")
    seen: dict[tuple[Value, ...], Value] = {}
    for key, value in data_rows:
        if key in seen and seen[key] != value:
            raise reader.fail(f"key {key!r} has two values ({seen[key]!r} and {value!r})", key[0], "keep one")
        seen[key] = value
    entries = tuple(sorted(seen.items(), key=repr))
    if not entries:
        raise SpecError("spec.table_empty", f"table {name} has no rows", file=str(file), fix="fill the table")
    return Table(name, params, result, entries, default_value, doc, str(file), pos, hashlib.sha256(data_bytes).hexdigest())
