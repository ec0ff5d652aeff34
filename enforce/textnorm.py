"""Free text brought to the plain Latin form the category classifier was trained on, before it is read.

Steps, in order: HTML and percent escapes decoded, markup tags removed; Unicode NFKC (fullwidth, mathematical, circled and
superscript letters become plain ones); invisible characters removed (format controls, variation
selectors, tags, fillers); diacritics and other combining marks stripped; letters that look Latin
mapped to Latin (Cyrillic, Greek, Armenian, Cherokee, Lisu, small capitals, enclosed and
regional-indicator letters); letters spaced out or separated by dots or dashes joined (and split into known
words when the run spans several: `b o o k a h o t e l`); words joined by underscores split; leetspeak
decoded where a word becomes a known one; a letter stretched (`joooob`) read once or twice, as spells a known word;
a shortened act word (`purch`) or a three-character leet one (`8uy`) read as the act word; run-on words split into known ones (a hashtag's however short); pictographs
(emoji, dingbats, geometric shapes) read by their Unicode names (🏨 -> hotel, 🙏 -> person with folded hands) and arrows
set apart as words (ATL→BOS -> ATL → BOS). What is left that the classifier cannot read is reported, never dropped: characters outside Latin letters, digits,
punctuation and common symbols (`unreadable`, blanked in the text), and words broken by a digit or
symbol that decode to no known word (`residue`). `foreign_words` says when a text reads as another
language. The caller decides what all that means (the classifier abstains). Standard library only.
"""
from __future__ import annotations

import base64
import binascii
import functools
import html
import importlib
import re
import unicodedata
import urllib.parse
from dataclasses import dataclass
from itertools import product
from typing import Any, Container, Mapping, Sequence

from veriguard.contracts.shown import is_invisible as is_invisible   # format controls, default-ignorables (stdlib)
from veriguard.contracts.shown import visible as strip_invisible   # one implementation, shared with the loader

# Each entry: a character that reads as Latin, then the Latin it reads as.
_LOOKALIKES = """
Cyrillic: аa вb сc ԁd еe ёe һh іi їi јj кk мm нh оo рp ԛq ѕs тt уy үy хx ԝw гr пn ьb ӏl
  АA ВB СC ЕE ЁE НH ІI ЇI ЈJ КK МM ОO РP ЅS ТT УY ҮY ХX ԜW ԚQ
Greek: αa βb γy εe ηn ιi κk νv οo ρp σo τt υu χx ωw ϲc ϳj ϵe
  ΑA ΒB ΕE ΖZ ΗH ΙI ΚK ΜM ΝN ΟO ΡP ΤT ΥY ΧX ϹC
Armenian: օo ոn սu ցg հh զq աw քp գq ՕO ՍU ՏS
Cherokee: ᎪA ᏴB ᏟC ᎠD ᎬE ᏀG ᎻH ᏆI ᎫJ ᏦK
  ᏞL ᎷM ᏢP ᎡR ᏚS ᎢT ᏙV ᏔW ᏃZ
Lisu: ꓮA ꓐB ꓚC ꓓD ꓰE ꓝF ꓖG ꓧH ꓲI ꓙJ ꓗK ꓡL ꓟM ꓠN
  ꓳO ꓑP ꓣR ꓢS ꓔT ꓴU ꓦV ꓪW ꓫX ꓬY ꓜZ
small capitals: ᴀa ʙb ᴄc ᴅd ᴇe ꜰf ɢg ʜh ɪi ᴊj ᴋk ʟl ᴍm
  ɴn ᴏo ᴘp ʀr ꜱs ᴛt ᴜu ᴠv ᴡw ʏy ᴢz
other Latin: ɑa ƅb ɓb ƀb ƈc ɗd ɖd đd ðd ɛe ℮e ƒf ɠg ɡg ɦh ħh ıi ɩi ɨi
  ȷj ʝj ĸk ɫl ŀl ɭl łl ɱm ɲn ɳn ŋn ɵo ᴑo øo ʂs ƭt ʈt ŧt ʉu ʋv ʐz ȥz ĦH ĐD ÐD ŁL ØO
  ßss æae ÆAE œoe ŒOE þth ÞTh
"""
_LOOKALIKE: dict[int, str] = {ord(item[0]): item[1:] for line in _LOOKALIKES.strip().splitlines()
                              for item in line.split(":")[-1].split()}
# negative circled, negative squared and regional-indicator letters (NFKC leaves them as symbols)
for _first in (0x1F150, 0x1F170, 0x1F1E6):
    _LOOKALIKE.update({_first + i: chr(ord("A") + i) for i in range(26)})

