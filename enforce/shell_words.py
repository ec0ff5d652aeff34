"""Static evaluation of shell words, as bash expands them: quote removal, backslash escapes, ANSI-C
strings, brace expansion, tilde expansion, variables the command itself set, word splitting, and which
characters stay active glob characters. What cannot be known (a variable from the environment, a
command's output) becomes a Value with no text and the reason."""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, NamedTuple, Protocol

from veriguard.enforce.extract_errors import ExtractionError

MAX_BRACE_WORDS = 256
IFS_WHITESPACE = re.compile(r"[ \t\n]+")


@dataclass(frozen=True)
class Value:
    """One word after expansion. `text` is None when it cannot be known statically."""

    text: str | None
    pattern: str | None = None      # when the word is a glob: the pattern, literal characters escaped
    under: tuple[str, ...] = ()     # unknown text that is a path under one of these absolute folders
    stream: bool = False            # unknown text that comes from a command's output or a pipe
    pipe: bool = False              # a process substitution: a pipe, not a file
    multi: bool = False             # unquoted unknown text: may be several words, or an option
    numeric: bool = False           # unknown but an integer (arithmetic)
    prefix: str = ""                # unknown text: the static text it starts with
    reason: str = ""

    @staticmethod
    def of(text: str) -> "Value":
        return Value(text)

    @staticmethod
    def unknown(reason: str, **kw: Any) -> "Value":
        return Value(None, reason=reason, **kw)

    @property
    def static(self) -> bool:
        return self.text is not None and self.pattern is None


class Env(Protocol):
    """What word evaluation needs from the analysis."""

    def var(self, name: str) -> tuple[Value, ...]: ...
    def assign_unknown(self, name: str, reason: str) -> None: ...
    def substitute(self, node: Any) -> Value: ...
    def process(self, node: Any) -> Value: ...
    def arith(self, node: Any) -> Value: ...
    def index(self, node: Any) -> None: ...
    def risky(self, reason: str) -> None: ...
    def effects(self, node: Any) -> None: ...
    def enter(self, node: Any) -> None: ...
    def leave(self) -> None: ...


class Lit(NamedTuple):
    text: str
    quoted: bool


class Exp(NamedTuple):
    values: tuple[Value, ...]
    quoted: bool
    join: bool = False              # "$*": the values joined by a space into one word


Tok = Lit | Exp


def unsupported(node: Any, what: str = "") -> ExtractionError:
    row, col = node.start_point
    text = node.text.decode("utf-8", "replace")[:60]
    return ExtractionError("extract.shell.construct",
                           f"{row + 1}:{col + 1}: the analysis does not follow {what or node.type} `{text}`")


# ------------------------------------------------------------------------------------------------
# node -> tokens

def tokens(node: Any, env: Env) -> list[Tok]:
    env.enter(node)
    try:
        return _tokens(node, env)
    finally:
        env.leave()


def _tokens(node: Any, env: Env) -> list[Tok]:
    kind = node.type
    if kind in ("word", "number"):
        return _unquoted(node.text.decode("utf-8"))
    if kind == "raw_string":
        return [Lit(node.text.decode("utf-8")[1:-1], True)]
    if kind == "ansi_c_string":
        text = ansi_c(node.text.decode("utf-8")[2:-1])
        if text is None:
            return [Exp((Value.unknown("an ANSI-C string the analysis cannot decode"),), True)]
        return [Lit(text, True)]
    if kind in ("string", "translated_string"):
        return _string(node, env)
    if kind == "concatenation":
        out: list[Tok] = []
        for c in node.children:
            out.extend(tokens(c, env))
        return out
    if kind in ("simple_expansion", "expansion"):
        return [_expansion(node, env, quoted=False)]
    if kind == "command_substitution":
        return [Exp((env.substitute(node),), False)]
    if kind == "process_substitution":
        return [Exp((env.process(node),), False)]
    if kind == "arithmetic_expansion":
        return [Exp((env.arith(node),), False)]
    if kind == "brace_expression":
        return _unquoted(node.text.decode("utf-8"))
    if kind == "$":  # a lone `$`: tree-sitter's reading of a trailing `$`, and of `$"..."` (with the string after it)
        after = node.next_sibling
        if after is not None and after.type == "string" and after.start_byte == node.end_byte:
            # bash translates `$"..."` through the locale's message catalogs (TEXTDOMAIN, TEXTDOMAINDIR: any file)
            return [Exp((Value.unknown("a translated string `$\"...\"`, whose text the locale's catalogs decide"),),
                        True)]
        return [Lit("$", False)]
    raise unsupported(node, f"a word of kind {kind}")


