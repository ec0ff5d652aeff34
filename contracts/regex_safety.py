"""Regular expressions from a spec that run on the agent's text: refuse the shapes that backtrack without bound.

A spec's regex (a classifier bank's `cues`/`acts`/`asides`, a command table's `separate`) is data a
security engineer writes, and a hostile spec is in scope: Python's `re` backtracks, so a pattern such as
`(\\s?\\w+)+#` takes time exponential in the length of the text it fails on, and the monitor runs it on
the agent's words. This module reads the parsed pattern (re's own parser) and refuses

* nested repetition: a repeat that may run more than UNROLL times (`*`, `+`, `{2,}`, `{0,50}`) whose body
  holds, directly or through groups, alternations or lookarounds, a repeat of variable count (`?`, `*`,
  `+`, `{1,3}`): the body can then split the same text in many ways on every round. A repeat of at most
  UNROLL rounds (`(\\W+\\w+){0,3}`) is read as that many copies in a row, and its body is checked so;
* overlapping alternatives in such a repeat: `(a|aa)+`, `(?:\\w|_x)+`, where two branches may start with the same
  character (or one may match nothing), the rounds again split one text in many ways; branches that start with
  different letters (`(?:ab|cd)+`) pass;
* backreferences (`\\1`, `(?P=name)`, `(?(1)...)`): matching them is not a regular language at all.

Pure: no I/O, nothing compiled or run. Sequences of repeats (`.*a.*a.*a`) are polynomial, not refused here.
"""
from __future__ import annotations

import functools
from re import _constants as sre_constants  # type: ignore[attr-defined]  # re's own parser: no stub
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

UNROLL = 3  # a repeat of at most this many rounds is read as that many copies in a row

_REPEATS = {sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT}
_BACKREFS = {sre_constants.GROUPREF, sre_constants.GROUPREF_EXISTS}
FIX = ("write the repeated part so that it can match a text in one way only: no `?`, `*`, `+` or `{m,n}` inside "
       "a group that is itself repeated (`(\\s?\\w+)+` -> `[\\s\\w]*\\w`), and no backreference")


class UnsafeRegex(ValueError):
    """A spec's pattern refused by check_regex: `where` it is (a key), the pattern, why, and the fix."""

    def __init__(self, where: str, pattern: str, why: str) -> None:
        super().__init__(f"{where}: pattern {pattern!r} {why}; fix: {FIX}")
        self.where, self.pattern, self.why, self.fix = where, pattern, why, FIX


def check_regex(pattern: str, where: str, flags: int = 0) -> None:
    """Raise UnsafeRegex when `pattern` nests variable repetition in a long repeat or uses a backreference;
    re.error when it is not a regular expression."""
    why = regex_problem(pattern, flags)
    if why:
        raise UnsafeRegex(where, pattern, why)


@functools.lru_cache(maxsize=4096)  # a frozen classifier repeats the shared asides in every category
def regex_problem(pattern: str, flags: int = 0) -> str:
    """Why `pattern` may backtrack without bound ("" when it may not)."""
    return _problem(sre_parse.parse(pattern, flags))


def _problem(items: Any) -> str:
    """The first problem in a parsed sequence (a SubPattern or a list of (op, arg) items)."""
    for op, arg in items:
        why = _item_problem(op, arg)
        if why:
            return why
    return ""


def _item_problem(op: Any, arg: Any) -> str:
    if op in _BACKREFS:
        return "uses a backreference (\\1, (?P=name) or (?(1)...)): matching one backtracks without bound"
    if op in _REPEATS:
        low, high, body = arg
        if high > UNROLL:
            inner = _variable_repeat(body)
            if inner:
                return (f"repeats a group ({_count(low, high)}) that holds a repeat of variable count ({inner}): "
                        "its rounds can split one text in many ways, so a text it fails on takes exponential time")
            if _overlapping_branch(body):
                return (f"repeats a group ({_count(low, high)}) that holds alternatives which may start alike "
                        "(`(a|aa)+`): its rounds can split one text in many ways, so a text it fails on takes "
                        "exponential time")
        return _problem(body)
    return next(filter(None, (_problem(part) for part in _children(op, arg))), "")


def _variable_repeat(items: Any) -> str:
    """The count (e.g. `?`) of the first repeat of variable count in a parsed sequence, or ""."""
    for op, arg in items:
        if op in _REPEATS:
            low, high, body = arg
            if low != high:
                return _count(low, high)
            found = _variable_repeat(body)
        else:
            found = next(filter(None, (_variable_repeat(part) for part in _children(op, arg))), "")
        if found:
            return found
    return ""


_ANY = None  # a first character that may be any: it overlaps every other


def _overlapping_branch(items: Any) -> bool:
    """Whether a parsed sequence holds an alternation two of whose branches may start with the same character."""
    for op, arg in items:
        if op is sre_constants.BRANCH:
            seen: set[str] = set()
            for branch in arg[1]:
                first = _first_chars(branch)
                if first is _ANY or first & seen:
                    return True
                seen |= first
        if any(_overlapping_branch(part) for part in _children(op, arg)) or \
                op in _REPEATS and _overlapping_branch(arg[2]):
            return True
    return False


def _first_chars(items: Any) -> set[str] | None:
    """The characters a parsed sequence may start with (lower case), or _ANY when that is not a short literal list
    (a class, a category, any character, or a sequence that may match nothing)."""
    for op, arg in items:
        if op in (sre_constants.AT, sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            continue  # zero width: the next item starts the text
        if op is sre_constants.LITERAL:
            return {chr(arg).lower()}
        if op is sre_constants.SUBPATTERN:
            return _first_chars(arg[3])
        if op is sre_constants.IN and all(kind is sre_constants.LITERAL for kind, _ in arg):
            return {chr(c).lower() for _, c in arg}
        return _ANY
    return _ANY  # an empty branch matches nothing: it overlaps every round


def _children(op: Any, arg: Any) -> list[Any]:
    """The parsed sequences inside a group, an alternation, a lookaround or an atomic group."""
    if op is sre_constants.SUBPATTERN:
        return [arg[3]]
    if op is sre_constants.BRANCH:
        return list(arg[1])
    if op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
        return [arg[1]]
    if op is sre_constants.ATOMIC_GROUP:
        return [arg]
    return []


def _count(low: int, high: int) -> str:
    """A repeat's count as written: `?`, `*`, `+`, `{3}`, `{2,}`, `{1,3}`."""
    unbounded = high == sre_constants.MAXREPEAT
    short = {(0, 1): "?"}.get((low, high)) or ({0: "*", 1: "+"}.get(low) if unbounded else None)
    if short:
        return f"`{short}`"
    return f"`{{{low}}}`" if low == high else f"`{{{low},{'' if unbounded else high}}}`"


__all__ = ["FIX", "UNROLL", "UnsafeRegex", "check_regex", "regex_problem"]