# leetspeak: digits and symbols written for letters (a digit with two readings has both)
_LEET = {"0": "o", "1": "il", "2": "z", "3": "e", "4": "a", "5": "s", "6": "gb", "7": "t", "8": "b", "9": "g",
         "@": "a", "$": "s", "!": "i", "|": "li", "+": "t", "(": "c", "€": "e", "£": "l", "¥": "y", "©": "c",
         "®": "r", "°": "o", "†": "t", "¡": "i", "∩": "n", "∪": "u", "∨": "v", "∘": "o", "×": "x"}
LEET = _LEET  # public name for other modules (same dict)
_READABLE_SYMBOLS = frozenset("©®™°")
_INNER_PUNCTUATION = frozenset("-'’.&/_:,")  # between letters of a word: e-mail, O'Hare, U.S., AT&T
_SEPARATOR = r"(?:[^\S\n]*[.\-_*·•/|+~:,][^\S\n]*|\s+)"
_SPACED = re.compile(rf"(?<![^\W_])[^\W_](?:{_SEPARATOR}[^\W_])+(?![^\W_])")
_SPLIT_WORD = re.compile(r"\b([A-Za-z]{2,})(-| )([A-Za-z]{2,})\b")
_CODED = re.compile(r"%[0-9A-Fa-f]{2}|&(#[0-9]+|#[xX][0-9A-Fa-f]+|[A-Za-z]+[0-9]*);")
_EMAIL_OR_URL = re.compile(r"[\w.+-]+@[\w-]+(\.[\w-]+)+|[A-Za-z][A-Za-z0-9+.-]*://\S+|www\.\S+")
# Pictographs: read as their Unicode names. Braille, scripts and private use stay unreadable: their names spell
# nothing, and the letters they may stand for would be hidden.
_PICTOGRAPHS = ((0x2300, 0x23FF), (0x25A0, 0x25FF), (0x2600, 0x27BF), (0x2B00, 0x2BFF), (0x1F000, 0x1F0FF),
                (0x1F300, 0x1F6FF), (0x1F780, 0x1F7FF), (0x1F900, 0x1F9FF), (0x1FA70, 0x1FAFF))
_ARROWS = ((0x2190, 0x21FF), (0x27F0, 0x27FF), (0x2900, 0x297F), (0x1F800, 0x1F8FF))
_ARROW_CLASS = "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in _ARROWS)
_NAMED_CLASS = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in _ARROWS + _PICTOGRAPHS) + "]")
# what `readable` may refuse: any character but printable ASCII, tab and line ends
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_MAYBE_UNREADABLE = re.compile(r"[^\t\n\r\x20-\x7e]")
# Pictographs that express a mood or a mark (faces, hands, hearts, stars, checks): no category's object. Any
# other (🏨, 🚗, ✈) is reported in `pictographs`, since the classifier learnt no text written with them.
_EXPRESSIVE = ((0x1F600, 0x1F64F),)
_EXPRESSIVE_WORDS = frozenset("""face hand hands heart hearts thumbs sparkles sparkle fire star check clapping popper
hundred biceps eyes triangle exclamation question warning laughing shrug facepalm""".split())
MAX_LEET_CHOICES = 64
# Markup tags (`<b>`, `</span>`, `<a href="...">`): inline ones removed (`h<b>o</b>tel` is hotel), the others set
# apart as a space; what they wrap is read as text.
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9]*)\b[^<>]{0,200}?/?>")
_INLINE_TAGS = frozenset("a abbr b bdi bdo big cite code del dfn em font i ins kbd mark q s samp small span strike "
                         "strong sub sup tt u var wbr".split())
# A letter written three times or more in a row (`joooob`, `applyyyy`): read as once or twice, whichever spells a
# known word.
_STRETCHED = re.compile(r"([A-Za-z])\1{2,}")
MAX_STRETCH_CHOICES = 64
# The words asking a restricted act, which a shortened form (`purch`) and a three-letter leet token (`8uy`) are read as.
ACT_WORDS = ("book", "booking", "buy", "hire", "lease", "order", "purchase", "rent", "rental", "reserve",
             "reservation", "apply", "application", "subscribe", "checkout", "stream")
MIN_ACT_PREFIX = 4    # `purch`, `reserv`: shorter prefixes (`app`, `res`, `ord`) are words or abbreviate too much
MIN_RUN_WORD = 12     # an unknown run of letters this long is split into known words when it can be


