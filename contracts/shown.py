"""Characters that show otherwise than they compare, read alike by synth (a spec's strings) and by the loader (an
agent's arguments): the policy compares code points, so text that shows another string than it is can neither be
denied nor allowed as shown. Stdlib only (the online side imports it)."""
from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from urllib.parse import unquote

# default-ignorable code points that are not format controls (category Cf counts as a whole): combining grapheme
# joiner, Hangul fillers, Khmer inherent vowels, Mongolian selectors, braille blank, variation selectors, tags
_IGNORABLE_RANGES = ((0x034F, 0x034F), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F), (0x2800, 0x2800),
                     (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFFA0, 0xFFA0), (0xE0000, 0xE0FFF))
_IGNORABLE = frozenset(cp for lo, hi in _IGNORABLE_RANGES for cp in range(lo, hi + 1))
_PRINTABLE_IGNORABLE = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in _IGNORABLE_RANGES) + "]")
# Unicode keeps the symbols that frame a Latin letter (ⓔ ⒠ 🄴 🅴) in its two Enclosed Alphanumerics blocks
ENCLOSED_RANGES = ((0x2460, 0x24FF), (0x1F100, 0x1F1FF))
_ENCLOSED = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in ENCLOSED_RANGES) + "]")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def is_invisible(ch: str) -> bool:
    """A format control or another default-ignorable code point: it shows as nothing (U+200B, U+00AD, U+FE0F)."""
    return ord(ch) in _IGNORABLE or unicodedata.category(ch) == "Cf"


def invisible_beside(text: str, *, spaces_too: bool = True) -> str | None:
    """An invisible character of `text` beside an ASCII character (but for `spaces_too`, one that is not a space), or
    in a text with nothing visible, or None: `evil.com` U+200B shows evil.com and compares otherwise. Between other
    scripts' characters (an emoji's ZWJ sequence, Persian ZWNJ, ❤ U+FE0F) it is part of how they are written."""
    if text.isascii() or (_printable(text) and not _PRINTABLE_IGNORABLE.search(text)):
        return None   # str.isprintable is false for every format control (Cf): the others are the ranges above
    visible = False
    for i, ch in enumerate(text):
        if ch.isascii() or not is_invisible(ch):
            visible = True
        elif any(c.isascii() and (spaces_too or not c.isspace()) for c in text[max(i - 1, 0):i] + text[i + 1:i + 2]):
            return ch
    return None if visible else text[0]   # nothing visible: every character is invisible, the first one too


def _printable(text: str) -> bool:
    """str.isprintable, but for line breaks and tabs (C loops only: a character loop in Python took 1 ms for 2,000)."""
    return text.isprintable() or text.replace("\n", "").replace("\r", "").replace("\t", "").isprintable()


def latin_form(ch: str) -> str | None:
    """The ASCII letter a character that is not ASCII stands for as a compatibility or framed form, or None: full-width
    ｅ, mathematical 𝐞, modifier ᵉ, circled ⓔ, parenthesized ⒠, squared 🄴 (NFKC folds each to the letter, bar the
    frame's parentheses), negative circled 🅔 and negative squared 🅴 (symbols named for the Latin letter). IDNA and a
    reader take each for the letter; other signs (™, ², ①, ℃) fold to more or other than one letter."""
    if ch.isascii():
        return None
    folded = unicodedata.normalize("NFKC", ch).removeprefix("(").removesuffix(")")
    if len(folded) == 1 and folded.isascii() and folded.isalpha():
        return folded
    name = unicodedata.name(ch, "")
    if unicodedata.category(ch) == "So" and " LATIN " in f" {name}" and " LETTER " in name:
        return name[-1]
    return None


def ascii_form(ch: str) -> str | None:
    """latin_form, or the ASCII digit a decimal digit that is not ASCII folds to (full-width １, mathematical 𝟏); other
    scripts' digits (Arabic-Indic ٣) and superscripts (²) fold to none or are not decimal."""
    letter = latin_form(ch)
    if letter is not None or ch.isascii() or not ch.isdecimal():
        return letter
    folded = unicodedata.normalize("NFKC", ch)
    return folded if folded.isascii() else None


