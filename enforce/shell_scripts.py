"""Whether a sed script or an awk program stays a text filter (no command runs, no file is written).

Both languages can run commands (sed `e`, `s///e`; awk `system()`, `print | "cmd"`) and write files
(sed `w`, awk `print > "file"`). These checks accept only what cannot: anything else makes the
command unknown. They read the script as sed and awk do; they do not try to be clever.
"""
from __future__ import annotations

import re

_SED_SIMPLE = set("dDpPnNhHgGxlz=F{}")
_SED_FLAGS = set("gpiIMm0123456789")


def sed_script_is_plain(script: str) -> bool:
    """True when the GNU sed script only edits text (no e, w, r, R, W, v commands or flags)."""
    s, i, n = script, 0, len(script)
    while i < n:
        while i < n and s[i] in " \t\n;":
            i += 1
        if i >= n:
            return True
        i = _sed_address(s, i)
        if i < 0:
            return False
        if i < n and s[i] == ",":
            i = _sed_address(s, i + 1)
            if i < 0:
                return False
        while i < n and s[i] in " \t":
            i += 1
        if i < n and s[i] == "!":
            i += 1
            while i < n and s[i] in " \t":
                i += 1
        if i >= n:
            return False
        cmd = s[i]
        i += 1
        if cmd in _SED_SIMPLE:
            continue
        if cmd in "qQ":
            while i < n and (s[i].isdigit() or s[i] in " \t"):
                i += 1
        elif cmd in "aic":
            while i < n and s[i] != "\n":
                i += 2 if s[i] == "\\" else 1
        elif cmd in ":btT#":
            while i < n and s[i] not in ";\n":
                i += 1
        elif cmd in "sy":
            if i >= n or s[i] in "\\\n":
                return False
            delim = s[i]
            i = _sed_part(s, i + 1, delim)
            if i < 0:
                return False
            i = _sed_part(s, i, delim)
            if i < 0:
                return False
            if cmd == "s":
                while i < n and s[i] not in ";\n}" and s[i] not in " \t":
                    if s[i] not in _SED_FLAGS:
                        return False
                    i += 1
        else:
            return False
    return True


def _sed_part(s: str, i: int, delim: str) -> int:
    """Index after the next unescaped `delim` (sed's own reading: only backslashes escape)."""
    while i < len(s):
        if s[i] == "\\":
            i += 2
            continue
        if s[i] == delim:
            return i + 1
        i += 1
    return -1


def _sed_address(s: str, i: int) -> int:
    n = len(s)
    if i >= n:
        return i
    if s[i] == "$":
        return i + 1
    if s[i].isdigit():
        m = re.match(r"\d+(?:~\d+)?", s[i:])
        assert m
        return i + m.end()
    if s[i] in "+~" and i > 0 and s[i - 1] == ",":
        m = re.match(r"[+~]\d+", s[i:])
        return i + m.end() if m else -1
    if s[i] == "/" or s[i] == "\\":
        delim = s[i] if s[i] == "/" else (s[i + 1] if i + 1 < n else "")
        start = i + 1 if s[i] == "/" else i + 2
        if not delim:
            return -1
        j = _sed_part(s, start, delim)
        if j < 0:
            return -1
        while j < n and s[j] in "IM":
            j += 1
        return j
    return i


_AWK_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[A-Za-z_]\w*|\d+(?:\.\d*)?(?:[eE][+-]?\d+)?'
                        r'|&&|\|\||\|&|>>|>=|[\n;{}]|\S', re.S)
_AWK_REGEX_AFTER = {None, "(", ",", "{", "}", ";", "\n", "!", "~", "&&", "||", "!~", "==", "!=", "=", "?", ":"}
# Names an awk program may use beside its own variables: keywords, pure built-ins, harmless specials.
_AWK_NAMES = {"BEGIN", "END", "if", "else", "for", "while", "do", "in", "next", "exit", "delete", "break",
              "continue", "function", "func", "return", "print", "printf", "length", "substr", "split", "sub", "gsub",
              "match", "index", "tolower", "toupper", "sprintf", "int", "sqrt", "exp", "log", "sin", "cos", "atan2",
              "rand", "srand", "gensub", "strftime", "systime", "asort", "asorti", "NR", "NF", "FNR", "FS", "OFS",
              "RS", "ORS", "SUBSEP", "RSTART", "RLENGTH", "CONVFMT", "OFMT", "FILENAME", "IGNORECASE", "RT"}
_AWK_FORBIDDEN = {"system", "getline", "close", "fflush", "nextfile"}


def awk_program_is_plain(program: str) -> bool:
    """True when the awk program runs no command, writes no file and reads no file of its choosing:
    an allowlist of names (user variables start with a lower-case letter), no pipe, no `>` in print."""
    prev: str | None = None
    in_print = False
    i = 0
    while i < len(program):
        if program[i] in " \t":
            i += 1
            continue
        if program[i] == "/" and prev in _AWK_REGEX_AFTER:
            j = i + 1
            while j < len(program) and program[j] != "/":
                j += 2 if program[j] == "\\" else 1
            if j >= len(program):
                return False
            i, prev = j + 1, "/re/"
            continue
        m = _AWK_TOKEN.match(program, i)
        if m is None:
            return False
        tok = m.group(0)
        i = m.end()
        if tok[0] == "#":
            while i < len(program) and program[i] != "\n":
                i += 1
            continue
        if tok in _AWK_FORBIDDEN or tok in ("|", "|&", "@"):
            return False
        if tok[0].isalpha() or tok[0] == "_":
            if tok not in _AWK_NAMES and not tok[0].islower():
                return False
            if tok in ("print", "printf"):
                in_print = True
        if tok in ("\n", ";", "{", "}"):
            in_print = False
        if in_print and tok in (">", ">>"):
            return False
        prev = tok
    return True