@dataclass(frozen=True)
class Normalised:
    text: str                     # what the classifier reads: unreadable characters are blanked out
    unreadable: tuple[str, ...]   # characters that are no Latin letter, digit, punctuation or common symbol
    residue: tuple[str, ...]      # words with a digit or symbol between letters that decode to no known word
    changes: tuple[str, ...]      # what was done, for the decision log
    pictographs: tuple[str, ...] = ()  # pictographs read by their names that express no mood: 🏨, 🚗, ✈
    routes: tuple[str, ...] = ()       # words joined by an arrow (bos→den), set apart in the text


def strip_marks(text: str) -> str:
    """Diacritics and every other combining mark removed (é -> e; stacked 'zalgo' marks vanish)."""
    if text.isascii():   # ASCII has no mark and is its own NFKD and NFC
        return text
    return unicodedata.normalize("NFC", _NON_ASCII.sub(lambda m: "" if unicodedata.category(m.group()).startswith("M")
                                                       else m.group(), unicodedata.normalize("NFKD", text)))


def map_lookalikes(text: str) -> str:
    return text.translate(_LOOKALIKE)


def readable(ch: str) -> bool:
    cat = unicodedata.category(ch)
    return (ch.isascii() and cat != "Cc") or ch in "\t\n\r" or cat[0] in "PZ" or cat in ("Sc", "Sm", "Sk") \
        or ch in _READABLE_SYMBOLS


def _within(cp: int, ranges: tuple[tuple[int, int], ...]) -> bool:
    return any(lo <= cp <= hi for lo, hi in ranges)


def expressive(ch: str) -> bool:
    return _within(ord(ch), _EXPRESSIVE) or bool(_EXPRESSIVE_WORDS & set(unicodedata.name(ch, "").lower().split()))


def glued_arrows(text: str) -> list[str]:
    """The words an arrow joins with no space (BOS→DEN, Boston→Denver)."""
    return re.findall(rf"\w+(?:[{_ARROW_CLASS}]\w+)+", text)


def name_pictographs(text: str) -> tuple[str, list[str]]:
    """Each pictograph replaced by its Unicode name as words, each arrow set apart by spaces; skin-tone modifiers
    dropped (they qualify the pictograph before them). Also the pictographs that are not `expressive`."""
    out: list[str] = []
    objects: list[str] = []
    if not _NAMED_CLASS.search(text):
        return text, objects
    for ch in text:
        cp = ord(ch)
        name: str = unicodedata.name(ch, "")
        if _within(cp, _ARROWS):
            out.append(f" {ch} ")
        elif _within(cp, _PICTOGRAPHS) and name:
            if unicodedata.category(ch) == "Sk":
                continue
            out.append(f" {name.lower()} ")
            if not expressive(ch):
                objects.append(ch)
        else:
            out.append(ch)
    return "".join(out), objects


def decode_escapes(text: str) -> str:
    """HTML character references and percent-escapes decoded, up to three layers deep (`h&#111;tel`,
    `Book%20a%20hotel`)."""
    for _ in range(3):
        if not _CODED.search(text):
            break
        text = urllib.parse.unquote(html.unescape(text))
    return text


def strip_tags(text: str) -> str:
    """Markup tags taken out (`<b>Weather</b> in <i>Boston</i>` -> `Weather in Boston`): inline ones removed, so a
    word they split is whole again (`h<b>o</b>tel`), the others read as a space."""
    return _TAG.sub(lambda m: "" if m.group(2).lower() in _INLINE_TAGS else " ", text)


def unstretch(word: str, known: Container[str]) -> str | None:
    """The known word a word with a letter written three times or more spells, each such run read as the letter
    twice or once (`rooooom` -> room, `joooob` -> job, `appplyyy` -> apply); None when it spells none."""
    parts = _STRETCHED.split(word)   # text, letter, text, letter, ..., text
    letters = parts[1::2]
    if not letters or 2 ** len(letters) > MAX_STRETCH_CHOICES:
        return None
    for counts in product((2, 1), repeat=len(letters)):   # twice first: rooooom is room, not rom
        candidate = "".join(p + (letters[i] * counts[i] if i < len(letters) else "")
                            for i, p in enumerate(parts[0::2]))
        if candidate.lower() in known:
            return candidate
    return None