def _unquoted(text: str) -> list[Tok]:
    out: list[Tok] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            if text[i + 1] != "\n":
                out.append(Lit(text[i + 1], True))
            i += 2
            continue
        out.append(Lit(c, False))
        i += 1
    return out


def dq_unescape(text: str, *, heredoc: bool = False) -> str:
    """Backslash escapes inside double quotes (or an unquoted here-document)."""
    special = "$`\\\n" if heredoc else '$`"\\\n'
    return re.sub(r"\\(.)", lambda m: ("" if m.group(1) == "\n" else m.group(1)) if m.group(1) in special
                  else m.group(0), text, flags=re.S)


def _string(node: Any, env: Env) -> list[Tok]:
    out: list[Tok] = [Lit("", True)]  # "" is a word even when empty
    for c in node.children:
        kind = c.type
        if kind in ('"', "$\"", "$"):
            continue
        if kind == "string_content":
            out.append(Lit(dq_unescape(c.text.decode("utf-8")), True))
        else:
            out.append(_quoted_expansion(c, env, "double quotes"))
    return out


def _quoted_expansion(c: Any, env: Env, where: str) -> Tok:
    """An expansion inside double quotes or an unquoted here-document (never word-split)."""
    kind = c.type
    if kind in ("simple_expansion", "expansion"):
        return _expansion(c, env, quoted=True)
    if kind == "command_substitution":
        return Exp((env.substitute(c),), True)
    if kind == "arithmetic_expansion":
        return Exp((env.arith(c),), True)
    raise unsupported(c, f"{kind} inside {where}")


def heredoc_tokens(body: Any, env: Env) -> list[Tok]:
    """The text of an unquoted here-document body, with its expansions."""
    out: list[Tok] = [Lit("", True)]
    for c in body.children:
        kind = c.type
        if kind == "heredoc_content":
            out.append(Lit(dq_unescape(c.text.decode("utf-8"), heredoc=True), True))
        else:
            out.append(_quoted_expansion(c, env, "a here-document"))
    if len(out) == 1:  # no expansion at all: tree-sitter keeps the text on the body node
        out.append(Lit(dq_unescape(body.text.decode("utf-8"), heredoc=True), True))
    return out


_SIMPLE_OPS = {":-", "-", ":=", "=", ":+", "+", ":?", "?"}


def _expansion(node: Any, env: Env, *, quoted: bool) -> Exp:
    named = [c for c in node.children if c.type not in ("$", "${", "}")]
    names = ("variable_name", "special_variable_name")
    if node.type == "simple_expansion" or (len(named) == 1 and named[0].type in names):
        name = named[0].text.decode("utf-8") if named else ""
        if not named or named[0].type not in ("variable_name", "special_variable_name"):
            env.effects(node)
            return Exp((Value.unknown(f"the expansion {node.text.decode('utf-8', 'replace')[:40]}"),), quoted)
        return Exp(env.var(name), quoted, join=quoted and name == "*")
    ops = [c.type for c in node.children if c.type in _SIMPLE_OPS]
    if (len(named) >= 1 and named[0].type == "variable_name" and len(ops) == 1
            and node.children[2].type in _SIMPLE_OPS):
        name = named[0].text.decode("utf-8")
        op = ops[0]
        word_nodes = named[1:]
        default = _text_of(word_nodes, env)
        current = env.var(name)
        if len(current) != 1 or current[0].text is None:
            if op in (":=", "="):
                env.assign_unknown(name, f"${{{name}{op}...}} of a variable the command did not set")
            return Exp((Value.unknown(f"${name} is not set by the command"),), quoted)
        value = current[0]
        empty = value.text == ""
        if op in (":-", ":=", ":?"):
            return Exp((default if empty else value,), quoted)
        if op == ":+":
            return Exp((Value.of("") if empty else default,), quoted)
        return Exp((value,), quoted) if op in ("-", "=", "?") else Exp((default,), quoted)
    _risky_expansion(node, env)
    for name in _values_shown(node, env):
        env.var(name)       # `${SECRET:0:40}`, `${SECRET/x/y}`, `${SECRET^^}`: its value, changed, is still shown
    env.effects(node)
    return Exp((Value.unknown(f"the expansion {node.text.decode('utf-8', 'replace')[:40]}"),), quoted)