def latin_compat(text: str, *, where_read_as_ascii: bool = False) -> str | None:
    """The first character of `text` that is a compatibility or framed form of an ASCII letter or digit (ascii_form),
    or None. With `where_read_as_ascii`, only one joined to ASCII letters or digits without a space (`ｊｏｓé.com`), or
    in a text whose every letter and digit is ASCII or such a form (`ｅｖｉｌ．ｃｏｍ`): Japanese text writes Latin
    letters and digits full-width among its own (`ＡＢＣ株式会社`, `２０２４年`), and those read as written."""
    if text.isascii():
        return None
    folds = not unicodedata.is_normalized("NFKC", text)   # else only a framed symbol (🅴, which NFKC keeps) can be one
    if not folds and not _ENCLOSED.search(text):
        return None
    alone: bool | None = None
    for i, ch in enumerate(text):
        if ch.isascii() or ascii_form(ch) is None:
            continue
        if not where_read_as_ascii or joined_to_ascii(text, i, i + 1):
            return ch
        if alone is None:
            alone = all(c.isascii() or ascii_form(c) is not None for c in text if c.isalnum())
        if alone:
            return ch
    return None


def joined_to_ascii(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] is joined to ASCII letters or digits without a space (`рау.com`)."""
    while start and not text[start - 1].isspace():
        start -= 1
    while end < len(text) and not text[end].isspace():
        end += 1
    return any(c.isascii() and c.isalnum() for c in text[start:end])


# IDNA (UTS 46) maps these to the label separator `.`; NFKC keeps them
_IDNA_DOTS = "\u3002\uff61"
# the blocks holding every character NFKC folds to one ASCII sign (test_spec_lead30 checks all of Unicode)
SIGN_BLOCKS = ((0x037E, 0x037E), (0x1FEF, 0x1FEF), (0x2000, 0x20FF), (0xFB00, 0xFB4F), (0xFE10, 0xFE6F),
               (0xFF00, 0xFF65))


def _folds_to_sign(ch: str) -> str:
    folded = unicodedata.normalize("NFKC", ch)
    return folded if len(folded) == 1 and folded.isascii() and not folded.isalnum() and not folded.isspace() else ""


_SIGNS = {ch: sign for lo, hi in SIGN_BLOCKS for ch in map(chr, range(lo, hi + 1)) if (sign := _folds_to_sign(ch))}
_SIGNS.update(dict.fromkeys(_IDNA_DOTS, "."))
_SIGN = re.compile("[" + re.escape("".join(_SIGNS)) + "]")


def sign_of(ch: str) -> str:
    """The ASCII sign a character that is not ASCII stands for (`．` `․` `。` `｡` are `.`, `＠` is `@`), or ''."""
    return _SIGNS.get(ch, "")


def separator_form(text: str) -> str | None:
    """The first character of `text` that stands for an ASCII sign but is none (full-width `．` `＠` `：`, small `﹒`, the
    leader `․`, which NFKC folds to the sign; ideographic `。` and `｡`, which IDNA takes for `.`) written after an
    ASCII letter or digit and before an ASCII sign, letter or digit (`https：//`), or after a letter or digit and
    before an ASCII one (`josé｡com` is josé.com to IDNA and a reader), or None. After other scripts' words, before
    them or beside a space (`東京。`, `3.12。次`, `株式会社．`) it ends a sentence as written."""
    for found in _SIGN.finditer(text):
        i = found.start()
        before, after = text[i - 1:i], text[i + 1:i + 2]
        if (before.isascii() and before.isalnum() and after.isascii() and after.isprintable() and not after.isspace()
                or after.isascii() and after.isalnum() and before.isalnum()):
            return found.group()
    return None


# where Unicode keeps the letters named LATIN LETTER SMALL CAPITAL X (ᴀ ʙ ꜰ ꞯ), which IDNA keeps and a reader takes for X
_SMALL_CAPITAL_BLOCKS = ((0x0250, 0x02AF), (0x1D00, 0x1D7F), (0xA720, 0xA7FF), (0x1DF00, 0x1DFFF))
_SMALL_CAPITAL = "LATIN LETTER SMALL CAPITAL "


@lru_cache(maxsize=1)
def _spelling_table() -> tuple[re.Pattern[str], dict[str, str]]:
    """spelling_key's other letters: small capitals to their letter, IDNA's other dots to `.` (a pattern finds them:
    str.translate with a dict took 1 ms for 2,000 Cyrillic letters)."""
    table = {chr(cp): name[-1].lower() for lo, hi in _SMALL_CAPITAL_BLOCKS for cp in range(lo, hi + 1)
             if (name := unicodedata.name(chr(cp), "")).startswith(_SMALL_CAPITAL) and len(name) == len(_SMALL_CAPITAL) + 1}
    table.update(dict.fromkeys(_IDNA_DOTS, "."))
    return re.compile("[" + "".join(table) + "]"), table


def spelling_key(text: str) -> str:
    """The name `text` is to IDNA (UTS 46 / nameprep), a mail server and a reader: case folded, NFKC (full-width,
    mathematical), invisible characters dropped, spaces of any kind around it stripped, small capitals and IDNA's dots
    read as their letter and `.`, a DNS root dot dropped, punycode (`xn--`) labels decoded. Two strings with one key
    name one thing to a tool that maps names, though the policy compares them as other strings."""
    return visible_spelling_key(visible(text))


def visible_spelling_key(text: str) -> str:
    """spelling_key of a text that has no invisible characters (what visible returns): a caller that has read the
    visible text for another reason keys it without reading it again. An ASCII text's key is the same by either
    branch (NFKC and casefold read ASCII as lower(); the table holds no ASCII character)."""
    if text.isascii():
        key = text.strip().lower()
    else:
        key = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
        others, table = _spelling_table()
        key = others.sub(lambda m: table[m.group()], key).strip()
    if key.endswith(".") and "." in key.rstrip("."):
        key = key.rstrip(".")
    return _unpunycoded(key) if "xn--" in key else key


def visible(text: str) -> str:
    """`text` without its invisible characters (is_invisible), read in C where it has none: no ASCII character is a
    format control or default-ignorable, so only the others are read (enforce.textnorm.strip_invisible is this)."""
    if text.isascii() or _printable(text) and not _PRINTABLE_IGNORABLE.search(text):
        return text
    return _NON_ASCII.sub(lambda m: "" if is_invisible(m.group()) else m.group(), text)


def _unpunycoded(name: str) -> str:
    """`name` with each `xn--` label decoded (xn--jos-dma is josé), one that does not decode or is longer than a DNS
    label kept as it is."""
    labels = name.split(".")
    for i, label in enumerate(labels):
        if label.startswith("xn--") and label.isascii() and len(label) <= 63:   # DNS's longest label
            try:
                labels[i] = label[4:].encode("ascii").decode("punycode")
            except UnicodeError:
                pass
    return ".".join(labels)


@lru_cache(maxsize=1)
def _prototypes() -> tuple[re.Pattern[str], dict[str, str], list[str]]:
    """The confusables' sources as one character class, their prototypes, and the ASCII characters' own as a list for
    str.translate (a dict took 11 µs for 17 ASCII characters, each miss a KeyError)."""
    from veriguard.contracts.confusables import PROTOTYPES   # 2,527 characters: read on the first look-alike key
    sources = re.compile("[" + "".join(map(re.escape, PROTOTYPES)) + "]")
    return sources, PROTOTYPES, [PROTOTYPES.get(chr(cp), chr(cp)) for cp in range(128)]


def look_alike_key(text: str) -> str:
    """UTS #39's skeleton of `text`'s spelling_key: each character that looks like another (Cyrillic `р` `а` `у` `Ь`,
    Greek `ο`, Cherokee `Ꮲ`, `1` and `l`) read as it, so `раураl.com`, `РАУРАL.СОМ` and `paypal.com` have one key.
    The map runs before the key (capitals that look like a letter their small form does not: Cyrillic Ь is b, ь is
    not) and after it (punycode decoded, case folded: a prototype may be a capital, Ꮲ is P)."""
    return _skeleton(spelling_key(_skeleton(unicodedata.normalize("NFKC", text))))


def _skeleton(text: str) -> str:
    sources, prototypes, ascii_prototypes = _prototypes()
    if text.isascii():   # NFD keeps ASCII, and an ASCII character's prototype, as it is
        return text.translate(ascii_prototypes)
    mapped = sources.sub(lambda m: prototypes[m.group()], unicodedata.normalize("NFD", text))
    return unicodedata.normalize("NFD", mapped)


# a URL's or mail address's authority: a scheme with `//` or `mailto:`, then who (`user:pw@`), then the host (an IPv6
# address in brackets, or up to a port, path, query or fragment); without a scheme, `x:8080` is a host and a port
_AUTHORITY = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://|//|mailto:)?(?:[^/?#]*@)?(?P<host>\[[^\]/?#]*\]|[^/?#:@\[\]]*)",
                        re.IGNORECASE)


def named_hosts(text: str) -> list[str]:
    """The names a tool reads out of `text` (_hosts_as_written), those a browser reads out of it when it differs, and
    those a mail program reads out of it (_as_mail_addresses): the WHATWG URL parser drops C0 controls and spaces
    around a URL and tabs and line breaks anywhere in it, and for a special scheme reads `\\` as `/` and any number of
    slashes after the colon (`https:paypal.com`, `https:\\\\paypal.com`, `https://pay<TAB>pal.com`). Parsers disagree
    (Python's urlsplit reads `https://a.com\\@b.com`'s host as b.com, a browser as a.com), so every reading is named:
    fail closed."""
    found = _hosts_as_written(text)
    read = _as_a_browser_reads(text) if ":" in text else text   # a browser reads a host only after a scheme
    for other in ([read] if read != text else []) + (_as_mail_addresses(text) if "@" in text else []):
        found += [host for host in _hosts_as_written(other) if host not in found]
    return found


_PARENTHESIS = re.compile(r"[()]")
_ADDRESS_LIST = re.compile(r"[,;]")
_ANGLE_ADDRESS = re.compile(r"<([^<>\s]*)>")


def _as_mail_addresses(text: str) -> list[str]:
    """The addresses a mail program reads out of a header value holding `@`, each as one token: RFC 5322's comments
    dropped (`x@bad.com(note)`, `x@(note)bad.com`), each address of a list (`x@a.com,y@bad.com`, `;` too) and the
    address in angle brackets after a display name (`Bob <x@bad.com>`). A part with a space and no angle brackets is a
    sentence, decided as written."""
    found = []
    for part in _ADDRESS_LIST.split(_without_comments(text) if "(" in text else text):
        held = _ANGLE_ADDRESS.search(part)
        address = (held.group(1) if held else part).strip().strip("<>")
        if "@" in address and address != text and not any(c.isspace() for c in address):
            found.append(address)
    return found


_C0_AND_SPACE = "".join(map(chr, range(33)))
_TAB_AND_NEWLINES = "\t\n\r"
_SPECIAL_SCHEME = re.compile(r"(?:https?|wss?|ftp|file):[/\\]*", re.IGNORECASE)


def _as_a_browser_reads(text: str) -> str:
    """`text` as the WHATWG URL parser reads it before it finds the host (see named_hosts)."""
    read = text.strip(_C0_AND_SPACE)
    for dropped in _TAB_AND_NEWLINES:   # str.replace: a translate table took 6 us for a 27-character URL
        read = read.replace(dropped, "") if dropped in read else read
    special = _SPECIAL_SCHEME.match(read)
    if special is None:
        return read
    return read[:read.index(":") + 1] + "//" + read[special.end():].replace("\\", "/")


def _without_comments(text: str) -> str:
    """`text` without RFC 5322's comments, nested ones too, in one pass (removing the innermost again and again took
    9 s for 20,000 levels); an unclosed comment runs to the end, a `)` that closes none stays."""
    kept, depth, start = [], 0, 0
    for found in _PARENTHESIS.finditer(text):
        if found.group() == "(":
            if depth == 0:
                kept.append(text[start:found.start()])
            depth += 1
        elif depth:
            depth -= 1
            start = found.end()
    kept.append("" if depth else text[start:])
    return "".join(kept)


def _hosts_as_written(text: str) -> list[str]:
    """The names a tool reads out of `text` when it is one URL, mail address or percent-encoded name, not a sentence:
    `text` percent-decoded (`jos%C3%A9.com`), and the host of `https://JOSÉ.COM/path`, `user@JOSÉ.COM`,
    `mailto:x@JOSÉ.COM` and `JOSÉ.COM:8080` (percent-decoded too). A host without a dot (`ls` of `ls/x`) is not read:
    it names a domain only in a URL with a scheme. The host is decoded twice, on purpose (the text, then the host read
    out of it): a double-encoded host (`jos%25C3%25A9.com`) is read as the name it spells, and refused, not passed."""
    if not ("%" in text or "@" in text or ":" in text or "/" in text) or len(text.split(maxsplit=1)) > 1:
        return []   # `in` and split search in C; a regular expression's class took 21 µs for 2,000 characters
    text = text.strip()
    decoded = unquote(text) if "%" in text else text
    found = [decoded] if decoded != text else []
    held = _AUTHORITY.match(decoded)
    assert held is not None   # every part of _AUTHORITY is optional: it matches any text, if only its empty start
    host = unquote(held.group("host"))
    literal = host.startswith("[") and host.endswith("]")   # an IP address (or a mail domain literal) in brackets
    host = host[1:-1] if literal else host
    if host and host != decoded and (held.group("scheme") or "." in host or literal):
        found.append(host)
    return found


def address_keys(name: str) -> tuple[str, ...]:
    """The IP addresses `name` (a spelling_key: lower case, no root dot) is to a resolver, a browser or a tool, each in
    its one canonical form; () when it is none. IPv4 in one to four parts, each decimal, octal (`0177`) or hex
    (`0x7f`), the last filling the bytes left (`127.1`, `2130706433`, `0x7f.0.0.1` are 127.0.0.1); a part with a
    leading zero is read both as inet_aton and the WHATWG URL parser read it (octal) and as decimal (as some parsers
    do): `0127.0.0.1` is 87.0.0.1 and 127.0.0.1. IPv6 in brackets, with a zone (`::1%eth0`), zeros written out or
    compressed, a mail address's `IPv6:` before it; an IPv4-mapped one (`::ffff:127.0.0.1`), a NAT64 one (`64:ff9b::7f00:1`)
    and a 6to4 one (`2002:7f00:1::`) are read as the IPv4 address they reach. A compared string counts as an
    address only when written canonically (compared_address)."""
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    if ":" in name:   # a mail address's domain literal names IPv6 as `[IPv6:::1]` (RFC 5321)
        six = _ipv6(name.removeprefix("ipv6:").split("%", 1)[0])
        return (six,) if six is not None else ()
    parts = name.split(".")
    if not 1 <= len(parts) <= 4 or not name[:1].isdigit():
        return ()
    octal = _ipv4(parts, octal=True)
    # a shortcut on purpose (repeats _ipv4_part's leading-zero test): no decimal reading, 127.0.0.1 in 3.4 µs, not 5.8
    if not any(len(part) > 1 and part[0] == "0" and part[1] != "x" for part in parts):
        return (octal,) if octal is not None else ()   # no leading zero: both readings are one
    readings = (octal, _ipv4(parts, octal=False))
    return tuple(dict.fromkeys(r for r in readings if r is not None))


def compared_address(text: str) -> str | None:
    """The address a string a policy compares is, when it is an IP address written as ipaddress writes one (a string
    `1000` or `0x3e8` that a rule compares is no address: an argument `1000` is not another spelling of it)."""
    if not (":" in text or text.count(".") == 3):
        return None
    keys = address_keys(text)
    return keys[0] if keys and (keys[0] == text or _ipv6(text) == keys[0]) else None


def address_written_otherwise(text: str) -> tuple[str, ...] | None:
    """The IPv4 address a string of four dotted parts is when it is written otherwise than as one (`0177.0.0.1`,
    `127.000.000.001`, `0x7f.0.0.1`: a tool reads each as 127.0.0.1; `010.0.0.1` is 8.0.0.1 to inet_aton and 10.0.0.1
    to a reader), its readings (address_keys, the octal one first); None for anything else (`1.2.3` stays a version)."""
    if text.count(".") != 3 or ":" in text:
        return None
    keys = address_keys(text.lower())
    return None if not keys or keys == (text,) else keys


def _ipv4(parts: list[str], *, octal: bool) -> str | None:
    value = 0
    for i, part in enumerate(parts):
        n = _ipv4_part(part, octal=octal)
        last = i == len(parts) - 1
        if n is None or n >= (1 << 8 * (5 - len(parts)) if last else 256):   # the last part fills the bytes left
            return None
        value |= n if last else n << 8 * (3 - i)
    return f"{value >> 24}.{value >> 16 & 255}.{value >> 8 & 255}.{value & 255}"


def _ipv4_part(part: str, *, octal: bool) -> int | None:
    """A part of an IPv4 address as inet_aton and the WHATWG URL parser read it (`0x` hex, a leading `0` octal), or
    with its leading zeros read as decimal."""
    if part[:2] == "0x":
        digits, base = part[2:] or "0", 16
    elif len(part) > 1 and part[0] == "0":
        digits, base = (part[1:], 8) if octal else (part, 10)
    else:
        digits, base = part, 10
    if not digits.isascii() or not digits.isalnum() or len(digits) > 32:
        return None
    try:
        return int(digits, base)
    except ValueError:
        return None


def _ipv6(name: str) -> str | None:
    import ipaddress   # only a text with `:` that may be an address pays for the import
    try:
        address = ipaddress.IPv6Address(name)
    except ValueError:
        return None
    if int(address) >> 32 == _NAT64_PREFIX:   # RFC 6052's well-known prefix: a NAT64 gateway connects to the IPv4 address
        return str(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return str(address.ipv4_mapped or address.sixtofour or address)


_NAT64_PREFIX = 0x64FF9B << 64   # 64:ff9b::/96, shifted right by its 32 bits of IPv4