def act_word(word: str, known: Container[str]) -> str | None:
    """The act word an unknown word shortens (`purch` -> purchase, `reserv` -> reserve: the shortest it begins) or
    spells in leet with three characters (`8uy` -> buy); None otherwise."""
    low = word.lower()
    if not known or low in known or low in ACT_WORDS:   # with no lexicon nothing is read by a guess
        return None
    if word.isalpha() and len(low) >= MIN_ACT_PREFIX:
        return next((a for a in sorted(ACT_WORDS, key=len) if a.startswith(low)), None)
    if re.fullmatch(r"[0-9@$|+][A-Za-z]{2}|[A-Za-z][0-9@$|+][A-Za-z]|[A-Za-z]{2}[0-9@$|+]", word):
        return decode_leet(word, frozenset(ACT_WORDS))
    return None


def join_spaced(text: str, known: Container[str]) -> str:
    """`h o t e l`, `h.o.t.e.l`, `h - o - t - e - l` -> `hotel`: three or more single letters or digits, more
    letters than digits, with one separator repeated, or four or more with mixed separators (so `e.g. a`
    and `4 x 4` stay). A leading `a` or `I` stays a word when only the rest is a known word
    (`a f l i g h t` -> `a flight`)."""
    def join(m: re.Match[str]) -> str:
        run = m.group(0)
        singles = re.findall(r"[^\W_]", run)
        separators = {re.sub(r"\s+", " ", sep) for sep in re.split(r"[^\W_]", run)[1:-1]}
        letters = sum(c.isalpha() for c in singles)
        if letters < 2 or letters <= len(singles) - letters or len(singles) < (3 if len(separators) == 1 else 4):
            return run
        word = "".join(singles)
        if word[0] in "aAiI" and word.lower() not in known and word[1:].lower() in known:
            return f"{word[0]} {word[1:]}"
        pieces = None if word.lower() in known or not word.isalpha() else segment(word, known)
        return " ".join(pieces) if pieces and len(pieces) > 1 else word   # `b o o k a h o t e l`: several words
    return _SPACED.sub(join, text)


def join_split_words(text: str, known: Container[str]) -> str:
    """`fl ight`, `ho-tel` -> `flight`, `hotel`: two pieces joined when together they form a known word and,
    for a space, neither piece alone is a word (`kar in` stays: joined, the known `karin` hid the unknown object
    of `rent a kar in Dallas`; a topic word cut in two is joined by the classifier's own join_pieces)."""
    def join(m: re.Match[str]) -> str:
        a, sep, b = m.groups()
        whole = (a + b).lower()
        if whole in known and (sep == "-" or a.lower() not in known and b.lower() not in known):
            return a + b
        return m.group(0)
    return _SPLIT_WORD.sub(join, text)


def decode_leet(token: str, known: Container[str]) -> str | None:
    """The known word a token spells with leetspeak digits and symbols (`h0t3l`, `fl!ght`, `$hop`)."""
    options = [c if c.isalpha() else _LEET.get(c, c) for c in token.lower()]
    count = 1
    for o in options:
        count *= len(o)
    if count > MAX_LEET_CHOICES:
        return None
    return next((w for w in map("".join, product(*options)) if w in known), None)


def segment(word: str, known: Container[str]) -> list[str] | None:
    """`bookahotelinparis` -> book a hotel in paris: the fewest known words (of two letters or more, or
    `a`) that spell `word`, longer words first on a tie; None when there are none."""
    low = word.lower()
    best: list[tuple[int, int, list[str]] | None] = [None] * (len(low) + 1)
    best[0] = (0, 0, [])
    for end in range(1, len(low) + 1):
        for start in range(max(0, end - 24), end):
            piece, prefix = low[start:end], best[start]
            if prefix is None or not (piece in known and len(piece) > 1 or piece == "a"):
                continue
            candidate = (prefix[0] + 1, prefix[1] - len(piece) ** 2, prefix[2] + [piece])
            current = best[end]
            if current is None or candidate[:2] < current[:2]:
                best[end] = candidate
    found = best[-1]
    return found[2] if found else None


def _core(token: str) -> tuple[str, str, str]:
    """A token split into leading punctuation, the word, trailing punctuation (leet symbols stay in the word)."""
    inside = [i for i, c in enumerate(token) if c.isalnum() or c in "$@|"]
    if not inside:
        return token, "", ""
    return token[:inside[0]], token[inside[0]:inside[-1] + 1], token[inside[-1] + 1:]