def _values_shown(node: Any, env: Env) -> list[str]:
    """The variables whose value an expansion with an operator gives, whole or in part (a substring, a replacement,
    a case change, a prefix or suffix removed, a transform): not the length `${#x}` nor the names `${!pre*}`; for
    `${!x}`, the variable x names when the command set x to a plain name."""
    kids = node.children
    if len(kids) < 3 or kids[1].type == "#":
        return []
    if kids[1].type == "!":
        if len(kids) > 3 and kids[3].type in ("*", "@"):
            return []
        target = env.var(kids[2].text.decode("utf-8", "replace")) if kids[2].type == "variable_name" else ()
        return [t.text for t in target if t.text is not None and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", t.text)]
    first = kids[1]
    if first.type == "subscript":
        first = first.child_by_field_name("name") or first
    return [first.text.decode("utf-8", "replace")] if first.type == "variable_name" else []


def _risky_expansion(node: Any, env: Env) -> None:
    """Forms that make bash evaluate a variable's text: `${!x}` (indirection: a subscript in x's text
    is evaluated), `${x@P}` (prompt expansion runs $(...)), subscripts and `${x:off:len}` (arithmetic)."""
    kids = node.children
    text = node.text.decode("utf-8", "replace")[:40]
    if len(kids) > 2 and kids[1].type == "!" and not (len(kids) > 3 and kids[3].type in ("*", "@")):
        env.risky(f"{text} evaluates the text of a variable")
    if any(k.type == "@" for k in kids[2:]):
        env.risky(f"{text} transforms a value (the P transform runs commands)")
    arithmetic = False
    for k in kids:
        if k.type == "subscript":
            index = k.child_by_field_name("index")
            if index is not None:
                env.index(index)
        elif k.type == ":":
            arithmetic = True
        elif arithmetic and k.is_named:
            env.index(k)


def _text_of(nodes: list[Any], env: Env) -> Value:
    """The text of the word inside `${x:-word}` (no splitting, no globbing there)."""
    text = ""
    for n in nodes:
        for t in tokens(n, env):
            if isinstance(t, Lit):
                text += t.text
            else:
                for v in t.values:
                    if v.text is None:
                        return v
                    text += v.text
    return Value.of(text)


# ------------------------------------------------------------------------------------------------
# ANSI-C strings

_SIMPLE_ESCAPES = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
                   "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}


def ansi_c(body: str) -> str | None:
    """Decode the inside of $'...' as bash does; None when it uses an escape we do not decode."""
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c != "\\" or i + 1 >= len(body):
            out.append(c)
            i += 1
            continue
        e = body[i + 1]
        if e in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[e])
            i += 2
        elif e in "01234567":
            m = re.match(r"[0-7]{1,3}", body[i + 1:])
            assert m is not None
            out.append(chr(int(m.group(0), 8) & 0xFF))
            i += 1 + len(m.group(0))
        elif e in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[e]
            m = re.match(r"[0-9a-fA-F]{1,%d}" % width, body[i + 2:])
            if not m:
                out.append("\\" + e)
                i += 2
                continue
            code = int(m.group(0), 16)
            if code > 0x10FFFF:
                return None
            out.append(chr(code))
            i += 2 + len(m.group(0))
        elif e == "c":
            return None
        else:
            out.append("\\" + e)
            i += 2
    text = "".join(out)
    return text.split("\0")[0]