def read_word(word: str, known: Container[str], *, hashtag: bool = False) -> tuple[str, bool]:
    """The word as the classifier should read it, and whether it is residue (a non-letter between letters
    that decodes to no known word). A hashtag's words are glued however short (`#bookhotel`)."""
    letters = [i for i, c in enumerate(word) if c.isalpha()]
    if not letters or word.lower() in known or _EMAIL_OR_URL.fullmatch(word):
        return word, False
    read = (unstretch(word, known) if _STRETCHED.search(word) else None) or act_word(word, known)
    if read:
        return read, False
    inner = word[letters[0]:letters[-1] + 1]
    odd = [c for c in inner if not c.isalpha() and c not in _INNER_PUNCTUATION]
    edge = re.fullmatch(r"[A-Za-z]{3,}[0-9@$|]+|[0-9@$|]+[A-Za-z]{3,}", word)
    if odd or edge:
        decoded = decode_leet(word, known)
        if decoded:
            return decoded, False
        return word, bool(odd)
    if word.isalpha() and (len(word) >= MIN_RUN_WORD or hashtag and len(word) >= 4):
        pieces = segment(word, known)
        if pieces and len(pieces) > 1:
            return " ".join(pieces), False
    return word, False


def decode_words(text: str, known: Container[str]) -> tuple[str, list[str], list[str]]:
    """Every whitespace-separated word read with `read_word`: (text, what was decoded, residue)."""
    decoded: list[str] = []
    residue: list[str] = []

    def sub(m: re.Match[str]) -> str:
        token = m.group(0)
        if token.isalpha() and token.isascii() and token.lower() in known:
            return token   # a known word of plain letters reads as itself (read_word's first test), most words are
        before, word, after = _core(token)
        read, odd = read_word(word, known, hashtag=before.endswith("#"))
        if odd:
            residue.append(word)
        elif read != word:
            decoded.append(f"{word} -> {read}")
        return before + read + after
    return re.sub(r"\S+", sub, text), decoded, residue


# A negation negated: "don't not book", "you can't not buy", "I'm not not flying", "never not order" (the act asked)
_NEGATED_NEGATION = re.compile(r"\b(?:(\w+)n[’']t|not|never)\s+not\b\s*", re.IGNORECASE)
_AUXILIARY = {"ca": "can", "wo": "will", "sha": "shall"}   # can't, won't, shan't without their n't


def unnegate(text: str) -> str:
    """`text` with each negation negated removed: the auxiliary of a negated one kept ("can't not buy" -> "can buy")."""
    def plain(m: re.Match[str]) -> str:
        aux = m.group(1)
        return f"{_AUXILIARY.get(aux.lower(), aux)} " if aux else ""
    return _NEGATED_NEGATION.sub(plain, text)


def normalise(text: str, known: Container[str] = frozenset()) -> Normalised:
    """The readable form of `text`; `known` is the lexicon (lower-case words) used to join pieces and
    decode leetspeak; with an empty lexicon nothing is joined by a guess and nothing is decoded."""
    changes: list[str] = []

    def note(change: str, before: str, after: str) -> str:
        if after != before and change not in changes:
            changes.append(change)
        return after

    out = note("HTML or percent escapes decoded", text, decode_escapes(text))
    out = note("markup tags removed", out, strip_tags(out))
    routes: list[str] = []
    pictographs: list[str] = []
    is_ascii = out.isascii()   # no look-alike, mark, arrow or pictograph is ASCII, and ASCII is its own NFKC
    if not is_ascii:
        # look-alikes mapped before NFKC as well: NFKC turns some of them into others (lunate sigma)
        out = note("look-alike letters mapped to Latin", out, map_lookalikes(out))
        out = note("NFKC", out, unicodedata.normalize("NFKC", out))
    out = note("invisible characters removed", out, strip_invisible(out))
    if not is_ascii:
        out = note("diacritics and other marks removed", out, strip_marks(out))
        out = note("look-alike letters mapped to Latin", out, map_lookalikes(out))
        routes = glued_arrows(out)
        named, pictographs = name_pictographs(out)
        out = note("pictographs read by their names", out, named)
    out = re.sub(r"[^\S\n]+", " ", out)
    out = note("spaced or split letters joined", out, join_split_words(join_spaced(out, known), known))
    out = note("words joined by underscores split", out, re.sub(r"(?<=[A-Za-z])_+(?=[A-Za-z])", " ", out))
    out, decoded, residue = decode_words(out, known)
    out = note("a negation negated read as none", out, unnegate(out))
    if decoded:
        changes.append("words decoded: " + ", ".join(decoded[:5]))
    unreadable = tuple(dict.fromkeys(ch for ch in _MAYBE_UNREADABLE.findall(out) if not readable(ch)))
    if unreadable:
        out = "".join(ch if readable(ch) else " " for ch in out)
    return Normalised(out, unreadable, tuple(dict.fromkeys(residue)), tuple(changes),
                      tuple(dict.fromkeys(pictographs)), tuple(dict.fromkeys(routes)))


# Frequent function words of other languages written in Latin letters (Spanish, French, German, Italian,
# Portuguese, Dutch, Scandinavian, Polish, Turkish, Indonesian, Romanian, Czech) that are not English
# words; ambiguous ones (die, den, per, van, do, no, as, con, e, o, i, mi, im, uber, fur, com) left out.
_FOREIGN = frozenset("""
el la los las una unos unas del al en para por sin y que su sus esta este estos hay muy desde hasta donde cuando
como quiero le les des du un une et pour avec dans sur au aux ce cette ces mon mes votre qui est sont pas je nous
vous chez der das dem ein eine einen einem einer und zu zum zur auf bei nach ich wir sie ist nicht oder mein meine
il gli uno della delle dei degli nel nella che di da tra fra sono questo questa mio mia um uma uns umas dos das
na nos ao aos meu minha het een voor te om naar bij uit aan zijn niet ik mijn och att det som ett jag inte og
ikke jeg nie dla za ze przez oraz lub czy mnie ve bir bu icin ile cok gibi daha ama dan yang ke dari untuk
dengan ini itu saya tidak ada si sau pentru cu je se jako
""".split())
_ENGLISH = frozenset("""
the a an to for of in on at with from by into onto about near under over after before between and or but not
my me i you your our we us it its this that these those is are was be am can will please all any some every
""".split())
MIN_UNKNOWN_WORDS = 3
MAX_UNKNOWN_SHARE = 0.5


def foreign_words(text: str, known: Container[str]) -> str:
    """Why `text` reads as another language than English ('' when it does not): more function words of
    other languages than of English (two at least), or half its words or more unknown to the lexicon.
    Case is ignored: a name like Las Vegas counts, and an English sentence outweighs it with its own."""
    words = [w.lower() for w in re.findall(r"[A-Za-z]+", text)]
    foreign = [w for w in words if w in _FOREIGN]
    english = sum(1 for w in words if w in _ENGLISH)
    if len(foreign) >= 2 and len(foreign) > english:
        return f"function words {', '.join(foreign[:5])}"
    long = [w for w in words if len(w) >= 2]
    unknown = [w for w in long if w not in known]
    if len(long) >= MIN_UNKNOWN_WORDS and len(unknown) >= MAX_UNKNOWN_SHARE * len(long):
        return f"{len(unknown)} of {len(long)} words unknown: {', '.join(unknown[:5])}"
    return ""


# six bytes or more in a run, or four or more set apart by spaces or colons (68 6f 74 65 6c)
_HEX_RUN = re.compile(r"(?<![\w/])(?:0x)?(?:(?:[0-9A-Fa-f]{2}[ :]?){6,}|(?:[0-9A-Fa-f]{2}[ :]){3,}[0-9A-Fa-f]{2})(?![\w/])")
_B64_RUN = re.compile(r"(?<![\w/+=-])[A-Za-z0-9+/_-]{12,}={0,2}(?![\w/+=-])")
MIN_DECODED_LETTERS = 4
LONG_ENCODED = 24    # a run of hex or base64 this long (digits and letters mixed) is encoded whatever it decodes to


def _text_like(data: bytes) -> bool:
    """Bytes that read as text: printable ASCII, with letters."""
    return bool(data) and all(32 <= b < 127 or b in (9, 10, 13) for b in data) \
        and sum(chr(b).isalpha() for b in data) >= MIN_DECODED_LETTERS


def _decodes(run: str) -> bool:
    hexed = re.sub(r"^0x|[ :]", "", run.strip())
    if re.fullmatch(r"(?:[0-9A-Fa-f]{2})+", hexed) and _text_like(bytes.fromhex(hexed)):
        return True
    try:
        data = base64.b64decode(run + "=" * (-len(run) % 4), altchars=b"-_" if re.search(r"[-_]", run) else None,
                                validate=True)
    except (binascii.Error, ValueError):
        return False
    return _text_like(data)


def _long_mixed(run: str) -> bool:
    """A long run of hex or base64 characters that mixes digits with letters (or both cases): no word."""
    core = re.sub(r"[ :=]", "", run)
    return len(core) >= LONG_ENCODED and any(c.isdigit() for c in core) and any(c.isalpha() for c in core)