# ------------------------------------------------------------------------------------------------
# brace expansion

def _is(t: Tok, ch: str) -> bool:
    return isinstance(t, Lit) and not t.quoted and t.text == ch


_SEQ = re.compile(r"(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?|([a-zA-Z])\.\.([a-zA-Z])(?:\.\.(-?\d+))?")


MAX_BRACE_TOKENS = 8192


def braces(toks: list[Tok]) -> list[list[Tok]]:
    if len(toks) > MAX_BRACE_TOKENS and any(_is(t, "{") for t in toks):
        raise ExtractionError("extract.shell.too_complex", f"a word of {len(toks)} characters with braces is "
                              "too long to expand")
    return _braces(toks)


def _brace_pairs(toks: list[Tok]) -> list[tuple[int, int, list[int]]]:
    """(open, close, top-level commas) of every matched unquoted brace pair, by opening position."""
    stack: list[tuple[int, list[int]]] = []
    pairs: list[tuple[int, int, list[int]]] = []
    for i, t in enumerate(toks):
        if _is(t, "{"):
            stack.append((i, []))
        elif _is(t, ",") and stack:
            stack[-1][1].append(i)
        elif _is(t, "}") and stack:
            start, commas = stack.pop()
            pairs.append((start, i, commas))
    return sorted(pairs)


def _braces(toks: list[Tok]) -> list[list[Tok]]:
    for i, j, commas in _brace_pairs(toks):
        if commas:
            bounds = [i, *commas, j]
            alts = [toks[a + 1:b] for a, b in zip(bounds, bounds[1:])]
        else:
            seq = _sequence(toks[i + 1:j])
            if seq is None:
                continue
            alts = seq
        results: list[list[Tok]] = []
        for alt in alts:
            results.extend(_braces(toks[:i] + alt + toks[j + 1:]))
            if len(results) > MAX_BRACE_WORDS:
                raise ExtractionError("extract.shell.too_complex", f"a brace expansion makes more than "
                                      f"{MAX_BRACE_WORDS} words")
        return results
    return [toks]


def _sequence(inner: list[Tok]) -> list[list[Tok]] | None:
    if not all(isinstance(t, Lit) and not t.quoted for t in inner):
        return None
    text = "".join(t.text for t in inner if isinstance(t, Lit))
    m = _SEQ.fullmatch(text)
    if not m:
        return None
    if m.group(1) is not None:
        a, b, step = int(m.group(1)), int(m.group(2)), abs(int(m.group(3) or 1)) or 1
        if abs(b - a) // step > MAX_BRACE_WORDS:
            raise ExtractionError("extract.shell.too_complex", f"the sequence {{{text}}} is too long")
        items = [str(x) for x in range(a, b + (1 if b >= a else -1), step if b >= a else -step)]
    else:
        a, b, step = ord(m.group(4)), ord(m.group(5)), abs(int(m.group(6) or 1)) or 1
        items = [chr(x) for x in range(a, b + (1 if b >= a else -1), step if b >= a else -step)]
    return [[Lit(ch, False) for ch in item] for item in items]


# ------------------------------------------------------------------------------------------------
# tilde, splitting, globbing -> values

class _Field:
    def __init__(self) -> None:
        self.text: list[str] = []
        self.pattern: list[str] = []
        self.glob = False
        self.started = False
        self.unknown: Value | None = None

    def literal(self, text: str, *, active_glob: bool) -> None:
        self.started = True
        self.text.append(text)
        for ch in text:
            if active_glob and ch in "*?[]":
                self.glob = self.glob or ch != "]"
                self.pattern.append(ch)
            else:
                self.pattern.append("\\" + ch if ch in "*?[]\\" else ch)

    def value(self, v: Value) -> None:
        self.started = True
        if v.text is None:
            if self.unknown is None or (self.unknown.pipe and not v.pipe):
                self.unknown = replace(v, prefix="".join(self.text) + v.prefix) if self.unknown is None else v
            return
        if v.pattern is not None:
            self.text.append(v.text)
            self.pattern.append(v.pattern)
            self.glob = True
        else:
            self.literal(v.text, active_glob=False)

    def done(self) -> Value:
        if self.unknown is not None:
            if self.text and self.unknown.pipe:  # `x<(...)`: not a pipe any more
                return Value.unknown("text joined to a process substitution", stream=True)
            return self.unknown
        return Value("".join(self.text), "".join(self.pattern) if self.glob else None)