def encoded_runs(text: str) -> list[str]:
    """Runs of hex or base64 in `text` (e-mail addresses and URLs aside) that decode to text, or are long
    (`426f6f6b206120686f74656c`, `Qm9vayBhIGhvdGVs`): what they say is hidden from the classifier."""
    text = _EMAIL_OR_URL.sub(" ", text)
    runs = [m.group(0).strip() for m in _HEX_RUN.finditer(text)] + [m.group(0) for m in _B64_RUN.finditer(text)]
    return list(dict.fromkeys(r for r in runs if _decodes(r) or _long_mixed(r)))


def describe(chars: tuple[str, ...], limit: int = 5) -> str:
    shown = ", ".join(f"{c!r} (U+{ord(c):04X})" for c in chars[:limit])
    return shown + (f" and {len(chars) - limit} more" if len(chars) > limit else "")


# Literal prefilter: a pattern that needs one of some strings of plain characters cannot match a text without them, and a
# test for a substring costs far less than a search. The classifier tries its hundreds of cue patterns on each text,
# and few of them match (on v6, 4% of the pattern and text pairs hold the literals: cue_vector 0.90 -> 0.19 ms a task).
# `folded` maps every character that re.IGNORECASE matches to an ASCII letter to that letter in lower case (A-Z, and
# the four others Unicode folds to one: tests/unit/test_classifier_speed_s26.py checks every code point), so that a
# pattern that matches a text has its literals in the folded text, with or without IGNORECASE.
_sre: Any = importlib.import_module("re._constants")   # re's own parser and opcodes: the tree re compiles from
_sre_parse: Any = importlib.import_module("re._parser")
_FOLD = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)} | {0x130: "i", 0x131: "i", 0x17F: "s", 0x212A: "k"}
_PLAIN = frozenset(map(ord, "abcdefghijklmnopqrstuvwxyz0123456789 '-,.&/:;!?\"$#@%+=<>_~"))
_REPEATS = (_sre.MAX_REPEAT, _sre.MIN_REPEAT, _sre.POSSESSIVE_REPEAT)
_SPACE = frozenset({" "})


def folded(text: str) -> str:
    # on ASCII text the map is str.lower's (A-Z only), which costs far less than a translate through a dict
    return text.lower() if text.isascii() else text.translate(_FOLD)


class LiteralIndex:
    """Patterns by the literals they need: `matchable(folded(text))` (by id) and `candidates(folded(text))` are those
    that may match the text, the others cannot. Each literal is looked for once, however many patterns need it, and
    only when the text holds its first GRAM characters (one set of the text's GRAM-grams instead of a search per
    literal: 0.10 -> 0.03 ms a call for the bank's 430 literals). Patterns are kept by id: a compiled pattern's hash
    reads its whole code each time (up to 3.5 us for the bank's longest). The answers for the RECENT texts last asked
    are kept: a classify asks for the same text several times."""

    GRAM = 3
    RECENT = 32

    def __init__(self, patterns: tuple[re.Pattern[str], ...]) -> None:
        unique = {id(p): p for p in patterns}
        every = {i: all_required_literals(p) for i, p in unique.items()}
        literals = {i: _best(needs) for i, needs in every.items()}
        # a pattern's other requirements: one found by its indexed literal is kept only when the text meets them too
        # (on v6, 42% of the searches the indexed literal alone left were of patterns that cannot match). A space, the
        # most common of them, is looked for once a text, for the patterns in `spaced`; the others, each once, fewest
        # strings first, are in `also` (all() of them is the same in any order).
        self.also: dict[int, tuple[frozenset[str], ...]] = {}
        spaced = set()
        for i, needs in every.items():
            others = dict.fromkeys(r for r in needs if r is not literals[i])
            if _SPACE in others:
                spaced.add(i)
                del others[_SPACE]
            if others:
                self.also[i] = tuple(sorted(others, key=len))
        self.spaced = frozenset(spaced)
        self.always = {i: unique[i] for i, needed in literals.items() if needed is None}
        needing: dict[str, dict[int, re.Pattern[str]]] = {}
        for i, needed in literals.items():
            for s in needed or ():
                needing.setdefault(s, {})[i] = unique[i]
        self.needing = [(s, tuple(ps.items())) for s, ps in needing.items()]
        self.short = [(s, ps) for s, ps in self.needing if len(s) < self.GRAM]   # looked for in every text
        self.by_gram: dict[str, list[tuple[str, tuple[tuple[int, re.Pattern[str]], ...]]]] = {}
        for s, ps in self.needing:
            if len(s) >= self.GRAM:
                self.by_gram.setdefault(s[:self.GRAM], []).append((s, ps))
        self._recent: dict[str, dict[int, re.Pattern[str]]] = {}
        self._recent_sets: dict[str, frozenset[re.Pattern[str]]] = {}

    def matchable(self, folded_text: str) -> Mapping[int, re.Pattern[str]]:
        """id -> pattern, for the patterns that may match the text (read-only: it is shared)."""
        got = self._recent.get(folded_text)
        if got is not None:
            return got
        g, by_gram = self.GRAM, self.by_gram
        got = dict(self.always)
        for key in text_grams(folded_text, g) & by_gram.keys():
            for s, patterns in by_gram[key]:
                if len(s) == g or s in folded_text:
                    got.update(patterns)
        for s, patterns in self.short:
            if s in folded_text:
                got.update(patterns)
        if " " not in folded_text:
            for i in self.spaced & got.keys():
                del got[i]
        also = self.also
        for i in also.keys() & got.keys():
            if not all(any(s in folded_text for s in needed) for needed in also[i]):
                del got[i]
        _remember(self._recent, folded_text, got, self.RECENT)
        return got

    def candidates(self, folded_text: str) -> frozenset[re.Pattern[str]]:
        got = self._recent_sets.get(folded_text)
        if got is None:
            got = frozenset(self.matchable(folded_text).values())
            _remember(self._recent_sets, folded_text, got, self.RECENT)
        return got


# The GRAM-grams of the RECENT_GRAMS texts last asked, by (GRAM, folded text): a classify asks the four indices of a bank
# (cue_vector's, clause_topics', topics' and asked's) about the same texts, and the set is the same for each of them.
RECENT_GRAMS = 64
_GRAMS: dict[tuple[int, str], set[str]] = {}


def text_grams(folded_text: str, g: int) -> set[str]:
    """The set of `folded_text`'s substrings of length g (read-only: it is shared)."""
    got = _GRAMS.get((g, folded_text))
    if got is None:
        got = {folded_text[i:i + g] for i in range(len(folded_text) - g + 1)}
        _remember(_GRAMS, (g, folded_text), got, RECENT_GRAMS)
    return got


def _remember(memo: dict[Any, Any], key: Any, value: Any, most: int) -> None:
    if len(memo) >= most:
        memo.clear()   # not an eviction of the oldest: a clear is safe beside other threads under the GIL
    memo[key] = value


def required_literals(pattern: re.Pattern[str]) -> frozenset[str] | None:
    """Strings (lower case) of which every match of `pattern` holds one; None when none is known."""
    return _best(all_required_literals(pattern))


@functools.cache   # the four indices of a bank read the same patterns (the answer is the pattern's, and immutable)
def all_required_literals(pattern: re.Pattern[str]) -> tuple[frozenset[str], ...]:
    """Every requirement that the parts of `pattern`'s outer sequence give: sets of strings (lower case), every match
    holding one string of each set (a match holds a match of each part of the sequence); () when none is known."""
    try:
        return tuple(_requirements(_sre_parse.parse(pattern.pattern, pattern.flags)))
    except Exception:  # the parser is re's own, not a public API: a pattern it reads otherwise is simply not filtered
        return ()


def _best(found: Sequence[frozenset[str]]) -> frozenset[str] | None:
    """The requirement a text is least likely to meet by chance, by its shortest string, then the fewest strings."""
    return max(found, key=lambda s: (min(map(len, s)), -len(s))) if found else None


def _needed(items: Any) -> frozenset[str] | None:
    return _best(_requirements(items))


def _requirements(items: Any) -> list[frozenset[str]]:
    """Of a sequence of parsed items: the requirements its parts give (runs of plain literals, groups whose sequence
    gives one, alternations whose every branch has one, repeats of at least one), each a set of strings."""
    found: list[frozenset[str]] = []
    run: list[str] = []
    for op, av in [*items, (None, None)]:
        if op is _sre.LITERAL and (av + 32 if ord("A") <= av <= ord("Z") else av) in _PLAIN:
            run.append(chr(av).lower())
            continue
        if op is _sre.AT:   # zero-width (\b, ^, $): the literals on both sides stay next to each other
            continue
        if run:
            found.append(frozenset({"".join(run)}))
            run = []
        part: frozenset[str] | None = None
        if op is _sre.SUBPATTERN:
            part = _needed(av[3])
        elif op is _sre.BRANCH:
            branches = [_needed(b) for b in av[1]]
            part = frozenset().union(*branches) if all(branches) else None  # type: ignore[arg-type]
        elif op in _REPEATS and av[0] >= 1:
            part = _needed(av[2])
        if part:
            found.append(part)
    return found