def _tilde(toks: list[Tok], home: Value, pwd: Value) -> list[Tok]:
    if not toks or not _is(toks[0], "~"):
        return toks
    prefix, i = "", 1
    while i < len(toks) and not _is(toks[i], "/"):
        t = toks[i]
        if not isinstance(t, Lit) or t.quoted:
            return toks
        prefix += t.text
        i += 1
    if prefix == "":
        value = home
    elif prefix == "+":
        value = pwd
    else:
        value = Value.unknown(f"~{prefix}: the home of another user, or a directory-stack entry")
    return [Exp((value,), True), *toks[i:]]


def values(toks: list[Tok], home: Value, pwd: Value, *, split: bool = True, assignment: bool = False) -> list[Value]:
    """The words a token list expands to (after brace expansion when `split`)."""
    if assignment:
        return _fields(_assignment_tilde(toks, home, pwd), split=split)
    out: list[Value] = []
    for alt in braces(toks) if split else [toks]:
        out.extend(_fields(_tilde(alt, home, pwd), split=split))
    return out


def _assignment_tilde(toks: list[Tok], home: Value, pwd: Value) -> list[Tok]:
    """In `name=value`, a tilde expands at the start and after each unquoted `:`."""
    segments: list[list[Tok]] = [[]]
    for t in toks:
        if _is(t, ":"):
            segments.append([])
        else:
            segments[-1].append(t)
    out: list[Tok] = []
    for i, segment in enumerate(segments):
        if i:
            out.append(Lit(":", True))
        out.extend(_tilde(segment, home, pwd))
    return out


def _fields(toks: list[Tok], *, split: bool) -> list[Value]:
    out: list[Value] = []
    cur = _Field()
    for t in toks:
        if isinstance(t, Lit):
            cur.literal(t.text, active_glob=split and not t.quoted)
            continue
        vals = t.values
        if t.join:
            known = [v.text for v in vals]
            vals = (Value.of(" ".join(k for k in known if k is not None)),) if all(k is not None for k in known) \
                else (Value.unknown("$* of unknown arguments"),)
        for k, v in enumerate(vals):
            if k > 0:
                out.append(cur.done())
                cur = _Field()
            if t.quoted or not split or v.pattern is not None:
                cur.value(v)
            elif v.text is None:
                cur.value(replace(v, multi=not v.pipe and not v.numeric))
            else:
                for p_idx, piece in enumerate(IFS_WHITESPACE.split(v.text)):
                    if p_idx > 0 and cur.started:
                        out.append(cur.done())
                        cur = _Field()
                    if piece:
                        cur.literal(piece, active_glob=True)
    if cur.started:
        out.append(cur.done())
    return out


def word_values(node: Any, env: Env, home: Value, pwd: Value) -> list[Value]:
    return values(tokens(node, env), home, pwd)


def assignment_value(node: Any | None, env: Env, home: Value, pwd: Value) -> Value:
    """The value of `name=word`: tilde after `=` and `:`, no splitting, no globbing."""
    if node is None:
        return Value.of("")
    vals = values(tokens(node, env), home, pwd, split=False, assignment=True)
    if len(vals) != 1:
        return Value.of("") if not vals else Value.unknown("an assignment of several words")
    v = vals[0]
    return Value(v.text) if v.text is not None else replace(v, multi=False)


def escape_glob(path: str) -> str:
    """`path` as a glob pattern that matches only itself."""
    return re.sub(r"([*?\[\]\\])", r"\\\1", path)
