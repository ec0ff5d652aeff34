"""Extractors: from what the agent produced to the policy's arguments, without an LLM.

Each extractor fills one argument and reports how it got the value and with what confidence.
Any doubt is an ExtractionError, which the monitor turns into a denial (fail closed).
Declared per spec in its [extraction] section; see `build_extractors`. Scalars are taken only as
exact bool, int and str (a subclass could compare unlike the value it prints as).

Tool calls: everything or nothing. The attack to close is a reader (this module) that sees a benign
call while the agent framework runs another. The recognised shapes, each parsed exactly (these keys
and no others; a tool name of 1-128 characters from A-Z a-z 0-9 _ . -; arguments a JSON object):
  anthropic  {"type": "tool_use" | "server_tool_use" | "mcp_tool_use", "name", "input": {...}}
             (optional: id, cache_control; server_name for mcp_tool_use)
  openai     {"type": "function", "function": {"name", "arguments"}} (optional: id, index), alone or
             as an item of a "tool_calls" list (every item must be one); the legacy message key
             {"function_call": {"name", "arguments"}}; the Responses API item
             {"type": "function_call", "name", "arguments"} (optional: id, call_id, status).
             `arguments` is a JSON text, parsed strictly (duplicate keys, NaN, over-long numbers refused),
             or an object.
  mcp        {"method": "tools/call", "params": {"name", "arguments": {...}}} (optional: jsonrpc, id;
             params.arguments, absent or null for none; params._meta)
Calls written as text by open models (read in every string, call arguments included, where they are nested calls):
  hermes     <tool_call>{"name", "arguments": {...}}</tool_call> (Hermes, Qwen; the closing tag may be missing)
  mistral    [TOOL_CALLS] [{"name", "arguments": {...}} (optional id), ...]
  llama      <|python_tag|>{"name", "parameters": {...}}
Anything else that looks like a call is an error (extract.tool_call), never skipped: an object whose
"type", "kind" or "method" mentions tool, function, call or invoke (a type or kind ending in result or output
excepted: tool results are data), a JSON-RPC request (method beside jsonrpc, or beside params and id), or that pairs
a name key (name, action; tool, function, func, operation; a method that is no HTTP method (GET, POST, ...); one of
those, method, call or recipient followed by name or id) with an arguments key (arguments, argument, args, input,
inputs, parameters, parameter, params, kwargs, each alone or after one of those callers, with or without a json
suffix; payload, body or data beside a key that names the callee, not a bare name or action); keys are compared
folded, lower case with letters and digits only, so toolName, tool-name, "Tool Name" and TOOL_NAME are one key; a
malformed recognised shape; any call-like object inside a call's arguments (whatever runs the outer call may run it);
any other mark of a call written as text in an open model's format (_TEXT_CALLS: a template token naming a tool,
python, function, call, action or plugin, <|tool_call|>, <|python_start|>, DeepSeek's and Kimi's tokens; a tag like
<tool_use>, <function_calls>, <tool-call >; <function=, <invoke, [TOOL_REQUEST], ✿FUNCTION✿, harmony's to=functions.,
functools[, a ```tool_code block, functionary's >>>name {; ReAct's Action Input, Action: tool[...]; a name key and
an arguments key of one dict written as Python or escaped JSON; a text that is a list of Python calls).
Every string is read for calls: one that decodes to JSON as that JSON (a batch or dispatch tool decodes its text;
JSON text inside JSON text too), any other for the JSON objects written in it (`{"`, `{}` or a JSON string holding
`{` onwards; a call in a recognised shape there is a call, a call-like one an error; a text costlier to read than
about 4 times its length is an error), and for the texts encoded in it (base64, standard, URL-safe, in lines or behind
a prefix; base32; base85 and Ascii85; uuencode; hex; percent-encoding; HTML references; backslash escapes; gzip, zlib,
bzip2, xz and raw deflate inside them; bytes under a one-byte XOR or shift key; letters rotated (rot13, any Caesar
shift) or the text reversed when that shows a call's word), read like any string when they decode to printable UTF-8
(or for the printable runs inside bytes that are no text); keys are strings too. Before a text is searched for a
call of a named tool it is also read with invisible characters, combining marks, look-alike letters and empty markup
taken out (_plain). Not read, but refused: a long run no decoder reads (letters and digits mixed as an encoding mixes
them: a cipher with a key of several bytes, base64 reversed or re-grouped; _opaque), unless it is a hex digest, a
UUID, a JWT's signature or a bech32 address. A framework that runs calls of another shape needs its own extractor.
A tool_call extractor for one tool also denies any text (a call's own arguments included; JSON text is read as its
data, the calls in read wrappers as calls) that writes a call of that tool in a call position (_named_call: a bare
`transfer(to=...)`, ChatGLM's name line over JSON, a YAML key, `name: transfer`, `<name>transfer</name>`, `<transfer>`,
`<cmd>transfer ...`, `<x.transfer ...>`, harmony's `to=transfer`, `op="transfer"`); one for any tool (`*`), a call
given keyword, `**` or object arguments anywhere (inside a statement, over lines; Python or JS), YAML with a name key
over `input:`/`params:`, TOML's `name = "x"` over its arguments, and an XML element HTML does not have that holds an
element or JSON, has attributes or closes on itself, or whose tag names a call (`<cmd>`, `<execute>`), and the forms
of _ANY_FORMS (a workflow step's `with:`, an INI section, a command line with an option's value, a call with literal
arguments inside a statement, Ruby keywords, a struct literal, a table under a tool column). The agent data
is walked once for both (tool_calls with the extractor's tool).
"""
from __future__ import annotations

import ast
import base64
import binascii
import bisect
import bz2
import collections
import functools
import itertools
import html
import io
import json
import lzma
import math
import operator
import pickletools
import re
import string
import struct
import tempfile
import unicodedata
import urllib.parse
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, NamedTuple, NoReturn, Protocol, TypeVar

import veriguard.contracts.strict_json as strict_json
from veriguard.enforce.extract_errors import ExtractionError
from veriguard.enforce.textnorm import LEET, map_lookalikes, strip_invisible, strip_marks, strip_tags


@dataclass(frozen=True)
class Extracted:
    value: Any
    how: str                 # provenance, for the decision log
    confidence: float = 1.0
    extractor: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)  # structured provenance (the model's, for `llm`)


class Extractor(Protocol):
    @property
    def kind(self) -> str: ...  # read-only: the extractors are frozen dataclasses

    def extract(self, observation: Mapping[str, Any]) -> Extracted: ...


def _show(value: Any) -> str:
    """A value for a message: a short repr of plain data, the type's name for anything else."""
    if type(value) is int and value.bit_length() > 64:
        return f"an integer of {value.bit_length()} bits"
    return repr(value)[:60] if type(value) in (str, int, bool, float, type(None)) else type(value).__name__


def _path(observation: Any, path: str) -> Any:
    """`a.b[2].c` into nested mappings and lists; ExtractionError when something is missing."""
    value = observation
    for part in path.replace("[", ".[").split("."):
        if not part:
            continue
        if part.startswith("["):
            index = int(part[1:-1])
            if not isinstance(value, list) or index >= len(value):
                raise ExtractionError("extract.missing", f"no element {index} at {path!r}")
            value = value[index]
        else:
            if not isinstance(value, Mapping) or part not in value:
                raise ExtractionError("extract.missing", f"the agent data has no field {path!r}")
            value = value[part]
    return value


_INT_TEXT = re.compile(r"-?[0-9]{1,30}")  # ASCII digits only: str.isdigit() also takes "²" and other scripts' digits
# A tool reads its call's arguments with its own JSON reader. Past ±(2**53 - 1) a reader of doubles (JavaScript, and
# many others) takes another integer than the policy checked (I-JSON, RFC 7493); a lone surrogate is no character a
# reader must accept, and a NUL ends the text for a tool written in C: the tool would act on other values.
_SAFE_INT = 2**53 - 1
_READ_OTHERWISE = re.compile("[\x00\ud800-\udfff]")


def _coerce(value: Any, t: Mapping[str, Any], where: str, mapping: Mapping[str, str] | None = None, *,
            exact: bool = False) -> Any:
    """Type-check one scalar against its schema type, mapping enum spellings; never guess. `exact`: no number or
    truth value written as text either (a tool call's arguments: the tool reads the text itself, and may read it
    otherwise: "false" is true in JavaScript)."""
    kind = t["kind"]
    if kind == "bool":
        if type(value) is bool:
            return value
        if not exact and type(value) is str and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        raise ExtractionError("extract.type", f"{where}: expected true/false, got {_show(value)}")
    if kind == "int":
        if type(value) is int and exact and abs(value) > _SAFE_INT:
            raise ExtractionError("extract.type", f"{where}: {_show(value)} is beyond ±(2**53 - 1), where a tool's JSON "
                                  "reader may take another integer than the policy checks")
        if type(value) is int:
            return value
        if not exact and type(value) is str and _INT_TEXT.fullmatch(value.strip()):
            return int(value.strip())
        raise ExtractionError("extract.type", f"{where}: expected an integer, got {_show(value)}")
    if type(value) is not str:
        raise ExtractionError("extract.type", f"{where}: expected a string, got {_show(value)}")
    if exact and _READ_OTHERWISE.search(value):
        raise ExtractionError("extract.type", f"{where}: {_show(value)} holds a NUL or a lone surrogate, which a tool "
                              "may read otherwise (C ends the text at a NUL)")
    value = (mapping or {}).get(value, value)
    if kind == "enum" and value not in t["values"]:
        raise ExtractionError("extract.enum", f"{where}: {_show(value)} is not one of {t['values']}")
    return value


def _typed(value: Any, t: Mapping[str, Any], where: str, mapping: Mapping[str, str] | None = None, *,
           exact: bool = False) -> Any:
    kind = t["kind"]
    if kind == "record":
        if not isinstance(value, Mapping):
            raise ExtractionError("extract.type", f"{where}: expected an object, got {type(value).__name__}")
        out = {}
        for f, ft in t["fields"]:
            if f not in value:
                raise ExtractionError("extract.missing", f"{where}: field {f!r} is missing")
            out[f] = _coerce(value[f], ft, f"{where}.{f}", mapping, exact=exact)
        return out
    if kind == "list":
        if not isinstance(value, list):
            raise ExtractionError("extract.type", f"{where}: expected a list, got {type(value).__name__}")
        elem = t["elem"]
        if elem["kind"] == "tuple":
            return [[_coerce(x, it, f"{where}[{i}]", mapping, exact=exact)
                     for it, x in zip(elem["items"], _tuple(v, elem, where))]
                    for i, v in enumerate(value)]
        return [_coerce(v, elem, f"{where}[{i}]", mapping, exact=exact) for i, v in enumerate(value)]
    return _coerce(value, t, where, mapping, exact=exact)


def _tuple(v: Any, elem: Mapping[str, Any], where: str) -> list[Any]:
    if not isinstance(v, (list, tuple)) or len(v) != len(elem["items"]):
        raise ExtractionError("extract.type", f"{where}: expected {len(elem['items'])}-tuples, got {v!r}")
    return list(v)


@dataclass(frozen=True)
class FieldExtractor:
    """A value at a path in the agent data, type-checked, with optional enum spellings (`map`)."""

    path: str
    type: Mapping[str, Any]
    map: Mapping[str, str] | None = None
    kind: str = "field"

    def extract(self, observation: Mapping[str, Any]) -> Extracted:
        raw = _path(observation, self.path)
        return Extracted(_typed(raw, self.type, self.path, self.map), f"field {self.path}", 1.0, self.kind)


@dataclass(frozen=True)
class RecordExtractor:
    """A record assembled from several paths (`fields = { role = "session.role", ... }`) plus defaults."""

    fields: Mapping[str, str]
    type: Mapping[str, Any]
    defaults: Mapping[str, Any] | None = None
    kind: str = "context"

    def extract(self, observation: Mapping[str, Any]) -> Extracted:
        value = dict(self.defaults or {})
        for f, path in self.fields.items():
            value[f] = _path(observation, path)
        how = ", ".join(f"{f} <- {p}" for f, p in self.fields.items())
        return Extracted(_typed(value, self.type, "record"), f"context: {how}", 1.0, self.kind)


class ToolCall(NamedTuple):
    name: str
    arguments: dict[str, Any]
    format: str
    where: str               # its path in the agent data, for messages


_ANTHROPIC = {"tool_use": "anthropic tool_use", "server_tool_use": "anthropic server_tool_use",
              "mcp_tool_use": "anthropic mcp_tool_use"}
_TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")
_CALLISH = re.compile(r"tool|function|call|invoke", re.IGNORECASE)
_RESULT = re.compile(r"(result|output)s?$", re.IGNORECASE)
# Keys are compared folded (_key_word: lower case, letters and digits only), so that toolName, tool-name, "Tool Name"
# and TOOL_NAME are one key: a framework that runs {"toolName", "toolInput"} (camelCase SDKs) is no less a caller.
_CALLERS = ("tool", "function", "func", "action", "method", "operation", "call", "recipient")  # a call's key prefixes
_CALLER_KEYS = frozenset(("tool", "function", "func", "operation")  # keys that name the callee (not a bare name)
                         + tuple(f"{c}{w}" for c in _CALLERS for w in ("name", "id")))
_NAME_KEYS = _CALLER_KEYS | {"name", "action"}   # a bare method is an HTTP verb as often: JSON-RPC only (_call_like)
_ARGUMENT_WORDS = ("arguments", "argument", "args", "input", "inputs", "parameters", "parameter", "params", "kwargs")
_ARGUMENT_KEYS = frozenset(f"{c}{w}{suffix}" for c in ("",) + _CALLERS for w in _ARGUMENT_WORDS
                           for suffix in ("", "json"))
_BODY_KEYS = frozenset({"payload", "body", "data"})  # arguments too, beside a key that names a callee (not a bare name)
# A method (any key ending in method) names a callee unless it is an HTTP method: {"method": "transfer", "params": ...}
# is a call, {"method": "GET", "params": {...}} an HTTP request's fields (JSON-RPC: told by jsonrpc, or params and id)
_HTTP_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH", "PROPFIND",
                           "PROPPATCH", "MKCOL", "COPY", "MOVE", "LOCK", "UNLOCK", "SEARCH", "QUERY"})
_KIND_KEYS = ("type", "kind", "method")   # keys that say what an object is: one that mentions a call marks it
_CONTAINER_KEYS = ("tool_calls", "function_call")
_MAX_DEPTH = 64
_WORD = re.compile(r"[\w.-]{0,15}")   # a key that can write no call, JSON or encoded text
_SHAPES = ('{"type": "tool_use" | "server_tool_use" | "mcp_tool_use", "name", "input": {...}}, '
           '{"type": "function", "function": {"name", "arguments"}}, {"type": "function_call", "name", "arguments"}, '
           '{"function_call": {"name", "arguments"}}, {"method": "tools/call", "params": {"name", "arguments": {...}}}')


def _bad_call(where: str, message: str) -> NoReturn:
    raise ExtractionError("extract.tool_call", f"{where or 'the agent data'}: {message}")


def _only_keys(x: Mapping[Any, Any], required: set[str], optional: set[str], what: str, where: str) -> None:
    missing, extra = required - set(x), set(x) - required - optional
    if missing or extra:
        wrong = ", ".join(([f"lacks {sorted(missing)}"] if missing else [])
                          + ([f"has {sorted(map(_show, extra))[:5]}"] if extra else []))
        _bad_call(where, f"a {what} call that {wrong}; the shape is exactly {sorted(required)} plus optionally "
                  f"{sorted(optional)}, so that no reader of it can see other arguments or another call")


def _tool_name(x: Mapping[str, Any], where: str) -> str:
    name = x.get("name")
    if type(name) is not str or not _TOOL_NAME.fullmatch(name):
        _bad_call(where, f"the tool name {_show(name)} is not 1-128 of the characters A-Z a-z 0-9 _ . -")
    return name


def _call_arguments(value: Any, where: str, *, json_text: bool) -> dict[str, Any]:
    """A call's arguments as an object; `json_text`: OpenAI's JSON text is parsed strictly (no duplicate keys)."""
    if json_text and type(value) is str:
        try:   # a lone surrogate is refused where a value is read (_coerce: extract.type, naming the argument)
            value = strict_json.loads_passing_surrogates(value)
        except strict_json.StrictJSONError as e:
            _bad_call(where, f"the arguments are not strict JSON ({e})")
    if not isinstance(value, Mapping) or not all(type(k) is str for k in value):
        _bad_call(where, f"the arguments must be a JSON object, got {_show(value)}")
    return dict(value)


def _function(f: Any, where: str, fmt: str) -> ToolCall:
    """OpenAI's {"name", "arguments"} object (inside a chat tool call, or the legacy `function_call`)."""
    if not isinstance(f, Mapping):
        _bad_call(where, f"a function call must be an object with name and arguments, got {_show(f)}")
    _only_keys(f, {"name", "arguments"}, set(), fmt, where)
    return ToolCall(_tool_name(f, where), _call_arguments(f["arguments"], f"{where}.arguments", json_text=True), fmt,
                    where)


def _call_at(x: Mapping[Any, Any], where: str) -> ToolCall | None:
    """The call `x` is, in one of the recognised shapes, parsed strictly; None when `x` is none of them."""
    kind = x.get("type") if type(x.get("type")) is str else None
    if kind in _ANTHROPIC:
        optional = {"id", "cache_control"} | ({"server_name"} if kind == "mcp_tool_use" else set())
        _only_keys(x, {"type", "name", "input"}, optional, kind, where)
        return ToolCall(_tool_name(x, where), _call_arguments(x["input"], f"{where}.input", json_text=False),
                        _ANTHROPIC[kind], where)
    if kind == "function":
        _only_keys(x, {"type", "function"}, {"id", "index"}, "openai chat", where)
        return _function(x["function"], f"{where}.function", "openai function call")
    if kind == "function_call":
        _only_keys(x, {"type", "name", "arguments"}, {"id", "call_id", "status"}, "openai responses", where)
        return ToolCall(_tool_name(x, where), _call_arguments(x["arguments"], f"{where}.arguments", json_text=True),
                        "openai function_call", where)
    if x.get("method") == "tools/call":
        _only_keys(x, {"method", "params"}, {"jsonrpc", "id"}, "mcp tools/call", where)
        params = x["params"]
        if not isinstance(params, Mapping):
            _bad_call(f"{where}.params", f"must be an object with name and arguments, got {_show(params)}")
        _only_keys(params, {"name"}, {"arguments", "_meta"}, "mcp tools/call params", f"{where}.params")
        arguments = params.get("arguments")
        return ToolCall(_tool_name(params, f"{where}.params"),
                        _call_arguments({} if arguments is None else arguments, f"{where}.params.arguments",
                                        json_text=False), "mcp tools/call", where)
    return None


def _key_word(key: str) -> str:
    """A key folded to compare spellings: lower case, letters and digits only (toolName, tool_name, "Tool Name"), as a
    reader that forgives its look reads it (_plain: fullwidth, circled, mathematical, look-alike letters; ⒜)."""
    if not key.isascii():
        key = _plain(key.translate(_PARENTHESIZED))
    return "".join(c for c in key.lower() if c.isalnum())


def _call_like(x: Mapping[Any, Any]) -> str:
    """Why `x` looks like a tool call, whatever its shape or the spelling of its keys ('' when it does not)."""
    keys = {_key_word(k): k for k in x if type(k) is str}
    for word in _KIND_KEYS:
        kind = x.get(keys[word]) if word in keys else None
        if type(kind) is str and _CALLISH.search(kind) and not (word != "method" and _RESULT.search(kind)):
            return f'its {keys[word]!r} is {kind[:40]!r}'
    if "method" in keys and ("jsonrpc" in keys or {"params", "id"} <= set(keys)):
        return f"it is a JSON-RPC request ({keys['method']!r} with {'jsonrpc' if 'jsonrpc' in keys else 'params and id'})"
    named = {w for w, k in keys.items() if w.endswith("method") and type(x[k]) is str  # method, rpcMethod, ...
             and x[k].strip().upper() not in _HTTP_METHODS}
    callees = [k for w, k in keys.items() if w in _CALLER_KEYS or w in named]
    names = sorted(k for w, k in keys.items() if w in _NAME_KEYS or w in named)
    arguments = sorted(k for w, k in keys.items() if w in _ARGUMENT_KEYS or (callees and w in _BODY_KEYS))
    if names and arguments:
        return f"it pairs {names[0]!r} with {arguments[0]!r}"
    return ""


def _walk(root: Any, where: str, visit: Callable[[Mapping[Any, Any], str], Iterable[tuple[Any, Any]]],
          text: Callable[[Any, str], Any] | None = None, *, join: bool = True) -> None:
    """visit(mapping, path) for every mapping in `root`, in document order; it returns the (key, value)
    pairs to descend into. Lists and tuples are descended; strings are data, read only by `text` (path -> the data
    the string holds, None for none), which descends into what it returns. With `text` and `join`, the text pieces of
    a list or a mapping are read joined too (_Joined), and a list's runs and numbers (_joined_items, _number_items)."""
    stack: list[tuple[Any, str, int]] = [(root, where, 0)]
    while stack:
        x, at, depth = stack.pop()
        if depth > _MAX_DEPTH:
            _bad_call(at, f"the agent data nests deeper than {_MAX_DEPTH} levels")
        held = text(x, at) if text is not None and type(x) in (str, _Guessed, _Joined) else None
        if held is not None:
            x = held
        if isinstance(x, Mapping):
            children = [(v, f"{at}.{k if type(k) is str else _show(k)}".lstrip(".")) for k, v in visit(x, at)]
            if text is not None:  # a key is a string too: a call written there is read, or denies (a word cannot)
                children += [(k, f"{at}[key {_show(k)}]") for k in x if type(k) is str and not _WORD.fullmatch(k)]
            pieces = ([v for v in x.values() if type(v) is str and not _WORD.fullmatch(v)]   # not a kind, an id
                      if text is not None and join else [])
            strings = _object_strings(x) if text is not None and join else []
            if len(strings) > 1 and any(_KEY_VALUE.fullmatch(v) for v in strings):   # a key alone in one value,
                _refuse_lettered_beside(" ".join(strings), at)   # the letters it hides in another
            lists = [v for v in x.values() if isinstance(v, list)][:_RECORD_LISTS] if text is not None else []
            records = _records(lists) if len(lists) > 1 else []   # one list alone is no header over a row
            if records:   # {"keys": ["name", "arguments"], "values": ["transfer", {...}]}: read as the objects they are
                children.append((records, f"{at}[as records]"))
        elif isinstance(x, (list, tuple)):
            children = [(v, f"{at}[{i}]") for i, v in enumerate(x)]
            values = _piece_values(x) if text is not None and join else []   # collected once for both readings
            joined = _joined_items(values)
            if joined:   # a run cut into the items of a list (a notebook's lines or cells, text blocks)
                children.append((joined, f"{at}[joined]"))
            records = _records([x[0], list(x[1:_RECORD_FIELDS + 1])]) if (
                text is not None and x and isinstance(x[0], list)) else []
            if records:   # [["name", "arguments"], ["transfer", {...}]]: a header row over its rows
                children.append((records, f"{at}[as records]"))
            numbers = _number_items(x) if text is not None and join else ""
            if numbers:   # a list of numbers held as data is read as the same list written in text
                children.append((numbers, f"{at}[numbers]"))
            pieces = [v for v in values if type(v) is str]   # its text pieces (text blocks), in order
        else:
            continue
        if len(pieces) > 1:   # a call written across text blocks, or across an object's strings
            children.append((_Joined("".join(pieces), pieces), f"{at}[joined text]"))
        stack.extend((v, p, depth + 1) for v, p in reversed(children))


_RECORD_FIELDS = 64   # fields of a header at most read as a record's keys; rows read under it at most as many
_RECORD_LISTS = 8     # an object's lists at most read as headers and rows


def _records(lists: list[Any]) -> list[dict[str, Any]]:
    """Objects written as columns: each list of 2 to _RECORD_FIELDS distinct strings (keys, a header) zipped with each
    other list of its length (values, a row), and with each such list inside another (rows)."""
    out: list[dict[str, Any]] = []
    for header in lists:
        if not 2 <= len(header) <= _RECORD_FIELDS or not all(type(k) is str for k in header) or len(
                set(header)) < len(header):
            continue
        for other in lists:
            if other is header:
                continue
            rows = [other] if len(other) == len(header) and not all(isinstance(r, list) for r in other) else [
                r for r in other[:_RECORD_FIELDS] if isinstance(r, list) and len(r) == len(header)]
            out += [dict(zip(header, row)) for row in rows if row is not header]
    return out


def _object_strings(x: Mapping[Any, Any]) -> list[str]:
    """A mapping's string values and the strings of its list values, in order."""
    return [s for v in x.values() for s in ([v] if type(v) is str else v if isinstance(v, list) else [])
            if type(s) is str]


_PIECE_KEYS = ("text", "source", "content", "data", "value", "chunk", "body", "output", "result", "lines")
_RUN_PIECE = re.compile(r"[A-Za-z0-9+/=_\s-]+")


def _piece_values(items: list[Any] | tuple[Any, ...]) -> list[Any]:
    """A list's strings, and the values under a text-like key of its objects (None where there is none), in order:
    its text pieces are the strings among them (_walk), and _joined_items reads its runs in them."""
    values: list[Any] = []
    for item in items:
        values += [item] if type(item) is str else [item.get(k) for k in _PIECE_KEYS] if isinstance(
            item, Mapping) else []
    return values


def _joined_items(values: list[Any]) -> str:
    """The pieces of an encoding's characters that a list holds (_piece_values: its strings, and the strings or lists
    of strings under a text-like key of its objects), joined, when two or more; '' otherwise (blanks dropped)."""
    pieces: list[str] = []
    for value in values:
        for piece in value if isinstance(value, list) else [value]:
            if (type(piece) is str and len(piece) < _OPAQUE_MIN and _RUN_PIECE.fullmatch(piece)
                    and not _DIGEST.fullmatch(piece) and not _UUID.fullmatch(piece)):
                pieces.append(piece)   # a longer piece, a digest or a UUID is read, or refused, on its own
    joined = "".join("".join(pieces).split())
    if len(pieces) <= 1 or len(joined) < _ENCODED_MIN:
        return ""
    return _Guessed(joined) if len(_codes(pieces)) == len(pieces) else joined   # codes' letters are drawn at random


class _Joined(str):
    """The text pieces of a list (text blocks, a list's strings) or the string values of a mapping, joined: what a
    reader that joins them reads. Read for calls no piece shows alone (_split_call), not decoded again."""
    pieces: tuple[str, ...]

    def __new__(cls, joined: str, pieces: list[str]) -> _Joined:
        made = super().__new__(cls, joined)
        made.pieces = tuple(pieces)
        return made


def _split_call(joined: _Joined, where: str, tool: str | None) -> None:
    """A call read in text pieces joined (a JSON object, an open model's wrapper, a written form refused) that the
    pieces read one by one do not show: written across them, it denies. A piece refused alone is refused where it
    is read."""
    whole = _calls_written(str(joined), tool)
    if whole == 0:
        return
    alone = [_calls_written(p, tool) for p in joined.pieces]
    if -1 not in alone and (whole < 0 or whole > sum(alone)):
        _bad_call(where, f"a tool call written across {len(joined.pieces)} text pieces (text blocks, a list's "
                  "strings, an object's values): a reader that joins them reads it")


def _calls_written(text: str, tool: str | None) -> int:
    """The calls read in `text` as written (not decoded: _WRITTEN_CALLS); -1 when it is refused. Kept for a text up to
    _CACHED_TEXT characters, as _read_once keeps readings (an agent sends its history again each turn)."""
    try:
        return len(_read_once(_WRITTEN_CALLS, text, tool))
    except ExtractionError:
        return -1


def _number_items(items: list[Any] | tuple[Any, ...]) -> str:
    """A list of _NUMBER_LIST's length or more whose items are all integers or numbers written as strings, written
    as text (`1, 2, 3`) for _encoded's reading of number lists; '' otherwise."""
    if len(items) < 16 or not all(type(v) is int or type(v) is str and _NUMBER_VALUE.fullmatch(v) for v in items):
        return ""
    return ", ".join(str(v) for v in items)


_MAX_JSON_TEXT = 1_000_000   # a longer argument string is not decoded: it denies if it may be JSON (see _as_json)


def _as_json(value: Any, where: str) -> Any:
    """The data an argument string holds when the tool may read it as JSON (a batch or dispatch tool decodes its text,
    or text inside that text): a JSON object or array, decoded again while it decodes to more JSON text; None for
    any other value. A string too long to decode that may be JSON denies."""
    for _ in range(_MAX_DEPTH):
        if type(value) is not str or value.strip()[:1] not in ("{", "[", '"'):
            return None
        if len(value) > _MAX_JSON_TEXT:
            _bad_call(where, f"a string of {len(value):,} characters that may be JSON holding a tool call; more "
                      f"than the {_MAX_JSON_TEXT:,} read")
        try:   # a lone surrogate is refused where the value is read (_coerce), not taken here for text that is no JSON
            value = strict_json.loads_passing_surrogates(value)
        except (strict_json.StrictJSONError, RecursionError):
            return None
        if type(value) is not str:
            return value
    return None


# A call written as text in the chat template of an open model; a runtime that parses the model's text runs it.
# Read as calls, parsed strictly: Hermes and Qwen `<tool_call>{"name", "arguments": {...}}</tool_call>` (the closing
# tag may be missing at the end), Mistral `[TOOL_CALLS] [{"name", "arguments": {...}}, ...]` (optional id), Llama 3.x
# `<|python_tag|>{"name", "parameters": {...}}`. Any other mark of such a format denies (_TEXT_CALLS).
_WRAPPERS = {"<tool_call>": ("hermes <tool_call>", "arguments"), "[TOOL_CALLS]": ("mistral [TOOL_CALLS]", "arguments"),
             "<|python_tag|>": ("llama <|python_tag|>", "parameters")}
_WRAPPER = re.compile("|".join(re.escape(w) for w in _WRAPPERS))
# Other marks of open models' text calls, searched in lower case; each begins with a character, so that it is fast
_TEXT_CALLS = tuple(re.compile(p) for p in (
    r"<[|｜][^|｜>\n]{0,40}(?:tool|python|function|call|action|plugin|invoke|recipient|assistant|observation|channel"
    r"|constrain|message)[^|｜>\n]{0,40}[|｜]>",  # a template token (harmony's channel, ChatGLM's observation: raw turns)
    r"<\s*/?\s*(?:tool|function|call|invoke)s?(?:[\s:=/][^>\n]{0,80})?>",  # <tool>, <call>, <function name="x">
    r"\A\s*[\w.-]{1,128}[ \t]*\n[ \t]*\{",  # ChatGLM: the tool's name alone on the first line, its JSON below
    r"</?\s*[\w:-]{0,20}(?:tool|function)[\s\w:-]{0,20}(?:call|use|code|invoke|request)",  # a tag
    r"<function\s*=", r"<invoke\b", r"\[(?:tool_calls|tool_request|args|call_id)\]", r"✿\s*function\s*✿",
    r"to=functions\.", r"functools\[", r"```[ \t]*(?:tool|function)",  # harmony; phi; gemma's tool_code block
    r">>>[ \t]*[\w.-]+[ \t]*\n?[ \t]*\{",  # functionary: >>>name then its JSON arguments
    r"action[ _\t]*input[ \t]*:", r"action[ \t]*\d*[ \t]*:[ \t]*[\w.-]+[ \t]*\["))  # ReAct: Action Input, Action: x[
# A name key and an arguments key, quoted either way (escaped or not), in one object of a dict written as Python or
# JSON: found by their positions (_named_arguments), as one pattern would read ahead from every name key
# or unquoted, first on a line or after `{` or `,` (YAML, JSON5: `tool: transfer` then `arguments:` below)
_NAME_WORDS = r"(?:(?:tool|function)_?)?(?:name|tool|function|func|action)"
_ARGUMENT_WORDS_QUOTED = (r"(?:(?:action|tool)_)?"
                          r"(?:arguments|argument|args|inputs|input|parameters|parameter|params|kwargs)")
_NAME_KEY = re.compile(r"""(['"])""" + _NAME_WORDS + r"""\\*\1\s*:|(?:^|(?<=[{,]))[ \t]*-?[ \t]*""" + _NAME_WORDS
                       + r"[ \t]*:", re.MULTILINE)
_ARGUMENTS_KEY = re.compile(r"""(['"])""" + _ARGUMENT_WORDS_QUOTED + r"""\\*\1\s*:|(?:^|(?<=[{,]))[ \t]*"""
                            r"(?:/\*[^*\n]{0,200}\*/[ \t]*)?"
                            r"""(?:arguments|parameters|args|kwargs|action_input|tool_input)[ \t]*:""", re.MULTILINE)
# For any tool (`*`) also `input:`, `inputs:`, `params:` under a name key (YAML), and TOML's `name = "x"` over its
# arguments (`arguments = {...}`, `[tool.arguments]`): the cost, a YAML or TOML file with such keys, falls on `*` only
_ANY_NAME_KEY = re.compile(r"^[ \t]*-?[ \t]*" + _NAME_WORDS + r"""[ \t]*(?::|=[ \t]*["'])""", re.MULTILINE)
_ANY_ARGUMENTS_KEY = re.compile(r"^[ \t]*(?:" + _ARGUMENT_WORDS_QUOTED + r"[ \t]*(?::|=(?=[ \t]*\{))|\[[\w.-]*"
                                r"(?:arguments|args|input|params|parameters)\])", re.MULTILINE)
_KEYS_APART = 2000   # at most this many characters, and no brace, between the two keys
_MAY_HOLD_CALL = re.compile(r"[{\[<✿:`>]")  # a character every mark above, JSON and a pythonic list holds
_PYTHONIC = re.compile(r"\[\s*[A-Za-z_][\w.]*\s*\(")  # Llama's pythonic calls: [transfer(to="eve"), ...]
_LENIENT = json.JSONDecoder(strict=False)   # to find where a JSON value written in text ends; then read strictly
_SCAN_BUDGET = 100_000   # characters a text may cost the JSON decoder beyond 4 times its length (see _written_json)
_ATTEMPT_COST = 256   # what one attempt at decoding is charged at least: many failed starts deny before they are slow
_OBJECT_START = re.compile(r'\{\s*["}]|"(?=\s*\{)')  # where a JSON object may start, or a JSON string holding one


def _wrapped_calls(text: str, where: str) -> tuple[list[ToolCall], list[tuple[int, int]], str]:
    """The calls written in `text` in a wrapper of _WRAPPERS, the spans they take and the text outside them;
    ExtractionError for a wrapper that does not hold exactly such calls, or for any other mark of a call format
    (_TEXT_CALLS) outside them."""
    calls: list[ToolCall] = []
    spans: list[tuple[int, int]] = []
    for number, mark in enumerate(_WRAPPER.finditer(text)):
        fmt, key = _WRAPPERS[mark.group()]
        at = f"{where}[{fmt} {number + 1}]"
        value, end = _written_value(text, mark.end(), at)
        items = value if mark.group() == "[TOOL_CALLS]" and type(value) is list else [value]
        for item in items:
            if not isinstance(item, Mapping):
                _bad_call(at, f"a {fmt} call must be an object with name and {key}, got {_show(item)}")
            _only_keys(item, {"name", key}, {"id"} if mark.group() == "[TOOL_CALLS]" else set(), fmt, at)
            calls.append(ToolCall(_tool_name(item, at), _call_arguments(item[key], f"{at}.{key}", json_text=False),
                                  fmt, at))
        rest = text[end:].lstrip()
        if mark.group() == "<tool_call>" and rest.startswith("</tool_call>"):
            end = len(text) - len(rest) + len("</tool_call>")
            rest = text[end:].lstrip()
        if rest and not _WRAPPER.match(rest) and mark.group() != "<tool_call>":
            _bad_call(at, f"text after the {fmt} call(s), which its parsers read in different ways")
        spans.append((mark.start(), end))
    outside = " ".join(text[a:b] for a, b in zip([0] + [e for _, e in spans], [s for s, _ in spans] + [len(text)]))
    lower = outside.lower()
    found = next((m.group() for m in (pattern.search(lower) for pattern in _TEXT_CALLS) if m), "") or _named_arguments(lower)
    if found:
        _bad_call(where, f"text with {found[:30]!r}, a mark of a tool call written as text in a format not "
                  f"read here (read: {', '.join(_WRAPPERS)}): a runtime that parses it runs a call the policy does "
                  "not see")
    return calls, spans, outside


def _named_arguments(text: str, name_key: re.Pattern[str] = _NAME_KEY,
                     arguments_key: re.Pattern[str] = _ARGUMENTS_KEY) -> str:
    """The text from a name key to an arguments key of the same dict (no brace between them, at most _KEYS_APART
    characters apart), '' for none: a call written as a Python dict (`{'name': 'x', 'arguments': {...}}`)."""
    names = [m.start() for m in name_key.finditer(text)]
    arguments = [m.end() for m in arguments_key.finditer(text)]
    braces = [m.start() for m in re.finditer(r"[{}]", text)]
    for start in names:
        after = bisect.bisect_left(arguments, start)
        if after < len(arguments) and arguments[after] - start <= _KEYS_APART:
            between = bisect.bisect_left(braces, start)
            if between == len(braces) or braces[between] >= arguments[after]:
                return text[start:arguments[after]]
    return ""


def _refuse_pythonic(text: str, where: str) -> None:
    """A text that is a list of Python calls, as Llama 3.2 and later write tool calls (`[transfer(to="eve")]`, vLLM's
    pythonic parser), denies: it is a call written in a format not read here."""
    written = text.strip()
    if not (written.endswith("]") and _PYTHONIC.match(written)) or len(written) > _MAX_JSON_TEXT:
        return
    try:
        tree = ast.parse(written, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return
    if isinstance(tree.body, ast.List) and tree.body.elts and all(isinstance(e, ast.Call) for e in tree.body.elts):
        _bad_call(where, "a list of Python calls, the pythonic tool-call format of Llama models: a runtime that "
                  "parses it runs calls the policy does not see")


def _written_value(text: str, start: int, where: str) -> tuple[Any, int]:
    """The JSON value written in `text` from `start` (after blanks), read strictly, and where it ends."""
    begin = len(text) - len(text[start:].lstrip())
    try:
        _, end = _LENIENT.raw_decode(text, begin)
        return strict_json.loads(text[begin:end]), end
    except (ValueError, RecursionError) as e:
        _bad_call(where, f"not a JSON call ({str(e)[:80]})")


def _written_json(text: str, where: str, skip: list[tuple[int, int]]) -> list[Any]:
    """Every JSON object written inside `text` (prose, a code block, a log line), each decoded at the first `{"` or
    `{}` not inside an earlier one or in `skip`: walked like any data, so a call-like object there denies. Linear: a
    text that costs the decoder more than 4 times its length (plus _SCAN_BUDGET; each attempt at least
    _ATTEMPT_COST) denies."""
    found: list[Any] = []
    budget, position = 4 * len(text) + _SCAN_BUDGET, 0
    while (start := _OBJECT_START.search(text, position)) is not None:
        inside = next((b for a, b in skip if a <= start.start() < b), None)
        if inside is not None:
            position = inside
            continue
        value, end, cost = _object_at(text, start.start(), where)
        budget -= max(cost, _ATTEMPT_COST)
        if budget < 0:
            _bad_call(where, f"a text of {len(text):,} characters too costly to read for calls written in it as JSON")
        if end is None:
            position = start.start() + 1
        else:
            found.append(value)
            position = end
    return found


def _object_at(text: str, start: int, where: str) -> tuple[Any, int | None, int]:
    """The JSON object at `start` (end None when there is none) and what reading it cost: read in a window that grows
    while the object may go on past it, so that a failure costs what was read, never the rest of the text."""
    window = 256
    while True:
        part = text[start:start + window]
        try:
            value, end = _LENIENT.raw_decode(part)
            return value, start + end, len(part)
        except json.JSONDecodeError as e:
            cut_short = e.pos >= len(part) - 1 or e.msg.startswith("Unterminated string")
            if not cut_short or start + window >= len(text):
                return None, None, e.pos + 1
        except RecursionError:
            _bad_call(where, "a JSON object written in the text nests too deeply to read")
        window *= 8


def _text_data(text: str, where: str, found: list[ToolCall] | None, tool: str | None, *, turn: bool = True,
               decode: bool = True) -> Any:
    """What a string holds for the tool-call reader: the data it is as JSON text (_as_json), or the JSON objects
    written in it and the texts encoded in it (_encoded), and the calls in open models' wrappers, appended to `found`;
    inside a call's arguments (`found` None) such a call denies. With `tool`, a call of it (of any tool: "*") written
    in a format not read as a call denies (_refuse_written_call). `turn`: the text rotated or reversed is read too,
    when that shows a word of a call (_turned; not again inside what that reads: both undo themselves). Not `decode`:
    only calls written as they are (no encoding read, no text judged); text pieces joined are read so (_Joined)."""
    if type(text) is _Joined:   # a call written across its pieces, or bytes in one under a key written in another
        _split_call(text, where, tool)
        spaced = " ".join(text.pieces)
        _refuse_lettered_beside(spaced, where)
        read = _keyed_beside(spaced, _beside_raws(spaced, [m.group().rstrip("=") for m in _BASE64.finditer(spaced)]))
        if all(_RUN_PIECE.fullmatch(piece) for piece in text.pieces):   # an encoded run cut into long pieces
            read += _read_once(_encoded, "".join(spaced.split()), where=where)
        return read or None
    if not decode:
        turn = False
    turned = ([_text_data(t, where, found, tool, turn=False) for t in _read_once(_turned, text, tool, where=where)]
              if turn and len(text) >= _ENCODED_MIN else [])
    whole = _as_json(text, where)
    if whole is not None:
        if turn:
            _refuse_unnamed_letters(text, where)
        turned += _unfilled(text) if decode else []   # JSON whose keys have characters put between their letters
        return [whole, *turned] if turned else whole
    encoded = _read_once(_encoded, text, where=where) + turned if decode else []
    if turn:   # a text turned (reversed, rotated) is as noisy as the text, which was read: a reversed UUID is no UUID
        _refuse_opaque(text, where)
        _refuse_unnamed_letters(text, where)
    if not _MAY_HOLD_CALL.search(text):  # no mark of a call read or refused below can be written in it
        if tool is not None:
            _refuse_written_call(text, where, tool)
        return encoded or None
    _refuse_pythonic(text, where)
    calls, spans, outside = _wrapped_calls(text, where)
    if tool is not None:  # the calls in open models' wrappers are read as calls: the text around them is read
        _refuse_written_call(outside, where, tool)
    if calls and found is None:
        _bad_call(calls[0].where, f"a tool call ({calls[0].name!r}) written as text inside another call's arguments")
    for call in calls:
        _accept(call, found if found is not None else [], tool)
    return _written_json(text, where, spans) + encoded


_CACHED_TEXT = 65_536   # characters of a text whose readings are kept (an agent sends its history again each turn)
_Read = TypeVar("_Read", list[str], str, list[ToolCall])


def _read_once(reader: Callable[..., _Read], text: str, *args: str | None, where: str | None = None) -> _Read:
    """reader(text, *args[, where]), kept for a text up to _CACHED_TEXT characters at any place: `where` only names
    the place in a refusal, and a refusal is not kept (the text is read again at its place, to be refused there)."""
    placed, unplaced = ((), ()) if where is None else ((where,), ("",))
    if len(text) > _CACHED_TEXT:
        return reader(text, *args, *placed)
    try:
        return _readings(reader, text, *args, *unplaced)[:]   # a list kept is handed out as a copy
    except ExtractionError:
        return reader(text, *args, *placed)


@functools.lru_cache(maxsize=1024)   # four readers share it (_turned, _encoded, _unnamed_letters_of, _WRITTEN_CALLS)
def _readings(reader: Callable[..., _Read], text: str, *args: str | None) -> _Read:
    return reader(text, *args)


# Text encoded in a string, which a tool or runtime may decode and read: base64 (standard or URL-safe, wrapped in lines
# or not), base32, base85 and Ascii85, uuencode, hex, percent-encoding, HTML character references, backslash escapes,
# rot13 and reversed text; in bytes, gzip, zlib, raw deflate, bzip2 and xz. Each decoded text that is printable UTF-8
# is read like any string (a call there is a call, or denies), so `eyJuYW1lIjog...` hides no call; so are bytes that
# are text under a one-byte key (XOR, a shift: _unkeyed) and the printable runs inside bytes that are no text.
_ENCODED_MIN = 16   # characters: a shorter run encodes no call (`f(x=1)` is 8 base64 characters, a call in JSON 40)
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]{16,}(?:\r?\n[A-Za-z0-9+/_-]{4,})*={0,2}")
_HEX = re.compile(r"[0-9A-Fa-f]{16,}")
_BASE32 = re.compile(r"[A-Z2-7]{16,}=*|[a-z2-7]{16,}=*|[0-9A-V]{16,}=*")   # a whole run, one case (casefold)
_BASE85 = re.compile(r"<~[!-uz\s]{16,}~>|[0-9A-Za-z!#$%&()*+;<=>?@^_`{|}~-]{20,}|[!-uz]{20,}")
_GROUP = re.compile(r"[A-Za-z0-9+/_-]{0,8}={0,2}")   # padding may stand alone (`fQ ==`)


# A run cut into string literals joined at run time (`"eyJu" + "YW1l"`, `'ey' || 'Ju'`, `["ey", "Ju"].join("")`,
# `"ey" "Ju"`), and a run whose pieces stand between words a reader drops (`eyJuYW ok 1lIjog ok`, table cells)
_LITERAL_PIECE = re.compile(r"""(["'`])([A-Za-z0-9+/=_\s-]*)\1""")
_JOINER = re.compile(r"\s*(?:\+|\|\||\.\.|,|&|\.|\bconcat\b|\(|\))?\s*", re.IGNORECASE)
_PIECE_TOKEN = re.compile(r"[A-Za-z0-9+/_-]*[A-Za-z0-9][A-Za-z0-9+/_-]*={0,2}")


def _joined_literals(text: str) -> list[str]:
    """The contents of each chain of two or more string literals of an encoding's characters that only joining
    marks part, joined."""
    if not any(q in text for q in "\"'`"):
        return []
    chains: list[list[str]] = []
    end = -1
    for found in _LITERAL_PIECE.finditer(text):
        if chains and _JOINER.fullmatch(text, end, found.start()):
            chains[-1].append(found.group(2))
        else:
            chains.append([found.group(2)])
        end = found.end()
    return ["".join("".join(chain).split()) for chain in chains if len(chain) > 1]


def _odd_tokens(text: str) -> str:
    """The tokens of `text` that are no word or number (_WORD_SHAPE), joined: an encoded run cut by words."""
    tokens = _PIECE_TOKEN.findall(_TAG_NAME.sub(" ", text) if "<" in text else text)   # `</span>`: no piece
    odd = [t for t in tokens if not _WORD_SHAPE.fullmatch(t)]
    return "".join(odd) if len(odd) > 1 else ""


def _groups_at_end(text: str) -> str:
    """The short base64 groups that end `text` (at least five, parted by blanks), joined; '' for none. Only the last
    group may end in `=` (padding): a word before the groups that does (`id=`, `data=`) is their label, not a group."""
    groups: list[str] = []
    for token in reversed(text.split()):
        if not _GROUP.fullmatch(token) or groups and token.endswith("="):
            break
        groups.append(token)
    return "".join(reversed(groups)) if len(groups) >= 5 else ""


_MAX_UU_LINE = 62   # characters of a uuencoded line (_UU_LINE)
_UU_LINE = re.compile(r"^[!-`][ -`]{4,61}$", re.MULTILINE)
_NOT_BASE64 = re.compile(r"[^A-Za-z0-9+/]")
_NOT_BASE64_BYTES = bytes(b for b in range(256) if _NOT_BASE64.match(chr(b)))
_NOT_URL_SAFE_BYTES = _NOT_BASE64_BYTES.translate(None, b"-_")   # the URL-safe alphabet keeps `-` and `_`
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_REFERENCE = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z]{2,8});")
_ESCAPE = re.compile(r"\\(?:u[0-9A-Fa-f]{4}|x[0-9A-Fa-f]{2}|U[0-9A-Fa-f]{8}|[0-7]{3})")
_UNPRINTABLE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_PRINTABLE_SPAN = re.compile(rb"[\t\n\r\x20-\x7e]{16,}")   # ASCII text inside bytes that are no text as a whole
_SPAN_MARK = re.compile(rb"[{(<:=\[]")   # such a text holds a call only with one of these
# words of a call: a text that shows more of them rot13-ed or reversed than as it is, is read so too
_CALL_WORDS_SEEN = re.compile(r"\b(?:name|arguments?|params?|parameters|input|tool|function|call|invoke|action)\b")
_MAX_BASE85 = 100_000    # characters of a text searched for base85 runs (its decoders are Python)


def _encoded(text: str, where: str) -> list[str]:
    """The texts encoded in `text` (_ENCODED_MIN: the encodings above) that decode to printable UTF-8 other than
    itself, or the printable runs inside what they decode to (a prefix or a shifted start garbles only the start).
    Base64 is read in each run and, as Python's b64decode reads a text, in the whole text with every character outside
    its alphabet dropped (`eyJu YW1l ...`), at each of its four alignments; hex as a whole run (its letters are
    base64's): a tool decodes a whole argument or token."""
    decoded = _transforms(text) + ([] if text.isascii() else _invisibly_written(text, where))
    if len(text) < _ENCODED_MIN:
        return [d for d in decoded if d and d != text]
    makes_characters = functools.cache(lambda: _MAKES_CHARACTERS.search(text) is not None)   # once, when asked
    for numbers in _NUMBER_LIST.finditer(text):
        decoded += _numbers_read(numbers.group(), where, makes_characters)
    runs = [(re.sub(r"\s", "", run) if "\n" in run else run).rstrip("=")
            for run in (m.group() for m in _BASE64.finditer(text))]
    squeezed_runs: list[str] = []
    if text.isascii() and _NOT_BASE64.search(text.rstrip("=")) is not None:  # read too as b64decode reads it
        raw = text.encode("ascii")
        # as b64decode drops `-` and `_`, and as urlsafe_b64decode keeps them (`-` or `_` in the text only)
        for dropped in (_NOT_BASE64_BYTES, _NOT_URL_SAFE_BYTES) if b"-" in raw or b"_" in raw else (_NOT_BASE64_BYTES,):
            squeezed = raw.translate(None, dropped).decode("ascii")
            if len(squeezed) >= _ENCODED_MIN and squeezed not in runs:
                squeezed_runs.append(squeezed)
        tail = _groups_at_end(text)   # groups after a prefix (`Note: eyJ uYW 1lI ...`): read from the first
        if len(tail) >= _ENCODED_MIN and tail not in runs + squeezed_runs:
            squeezed_runs.append(tail)
    if len(text) <= _MAX_BASE85:
        squeezed_runs += [r for r in (*_joined_literals(text), _odd_tokens(text))
                          if len(r) >= _ENCODED_MIN and r not in runs and r not in squeezed_runs]
    hex_raws: list[bytes] = []
    base64_raws: list[bytes] = []   # with hex_raws, what _keyed_beside tries (_beside_raws), decoded once here
    for at, packed in enumerate(runs + squeezed_runs):
        hexed = _HEX.fullmatch(packed) is not None
        if hexed:   # hex in bytes apart (`7b 22 6e`), or `=7B=22` (quoted-printable)
            decoded += _read_bytes(bytes.fromhex(packed[:len(packed) // 2 * 2]), where)
        raw = _from_base64(packed)
        decoded += _read_base64(packed, where, shifted=True, raw=raw)   # a word glued before groups shifts them too
        if at < len(runs) and not hexed and all(c.search(packed) for c in _MIXED):
            base64_raws.append(raw)
        if _BASE32.fullmatch(packed):
            decoded += _read_bytes(_from_base32(packed), where)
    for run in _HEX.finditer(text):
        digits = run.group()
        hex_raws.append(bytes.fromhex(digits[:len(digits) // 2 * 2]))
        decoded += _read_bytes(hex_raws[-1], where)
    if len(text) <= _MAX_BASE85:
        decoded += _keyed_beside(text, hex_raws + base64_raws)
        _refuse_lettered_beside(text, where)
    unwrapped = "".join(text.split()) if len(text) <= _MAX_BASE85 else ""   # Ascii85 wraps in lines
    # a run decoded shows a character outside base64's (`<` in `<~ ~>`, the others no blank), so unwrapped does too
    if _NOT_BASE64_RUN.search(unwrapped or text):
        for written in {m.group() for t in ((text, unwrapped) if unwrapped != text else (text,))
                        for m in _BASE85.finditer(t)}:
            if len(written) <= _MAX_BASE85 and _NOT_BASE64_RUN.search(written) and _dense(written):
                decoded += _read_bytes(_from_base85(written), where) + _read_bytes(_from_base85(written[::-1]), where)
    for lines in (text, text[::-1]) if "\n" in text or len(text) <= _MAX_UU_LINE else ():   # written reversed too
        if _UU_LINE.search(lines):   # one line: the whole text
            decoded += _read_bytes(_from_uu(lines), where)
    return [d for d in decoded if d and d != text]


# Letters under a key of letters written beside them (`KEY: LEMON  XLPWK QRXRE ...`, `{"key": "lemon", "codes": [...]}`):
# a model given both deciphers them. Each word of 4 letters or more standing alone (_LETTERED_KEYS at most) is tried
# as a Vigenère, variant or Beaufort key at each alignment on the first _LETTERED_READ letters of the rest; letters
# that read as no language (mean pair score 0 or less) and as one under a key beside them (_LETTERED_MEAN) hide a
# text: denied.
# Measured: the best of 300,000 random 32-letter streams scores 0.39 (English 0.6-0.8; `transfer to eve ...` 0.83).
_LETTERED_WORD = re.compile(r"(?<![\w+/-])[A-Za-z]{4,40}(?![\w+/-])")
_KEY_VALUE = re.compile(r"\s*[A-Za-z]{4,40}\s*")
_LETTERED_MIN, _LETTERED_READ, _LETTERED_KEYS, _LETTERED_MEAN = 32, 64, 8, 0.5
_NOT_LOWER_LINE = re.compile("[^a-z\n]+")
_SEGMENT_END = re.compile(r"[.:;!?]\s")   # a line, or a sentence or a label's end: `key: x. read: LTRDG APZNQ ...`
_LETTERED_WORDS = 64   # words of the text ranked as keys at most


def _mean_pairs(letters: str) -> float:
    """The mean score of the letter pairs of a word (_pair_score, whose cache keeps it)."""
    return _pair_score(letters) / max(len(letters) - 1, 1)


def _stream_mean_pairs(letters: str) -> float:
    """_mean_pairs of a stream of letters, outside _pair_score's cache (a text's streams would fill it)."""
    return _pair_score.__wrapped__(letters) / max(len(letters) - 1, 1)


_FREQUENT = frozenset(ord(c) - 97 for c in "etaoinshr")   # about 70% of English letters, 35% of random ones
_FREQUENT_UNDER = tuple(bytes(1 if (v - k) % 26 in _FREQUENT else 0 for v in range(256)) for k in range(26))
_FREQUENT_FLIPPED = tuple(bytes(1 if (k - v) % 26 in _FREQUENT else 0 for v in range(256)) for k in range(26))
_LETTER_INDEX = bytes((c - 97) % 26 if 97 <= c <= 122 else 0 for c in range(256))


def _lettered_beside(text: str) -> str:
    """The head of the letters of a segment of `text` (a line, a sentence) deciphered under a key that is a word written
    in `text`, when they read as no language and so deciphered read as one; '' otherwise. An alignment is tried in
    full only when its letters are as often English's nine commonest as a language's are (counted per column)."""
    low = text.lower()
    lines = [letters for letters in _NOT_LOWER_LINE.sub("", _SEGMENT_END.sub("\n", low)).split("\n")
             if len(letters) >= _LETTERED_MIN and _stream_mean_pairs(letters[:_LETTERED_READ]) <= 0]
    words = list(dict.fromkeys(w.lower() for w in _LETTERED_WORD.findall(text)))[:_LETTERED_WORDS] if lines else []
    for key in sorted(words, key=_mean_pairs, reverse=True)[:_LETTERED_KEYS]:   # words of a language first
        for letters in lines:
            plain = _deciphered(letters.replace(key, "")[:_LETTERED_READ], key)
            if plain:
                return plain
    return ""


def _deciphered(stream: str, key: str) -> str:
    """`stream` deciphered under `key` (Vigenère, its variant, Beaufort) at an alignment where it reads as a language
    (_LETTERED_MEAN); '' for none."""
    if len(stream) < _LETTERED_MIN:
        return ""
    values, shifts, size = stream.encode("ascii").translate(_LETTER_INDEX), [ord(c) - 97 for c in key], len(key)
    columns = [values[j::size] for j in range(size)]
    for sign, tables in ((1, _FREQUENT_UNDER), (-1, _FREQUENT_UNDER), (1, _FREQUENT_FLIPPED)):
        counts = [{k: column.translate(tables[(sign * k) % 26]).count(1) for k in set(shifts)} for column in columns]
        for at in range(size):
            if sum(counts[j][shifts[(j + at) % size]] for j in range(size)) * 100 < 55 * len(values):
                continue
            key_at = [shifts[(i + at) % size] for i in range(size)]
            plain = "".join(chr((v - sign * key_at[i % size]) % 26 + 97) if tables is _FREQUENT_UNDER
                            else chr((key_at[i % size] - v) % 26 + 97) for i, v in enumerate(values))
            if _stream_mean_pairs(plain) >= _LETTERED_MEAN:
                return plain
    return ""


def _refuse_lettered_beside(text: str, where: str) -> None:
    plain = _read_once(_lettered_beside, text) if len(text) <= _MAX_BASE85 else ""
    if plain:
        _bad_call(where, f"letters that read as no language read as one under a key written beside them "
                  f"({plain[:40]!r}...): a model given both deciphers them, and what they say may be a tool call")


# Bytes XORed with a key written beside them (`key=<hex> data=<hex>`, a one-time pad, or a key of any length repeated;
# the key in hex, base64 or as a word of 8 characters or more): each run of bytes that is no text, XORed with each
# other run and each such word, is read when it is text showing a word of a call.
_KEYS_BESIDE = 16     # runs of bytes, and words, tried as keys at most
_KEY_WORD = re.compile(r"[!-~]{8,64}")


def _beside_raws(text: str, runs: list[str]) -> list[bytes]:
    """The bytes _keyed_beside tries: each hex run of `text`, then each of `runs` (base64) that is no hex run."""
    raws = [bytes.fromhex(d[:len(d) // 2 * 2]) for d in (m.group() for m in _HEX.finditer(text))]
    raws += [_from_base64(run) for run in runs   # base64 of bytes shows A-Z, a-z and 0-9 (names and paths do not)
             if not _HEX.fullmatch(run) and all(c.search(run) for c in _MIXED)]
    return raws


def _keyed_beside(text: str, raws: list[bytes]) -> list[str]:
    """The texts the runs of bytes `raws` (_beside_raws, in its order) are XORed with another or with a word of
    `text`, when they show a word of a call."""
    unique = list(dict.fromkeys(raws))
    data = [r for r in unique if len(r) >= _ENCODED_MIN and not _printable(r)][:_KEYS_BESIDE]
    if not data:
        return []
    keys = [r for r in unique if len(r) >= 4][:_KEYS_BESIDE] + [
        w.encode() for w in dict.fromkeys(_KEY_WORD.findall(text))][:_KEYS_BESIDE]
    found: list[str] = []
    for raw in data:
        for key in keys:
            if key is raw or len(key) > len(raw):
                continue
            pad = (key * (len(raw) // len(key) + 1))[:len(raw)]
            plain = _printable((int.from_bytes(raw) ^ int.from_bytes(pad)).to_bytes(len(raw)))
            if plain and _shows_call_word(plain.lower()):
                found.append(_Guessed(plain))
    return found


# A list of 16 numbers or more (`bytes([123, 34, ...])`, `chr(c + 1) for c in [...]`, `["123", "34", ...]`): the bytes
# or the characters they are, read like any decoded bytes (a one-byte key, a shift, is undone there), and under every
# invertible affine map mod 256 (`chr(200 - c)`, `(37 * c + 101) % 256`: a multiplier, then a shift) or on the
# integers (`chr(c - 1000)`, `chr((c - 3) // 7)`: the differences' common factor, then a shift). A list no reading of
# which shows words (or a call's), beside code that makes characters of numbers (`chr(`, `.decode(`, `char(`, bytes
# computed from each: `bytes(f(c) for c in`), is made into text by arithmetic this reader does not follow
# (`(c - 3) ^ 90`, `c // 2` over noise): it denies.
_NUMBER = r"""["']?-?(?:0[xX][0-9A-Fa-f]{1,6}|[0-9]{1,7})["']?"""
_NUMBER_LIST = re.compile(r"(?<![\w.])" + _NUMBER + r"(?:(?:[ \t]*[,;\n][ \t\n]*|[ \t]+)" + _NUMBER + r"){15,}(?![\w.])")
_NUMBER_VALUE = re.compile(r"-?(?:0[xX][0-9A-Fa-f]{1,6}|[0-9]{1,7})")
_MULTIPLIERS = tuple(bytes(m * b % 256 for b in range(256)) for m in range(3, 256, 2))   # 1 is _read_bytes' own
_MAKES_CHARACTERS = re.compile(r"(?i:\b(?:chr|unichr|fromCharCode|fromCodePoint|char|rune|decode)\s*\(|%c|"
                               r"\b(?:bytes|bytearray)\s*\((?=[^\n]{0,200}?(?:\bfor\s+\w+\s+in\b|\bmap\s*\()))")


def _numbers_read(written: str, where: str, makes_characters: Callable[[], bool]) -> list[str]:
    """The readings of a list of numbers written in a text, as they are and undone (_undone); `makes_characters`:
    whether the text shows code that makes characters of numbers (_MAKES_CHARACTERS, searched once a text)."""
    values = [_number_value(v) for v in _NUMBER_VALUE.findall(written)]
    read, followed = _values_read(values, where)
    for undone in [] if followed else _undone(values):
        more, followed = _values_read(undone, where, mapped=False)
        read += more
        if followed:
            break
    if not followed and makes_characters():
        _bad_call(where, f"a list of {len(values)} numbers beside code that makes characters of numbers, and no "
                  "reading of them (bytes, characters, a one-byte key, an affine map) shows words: arithmetic this "
                  "reader does not follow may make them a tool call")
    return read


def _number_value(written: str) -> int:
    digits = written.lstrip("-")
    value = int(digits, 16) if digits[1:2] in "xX" else int(digits)
    return -value if written.startswith("-") else value


def _values_read(values: list[int], where: str, *, mapped: bool = True) -> tuple[list[str], bool]:
    """The readings of integers (bytes, code points and, when `mapped`, an affine map of bytes or of integers) and
    whether one is followed (_followed)."""
    if min(values) < 0:
        read = _scaled(values) if mapped else []
        return read, any(map(_followed, read))
    if max(values) < 256:
        read = _read_bytes(bytes(values), where)
        followed = any(map(_followed, read))
        if not followed:
            more = _multiplied(bytes(values)) + _halved(values) + _scaled(values) if mapped else []
            read += more
            followed = any(map(_followed, more))
        return read, followed
    # code points shifted stay letters (`chr(c + 1000)` is Cyrillic): read shifted back too
    chars = "".join(chr(v) for v in values if v < 0x110000)
    read = ([chars] if chars.isprintable() else []) + (_scaled(values) if mapped else [])
    return read, any(map(_followed, read))


def _undone(values: list[int]) -> list[list[int]]:
    """Integers as arithmetic a model can undo leaves them: running sums (read as their differences), differences
    (read as their running sums) and squares (read as their roots)."""
    undone = [values[:1] + [b - a for a, b in zip(values, values[1:])], list(itertools.accumulate(values))]
    roots = [math.isqrt(v) for v in values if v >= 0]
    if len(roots) == len(values) and all(r * r == v for r, v in zip(roots, values)) and max(roots) > 1:
        undone.append(roots)
    return undone


_KEYWORD_SHAPE = re.compile(r"[a-z_]{4,64}\(\s*[a-z_]{2,64}\s*=\s*[\"'0-9]")   # `transfer(to="`: rare in noise


def _shows_call_word_turned(text: str) -> bool:
    """Whether a text, as it is or reversed (a list written backwards), shows a word of a call or a keyword call."""
    low = text.lower()
    return (_shows_call_word(low) or _shows_call_word(low[::-1]) or "(" in text and "=" in text and (
        _KEYWORD_SHAPE.search(text) is not None or _KEYWORD_SHAPE.search(text[::-1]) is not None))


def _followed(text: str) -> bool:
    """Whether a reading of numbers is words (two thirds letters and blanks), or shows a word of a call (read on),
    and not noise."""
    return (sum(c.isascii() and c.isalpha() or c == " " for c in text) * 3 >= len(text) * 2
            or _shows_call_word_turned(text))   # ASCII letters: code points any arithmetic left in a script are not


def _multiplied(raw: bytes) -> list[str]:
    """The texts `raw` is under an invertible affine map mod 256 other than a shift: each odd multiplier, then the
    shifts (_unkeyed) that make every byte printable ASCII; kept when they show a word of a call."""
    found: list[str] = []
    # an odd multiplier maps bytes one to one: the distinct bytes _unkeyed bounds are as many under each, so a raw
    # outside its bounds is outside them under all (_unkeyed would read nothing): checked once
    keyed = _ENCODED_MIN <= len(raw) <= _MAX_KEYED and _KEYED_FEWEST <= len(set(raw)) <= _KEYED_DISTINCT
    for table in _MULTIPLIERS:
        turned = raw.translate(table)
        found += [t for t in [_printable(turned), *(_unkeyed(turned) if keyed else ())]
                  if t and _shows_call_word_turned(t)]
    return [_Guessed(t) for t in found]


_HALF_MULTIPLIERS = tuple(bytes(m * b % 128 for b in range(256)) for m in range(1, 128, 2))


def _halved(values: list[int]) -> list[str]:
    """The texts bytes are under an affine map mod 256 whose multiplier is twice an odd one (c -> 2 * m * c + s): all
    of one parity, their halves are 7-bit text under the odd map mod 128 (every multiplier, then each shift that makes
    every byte printable); kept when they show a word of a call. A multiplier of 4 or more loses a text bit."""
    if len({v % 2 for v in values}) != 1 or not _ENCODED_MIN <= len(values) <= _MAX_KEYED:
        return []
    half = bytes((v - values[0] % 2) // 2 for v in values)
    found: list[str] = []
    for table in _HALF_MULTIPLIERS:
        turned = half.translate(table)
        shifts = frozenset(range(128)).intersection(*(_HALF_SHIFT_KEYS[b] for b in set(turned)))
        for k in sorted(shifts):
            text = bytes((b + k) % 128 for b in turned).decode("ascii")
            if _shows_call_word_turned(text):
                found.append(_Guessed(text))
    return found


def _scaled(values: list[int]) -> list[str]:
    """The texts integers are under an affine map on the integers (c = a * p + b, a positive or negative): their
    differences over a (their common factor), then the shifts (_unkeyed) that make every byte printable ASCII."""
    low, high = min(values), max(values)
    step = math.gcd(*(v - low for v in values))
    if not step or (high - low) // step > 0x7E - 0x09:
        return []
    found: list[str] = []
    for base in (bytes((v - low) // step for v in values), bytes((high - v) // step for v in values)):
        found += [t for t in _unkeyed(base) if _shows_call_word_turned(t)]
    return [_Guessed(t) for t in found]


# A run the decoders above cannot read: letters and digits mixed as an encoding mixes them (reversed, re-grouped in
# pairs or table cells, under a key of several bytes, in an alphabet of its own) and not as words, names and numbers
# are written. A runtime may decode it into a call this reader never sees, so such a run denies, unless it decodes
# (base64, base32, hex) to text, which is read, or to a known file, or is a hex digest, a UUID or a JWT's signature.
# Measured on the benchmarks' texts: see test_extractors_e28.py.
_OPAQUE_MIN = 40   # noisy characters in one string: a call of a tool with its arguments (`t(to="eve", amount=5)`) under
#                    any byte-wise encoding takes 24 or more; ids (`call_`, `toolu_` and 24 characters) take fewer
_OPAQUE_TOKEN = re.compile(r"[A-Za-z0-9+/]*[A-Za-z0-9][A-Za-z0-9+/]*")   # other marks part tokens: ids and names are parted there
_WRAPPED = re.compile(r"\n(?<=[A-Za-z0-9+/]{40}\n)(?=[A-Za-z0-9+/]{16})")   # base64 wrapped in lines of 40+: one run
_PATH_MARK = re.compile(r"[+/]")
_SEGMENT = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+|[+/]")   # words (`Long`, `HTTP`), numbers, marks
_OPAQUE_RUN = 12   # characters at least of a token counted (a video's id of 11 is not); of joined short ones, 8
_SHORT = 4   # a token this short is judged with its neighbours (an encoding written in pairs, threes or fours)
_DIGEST = re.compile(r"(?:0x)?(?:[0-9a-f]{32}|[0-9a-f]{40}|[0-9a-f]{56}|[0-9a-f]{64}|[0-9a-f]{96}|[0-9a-f]{128}"
                     r"|[0-9A-F]{32}|[0-9A-F]{40}|[0-9A-F]{64}|[0-9A-F]{96}|[0-9A-F]{128})")   # md5, sha1 .. sha512
_UUID = re.compile(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")
_JWT_SIGNATURE = re.compile(r"((?<![\w-])eyJ[\w-]{8,}+\.[\w-]*+)\.[\w-]{16,}")   # read once: no backtracking
_FILE_MAGIC = (b"0\x82", b"0\x81", b"%PDF", b"RIFF", b"OggS", b"ID3", b"BM", b"\x00\x00\x01\x00", b"wOF",
               b"\x1a\x45\xdf\xa3")   # not parsed (_well_formed_file): PNG, JPEG, GIF and zip are (_container)


def _noisy(run: str) -> bool:
    """Whether a run of letters and digits is mixed as an encoding mixes them: its words and numbers (_SEGMENT)
    average fewer than 3 characters (`eyJuYW1l` -> ey J u YW 1 l; words, names and numbers run longer), or it is hex
    or base32 (one case, digits among the letters) of 16 or more."""
    distinct = len(set(run))   # an encoding of anything shows many characters; `eyJeyJ...` few
    if len(run) >= 16 and _HEX.fullmatch(run) and not run.isdigit() and not run.isalpha():
        return distinct >= min(8, len(run) // 2)   # hex has 16 characters
    if distinct < min(12, len(run) // 2):
        return False
    if all(_WORD_SHAPE.fullmatch(part) for part in _PATH_MARK.split(run) if part):
        return False   # words and numbers parted by `/` or `+`: a path, a date, a unit (`mcg/dose`, `04/14/2104`)
    if len(run) >= 24 and _BASE32_DIGITS.fullmatch(run) and len(_DIGITS.findall(run)) * 16 >= len(run):
        return True   # base32: a digit in 16 characters at least (words with a number, `5isadrug...`, show fewer)
    segments = len(_SEGMENT.findall(run))
    return segments >= 3 and len(run) < 3 * segments


_BASE32_DIGITS = re.compile(r"[A-Z2-7]+|[a-z2-7]+")
_DIGITS = re.compile(r"[0-9]+")


def _noisy_part(run: str) -> str:
    """The noisy part of a run: the whole when it is noisy, and of a long run its noisy windows of _WINDOW_RUN
    characters (words glued around an encoded run do not hide it)."""
    if len(run) <= 2 * _WINDOW_RUN:
        return run if _noisy(run) else ""
    return "".join(w for i in range(0, len(run), _WINDOW_RUN)
                   if len(w := run[i:i + _WINDOW_RUN]) >= 8 and _noisy(w))


_WINDOW_RUN = 32


def _readable(run: str) -> bool:
    """Whether a run decodes to what this reader reads (text, compressed data) or to a known file."""
    candidates = [_from_base64(run.rstrip("="))]
    if _HEX.fullmatch(run):
        candidates.append(bytes.fromhex(run[:len(run) // 2 * 2]))
    if _BASE32.fullmatch(run.rstrip("=")):
        candidates.append(_from_base32(run))
    return any(raw and (_printable(raw) or _wide_text(raw) or any(map(_wordy, _unkeyed(raw))) or _well_formed_file(raw)
                        or raw[:2] == b"\x1f\x8b" or raw[:3] in (b"BZh", b"\xfd7z")) for raw in candidates)


_BECH32 = re.compile(r"([a-z]{1,20})1([02-9ac-hj-np-z]{6,90})")
_BECH32_CHARS = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
_BECH32_GEN = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)


def _bech32(run: str) -> bool:
    """Whether a run is a bech32 or bech32m string (a Bitcoin or Lightning address) whose checksum holds: an id."""
    m = _BECH32.fullmatch(run)
    if m is None:
        return False
    prefix, data = m.groups()
    check = 1
    for value in [ord(c) >> 5 for c in prefix] + [0] + [ord(c) & 31 for c in prefix] + [
            _BECH32_CHARS.index(c) for c in data]:
        top, check = check >> 25, (check & 0x1FFFFFF) << 5 ^ value
        for i, gen in enumerate(_BECH32_GEN):
            check ^= gen if top >> i & 1 else 0
    return check in (1, 0x2BC830A3)


def _wordy(text: str) -> bool:
    """Whether half of a text or more is words of 4 letters or more (a note under a one-byte key read; not the
    garbage a wrong key makes of a cipher of several bytes)."""
    return sum(map(len, _LETTERS.findall(text.lower()))) * 2 >= len(text)


def _opaque(text: str) -> str:
    """The first noisy run of `text` that decodes to nothing read (_noisy, _readable), when such runs hold
    _OPAQUE_MIN characters or more; '' for none. Only the text around the places where case or digits change inside a
    word come close together (_DENSE_HINTS, found in C) is read token by token: a noisy run shows such a change every
    few characters."""
    if len(text) < _OPAQUE_MIN:
        return ""
    if not text.isascii():
        text = strip_invisible(text)   # `e\u200by\u200bJ...`: a reader that forgives invisible characters joins them
    secrets = list(_SECRET.finditer(text)) if _SECRET_MARK.search(text) else []
    written = _written_secret(secrets)
    if written:
        return written
    hints = [m.start() for m in _DENSE_HINTS.finditer(text)]
    if not hints:   # blanking a secret (_blank_secret) only turns characters into blanks: it makes no hint
        return ""
    if secrets:
        parts: list[str] = []
        last = 0   # the secrets found above blanked (what _SECRET.sub(_blank_secret, text) gives)
        for found in secrets:
            parts += (text[last:found.start()], _blank_secret(found))
            last = found.end()
        text = "".join(parts) + text[last:]
        hints = [m.start() for m in _DENSE_HINTS.finditer(text)]
        if not hints:
            return ""
    noisy, first = 0, ""
    size, backwards = len(text), ""
    windows: list[tuple[int, int]] = []   # the clusters' reaches, widened to the edges of the tokens they stand in
    start, end = hints[0], hints[0]
    for at in hints[1:] + [size + 2 * _HINT_REACH]:
        if at - end <= 2 * _HINT_REACH:
            end = at
            continue
        # each edge found by one search in C, at most _MAX_BASE85 from the cluster; a reach that meets the one before
        # joins it, so each piece of the text is read once however many clusters a token holds
        reached = windows[-1][1] if windows else 0
        left, right = max(0, start - _HINT_REACH), min(size, end + _HINT_REACH)
        if left > reached:
            backwards = backwards or text[::-1]
            left = size - _alnum_end(backwards, size - left, size - max(0, start - _MAX_BASE85, reached))
        if right < size:
            right = _alnum_end(text, max(right, reached), min(size, end + _MAX_BASE85))
        if windows and left <= reached:
            windows[-1] = (windows[-1][0], max(right, reached))
        else:
            windows.append((left, right))
        start = end = at
    for left, right in windows:
        for run in _noisy_runs(text[left:right]):
            noisy += len(run)
            first = first or run
            if noisy >= _OPAQUE_MIN:
                return first
    return ""


# Secrets and digests in their published shapes (a key a service issues, a subresource-integrity digest): random by
# design, and read by a service that compares them, never decodes them. They are no run to refuse unless what they
# decode to (base64, hex) shows a call's word under a one-byte key or a periodic XOR key (_keyed): a call is hidden in
# one only under a longer key. Each shape has its published length.
_SECRET_KEY, _SESSION_TOKEN = r"secret_?access_?key", r"session_?token"   # the labels of AWS's secrets
_SECRET_KEYS = f"{_SECRET_KEY}|{_SESSION_TOKEN}"
_SECRET_MARK = re.compile(f"(?i:{_SECRET_KEYS})" r"|sk-|k_(?:live|test)_|github_pat_|sha(?:256|384|512)-")
_SECRET_LABEL = re.compile(f"(?i:aws_)?(?i:{_SECRET_KEYS})")
_SECRET = re.compile(
    f"(?i:aws_)?(?i:{_SECRET_KEY})" r"""["']?\s*[:=]\s*["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"""
    f"|(?i:aws_)?(?i:{_SESSION_TOKEN})" r"""["']?\s*[:=]\s*["']?([A-Za-z0-9/+]{100,2000}={0,2})(?![A-Za-z0-9/+=])"""
    r"|(?<![\w-])sk-(?:(?:proj|svcacct|admin)-)?([A-Za-z0-9_-]{32,200})(?![\w-])"
    r"|(?<![\w-])sk-ant-(?:api|admin|sid)[0-9]{2}-([A-Za-z0-9_-]{80,110})(?![\w-])"
    r"|(?<![\w-])github_pat_([A-Za-z0-9]{22}_[A-Za-z0-9]{59})(?!\w)"
    r"|(?<![\w-])[rs]k_(?:live|test)_([A-Za-z0-9]{24,247})(?!\w)"
    r"|(?<![\w-])sha(?:256|384|512)-([A-Za-z0-9+/]{43}=|[A-Za-z0-9+/]{64}|[A-Za-z0-9+/]{86}==)(?![A-Za-z0-9+/=])")


_ISSUED_MIN = 32


def _written_secret(secrets: Iterable[re.Match[str]]) -> str:
    """The first secret's characters (of `secrets`, _SECRET's matches) without a digit (_ISSUED_MIN or more): an
    issued key's random characters show one (all but 1 in 250 of 32 do), letters written under a key need not; ''
    for none."""
    for found in secrets:
        payload = _secret_payload(found)
        if len(payload) >= _ISSUED_MIN and not _DIGITS.search(payload):
            return payload
    return ""


def _secret_payload(found: re.Match[str]) -> str:
    """A _SECRET match's characters (each of its alternatives has one group)."""
    return found[found.lastindex or 0]


def _blank_secret(found: re.Match[str]) -> str:
    """A secret's shape blanked (its label kept), unless what it decodes to shows a call (_keyed)."""
    payload = _secret_payload(found)
    if _keyed_shows_call(_from_base64(payload.replace("_", ""))):
        return found.group()
    start = found.start(found.lastindex or 0) - found.start()
    return found.group()[:start] + " " * len(payload)


def _hidden_in_digest(digest: str) -> bool:
    """Whether a hex digest's bytes show a call's word under a one-byte or a periodic XOR key (_keyed)."""
    hexdigits = digest[2:] if digest.startswith("0x") else digest
    return _keyed_shows_call(bytes.fromhex(hexdigits))


@functools.lru_cache(maxsize=1024)
def _keyed_shows_call(raw: bytes) -> bool:
    """Whether `raw` shows a call's word under a one-byte or a periodic XOR key (_keyed), or is text under a periodic
    XOR key of any length that repeats (_text_under_xor): cached, as agents retry (the same secret or digest is read
    again from call to call)."""
    return bool(_keyed(raw)) or _text_under_xor(raw)


# Text (7-bit bytes) XORed with a key of period p keeps one top bit in each of the p columns: every byte's top bit is
# the one p bytes before's. Random bytes (a digest, a secret) show that at some period with odds of 2**-_TOP_CHECKS at
# most (each column holds two bytes at least): so a secret's or a digest's shape holding such bytes is no secret, and
# is read as a run (it denies) whatever the key's length, up to half the bytes (a shorter cipher is a one-time pad).
_TOP_CHECKS = 24
_TOP_BIT = bytes(b >> 7 for b in range(256))


def _text_under_xor(raw: bytes) -> bool:
    tops = raw.translate(_TOP_BIT)
    return any(tops.startswith(tops[p:]) for p in range(1, min(len(raw) // 2, len(raw) - _TOP_CHECKS) + 1))


_NOISE_HINT = r"(?:[a-z][A-Z]|[A-Za-z][0-9]|[0-9][A-Za-z])"   # inside a word: `yW`, `J1`, `4w`
_DENSE_HINTS = re.compile(_NOISE_HINT + r"(?:[^\n]{0,12}?" + _NOISE_HINT + "){2}")   # three close together: noise
_HINT_REACH = 64
_ALNUM_RUN = re.compile(r"[A-Za-z0-9]*")   # a token's letters and digits, to its edge (`+` and `/` part it here too)


def _alnum_end(text: str, pos: int, endpos: int) -> int:
    """Where the letters and digits from `pos` end, at `endpos` at most."""
    found = _ALNUM_RUN.match(text, pos, endpos)
    return found.end() if found is not None else pos


def _noisy_runs(text: str) -> Iterator[str]:
    """The noisy runs of `text` that decode to nothing read. Tokens of at most _SHORT characters parted by at most two
    blanks or marks are joined into one run (`ey Ju YW 1l`), as a runtime that drops the marks reads them, when a
    third of them or more are no word or number, or a fifth and they average 3 characters or fewer, and two or more
    change from lower to upper case or the run is hex or base32 (short words, `Find More Hot`, and codes in prose,
    `AA12 4B 10am`, are not joined into noise)."""
    if "eyJ" in text:
        text = _JWT_SIGNATURE.sub(r"\1", text)
    if "-" in text:
        text = _UUID.sub(" ", text)
    if "\n" in text:
        text = _WRAPPED.sub("", text.replace("\r\n", "\n"))
    if "<" in text:
        text = _TAG_NAME.sub("   ", text)   # `<h4>Sort by</h4>`: a tag's name is no part of a run
    short: list[str] = []
    end = -1
    for found in itertools.chain(_OPAQUE_TOKEN.finditer(text), (None,)):
        token = found.group() if found is not None else ""
        if found is not None and _is_short(token) and (not short or found.start() - end <= 2):
            short.append(token)
            end = found.end()
            continue
        odd = sum(not _WORD_SHAPE.fullmatch(t) for t in short)
        joined = "".join(short)
        mixed = (odd * 3 >= len(short) or odd * 5 >= len(short) and len(joined) <= 3 * len(short)) and (
            sum(_LOWER_UPPER.search(t) is not None for t in short) >= 2 or _HEX.fullmatch(joined) is not None
            or _BASE32_DIGITS.fullmatch(joined) is not None)   # codes in prose (`AA12 4B 10am`) show neither
        for run in ((joined,) if mixed else ()) + ((token,) if len(token) >= _OPAQUE_RUN and not _is_short(token) else ()):
            if len(run) < 8 or _DIGEST.fullmatch(run) and not _hidden_in_digest(run) or _bech32(run):
                continue
            if len(run) >= _OPAQUE_MIN and _readable(run):   # a short piece read is a fragment, not a reading
                continue
            noisy = _noisy_part(run)
            if noisy:
                yield noisy
        short, end = ([token], found.end()) if found is not None and _is_short(token) else ([], -1)


def _is_short(token: str) -> bool:
    """A token judged with its neighbours: of _SHORT characters or fewer, or hex of 8 or fewer (`7b22-6e61-6d65`)."""
    return len(token) <= _SHORT or len(token) <= 8 and _HEX_TOKEN.fullmatch(token) is not None


_HEX_TOKEN = re.compile(r"[0-9a-f]*[0-9][0-9a-f]*[a-f][0-9a-f]*|[0-9a-f]*[a-f][0-9a-f]*[0-9][0-9a-f]*|[0-9A-F]*[0-9][0-9A-F]*[A-F][0-9A-F]*|[0-9A-F]*[A-F][0-9A-F]*[0-9][0-9A-F]*")
_WORD_SHAPE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_LOWER_UPPER = re.compile(r"[a-z][A-Z]")
_TAG_NAME = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*")


# Letters under a key of any length (Vigenere, Beaufort, a running key): the words keep their lengths and marks but
# their letter pairs are random, which no language's words are. Each word of 4 letters or more standing alone (no
# digit, letter or base64 mark touching it: the letters between digits of an id are no word) is scored by how often
# English puts each of its letter pairs (_BIGRAM_TABLE, below); a text whose _UNNAMED_WORDS distinct words in a row
# (_UNNAMED_PAIRS pairs at least) score _UNNAMED_MEAN or less per pair is letters of no named kind, a cipher a runtime
# may read with a key this reader is not given, and denies (on 1,000 benign checks, 441 benchmark texts and this
# repository's docs and code: none; prose in German, Polish, Welsh, Czech, Basque, pinyin: none).
# _BIGRAM_TABLE: for each pair `ab` (row a, column b), log2 of its share among the pairs beginning with `a`, times 26
# (0: as random letters), in half-bits offset by 16 and clipped to a..z; counted once per distinct word (2+ letters,
# split at case changes) of Python 3.11's pydoc topics, its top-level stdlib modules, /usr/share/common-licenses and
# /usr/share/doc/*/copyright, add-one smoothed.
_BIGRAM_TABLE = ("kqrqkmplqjotrukqgusupomloktppotlmltpkunmsnhsrosjijpktjpmtlktqgsrolvniqpspkihmjtnnpwomlulkqonsmirrorlminhqmrspookohlrqtmolutslomqmjsloostmivhhrnltnitqrrilhneslnmwmoqsghrorrnhtsorlkjmkvkkmvljkthlpopulgqoqqjlgpiqqsqqoqiijmrqvsohqssjphmhouorqunnmslonopuqlnqntjnglktmnnvnmquknqnptnjqspqjohoitmnqvmljugltmltmglqqqmhhrivqmovlljtilnqmtthlqmqjiimeskrttptmsjonkprmilsuonjhmkmorrmoplnknsrvprdurqrpplljukomummqrglsmntriuqrqjlhpennnnmlljplhpmnmmoqpsynljhhtmppvmpjthnoqptngprrpmkfpirkrlummrthopnmrqjmsvrlmhoktlpnvnkruhkonmsnftrqpjmjplqrqpropkqinsrunqctttjkimjlvlnlxlnjufjmnmrnfmonmnkiljvlqpunlquglpnqsnjrrnlilnlhsosptplnsfkppmpufnqulnlqolsopprookqinrqsquiqtspnnjmmumnkwlkquimpomrmglnmpikipr")
_BIGRAMS = {a + b: (ord(_BIGRAM_TABLE[26 * i + j]) - 97 - 16) / 2
            for i, a in enumerate(string.ascii_lowercase) for j, b in enumerate(string.ascii_lowercase)}
_LETTER_TOKEN = re.compile(r"(?<![^\W_]|[+=])[A-Za-z]{4,}(?![^\W_]|[+=])")   # a path's `/` parts words
_LETTER_WORD = re.compile(r"[A-Z]?[a-z]{3,}|[A-Z]{4,}(?![a-z])")
_CHUNKS = re.compile(r"(?<![^\W_]|[+=])[A-Za-z]{2,3}(?: [A-Za-z]{2,3}){3,}(?![^\W_]|[+=])")
_UNNAMED_WORDS, _UNNAMED_PAIRS, _UNNAMED_MEAN = 8, 10, -0.8
_UNNAMED_FEW_PAIRS = 11   # pairs at least where fewer than _UNNAMED_WORDS words are judged: more than two 6-letter words
# Not judged as words of a text (each drawn at random, or a language's own shape; E30b): codes, an upper-case token or
# part of a token of _CODE_MAX letters or fewer (currencies, airports, tickers, booking references, `parseHTTPResponse`)
# or _CODE_RUN tokens in a row of one length and one case (VINs, licence and TOTP key groups); abbreviations, a word
# of _ABBREVIATION_MAX letters or fewer with no vowel and none of English's rarest letters (`bkng`, `tmrw`, Welsh
# `cwtch`; not `dnzx`); a word typed along one row of a keyboard (`asdfghjkl`, `sdkfjh`). A cipher written in the
# shape of codes (upper-case groups of 6 letters or fewer, or groups of one length) is therefore not judged here.
_CODE_MAX, _CODE_RUN, _ABBREVIATION_MAX = 6, 3, 5
_VOWELS, _RAREST = frozenset("aeiouy"), frozenset("jqxz")
_KEYBOARD_ROWS = tuple(frozenset(row) for row in ("qwertyuiop", "asdfghjkl", "zxcvbnm"))
_ALPHABETS = string.ascii_lowercase + " " + string.ascii_lowercase[::-1]
_UNNAMED_LETTERS = 8   # distinct letters at least: a key of letters spreads them (`aaaa aaaa` is no cipher)
_RESIDUES = re.compile("[ACDEFGHIKLMNPQRSTVWXY]+|[acdefghiklmnpqrstvwxy]+")   # amino acids' one-letter codes


@functools.lru_cache(maxsize=65_536)
def _pair_score(word: str) -> float:
    return sum(_BIGRAMS[word[i:i + 2]] for i in range(len(word) - 1))


def _unnamed_letters(text: str) -> str:
    """The first run of words (see above) whose letter pairs read as random letters, joined; '' for none (kept by
    _read_once: an agent sends the same history again on each turn)."""
    return _read_once(_unnamed_letters_of, text)


def _unnamed_letters_of(text: str) -> str:
    seen: dict[str, None] = {}
    tokens = _LETTER_TOKEN.findall(text)
    codes = _codes(tokens)
    coins = {t for t in _CASED_TOKEN.findall(text) if not (t.islower() or t.isupper() or t.istitle())
             and _random_case(t)} if not text.islower() else set()
    if len(coins) < 2:   # one is an id drawn from letters and digits that drew no digit (1 in 8 of 12 characters)
        coins = set()
    for at, token in enumerate(tokens):
        if at in codes or len(token) >= _OPAQUE_MIN and _RESIDUES.fullmatch(token):
            continue   # a protein's or a nucleic acid's sequence: no cipher of words misses the letters they miss
        for word in (token,) if token.islower() else (token.lower(),) if token in coins else \
                _LETTER_WORD.findall(token):
            if not _code(word):   # `parseHTTPResponse`, `\nUSDEUR` (an escape's letter)
                seen[word.lower()] = None
    for chunks in _CHUNKS.findall(text):   # a word cut into pieces a reader is told to join (`gwf nts jk`)
        pieces = chunks.split()
        shorthand = sum(_VOWELS.isdisjoint(piece.lower()) for piece in pieces) * 3 > len(pieces) * 2   # `nvm lmk`
        if not shorthand and not chunks.isupper():   # nor codes (`USD EUR GBP`)
            seen["".join(pieces).lower()] = None
    words = [w for w in seen if _judged(w)]
    scores = [0.0, *itertools.accumulate(map(_pair_score, words))]
    pairs = [0, *itertools.accumulate(len(w) - 1 for w in words)]
    for i in range(len(words)):
        j = min(i + _UNNAMED_WORDS, len(words))
        least = _UNNAMED_PAIRS if j - i == _UNNAMED_WORDS else _UNNAMED_FEW_PAIRS
        if (scores[j] - scores[i] <= _UNNAMED_MEAN * (pairs[j] - pairs[i]) and pairs[j] - pairs[i] >= least
                and len(set("".join(words[i:j]))) >= _UNNAMED_LETTERS):
            return " ".join(words[i:j])
    return ""


_CASE_SWITCH = re.compile(r"(?=[a-z][A-Z]|[A-Z][a-z])")
_CASE_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")   # camelCase's words: `to`, `String`; a coin's: `f`, `FN`
_CASED_TOKEN = re.compile(r"(?<![\w+/=-])[A-Za-z]{6,20}(?![\w+/=-])")   # standing alone, no encoded run


def _random_case(token: str) -> bool:
    """Whether a token's case changes as a coin's does (`gWfNtSjK`: at a third of its letter pairs or more; `fFNBmqxi`:
    twice or more, leaving a letter alone), not as words join (`toString`, `parseHTTPResponse`): a key's letters
    written in random case, judged as one word."""
    switches = len(_CASE_SWITCH.findall(token))
    return switches >= 2 and (switches * 3 >= len(token) - 1 or min(map(len, _CASE_PART.findall(token))) == 1)


def _codes(tokens: list[str]) -> set[int]:
    """The places of `tokens` that are codes (see above): upper case and short, or in a run of one length and case."""
    shapes = [(len(token), 1 if token.isupper() else 2 if token.islower() else 0) for token in tokens]
    codes = {at for at, (n, case) in enumerate(shapes) if case == 1 and n <= _CODE_MAX}   # _code
    at = 0
    for (_, case), run in itertools.groupby(shapes):
        n = len(list(run))
        if n >= _CODE_RUN and case:
            codes.update(range(at, at + n))
        at += n
    return codes


def _code(word: str) -> bool:
    return len(word) <= _CODE_MAX and word.isupper()


@functools.lru_cache(maxsize=65_536)
def _judged(word: str) -> bool:
    """Whether a word (lower case) is judged: `abcdefgh...` (a table, bytes counting up) is no cipher, nor are
    abbreviations and a keyboard's rows."""
    return word not in _ALPHABETS and not _abbreviation(word) and not _typed_along_a_row(word)


def _abbreviation(word: str) -> bool:
    return len(word) <= _ABBREVIATION_MAX and _VOWELS.isdisjoint(word) and _RAREST.isdisjoint(word)


def _typed_along_a_row(word: str) -> bool:
    return any(row.issuperset(word) for row in _KEYBOARD_ROWS)


def _refuse_unnamed_letters(text: str, where: str) -> None:
    run = _unnamed_letters(text) if type(text) is str else ""
    if run and _FILE_RUN.search(text):   # the letters of a file's base64 are drawn at random: no words of a text
        run = _unnamed_letters(_FILE_RUN.sub(_blank_file, text))
    if run:
        _bad_call(where, f"words whose letters read as no language's ({run[:40]!r}...): a text under a key of "
                  "letters a runtime may be given, which this reader cannot undo")


_FILE_RUN = re.compile(r"[A-Za-z0-9+/_-]{64,}(?:\r?\n[A-Za-z0-9+/_-]{4,})*={0,2}")   # a file's base64 (64 at least)


def _blank_file(found: re.Match[str]) -> str:
    return " " if _well_formed_file(_from_base64(found.group().rstrip("="))) else found.group()


def _refuse_opaque(text: str, where: str) -> None:
    label = where.rpartition(".")[2]   # a secret under its label's key (`"SecretAccessKey": "..."`) keeps its shape
    run = _opaque(f"{label}={text}" if _SECRET_LABEL.fullmatch(label) else text)
    if run:
        _bad_call(where, f"a run of encoded-looking characters that no decoder here reads ({run[:24]!r}...): a runtime "
                  "may decode it into a tool call that this reader never sees")


_NOT_BASE64_RUN = re.compile(r"[^A-Za-z0-9+/=_-]")   # base85 writes some of these in any 20 characters, nearly


def _dense(run: str) -> bool:
    """Whether a run shows as many distinct characters as 85 drawn at random would, nearly (base85 does; code and
    words show far fewer): only such runs are decoded, as base85's decoders are Python, not C."""
    return len(set(run)) >= 0.75 * 85 * (1 - (84 / 85) ** len(run))


def _turned(text: str, tool: str | None, where: str) -> list[str]:
    """The text with its letters under an affine key undone (c = a*p + b: any Caesar shift and rot13 with a = 1, Atbash
    with a = b = 25, the 310 others), or reversed, or under a periodic key (Vigenere, Beaufort: _periodic), each when
    that shows a word of a call (or the tool's name), whether or not the text shows such words as it is. A word under
    an affine key is found by its shape (each letter's distance from the first: the word rotated to begin with `a`),
    which is the call word's shape times `a`, so all 312 keys cost one pass over its words."""
    own = tool.lower() if tool else ""
    words = set(_LETTERS.findall(text.lower()))
    shapes = _call_shapes(own)
    targets = set(_call_words(own))   # the words whose shapes _call_shapes holds
    shown: dict[tuple[int, int], set[str]] = {}   # whatever the text shows as it is: words it shows may be decoys
    backwards = False
    for word in words:
        for named, a in shapes.get(word.translate(_ROTATIONS[(ord("a") - ord(word[0])) % 26]), ()):
            shown.setdefault((a, (ord(word[0]) - 97 - a * (ord(named[0]) - 97)) % 26), set()).add(named)
        backwards = backwards or word[::-1] in targets and word[::-1] != word
    # a shift (rot13, Caesar) on one word of a call, as before; under the 300 keys with a multiplier, some word of a
    # text maps onto a call's word by chance: two words of a call, or the tool's own name, must show under one key
    return ([text.translate(_affine_table(a, b)) for (a, b), found in sorted(shown.items())
             if (a, b) != (1, 0) and (a == 1 or len(found) > 1 or own in found)]
            + ([text[::-1]] if backwards else []) + _periodic(text, tool, where) + _transposed(text, own))


# A short call with its characters transposed (blocks of a few characters each reversed, a rail fence, a columnar
# transposition under a key of a few columns): a model told the rule undoes it. Read only in a short text with a call's
# marks whose letters read as little language and that shows no call's word as it is, when its characters can make
# one (a name key's and an arguments key's words with a colon, a keyword call of two arguments, or the tool's name and
# a bracket); each undoing kept when it shows that.
_TRANSPOSED_MAX = 256      # characters of a text read so at most
_BLOCKS = range(2, 9)      # block sizes reversed
_RAILS = range(2, 6)       # rails of a fence
_COLUMNS = range(2, 6)     # columns of a columnar transposition (every order: 2 + 6 + 24 + 120 keys)
_CALL_MARK_PAIRS = (("(", "="), ("{", ":"), ("<", ">"))
_TRANSPOSED_ARGUMENT = re.compile(   # a keyword call of two arguments at least: one shows by chance in a code line
    r"""[a-z_]{2}\([ \t]?[a-z_]{2,64}[ \t]?=[ \t]?["'0-9][^()=]{0,64},[ \t]?[a-z_]{2,64}[ \t]?=""")
_TRANSPOSED_WORDS = (("name", "tool", "function", "action", "call"), ("arguments", "parameters", "params", "input"))
_TRANSPOSED_MEAN = 0.9     # mean pair score at most of its letters (calls transposed in the tests: 0.78 and less)


def _transposed(text: str, own: str) -> list[str]:
    if not _ENCODED_MIN <= len(text) <= _TRANSPOSED_MAX or not any(a in text and b in text for a, b in _CALL_MARK_PAIRS):
        return []
    parts = _TRANSPOSED_PARTS.split(text)   # a line, or a sentence or label's end: `note: <transposed call>`
    return [r for part in ([text] if len(parts) == 1 else [text, *parts]) for r in _transposed_whole(part, own)]


_TRANSPOSED_PARTS = re.compile(r"[.:;!?]\s+|\n")


def _transposed_whole(text: str, own: str) -> list[str]:
    if len(text) < _ENCODED_MIN:
        return []
    low = text.lower()
    letters = _NOT_LETTER.sub("", low)
    if len(letters) < 8 or _stream_mean_pairs(letters) > _TRANSPOSED_MEAN:
        return []
    if _CALL_WORDS_SEEN.search(low) or _TRANSPOSED_ARGUMENT.search(low) or own and f"{own}(" in low:
        return []   # a part that shows a call's word as it is is read as it is (decoys stand in another part)
    # a transposition keeps each character: what no order of them can show is not looked for
    held = collections.Counter(low)
    arguments = low.count("=") >= 2 and "(" in low and "," in low
    words = ":" in low and all(any(not collections.Counter(word) - held for word in kind) for kind in _TRANSPOSED_WORDS)
    named = bool(own) and not collections.Counter(own + "(") - held
    if not (arguments or words or named):
        return []
    return [r for r in dict.fromkeys("".join(undo(low)) for undo in _untranspositions(len(text))) if (
        arguments and _TRANSPOSED_ARGUMENT.search(r) or named and f"{own}(" in r
        or words and any(part in r for part in _CALL_WORD_PARTS) and len(set(_CALL_WORDS_SEEN.findall(r))) >= 2)]


@functools.lru_cache(maxsize=32)
def _untranspositions(n: int) -> tuple[Callable[[str], tuple[str, ...]], ...]:
    """For a text of `n` characters, each undoing (blocks reversed, a rail fence, a columnar key) as an itemgetter."""
    orders = [list(range(at)) + [j for i in range(at, n, size) for j in reversed(range(i, min(i + size, n)))]
              for size in _BLOCKS for at in range(size)]
    orders += [_unfenced(n, rails) for rails in _RAILS]
    orders += [_uncolumned(n, order) for k in _COLUMNS for order in itertools.permutations(range(k))]
    return tuple(operator.itemgetter(*order) for order in orders if len(order) == n)


def _unfenced(n: int, rails: int) -> list[int]:
    """Where each character of the plain text stands in a rail fence of `rails` over `n` characters."""
    cycle = 2 * rails - 2
    places = sorted(range(n), key=lambda i: (min(i % cycle, cycle - i % cycle), i))
    out = [0] * n
    for at, place in enumerate(places):
        out[place] = at
    return out


def _uncolumned(n: int, order: tuple[int, ...]) -> list[int]:
    """Where each character of the plain text stands when its columns (of len(order)) are written in `order`."""
    k = len(order)
    sizes = [n // k + (1 if j < n % k else 0) for j in range(k)]
    starts = [0] * k
    at = 0
    for j in sorted(range(k), key=lambda j: order[j]):
        starts[j], at = at, at + sizes[j]
    return [starts[i % k] + i // k for i in range(n)]


_LETTERS = re.compile(r"\b[a-z]{4,32}\b")   # words, not the letters between digits of an encoded run
_ROTATIONS = tuple(str.maketrans(string.ascii_lowercase + string.ascii_uppercase,
                                 string.ascii_lowercase[k:] + string.ascii_lowercase[:k]
                                 + string.ascii_uppercase[k:] + string.ascii_uppercase[:k]) for k in range(26))
_UNITS = (1, 3, 5, 7, 9, 11, 15, 17, 19, 21, 23, 25)   # the multipliers an affine key may have (prime to 26)


@functools.lru_cache(maxsize=512)
def _affine_table(a: int, b: int) -> dict[int, int]:
    """The table that undoes c = a*p + b on letters of either case."""
    inverse = pow(a, -1, 26)
    plain = [chr(97 + inverse * (c - b) % 26) for c in range(26)]
    return str.maketrans(string.ascii_lowercase + string.ascii_uppercase, "".join(plain) + "".join(plain).upper())


def _tool_word(tool: str) -> str:
    """A (lower-case) tool's name when it is a word of 4 to 32 letters; '' for any other."""
    return tool if re.fullmatch("[a-z]{4,32}", tool) else ""


def _call_words(tool: str) -> list[str]:
    return ["name", "arguments", "argument", "params", "param", "parameters", "input", "tool", "function", "call",
            "invoke", "action"] + ([tool] if _tool_word(tool) else [])


@functools.lru_cache(maxsize=256)
def _call_shapes(tool: str) -> dict[str, tuple[tuple[str, int], ...]]:
    """The shapes of the words of a call and of the tool's name (its letters, when it is all letters of 4 or more)
    under each multiplier `a`: each letter's distance from the first, times `a`."""
    shapes: dict[str, list[tuple[str, int]]] = {}
    for w in _call_words(tool):
        for a in _UNITS:
            shape = "".join(chr(97 + a * (ord(c) - ord(w[0])) % 26) for c in w)
            shapes.setdefault(shape, []).append((w, a))
    return {k: tuple(v) for k, v in shapes.items()}


# A periodic key over the letters (Vigenere: c = p + k[i % period], Beaufort: c = k[i % period] - p; the key stepping
# on letters only or on every character) is found from a crib, a word of a call: under a key of period p, the
# difference of letters p apart is the plaintext's own, whatever the key, so a crib shows as its own differences in
# the text's (found in C); the key then follows from the crib, and, for a word any text may hold, the letters around
# it must show `name` or the tool's name under that key before the text is read under it.
_PERIOD_CHECKS = 3      # differences a crib must match at least (one less for a word that needs `name` beside)
_PERIODIC_KEYS = 8      # keys read at most per text: a text with more hits denies (it is built to exhaust the reader)
_PERIODIC_WINDOW = 40   # letters either side of a hit searched for a second word of a call
_NOT_LETTER = re.compile(r"[^a-z]")
# a key on letters keeps the marks of a call's format: JSON's `{` and `:`, a call's `(` and `=`, a tag's `<` and `>`,
_CALL_MARKS = re.compile(r"\{[^{}]{0,200}:|\([^()]{0,200}=|<[^<>]{0,200}>|^[ \t-]{0,40}[a-z_]{2,32}[ \t]*:",
                         re.MULTILINE)   # and YAML's `key:` (each bounded: a text is read in linear time)
_LETTER_VALUES = bytes((c - 97) if 97 <= c <= 122 else 64 for c in range(256))
_LANE = bytes(((v - 128) % 26) if 103 <= v <= 153 else 255 for v in range(256))


def _periodic(text: str, tool: str | None, where: str) -> list[str]:
    """The text under each periodic key (_PERIOD_CHECKS) that a crib of a call shows, undone."""
    low = text.lower()
    if len(low) < _ENCODED_MIN or not low.isascii() or not _CALL_MARKS.search(low):
        return []
    named = _tool_word(tool.lower()) if tool else ""
    joined = f"name{named}arguments"   # the one crib of several words (a JSON call's keys and the tool's name)
    keys: dict[tuple[bool, int, bytes], None] = {}
    for letters_only in (True, False):
        stream = (_NOT_LETTER.sub("", low) if letters_only else low).encode("ascii").translate(_LETTER_VALUES)
        starts = b""   # 1 for each letter of the stream that begins a word of the text (made at the first hit)
        whole, letters = int.from_bytes(stream), int.from_bytes(stream.translate(_NON_LETTER_LANE))
        bias = int.from_bytes(b"\x80" * len(stream))
        for period, any_pattern, patterns in _crib_patterns(named):
            diffs = _differences(stream, whole, letters, bias, period)
            if len(diffs) < _SEARCH_AT_ONCE and any_pattern.search(diffs) is None:   # all the cribs of this period
                continue
            for crib, sign, pattern, second in patterns:
                at = diffs.find(pattern)
                while at >= 0:
                    if not starts:
                        starts = (b"".join(b"\x01" + b"\x00" * (len(w) - 1) for w in _WORDS.findall(low)) + b"\x01"
                                  if letters_only else _word_starts(low))
                    if not _whole_word(starts, at, len(crib), whole=crib != joined):
                        at = diffs.find(pattern, at + 1)
                        continue
                    key = _minimal(bytes((stream[at + j] - sign * (ord(crib[j]) - 97)) % 26 for j in range(period)),
                                   at)
                    if any(key) and (letters_only, sign, key) not in keys and (
                            not second or _shows_second_word(stream, at, len(crib), key, sign, named)):
                        keys[(letters_only, sign, key)] = None
                        if len(keys) > _PERIODIC_KEYS:
                            _bad_call(where, f"more than {_PERIODIC_KEYS} periodic keys show a word of a call in "
                                      "this text: it is not read under all of them")
                    at = diffs.find(pattern, at + 1)
    return [_unkey(text, sign, key, letters_only=letters_only) for letters_only, sign, key in keys]


_WORDS = re.compile("[a-z]+")


def _word_starts(low: str) -> bytes:
    """1 for each character of the text that begins a word, 2 for each that is no letter, 0 for the others."""
    return _WORD_START.sub(b"\x01", low.encode("ascii")).translate(_START_VALUES) + b"\x01"


_WORD_START = re.compile(rb"(?<![a-z])[a-z]")
_START_VALUES = bytes(1 if v == 1 else 0 if 97 <= v <= 122 else 2 for v in range(256))


def _whole_word(starts: bytes, at: int, size: int, *, whole: bool) -> bool:
    """Whether the `size` letters from `at` stand as a word of their own (`whole`), or as words whose first begins at
    `at` and whose last ends there: a key on letters keeps the blanks and marks between a call's words, so a crib
    stands so in a cipher of a call."""
    inside = starts[at + 1:at + size]
    return starts[at] == 1 and starts[at + size] != 0 and (not whole or inside.count(0) == size - 1)


@functools.lru_cache(maxsize=256)
def _crib_patterns(named: str) -> tuple[tuple[int, re.Pattern[bytes], tuple[tuple[str, int, bytes, bool], ...]], ...]:
    """For each period: a pattern matching any crib's differences, and (crib, sign, its differences, whether a second
    word must show) for each crib: the words of a call, and the tool's name (alone, or between the JSON keys around
    it)."""
    cribs = [("arguments", _PERIOD_CHECKS - 1, True), ("parameters", _PERIOD_CHECKS - 1, True),   # with `name` beside
             ("function", _PERIOD_CHECKS - 1, True), ("toolcall", _PERIOD_CHECKS - 1, True)] + (
        [(named, _PERIOD_CHECKS, False), (f"name{named}arguments", _PERIOD_CHECKS, False)] if named else [])
    by_period: dict[int, list[tuple[str, int, bytes, bool]]] = {}
    for crib, checks, second in cribs:
        for period in range(1, min(len(crib) - checks, _MAX_PERIOD) + 1):
            for sign in (1, -1):
                by_period.setdefault(period, []).append((crib, sign, bytes(
                    (sign * (ord(crib[j + period]) - ord(crib[j]))) % 26 for j in range(len(crib) - period)), second))
    return tuple((period, re.compile(b"|".join(re.escape(p) for _, _, p, _ in found)), tuple(found))
                 for period, found in sorted(by_period.items()))


_MAX_PERIOD = 12   # letters of a periodic key at most
_SEARCH_AT_ONCE = 1024   # a shorter stream is searched for all cribs at once first; a longer one crib by crib (in C)


def _rotated(key: bytes, at: int) -> bytes:
    """A key found at stream position `at`, turned to begin at position 0."""
    period = len(key)
    return key[-at % period:] + key[:-at % period] if at % period else key


def _minimal(key: bytes, at: int) -> bytes:
    """A key found at stream position `at`, turned to begin at position 0 (_rotated) and cut to its shortest period."""
    period = len(key)
    key = _rotated(key, at)
    return next(key[:p] for p in range(1, period + 1) if period % p == 0 and key[:p] * (period // p) == key)


def _differences(stream: bytes, whole: int, letters: int, bias: int, period: int) -> bytes:
    """(stream[i + period] - stream[i]) % 26 for each i, 255 where either is no letter: big-integer arithmetic on the
    stream (`whole`), its mask of non-letters (`letters`) and 128 in every lane (`bias`): each lane's 128 + a - b stays
    within a byte, so no borrow crosses lanes."""
    n = len(stream) - period
    if n <= 0:
        return b""
    low = (1 << 8 * n) - 1
    lanes = (whole & low) + (bias >> 8 * period) - (whole >> 8 * period)
    odd = (letters & low) | (letters >> 8 * period)
    return (lanes | odd * 0xFF).to_bytes(n).translate(_LANE)


_NON_LETTER_LANE = bytes(0 if v < 26 else 1 for v in range(256))


def _shows_second_word(stream: bytes, at: int, size: int, key: bytes, sign: int, named: str) -> bool:
    """Whether the letters either side of a crib's hit (_PERIODIC_WINDOW), under the key it gives, show the key that
    names the callee (`name`) or the tool's name: a call writes them beside its arguments, and a wrong key that maps a
    word of the text onto a crib (`integrity` onto `arguments` in a package-lock file) shows them only by chance."""
    left = max(0, at - _PERIODIC_WINDOW)
    window = "".join(chr(97 + (sign * (v - key[i % len(key)])) % 26) if v < 26 else " "
                     for i, v in enumerate(stream[left:at + size + _PERIODIC_WINDOW], start=left))
    window = window[:at - left] + " " + window[at - left + size:]   # the crib's own letters do not count
    return any(word in window for word in ("name", "tool", "function")) or bool(named and named in window)


def _unkey(text: str, sign: int, key: bytes, *, letters_only: bool) -> str:
    """The text with a periodic key undone on its letters (either case)."""
    out, i = [], 0
    for ch in text:
        low = ch.lower()
        if "a" <= low <= "z":
            plain = chr(97 + (sign * (ord(low) - 97 - key[i % len(key)])) % 26)
            out.append(plain.upper() if ch != low else plain)
            i += 1
        else:
            out.append(ch)
            i += not letters_only
    return "".join(out)


# Characters put between a text's own, which a reader skips as it reads: a digit after each letter (`t4r1a7n...`,
# 8 such pairs in a row at least: a word of 8 letters) and one mark after every character (`t.r.a.n.s...`, 16 at least)
_DIGITS_BETWEEN = re.compile(r"(?:[A-Za-z][0-9]){8,}")
_DIGIT_AFTER_LETTER = re.compile(r"(?<=[A-Za-z])[0-9]")
_SPREAD = re.compile(r"[^\n]([^A-Za-z0-9\n])(?:[^\n]\1){15,}")


def _unfilled(text: str) -> list[str]:
    """The text with the characters put between its own taken out (_DIGITS_BETWEEN, _SPREAD); [] when none are."""
    out: list[str] = []
    if _DIGITS_BETWEEN.search(text):
        out.append(_DIGIT_AFTER_LETTER.sub("", text))
    if _SPREAD.search(text):   # not a rule of one mark (`=====`, `- - -`): what is kept shows letters or digits
        kept = _SPREAD.sub(lambda m: m.group()[::2] if sum(map(str.isalnum, m.group()[::2])) >= 8 else m.group(), text)
        out += [kept] if kept != text else []
    return out


def _transforms(text: str) -> list[str]:
    """The text with its percent-escapes, HTML character references or backslash escapes decoded, and with the
    characters put between its own taken out (_DIGITS_BETWEEN, _SPREAD)."""
    out = _unfilled(text)
    if _PERCENT.search(text):
        out.append(urllib.parse.unquote(text, errors="replace"))   # `caf%E9` (Latin-1) is text too
    if "&" in text and _REFERENCE.search(text):
        out.append(html.unescape(text))
    if "\\" in text and _ESCAPE.search(text):
        out.append(_ESCAPE.sub(lambda m: _unescaped(m.group()), text))
    if '""' in text and _CSV_QUOTES.search(text):   # a CSV cell's quotes, doubled: `1,"{""name"": ""transfer"", ...}"`
        out.append(text.replace('""', '"'))
    if "\\N{" in text and _NAMED_ESCAPE.search(text):
        out.append(_NAMED_ESCAPE.sub(_named_escape, text))
    if "&" in text and "*" in text and _YAML_ANCHOR.search(text):
        out.append(_yaml_expanded(text))
    return out + _spelled(text)


# YAML's anchors and aliases, expanded as a YAML reader expands them (`base: &b {to: eve}` ... `transfer: *b`, or
# `<<: *b` merged): a call whose arguments are an alias is then written in full.
_YAML_ANCHOR = re.compile(r"^([ \t-]*)[^\n#]*?:[ \t]*&([\w.-]{1,64})[ \t]*(.*)$", re.MULTILINE)
_YAML_ALIAS = re.compile(r"^([ \t-]*)([^\n#]*?):[ \t]*\*([\w.-]{1,64})[ \t]*$", re.MULTILINE)
_YAML_ANCHORS = 64   # anchors read at most


def _yaml_expanded(text: str) -> str:
    lines = text.split("\n")
    anchors: dict[str, str | list[str]] = {}
    for found in itertools.islice(_YAML_ANCHOR.finditer(text), _YAML_ANCHORS):
        indent, name, inline = len(found.group(1)), found.group(2), found.group(3).strip()
        if inline:
            anchors[name] = inline
            continue
        row = text.count("\n", 0, found.start()) + 1
        block = list(itertools.takewhile(lambda line: not line.strip() or len(line) - len(line.lstrip(" \t-")) > indent,
                                         lines[row:]))
        anchors[name] = [line.strip() for line in block if line.strip()]

    def expanded(found: re.Match[str]) -> str:
        lead, key, value = found.group(1), found.group(2), anchors.get(found.group(3))
        if value is None:
            return found.group()
        if isinstance(value, str):
            return f"{lead}{key}: {value}"
        inner = " " * (len(lead) + 2)
        if key.strip() == "<<":
            return "\n".join(f"{' ' * len(lead)}{line}" for line in value)
        return f"{lead}{key}:\n" + "\n".join(inner + line for line in value)

    return _YAML_ALIAS.sub(expanded, text)


# Text spelled in another alphabet that a model reads as letters: Braille patterns (U+2800 block, as ASCII Braille
# writes letters, digits and marks), Morse code (dots and dashes), the NATO alphabet's words (`Tango Romeo Alfa ...`),
# a number whose bytes are text (`int.from_bytes`), ROT47 and UTF-7 (read on when they show a call's word or a keyword
# call), and a span under a bidi override shown in the order it is seen (RLO reverses it on screen).
_CSV_QUOTES = re.compile(r'(?:^|[,;\t])[ \t]*"(?:[^"\n]|"")*?""[^"\n,;]', re.MULTILINE)
_NAMED_ESCAPE = re.compile(r"\\N\{([A-Z0-9 -]{1,88})\}")
_BRAILLE = re.compile("[\u2800-\u28ff]{4,}")
_BRAILLE_ASCII = " a1b'k2l@cif/msp\"e3h9o6r^djg>ntq,*5<-u8v.%[$+x!&;:4\\0z7(_?w]#y)="
_MORSE_CODES = dict(zip(
    ".- -... -.-. -.. . ..-. --. .... .. .--- -.- .-.. -- -. --- .--. --.- .-. ... - ..- ...- .--- -..- -.-- --.. "
    "----- .---- ..--- ...-- ....- ..... -.... --... ---.. ----. -.--. -.--.- -...- .-..-. --..-- .-.-.- ---... "
    ".----. -....- ..--.- .--.-. -..-. -.-.-- ..--.. -.-.-.".split(), "abcdefghijklmnopqrstuvwxyz0123456789()=\",.:'-_@/!?;"))
_MORSE_CODES[".--"] = "w"
_MORSE = re.compile(r"[.\-·•–—_]{1,7}(?:(?:[ \t]+|[ \t]*[/|][ \t]*)[.\-·•–—_]{1,7}){7,}")
_MORSE_MARKS = str.maketrans("·•–—_", "..---")
_NATO = ("alfa alpha bravo charlie delta echo foxtrot golf hotel india juliett juliet kilo lima mike november oscar papa "
         "quebec romeo sierra tango uniform victor whiskey whisky xray x-ray yankee zulu").split()
_NATO_RUN = re.compile(r"(?i)\b(?:" + "|".join(_NATO) + r")(?:[\s,;-]+(?:" + "|".join(_NATO) + r")\b){4,}")
_NATO_WORD = re.compile(r"(?i)\b(?:" + "|".join(_NATO) + r")\b")
_DECIMAL = re.compile(r"(?<![\w.])[0-9]{24,4000}(?![\w.])")
_UTF7 = re.compile(r"\+[A-Za-z0-9+/]{2,}-?")
_BIDI = re.compile("([\u202d\u202e\u2066\u2067\u2068])([^\u202c\u2069\n]*)[\u202c\u2069]?")


def _named_escape(found: re.Match[str]) -> str:
    try:
        return unicodedata.lookup(found.group(1))
    except KeyError:
        return found.group()


_PARENTHESIZED = str.maketrans({**{chr(0x249C + i): chr(97 + i) for i in range(26)},   # ⒜ (NFKC: `(a)`)
                                 **{chr(0x2474 + i): str(i + 1) for i in range(20)},    # ⑴
                                 **{chr(0x2488 + i): str(i + 1) for i in range(20)}})   # ⒈
_PARENTHESIZED_CHAR = re.compile("[\u2474-\u24b5]")
# a substitution written beside what it hides: `😀=a 😁=b ...`, `a:😀, b:😁` (8 pairs of one character each at least)
_PAIRS = re.compile(r"(?:(?<!\S)(\S)[ \t]*(?:=>|->|→|=|:)[ \t]*(\S)(?:[ \t]*[,;]|\s)\s*){8,}")
_PAIR = re.compile(r"(\S)[ \t]*(?:=>|->|→|=|:)[ \t]*(\S)")


def _substituted(text: str) -> list[str]:
    """The text under each substitution table written in it, read both ways (symbol to letter, letter to symbol), when
    that shows a call's word or a keyword call."""
    out: list[str] = []
    for table in itertools.islice(_PAIRS.finditer(text), 4):
        pairs = _PAIR.findall(table.group())
        rest = text[:table.start()] + text[table.end():]
        for forward in (True, False):
            mapping = {a: b for a, b in pairs} if forward else {b: a for a, b in pairs}
            read = rest.translate(str.maketrans(mapping)) if len(mapping) >= 8 else ""
            if _shows_call_word_turned(read):   # a wrong way round or a table of scores reads as noise
                out.append(read)
    return out


def _spelled(text: str) -> list[str]:
    out: list[str] = []
    if ("=" in text or ":" in text or "→" in text) and _PAIRS.search(text):
        out += _substituted(text)
    if not text.isascii():
        if _PARENTHESIZED_CHAR.search(text):
            out.append(text.translate(_PARENTHESIZED))
        if _BRAILLE.search(text):
            out.append(_BRAILLE.sub(lambda m: "".join(_BRAILLE_ASCII[(ord(c) - 0x2800) % 64] for c in m.group()), text))
        if _BIDI.search(text):
            out.append(_BIDI.sub(lambda m: m.group(2)[::-1] if m.group(1) == "\u202e" else m.group(2), text))
        if _MORSE.search(text.translate(_MORSE_MARKS)):
            text = text.translate(_MORSE_MARKS)
    if _MORSE.search(text):
        out.append(_MORSE.sub(_morse_read, text))
    if _NATO_RUN.search(text):
        out.append(_NATO_RUN.sub(lambda m: "".join(w[0].lower() for w in _NATO_WORD.findall(m.group())), text))
    if _DECIMAL.search(text):
        out += [read for m in _DECIMAL.finditer(text)
                if (read := _printable((n := int(m.group())).to_bytes((n.bit_length() + 7) // 8)))]
    if text.isascii() and len(text) >= _ENCODED_MIN:
        turned = [text.translate(_ROT47)] + ([_utf7(text)] if "+" in text and _UTF7.search(text) else [])
        out += [t for t in turned if t != text and _shows_call_word_turned(t)]
    return out


def _morse_read(found: re.Match[str]) -> str:
    words = re.split(r"[ \t]*[/|][ \t]*|[ \t]{3,}", found.group())
    return " ".join("".join(_MORSE_CODES.get(code.replace("_", "-"), "?") for code in word.split()) for word in words)


_ROT47 = str.maketrans("".join(map(chr, range(33, 127))), "".join(chr(33 + (c + 14) % 94) for c in range(33, 127)))


def _utf7(text: str) -> str:
    try:
        return text.encode("ascii").decode("utf-7")
    except UnicodeDecodeError:
        return ""


# Text written in characters that show as nothing, which a model reads all the same: Unicode tag characters (U+E0020 to
# U+E007E are ASCII's printable characters, as "ASCII smuggling" writes a prompt), and bytes as variation selectors
# (VS1-VS16 are 0-15, VS17-VS256 are 16-255: one emoji with a run of them carries any bytes). The reader that forgives
# invisible characters drops them; here they are read, each kind in order wherever it stands in the text.
_TAG_CHAR = re.compile("[\U000E0000-\U000E007F]")
_SELECTOR = re.compile("[\uFE00-\uFE0F\U000E0100-\U000E01EF]")
_SELECTORS_MIN = 8   # selectors at least read as bytes: an emoji or a CJK character takes one each, a call many


def _invisibly_written(text: str, where: str) -> list[str]:
    """The text written in tag characters, and the texts the bytes written as variation selectors hold (_read_bytes)."""
    out: list[str] = []
    tags = _TAG_CHAR.findall(text)
    if tags:
        out.append("".join(chr(ord(c) - 0xE0000) for c in tags if 0xE0020 <= ord(c) <= 0xE007E))
    selectors = _SELECTOR.findall(text)
    if len(selectors) >= _SELECTORS_MIN:
        out += _read_bytes(bytes(ord(c) - 0xFE00 if ord(c) < 0xE0000 else ord(c) - 0xE0100 + 16 for c in selectors),
                           where)
    return out


def _unescaped(escape: str) -> str:
    code = int(escape[2:], 16) if escape[1] in "uxU" else int(escape[1:], 8)
    return chr(code) if code < 0x110000 else ""


def _read_base64(packed: str, where: str, *, shifted: bool, raw: bytes | None = None) -> list[str]:
    """The texts a base64 run holds, at the alignment it has and, when that is no text and `shifted` (a run as written:
    a word may be glued before it), at the three others. `raw`: the run decoded (_from_base64), when it is."""
    first = _read_bytes(_from_base64(packed) if raw is None else raw, where)
    if first or not shifted or not all(c.search(packed) for c in _MIXED):   # base64 shows A-Z, a-z and 0-9
        return first
    return [text for k in (1, 2, 3) if _PRINTABLE_SPAN.search(_from_base64(packed[k:k + 256]))   # text shows at once
            for text in _read_bytes(_from_base64(packed[k:]), where)]


_MIXED = (re.compile("[A-Z]"), re.compile("[a-z]"), re.compile("[0-9]"))


def _read_bytes(raw: bytes, where: str, depth: int = 0) -> list[str]:
    """The text decoded bytes hold: the whole as printable UTF-8, what gzip, zlib, bzip2, xz or raw deflate data
    inflates to, or else the printable ASCII runs inside them; [] for none."""
    if _pickled(raw):
        _bad_call(where, "bytes that are a Python pickle, which a runtime loads by running what it names: not read")
    whole = _printable(raw) or _wide_text(raw)
    if whole:
        return [whole, *_keyed(raw, periodic=False)]
    if depth < 4:
        for inflated in _inflations(raw, where):
            held = _read_bytes(inflated, where, depth + 1)
            if held:
                return held
    parsed = _container(raw) if depth < 4 else None
    carried = [text for piece in parsed.held if piece for text in _read_bytes(piece, where, depth + 1)] if parsed else []
    return carried + (_keyed(raw) or [_Guessed(span.decode("ascii")) for span in dict.fromkeys(
        _PRINTABLE_SPAN.findall(raw)) if _SPAN_MARK.search(span)])   # pieces of bytes that are no text: maybe noise


# Files a tool returns as base64 (an image, an archive): their bytes are random by nature, so a run that decodes to one
# is no run to refuse (_readable) and its letters are no words (_refuse_unnamed_letters), but only when the file is
# well formed as its format is written (a PNG's chunks with their CRCs, a JPEG's segments, a GIF's blocks, a zip's
# members): a magic number alone before a cipher is no file. What a file may carry as data beside its picture is read
# like any decoded bytes: a PNG's text chunks and other ancillary chunks (zTXt and iTXt inflated), a JPEG's comment
# and application segments, a GIF's comment, text and application blocks, a zip's members, and bytes after its end.
_CONTAINER_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8", b"GIF87a", b"GIF89a", b"PK\x03\x04")
_IMAGE_DATA_CHUNKS = frozenset((b"IHDR", b"PLTE", b"IDAT", b"IEND"))
_ZIP_MEMBERS = 64


class _Container(NamedTuple):
    whole: bool          # well formed as its format is written (a truncated file's parts that are there are)
    held: Sequence[bytes]   # the data it carries beside its picture, to be read (a tuple as _container gives it)


@functools.lru_cache(maxsize=8)
def _container(raw: bytes) -> _Container | None:
    """`raw` parsed as the file its magic number names (_CONTAINER_MAGIC); None for none of them. Kept for the same
    bytes, which _readable, _blank_file, _read_bytes and _well_formed_file each parse (its held data a tuple)."""
    parsed = _parsed_container(raw)
    return None if parsed is None else _Container(parsed.whole, tuple(parsed.held))


def _parsed_container(raw: bytes) -> _Container | None:
    if raw.startswith(_CONTAINER_MAGIC[0]):
        return _png(raw)
    if raw.startswith(_CONTAINER_MAGIC[1]):
        return _jpeg(raw)
    if raw.startswith(_CONTAINER_MAGIC[2:4]):
        return _gif(raw)
    if raw.startswith(_CONTAINER_MAGIC[4]):
        return _zip(raw)
    return None


def _png(raw: bytes) -> _Container:
    held: list[bytes] = []
    at = 8
    while at + 12 <= len(raw):
        size, kind = int.from_bytes(raw[at:at + 4]), raw[at + 4:at + 8]
        end = at + 12 + size
        if at == 8 and kind != b"IHDR" or not kind.isalpha():
            return _Container(False, held)
        if end > len(raw):   # cut short: what is there of it is read; the file is whole when its IHDR was
            return _Container(at > 8, held + ([] if kind in _IMAGE_DATA_CHUNKS else _png_text(kind, raw[at + 8:])))
        data = raw[at + 8:end - 4]
        if zlib.crc32(kind + data) != int.from_bytes(raw[end - 4:end]):
            return _Container(False, held)
        if kind not in _IMAGE_DATA_CHUNKS:
            held += _png_text(kind, data)
        at = end
        if kind == b"IEND":
            return _Container(True, held + ([raw[at:]] if at < len(raw) else []))
    return _Container(at > 8, held + ([raw[at:]] if at < len(raw) else []))


def _png_text(kind: bytes, data: bytes) -> list[bytes]:
    """An ancillary chunk's data; of a text chunk, its keyword and its text (zTXt's compressed, inflated when read)."""
    keyword, _, rest = data.partition(b"\x00")
    if kind == b"tEXt":
        return [keyword, rest]
    if kind == b"zTXt":
        return [keyword, rest[1:]]
    if kind == b"iTXt" and len(rest) >= 2:
        return [keyword, *rest[2:].split(b"\x00", 2)]   # the language tag, the translated keyword, the text
    return [data]


def _jpeg(raw: bytes) -> _Container:
    held: list[bytes] = []
    at, segments = 2, 0
    while at + 2 <= len(raw):
        if raw[at] != 0xFF:
            return _Container(False, held)
        marker = raw[at + 1]
        if marker == 0xFF:   # fill bytes before a marker
            at += 1
            continue
        if marker == 0xD9:   # end of image
            return _Container(segments > 0, held + ([raw[at + 2:]] if at + 2 < len(raw) else []))
        if 0xD0 <= marker <= 0xD7 or marker == 0x01:
            at += 2
            continue
        if at + 4 > len(raw) or marker == 0x00:
            return _Container(False, held)
        size = int.from_bytes(raw[at + 2:at + 4])
        if size < 2:
            return _Container(False, held)
        data = raw[at + 4:at + 2 + size]
        segments += 1
        if marker == 0xFE or 0xE0 <= marker <= 0xEF:   # a comment, an application segment (Exif, XMP, ICC)
            held.append(data)
        if at + 2 + size > len(raw):
            return _Container(segments > 1, held)
        at += 2 + size
        if marker == 0xDA:   # entropy-coded data to the next marker that is no stuffed 0xFF00 or restart
            while True:
                at = raw.find(b"\xff", at)
                if at < 0 or at + 1 >= len(raw):
                    return _Container(segments > 1, held)
                if raw[at + 1] == 0x00 or 0xD0 <= raw[at + 1] <= 0xD7:
                    at += 2
                    continue
                break
    return _Container(segments > 1, held)


def _gif(raw: bytes) -> _Container:
    held: list[bytes] = []
    if len(raw) < 13:
        return _Container(False, held)
    flags = raw[10]
    at = start = 13 + (3 << (flags & 7) + 1 if flags & 0x80 else 0)
    # cut short (as a tool that truncates its output shows it): what is there of it is read, and the file is whole
    # when its header and colour table were and a block began after them, like a PNG cut after its IHDR; a cut image
    # block's LZW code size must be one the format allows (2 to 8)
    code_at = 0
    while at < len(raw):
        block = raw[at]
        if block == 0x3B:   # trailer
            return _Container(True, held + ([raw[at + 1:]] if at + 1 < len(raw) else []))
        if block == 0x21:
            if at + 2 > len(raw):
                return _Container(True, held)
            label, at = raw[at + 1], at + 2
        elif block == 0x2C:
            if at + 10 > len(raw):
                return _Container(True, held)
            local = raw[at + 9]
            label, at = 0x2C, at + 10 + (3 << (local & 7) + 1 if local & 0x80 else 0) + 1   # and the LZW code size
            if at > len(raw):   # cut in the local colour table or before the LZW code size
                return _Container(True, held)
            code_at = at - 1
        else:
            return _Container(False, held)
        data = bytearray()
        while at < len(raw) and raw[at]:
            data += raw[at + 1:at + 1 + raw[at]]
            at += 1 + raw[at]
        if at >= len(raw):   # cut short in the block's data
            if label == 0x2C:
                return _Container(2 <= raw[code_at] <= 8, held)
            return _Container(True, held + [bytes(data)])
        at += 1
        if label != 0x2C:   # a comment, plain text or application block; a graphic control's few bytes too
            held.append(bytes(data))
    return _Container(at > start, held)   # cut short between blocks


def _zip(raw: bytes) -> _Container:
    """A zip's members, each inflated (not past _MAX_JSON_TEXT bytes in all); one encrypted, too large or whose CRC
    fails makes no whole file."""
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            members = archive.infolist()
            if len(members) > _ZIP_MEMBERS or sum(m.file_size for m in members) > _MAX_JSON_TEXT or any(
                    m.flag_bits & 1 for m in members):
                return _Container(False, [])
            return _Container(True, [archive.read(m) for m in members])
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, OSError, EOFError, zlib.error,
            RuntimeError, ValueError, lzma.LZMAError):
        return _Container(False, [])


_CARRIED_SHAPES = (b"Exif\x00", b"II*\x00", b"MM\x00*", b"ICC_PROFILE\x00", b"http://ns.adobe.com/", b"JFIF\x00",
                   b"JFXX\x00", b"Adobe", b"Photoshop 3.0\x00", b"MPF\x00", b"NETSCAPE2.0", b"ANIMEXTS1.0", b"XMP DataXMP")
_CARRIED_SMALL = 32   # bytes of carried data that need no shape: a chunk's few numbers (cHRM's 32, pHYs' 9)


def _carried(data: bytes) -> bool:
    """Whether data a file carries beside its picture is of a shape that is read or known: a few bytes, text, data
    that inflates, a file, or a segment's published header (Exif, ICC, XMP...); bytes of no shape (a cipher put in a
    private chunk) make the file no whole one."""
    return (len(data) <= _CARRIED_SMALL or data.startswith(_CARRIED_SHAPES) or data[36:40] == b"acsp"
            or bool(_printable(data.rstrip(b"\x00")) or _well_formed_file(data)
            or _compressed_head(data)))


def _well_formed_file(raw: bytes) -> bool:
    """Whether `raw` is a file of a format this reader parses and is well formed, with whatever it carries beside its
    picture of a known shape (_carried), or begins with the magic number of another known format (_FILE_MAGIC: not
    parsed here)."""
    parsed = _container(raw)
    if parsed is not None:
        return parsed.whole and all(map(_carried, parsed.held))
    return raw.startswith(_FILE_MAGIC) or raw[4:8] in (b"ftyp", b"ssh-", b"ecds", b"sk-s", b"sk-e")


_PICKLE_DATA = frozenset(("STRING", "BINSTRING", "SHORT_BINSTRING", "UNICODE", "BINUNICODE", "SHORT_BINUNICODE",
                          "BINUNICODE8", "GLOBAL", "STACK_GLOBAL", "REDUCE", "INST", "OBJ", "NEWOBJ", "NEWOBJ_EX"))


def _pickled(raw: bytes) -> bool:
    """Whether bytes of 16 or more are, to their last, one pickle that writes a string or names a callable (read
    statically by pickletools, never loaded)."""
    if len(raw) < _ENCODED_MIN or raw[-1:] != b"." or raw[:1] not in b"\x80(cVS]}ldI":
        return False
    seen = False
    try:
        for op, _, at in pickletools.genops(raw):
            seen = seen or op.name in _PICKLE_DATA
            if op.name == "STOP":
                return seen and at == len(raw) - 1
    except (ValueError, KeyError, IndexError, UnicodeDecodeError, struct.error):
        return False
    return False


def _wide_text(raw: bytes) -> str:
    """The text of bytes in UTF-16 or UTF-32 (a third of them NUL or more), '' for none: a tool decodes them too."""
    if raw.count(0) * 3 < len(raw):
        return ""
    for codec in ("utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be"):
        try:
            text = raw.decode(codec)
        except UnicodeDecodeError:
            continue
        if text and _printable(text.encode()):
            return text
    return ""


class _Guessed(str):
    """A text read under a key guessed from a crib: its letters are the guess's (a wrong key makes any bytes random
    letters), so they are read for calls but not judged as a language's (_refuse_unnamed_letters); so are a list's
    codes joined (_joined_items: `["QXZPVK", "BGHTRM"]`)."""


def _keyed(raw: bytes, *, periodic: bool = True) -> list[str]:
    """The texts `raw` is under a one-byte key (_unkeyed) or, when `periodic` (no text as it is: a key of several
    bytes makes text no text), a periodic XOR key (_xored), that show a word of a call."""
    return [_Guessed(text) for text in _unkeyed(raw) + (_xored(raw) if periodic else [])
            if _shows_call_word(text.lower())]


# Bytes XORed with a key of several bytes: under a key of period p, c[i] ^ c[i + p] is the plaintext's own, so a crib
# (a word of a call as JSON or Python writes it) shows as its own XOR differences (found in C); the key follows.
_XOR_CRIBS = (b'"arguments"', b'"parameters"', b'{"name": "', b'{"name":"', b'"function"', b'tool_call', b'"input"')
_XOR_CHECKS = 3   # bytes a crib must match beyond its period (1 in 2**24 by chance at a position)


@functools.lru_cache(maxsize=1)
def _xor_patterns() -> tuple[tuple[int, re.Pattern[bytes], tuple[tuple[bytes, bytes], ...]], ...]:
    """For each period: a pattern matching any crib's XOR differences, and (crib, its differences) for each crib."""
    by_period: dict[int, list[tuple[bytes, bytes]]] = {}
    for crib in _XOR_CRIBS:
        for period in range(2, len(crib) - _XOR_CHECKS + 1):
            by_period.setdefault(period, []).append(
                (crib, bytes(crib[j] ^ crib[j + period] for j in range(len(crib) - period))))
    return tuple((period, re.compile(b"|".join(re.escape(p) for _, p in found)), tuple(found))
                 for period, found in sorted(by_period.items()))


def _xored(raw: bytes) -> list[str]:
    """The texts `raw` is under each periodic XOR key of 2 bytes or more that a crib shows (the printable runs of what
    it decrypts to, when the whole is no text)."""
    if not _ENCODED_MIN <= len(raw) <= _MAX_KEYED:
        return []
    keys: dict[bytes, None] = {}
    whole = int.from_bytes(raw)
    for period, any_pattern, patterns in _xor_patterns():
        n = len(raw) - period
        if n <= 0:
            break
        shifted = ((whole & (1 << 8 * n) - 1) ^ (whole >> 8 * period)).to_bytes(n)
        if any_pattern.search(shifted) is None:   # one search for all the cribs of this period
            continue
        for crib, pattern in patterns:
            at = shifted.find(pattern)
            while at >= 0 and len(keys) <= _PERIODIC_KEYS:
                key = bytes(raw[at + j] ^ crib[j] for j in range(period))
                keys[_rotated(key, at)] = None
                at = shifted.find(pattern, at + 1)
    out = []
    for key in keys:
        plain = bytes(b ^ key[i % len(key)] for i, b in enumerate(raw))
        whole_text = _printable(plain)
        out += [whole_text] if whole_text else [s.decode("ascii") for s in _PRINTABLE_SPAN.findall(plain)]
    return out


# a literal part of each word _CALL_WORDS_SEEN matches: a text without any of them shows none (found at C speed)
_CALL_WORD_PARTS = ("name", "argument", "param", "input", "tool", "function", "call", "invoke", "action")


def _shows_call_word(low: str) -> bool:
    return any(part in low for part in _CALL_WORD_PARTS) and _CALL_WORDS_SEEN.search(low) is not None


_TEXT_BYTE_VALUES = bytes([9, 10, 13, *range(0x20, 0x7F)])
_MAX_KEYED = 65_536    # bytes tried under every key
_KEYED_DISTINCT = 98   # distinct bytes at most: as many as printable ASCII has, or no key makes them text
_KEYED_FEWEST = 10     # distinct bytes at least: a call's text shows more (`{"name": ` alone shows 8)
_XOR_KEYS = tuple(frozenset(b ^ p for p in _TEXT_BYTE_VALUES) for b in range(256))          # the keys that make b text
_SHIFT_KEYS = tuple(frozenset((p - b) % 256 for p in _TEXT_BYTE_VALUES) for b in range(256))
_HALF_SHIFT_KEYS = tuple(frozenset((p - b) % 128 for p in _TEXT_BYTE_VALUES) for b in range(128))   # 7-bit (_halved)


def _unkeyed(raw: bytes) -> list[str]:
    """The texts `raw` is under a one-byte key (XOR with it, or each byte shifted by it), a transform a tool may undo:
    each key that makes every distinct byte printable ASCII (text has few distinct bytes; binary data, all). Kept by
    _read_bytes when they show a word of a call."""
    if not _ENCODED_MIN <= len(raw) <= _MAX_KEYED or len(set(raw[:512])) > _KEYED_DISTINCT:
        return []
    distinct = sorted(set(raw))
    if not _KEYED_FEWEST <= len(distinct) <= _KEYED_DISTINCT:
        return []
    gaps = [(distinct[(i + 1) % len(distinct)] - b) % 256 for i, b in enumerate(distinct)]
    if distinct[0] >> 7 != distinct[-1] >> 7 and 256 - max(gaps) > 0x7E - 0x09:
        return []   # XOR keeps text's top bit 0 (one top bit for all), a shift its span of 9 to 126: neither can
    return [raw.translate(table).decode("ascii") for table in _key_tables(frozenset(distinct))]


@functools.lru_cache(maxsize=1024)
def _key_tables(distinct: frozenset[int]) -> tuple[bytes, ...]:
    """The translation tables of the one-byte keys (XOR, shift; not the identity) under which every byte of `distinct`
    is printable ASCII: the keys each byte allows, intersected (_unkeyed, the caller, bounds their number)."""
    xors, shifts = set(range(1, 256)), set(range(1, 256))
    for byte in distinct:
        xors &= _XOR_KEYS[byte]
        shifts &= _SHIFT_KEYS[byte]
        if not xors and not shifts:
            return ()
    return tuple(bytes(b ^ k for b in range(256)) for k in sorted(xors)) + tuple(
        bytes((b + k) % 256 for b in range(256)) for k in sorted(shifts))


def _compressed_head(raw: bytes) -> bool:
    """Whether `raw` begins with a gzip header or a zlib one (deflate, its check bits right)."""
    return raw[:2] == b"\x1f\x8b" or len(raw) > 1 and raw[0] & 0x0F == 8 and (raw[0] * 256 + raw[1]) % 31 == 0


def _inflations(raw: bytes, where: str) -> list[bytes]:
    """What `raw` inflates to as compressed data (gzip or zlib, bzip2, xz, raw deflate); data that inflates past
    _MAX_JSON_TEXT bytes denies: what it holds is not read."""
    out: list[bytes] = []
    if _compressed_head(raw):
        out.append(_inflated(raw, where, zlib.decompressobj(wbits=47)))  # 32 + 15: a gzip or a zlib header
    if raw[:3] == b"BZh":
        out.append(_inflated(raw, where, bz2.BZ2Decompressor()))
    if raw[:6] == b"\xfd7zXZ\x00" or raw[:3] == b"\x5d\x00\x00":
        out.append(_inflated(raw, where, lzma.LZMADecompressor()))
    out.append(_raw_inflated(raw, where))
    return [o for o in out if o]


_MAX_RAW_INFLATE = 16 * _MAX_JSON_TEXT   # bytes inflated to tell raw deflate data from bytes that only begin like it


def _raw_inflated(raw: bytes, where: str) -> bytes:
    """What raw deflate data (no header: any bytes may begin like it) inflates to, b'' unless it is one whole stream
    (a tool's inflate fails on anything else); one that is whole past _MAX_JSON_TEXT bytes, or goes on past
    _MAX_RAW_INFLATE without an error, denies."""
    inflater = zlib.decompressobj(wbits=-15)
    try:
        out = inflater.decompress(raw, _MAX_JSON_TEXT)
        if not inflater.unconsumed_tail:
            return out if inflater.eof else b""
        total, tail = len(out), inflater.unconsumed_tail
        while tail and total < _MAX_RAW_INFLATE and not inflater.eof:
            total += len(inflater.decompress(tail, _MAX_JSON_TEXT))
            tail = inflater.unconsumed_tail
    except zlib.error:
        return b""
    if not inflater.eof and not tail:
        return b""
    _bad_call(where, f"raw deflate data that inflates past {_MAX_JSON_TEXT:,} bytes: what it holds is not read")


def _inflated(raw: bytes, where: str, inflater: Any) -> bytes:
    """Compressed data inflated (a tool may inflate what it decodes), b'' when it is not such data; data that inflates
    past _MAX_JSON_TEXT bytes denies: what it holds is not read."""
    try:
        out: bytes = inflater.decompress(raw, _MAX_JSON_TEXT)
    except (zlib.error, OSError, lzma.LZMAError, EOFError, ValueError):
        return b""
    if getattr(inflater, "unconsumed_tail", b"") or len(out) >= _MAX_JSON_TEXT:
        _bad_call(where, f"compressed data that inflates past {_MAX_JSON_TEXT:,} bytes: what it holds is not read")
    return out


def _from_base64(packed: str) -> bytes:
    """Base64 without its padding, standard or URL-safe, decoded (a run of 4k+1 characters decodes its first 4k).
    Characters outside the alphabet (`=` inside joined groups) are dropped first, as the decoder drops them: counted,
    they made a run of 4k+1 data characters that raised binascii.Error out of the extractor."""
    if _NOT_B64_CHAR.search(packed):
        packed = _NOT_B64_CHAR.sub("", packed)
    usable = packed[:len(packed) - len(packed) % 4 if len(packed) % 4 == 1 else len(packed)]
    return base64.urlsafe_b64decode(usable.replace("+", "-").replace("/", "_") + "=" * (-len(usable) % 4))


_NOT_B64_CHAR = re.compile(r"[^A-Za-z0-9+/_-]")


def _from_base32(run: str) -> bytes:
    """A base32 run (RFC 4648's alphabet in either case, or base32hex), decoded up to its last whole group of 8."""
    body = run.rstrip("=")
    body = body[:len(body) // 8 * 8] if len(body) % 8 in (1, 3, 6) else body
    # as base64.b32decode(casefold=True) then b32hexdecode read it padded to whole groups, but by int() (C, not Python)
    digits = body.rstrip("=")   # a cut may end in `=`
    if -len(body) % 8 + len(body) - len(digits) not in (0, 1, 3, 4, 6):   # padding b32decode refuses
        return b""
    if _B32_STANDARD.fullmatch(digits):
        digits = digits.upper().translate(_B32_AS_DIGITS)
    elif not _B32_HEX.fullmatch(digits):
        return b""
    groups = -(-len(digits) // 8)
    return int(digits.ljust(groups * 8, "0") or "0", 32).to_bytes(groups * 5, "big")[:len(digits) * 5 // 8]


_B32_STANDARD = re.compile("[A-Za-z2-7]*")
_B32_HEX = re.compile("[0-9A-Va-v]*")
_B32_AS_DIGITS = str.maketrans(string.ascii_uppercase + "234567", string.digits + string.ascii_uppercase[:22])


def _from_base85(run: str) -> bytes:
    """A base85 (RFC 1924, git's) or Ascii85 (Adobe's `<~ ~>`, `z`, `y`) run decoded; b'' when it is neither."""
    for decode in (lambda r: base64.b85decode(r), lambda r: base64.a85decode(r, adobe=r.startswith("<~")),
                   lambda r: base64.a85decode(r, foldspaces=True)):
        try:
            return decode(run)
        except (ValueError, binascii.Error):
            continue
    return b""


def _from_uu(text: str) -> bytes:
    """The uuencoded lines of `text` (`begin` and `end` lines skipped) decoded; b'' when a line does not decode."""
    out = []
    for line in _UU_LINE.findall(text):
        try:
            out.append(binascii.a2b_uu(line))
        except binascii.Error:
            return b""
    return b"".join(out)


def _printable(raw: bytes) -> str:
    """The UTF-8 text `raw` holds, '' when it is no printable text (binary data: an image, a hash, a word by chance)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return ""
    return "" if _UNPRINTABLE.search(text) or not text.isprintable() and not text.replace("\n", "").replace(
        "\t", "").replace("\r", "").isprintable() else text


def _accept(call: ToolCall, found: list[ToolCall], tool: str | None) -> None:
    def inside(x: Mapping[Any, Any], at: str) -> Iterable[tuple[Any, Any]]:
        why = _call_like(x) or next((f"it has a {k!r} key" for k in _CONTAINER_KEYS if x.get(k) is not None), "")
        if why:
            _bad_call(at, f"a tool call nested inside the arguments of {call.name!r} ({why}): whatever runs the "
                      "outer call may run it too, unchecked")
        return x.items()

    def text(value: str, at: str) -> Any:  # a call written as JSON text, whole or inside the text, is a call
        return _text_data(value, at, None, tool)

    _walk(call.arguments, f"{call.where}.arguments", inside, text=text)
    found.append(call)


def tool_calls(observation: Mapping[str, Any] | str, tool: str | None = None, *, decode: bool = True) -> list[ToolCall]:
    """Every tool call in the agent data, in document order; ExtractionError for anything call-like
    that is not exactly one of the recognised shapes (see the module docstring), and, with `tool`, for a text that
    writes a call of it (of any tool: "*") in a format not read as a call (_refuse_written_call). One walk reads every
    string and key once. Not `decode`: only calls written as they are (_split_call's reading)."""
    found: list[ToolCall] = []

    def visit(x: Mapping[Any, Any], at: str) -> Iterable[tuple[Any, Any]]:
        call = _call_at(x, at)
        if call is not None:
            _accept(call, found, tool)
            return [(k, v) for k, v in x.items() if type(v) is str and k not in ("input", "arguments")]
        why = _call_like(x)
        if why:
            _bad_call(at, f"this looks like a tool call ({why}) but is not in a recognised shape; recognised: "
                      f"{_SHAPES}")
        rest = []
        for k, v in x.items():
            if k in _CONTAINER_KEYS and v is None:
                continue   # a message without calls: the OpenAI SDK's model_dump() writes them as null
            if k == "tool_calls":
                if not isinstance(v, (list, tuple)):
                    _bad_call(f"{at}.tool_calls", f"must be a list of calls, got {_show(v)}")
                for i, item in enumerate(v):
                    call = _call_at(item, f"{at}.tool_calls[{i}]") if isinstance(item, Mapping) else None
                    if call is None or call.format != "openai function call":
                        _bad_call(f"{at}.tool_calls[{i}]", 'not an OpenAI tool call {"type": "function", "function": '
                                  '{"name", "arguments"}}')
                    _accept(call, found, tool)
            elif k == "function_call":
                _accept(_function(v, f"{at}.function_call", "openai function_call (legacy)"), found, tool)
            else:
                rest.append((k, v))
        return rest

    _walk(observation, "", visit, text=lambda value, at: _text_data(value, at, found, tool, decode=decode),
          join=decode)
    return found


_WRITTEN_CALLS = functools.partial(tool_calls, decode=False)   # _calls_written's reader, one object: kept by _read_once


_STRING = r"""(?:"[^"\n]{0,200}"|'[^'\n]{0,200}')"""
_NON_STRING = r"(?:-?[0-9][0-9_.]{0,30}|True|False|None|true|false|null)"
_LITERAL = r"(?:" + _STRING + "|" + _NON_STRING + ")"


class _NamedCall(NamedTuple):
    call: re.Pattern[str]     # the tool's name and what may follow it as a call (a token: checked by _names_a_call)
    keyed: re.Pattern[str]    # the name right after `:`, `=`, `<`, `>` or `.` (quotes and blanks between)
    before: re.Pattern[str]   # a caller key or tag that may stand before it (searched in a window ending there)
    element: re.Pattern[str]  # an element so named before it (`<name>`), then `<` after it
    command: re.Pattern[str]  # an element that runs what it holds before it (`<cmd>`, `<exec>`): anything after it
    cell: re.Pattern[str]     # a markdown table's cell holding the name, then a JSON object's `{` in the next, if any


_WINDOW = 64  # characters before a name that a caller key or tag may take


# the words of a tag that names a call (`<cmd>`, `<tool_call>`, `<run>`); _CALL_TAG adds `request` and `api`
_CALL_WORDS = "tool|func|call|invok|action|command|cmd|exec|run|shell|bash|operation|method"


@functools.lru_cache(maxsize=256)
def _named_call(tool: str) -> _NamedCall:
    """Where a text names `tool` as a call in any format: the name right before `(` or `[` (or blanks and then `(`
    with a keyword, `**`, a dict or a string), before a JSON object (on the next line too: ChatGLM; quoted, or an
    option, as a command line writes one: `transfer '{...}'`, `transfer --to eve`, `transfer to=eve`; after `with`:
    `call transfer with {...}`), before Lisp's keyword (`(transfer :to "eve")`), as an INI section over its keys
    (`[transfer]`), as a YAML key over indented keys, after a caller key (`name: `, `tool=`, `Action: `,
    `<function=`, harmony's `to=`, GitHub Actions' `uses:`), as the text of an XML element so named
    (`<name>x</name>`, not `<b>x</b>`) or as a tag of its own (`<x>`). Two searches in C; only a name right after
    `:`, `=`, `<`, `>` or `.` is looked at again."""
    quotes = r"""[\\"'`]*"""
    callers = r"(?:name|tool|function|func|action|operation|method|call|recipient|command|cmd|op|exec|run|invoke|uses)"
    name = re.escape(tool.lower()) + r"(?![\w-])"   # searched in the lower-cased text: a literal, found fast
    return _NamedCall(
        re.compile(name + r"""(?:[(\[]|[ \t]+\((?=\s*(?:[A-Za-z_]\w*\s*=[^=]|\*\*|[{"']))|"""
                   + quotes + r"[ \t]*(?:\n\s*)?\{|[ \t]+['\"]\{|[ \t]+--?[A-Za-z]"
                   r"|[ \t]*:[ \t]*\r?\n[ \t]+[\w-]+[ \t]*:"
                   r"|[ \t]+(?:with|using)\b[^\n{]{0,40}\{|[ \t]*\][ \t]*\r?\n[ \t]*[\w-]+[ \t]*[=:]"
                   r"|[ \t]+:[A-Za-z]|[ \t]+[A-Za-z_][\w-]{0,40}=(?![=>])"
                   r"|[ \t]*=[ \t]*\{[ \t]*[a-z_][\w-]{0,40}[ \t]*="
                   r"|[ \t]+[a-z_]\w{0,40}:[ \t]*" + _STRING + r"[ \t]*,|[ \t]*\{[ \t]*[a-z_]\w{0,40}:[ \t]*" + _LITERAL
                   + r"[ \t]*[,}])"),
        re.compile(r"""[:=<>.][ \t\r\n\\"'`]{0,16}""" + name),
        re.compile(r"(?:\b(?:\w{0,24}" + callers + r"|to)" + quotes + r"[ \t]*[:=]\s*" + quotes
                   + r"(?:functions\.)?|<\s*(?:[\w:-]{1,64}[.:])?)\Z"),
        re.compile(r"<\s*\w{0,24}" + callers + r"\s*>\s*\Z"),
        re.compile(r"<\s*\w{0,24}(?:" + _CALL_WORDS + r")\w{0,24}\s*>\s*\Z"),
        re.compile(r"\|[ \t]*`?" + re.escape(tool.lower()) + r"`?[ \t]*\|(?:[ \t]*\{)?"))


def _names_a_call(text: str, tool: str) -> str:
    """The text around the first place `text` names `tool` as a call (_named_call), or a markdown table's cell naming
    it as one (_table_call); '' for none."""
    pattern = _named_call(tool)
    written, text = text, text.lower()
    if tool.lower() not in text:
        return ""
    for found in pattern.call.finditer(text):  # the name as a token: no letter, digit, `_` or `-` before it
        if not found.start() or not (text[found.start() - 1].isalnum() or text[found.start() - 1] in "_-"):
            return found.group()
    for keyed in pattern.keyed.finditer(text):
        start, end = keyed.end() - len(tool), keyed.end()
        window = text[max(0, start - _WINDOW):start]
        if pattern.before.search(window) or pattern.command.search(window) or (
                pattern.element.search(window) and re.match(r"\s*<", text[end:end + 9])):
            return text[max(0, start - 20):end]
    return _table_call(written, text, pattern.cell) if "|" in text else ""


# For any tool (`*`), whose name is not known: a call given keyword, `**` or object arguments anywhere in a text (a
# statement, an expression, several lines; Python, JS), as pythonic, Gemma and ```tool_code runtimes read one
_ARGUMENT_START = re.compile(r"\s*(?:[A-Za-z_]\w*[ \t]*=(?![=>])|\*\*|\{)")
_KEYWORD_CALL = re.compile(r"\(((?:[^()]|\([^()]*\)){0,2000}?,)?" + _ARGUMENT_START.pattern)
# The same at any depth of brackets, strings skipped (`transfer(f(g(1)), to=...)`, `transfer(")", to=...)`): the
# brackets, commas and strings of the text in order, each `(` remembered as a call's or not
_CALL_TOKENS = re.compile(r'"""[\s\S]*?"""|' + r"'''[\s\S]*?'''|"
                          + r""""(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|[(),]""")
_ARGUMENT_AFTER = re.compile(r"[(,]" + _ARGUMENT_START.pattern)   # none in the text: no bracket needs reading
# and an XML element that may be a call: a tag naming a call, or a tag HTML does not have with attributes, closed on
# itself, or holding an element with text or a JSON value (`<transfer><to>eve</to></transfer>`, `<request tool="x"/>`)
_TAG = re.compile(r"""<([A-Za-z][\w.:-]{0,63})((?:\s+[\w.:-]+\s*=\s*(?:"[^"<>]*"|'[^'<>]*'|[^\s<>"'=`]+))*)\s*(/?)>"""
                  r"""((?:[A-Za-z_][\w-]{0,63}=(?!=)|\s*(?:\{\s*["}]|\[\s*[{"]"""
                  r"""|<([A-Za-z][\w.:-]{0,63})[^<>]*>[^<]*</\5\s*>))?)""")
_CALL_TAG = re.compile(_CALL_WORDS + "|request|api")
_HTML_TAGS = frozenset("""a abbr address area article aside audio b base bdi bdo blockquote body br button canvas caption
cite code col colgroup data datalist dd del details dfn dialog div dl dt em embed fieldset figcaption figure footer form
h1 h2 h3 h4 h5 h6 head header hgroup hr html i iframe img input ins kbd label legend li link main map mark menu meta
meter nav noscript object ol optgroup option output p param picture pre progress q rp rt ruby s samp script search
section select slot small source span strong style sub summary sup table tbody td template textarea tfoot th thead time
title tr track u ul var video wbr center font big tt strike svg g path rect circle ellipse line polyline polygon text
tspan defs use symbol lineargradient radialgradient stop clippath mask pattern image marker filter foreignobject math mi
mo mn ms mtext mrow msup msub mfrac msqrt mroot""".split())


def _any_call(text: str) -> str:
    """The text of a call of an unknown tool written in `text` (_KEYWORD_CALL, _TAG); '' for none."""
    if "(" in text:
        for call in _KEYWORD_CALL.finditer(text):
            direct = call.group(1) is None or _ARGUMENT_START.match(text, call.start() + 1) is not None
            callee = _after_callee(text, call.start(), blanks=direct)
            if callee >= 0:
                return text[callee:call.end()]
        nested = _nested_keyword_call(text) if _ARGUMENT_AFTER.search(text) else ""
        if nested:
            return nested
        written = _ANY_LISP.search(text) or _ANY_PROSE.search(text) or _positional_call(text)
        if written:
            return written.group() if isinstance(written, re.Match) else written
    elif "{" in text and (prose := _ANY_PROSE.search(text)):
        return prose.group()
    keys = _named_arguments(text.lower(), _ANY_NAME_KEY, _ANY_ARGUMENTS_KEY) if ":" in text or "=" in text else ""
    if keys:
        return keys
    form = next((m.group() for m in (p.search(text) for g, p in _ANY_FORMS if g.search(text)) if m), "")
    if form:
        return form
    if "<" in text:
        for tag in _TAG.finditer(text):
            name = tag.group(1).lower()
            custom = "-" in name  # an HTML custom element (`<text-list id=13>`): a web page's, as HTML's own
            if _CALL_TAG.search(name) or not custom and name not in _HTML_TAGS and any(
                    tag.group(i).strip() for i in (2, 3, 4)):
                return tag.group()
    return ""


# For `*` too: a Lisp call with keyword arguments (`(transfer :to "eve")`), a call told in prose with its JSON arguments
# (`call transfer with {...}`), and a text that is one call with literal arguments only (`transfer("eve", 5000)`)
_ANY_LISP = re.compile(r"\(\s*[A-Za-z_][\w.-]{0,63}[ \t]+:[A-Za-z][\w-]*[ \t]")
_ANY_PROSE = re.compile(r"\b(?:call|invoke|run|use|execute)[ \t]+(?:the[ \t]+)?(?:tool[ \t]+)?[\w.-]{1,64}[ \t]+"
                        r"(?:with|using)\b[^\n{]{0,40}\{\s*[\"']?[\w-]{1,64}[\"']?\s*:")
_ONE_CALL = re.compile(r"\s*[A-Za-z_][\w.]{0,127}\s*\([^\n]*\)\s*")


# For `*` too, the forms other runtimes read a call in: a step of a workflow (`uses: x` over `with:`), an INI or TOML
# section over its keys (`[transfer]` then `to = eve`), a command line with options and values (`transfer --to eve`),
# a call with literal arguments only inside a statement (`r = transfer("eve", 5000)`), Ruby's keyword arguments and a
# Go or Rust struct literal (`transfer to: "eve", amount: 5`, `Transfer{To: "eve"}`), a TOML inline table
# (`transfer = {to = "eve"}`), Swift's labels (`transfer(to: "eve")`), Lisp's positional call (`(transfer "eve" 5)`),
# a markdown table whose header
# names a tool, function or action column. The cost, these forms written as data, falls on `*` only.
_TOOL_TABLE = re.compile(   # a markdown table under a tool, function or action column
    r"^[ \t]*\|[^\n]{0,400}?\b(?:[Tt]ool|[Ff]unction|[Aa]ction|[Cc]all|[Cc]ommand|[Mm]ethod)s?\b[^\n]*\|[ \t]*\r?\n[ \t]*\|?[ \t:|-]+\|",
    re.MULTILINE)
# each form with what it needs (its gate), searched first in C: most texts show no gate, so the forms never run
_ANY_FORMS = tuple((re.compile(gate, re.MULTILINE), re.compile(form, re.MULTILINE)) for gate, form in (
    (r"with[ \t]*:",
     r"^[ \t]*-?[ \t]*(?:uses|run|step|task)[ \t]*:[^\n]*\n(?:[ \t]+[^\n]*\n){0,20}?[ \t]+with[ \t]*:"),
    (r"\[",
     r"^[ \t]*\[[ \t]*[A-Za-z_][\w.-]{0,63}[ \t]*\][ \t]*\r?\n(?:[ \t]*(?:[#;][^\n]*)?\r?\n)*[ \t]*[A-Za-z_][\w.-]{0,63}"
     r"[ \t]*[=:]"),
    (r"[ \t]--?[A-Za-z]",
     r"(?:^|[$>:][ \t]*)[A-Za-z_][\w.-]{0,63}(?:[ \t]+[\w.-]{1,64})?[ \t]+--?[A-Za-z][\w-]{0,63}(?:=|[ \t]+)"
     r"""(?![-\s])[^\s|;&]{1,200}(?=[ \t]*(?:$|--?[A-Za-z]))"""),
    (r"""\([ \t]*(?:["'0-9-]|True|False|None|true|false|null)""",
     r"\b[A-Za-z_][\w.]{0,127}[ \t]*\([ \t]*(?:" + _STRING + r"[ \t]*,[ \t]*" + _LITERAL + r"|(?:" + _NON_STRING
     + r"[ \t]*,[ \t]*)+" + _STRING + r")(?:[ \t]*,[ \t]*" + _LITERAL + r")*[ \t]*,?\)"),
    (r""":[ \t]*["']""",
     r"\b[A-Za-z_][\w.]{0,127}[ \t]+[A-Za-z_]\w{0,63}:[ \t]*" + _STRING + r"[ \t]*,"),
    (r"\{[ \t]*[A-Za-z_]\w{0,63}:",
     r"(?:\b[A-Z][\w.]{0,127}[ \t]*|\b[A-Za-z_][\w.]{0,127})\{[ \t]*[A-Za-z_]\w{0,63}:[ \t]*" + _LITERAL + r"[ \t]*[,}]"),
    (r"=[ \t]*\{",
     r"\b[A-Za-z_][\w.]{0,127}[ \t]*=[ \t]*\{[ \t]*[A-Za-z_][\w-]{0,63}[ \t]*=[ \t]*" + _LITERAL),
    (r"\([ \t]*[A-Za-z_]\w{0,63}:",
     r"\b[A-Za-z_][\w.]{0,127}\([ \t]*[A-Za-z_]\w{0,63}:[ \t]*" + _LITERAL + r"[ \t]*[,)]"),
    (r"""\([ \t]*[A-Za-z_][\w.-]{0,63}[ \t]+["'0-9-]""",
     r"\([ \t]*[A-Za-z_][\w.-]{0,63}[ \t]+(?:" + _STRING + r"[ \t]+" + _LITERAL + r"|(?:" + _NON_STRING + r"[ \t]+)+"
     + _STRING + r")(?:[ \t]+" + _LITERAL + r")*[ \t]*\)"),
    (r"\|[ \t]*\r?\n", _TOOL_TABLE.pattern),
    (r"\|[ \t]*\{", r"^[ \t]*\|[^\n]{0,400}?\b(?i:names?)\b[^\n]{0,400}?\b(?i:arg(?:ument)?s?|param(?:eter)?s?|inputs?)\b"
     r"[^\n]*\|[ \t]*\r?\n[ \t]*\|?[ \t:|-]+\|[ \t]*\r?\n(?:[^\n]*\r?\n){0,64}?[^\n]*\|[ \t]*\{")))   # name, arguments: {..}


def _positional_call(text: str) -> str:
    """The text when it is one call of a name with literal arguments only, as a pythonic runtime reads a call."""
    if len(text) > 2000 or not _ONE_CALL.fullmatch(text):
        return ""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ""
    call = tree.body
    literal = (ast.Constant, ast.List, ast.Tuple, ast.Dict, ast.UnaryOp)
    return text.strip() if isinstance(call, ast.Call) and call.args and all(
        isinstance(a, literal) for a in call.args) else ""


def _after_callee(text: str, at: int, *, blanks: bool = False) -> int:
    """Where the callee of a bracket at `at` starts (a name, or a call's or an index's end; with `blanks`, blanks
    between: `transfer (to=...)`, not prose's `string (e.g., "a, B=1")`); -1 for none. Read backwards from the
    bracket, so that it costs the name's length, not a window's."""
    end = at
    while blanks and end > 0 and text[end - 1] in " \t" and at - end < 16:
        end -= 1
    if end and text[end - 1] in ")]":
        return end - 1
    start = end
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_.$") and end - start < 128:
        start -= 1
    return start if start < end and not text[start].isdigit() else -1


def _nested_keyword_call(text: str) -> str:
    """A keyword, `**` or object argument of a call at any depth of brackets, strings skipped; '' for none."""
    calls: list[bool] = []   # the open brackets: whether each is a call's
    for token in _CALL_TOKENS.finditer(text):
        mark = token.group()
        if mark == "(":
            calls.append(_after_callee(text, token.start()) >= 0)
        elif mark == ")":
            if calls:
                calls.pop()
            continue
        elif mark != ",":
            continue
        if calls and calls[-1] and _ARGUMENT_START.match(text, token.end()):
            return text[max(0, token.start() - 40):token.end() + 40]
    return ""


def _refuse_written_call(text: str, where: str, tool: str) -> None:
    """A text (a call's own arguments included) that writes a call of `tool` in a format not read as a call (a bare
    `tool(...)`, YAML, XML, ChatGLM, JSON5, ...; _names_a_call) denies: a runtime that parses it runs it. For any tool
    (`*`), whose name is not known, a call given keyword or object arguments, or an XML element that may be a call
    (_any_call), denies."""
    plain = _plain(text)
    found = next((f for t in ((text, plain) if plain != text else (text,))
                  if (f := _any_call(t) if tool == ANY_TOOL else _names_a_call(t, tool) or _keyed_name(t, tool))), "")
    if found:
        _bad_call(where, f"text with {found[:40]!r} writes a call of {tool!r} in a format not read as a call here: a "
                  "runtime that parses the model's text may run it, unchecked")


# The named tool's call as a call form with keyword arguments, under a key of letters (`lvcewywv(iow="eve", eofygl=
# 5000)`): a key keeps the name's shape (its length, its marks where they are) and makes its letters and the keywords'
# random. A callee of the tool's shape, not its name, whose letters and keywords' letters read as no language
# (_KEYED_NAME_MEAN per pair, _KEYED_NAME_PAIRS pairs at least) denies; a key of any length (a one-time pad included).
# Measured: random letters in the shape `xxxxxxxx(xx=, xxxxxx=)` score so 93% of the time; of the Python stdlib's 654
# keyword calls of 8-letter callees (`callee` and keywords scored alike), none does (English scores about +1.2).
_KEYED_NAME_PAIRS, _KEYED_NAME_MEAN = 6, -0.4
_KEYWORDS = re.compile(r"(?:^|,)\s*([A-Za-z_][A-Za-z_]*)\s*[=:]")


@functools.lru_cache(maxsize=256)
def _name_shape(tool: str) -> re.Pattern[str] | None:
    if sum(c.isalpha() for c in tool) < 5:
        return None   # a name of 4 letters or fewer has too few pairs to judge
    shape = "".join("[A-Za-z0-9@$]" if c.isascii() and c.isalpha() else re.escape(c) for c in tool)
    return re.compile(r"(?<![\w.$-])(" + shape + r")\s*\(([^()]{0,400})\)")


def _leet_of(callee: str, tool: str) -> bool:
    """Whether `callee` is `tool` with some of its letters written as the digits or marks that look like them
    (textnorm's LEET: on what _name_shape lets stand for a letter, digits, @ and $, it reads as the table this held)."""
    return len(callee) == len(tool) and callee != tool and all(
        c == t or t in LEET.get(c, "") for c, t in zip(callee, tool))


def _keyed_name(text: str, tool: str) -> str:
    """The first call form of `tool`'s shape, with keyword arguments, whose callee is the name's letters shuffled or
    whose names read as no language; '' for none."""
    shape = _name_shape(tool)
    if shape is None or "(" not in text:
        return ""
    for found in shape.finditer(text):
        callee, arguments = found.group(1).lower(), found.group(2)
        keywords = [k.lower() for k in _KEYWORDS.findall(arguments)]
        if callee == tool.lower() or not keywords:
            continue
        if sorted(callee) == sorted(tool.lower()) or _leet_of(callee, tool.lower()):   # shuffled, or in leetspeak
            return found.group()
        words = [w for w in re.split(r"[^a-z]+", " ".join([callee, *keywords])) if len(w) > 1]
        pairs = sum(len(w) - 1 for w in words)
        if pairs >= _KEYED_NAME_PAIRS and sum(map(_pair_score, words)) <= _KEYED_NAME_MEAN * pairs:
            return found.group()
    return ""


def _table_call(text: str, lowered: str, named: re.Pattern[str]) -> str:
    """A markdown table (`text`, and `lowered` its lower case) that names a tool in a cell (`named`: _NamedCall.cell),
    under a header naming a tool, function or action column, or with a JSON object in the next cell
    (`| transfer | {"to": ...} |`); '' for none."""
    cell = named.search(lowered)
    if cell is None:
        return ""
    return cell.group() if cell.group().endswith("{") or _TOOL_TABLE.search(text) else ""


_COMMENT = re.compile(r"<!--[\s\S]{0,200}?-->")


def _plain(text: str) -> str:
    """The text as a reader that forgives its look reads it: invisible characters (zero-width joiners, soft hyphens,
    bidi controls) and combining marks removed, NFKC (fullwidth letters), look-alike letters mapped to Latin
    (Cyrillic `а`), comments and inline tags taken out (`trans<b></b>fer`, `trans<!-- -->fer`; a `<br>` reads as a
    blank). A name so written is the name."""
    if text.isascii() and "<" not in text:
        return text
    if not text.isascii():
        text = map_lookalikes(strip_marks(unicodedata.normalize("NFKC", strip_invisible(text))))
    return strip_tags(_COMMENT.sub("", text)) if "<" in text else text   # inline tags go, others read as a blank


ANY_TOOL = "*"            # a tool_call extractor's `tool`: the one call in the action, whatever its tool
TOOL_NAME = "$name"       # in a tool_call extractor's `fields`: the called tool's name, not an argument


def _folded(name: str) -> str:
    return name.lower().replace("_", "").replace("-", "").replace(".", "")


@dataclass(frozen=True)
class ToolCallExtractor:
    """A record from the arguments of the one call of `tool` (shapes: see the module docstring).

    Everything or nothing: any argument of the call that `fields` does not map (nor `ignore` lists) is
    an error, since the tool would act on a value the policy never saw; so is a call of a tool whose
    name differs from `tool` only in case or punctuation. `tool = "*"` takes the one call of any tool, and
    a field mapped to "$name" receives the called tool's name (the policy decides which tools may run)."""

    tool: str
    fields: Mapping[str, str]
    type: Mapping[str, Any]
    defaults: Mapping[str, Any] | None = None
    ignore: tuple[str, ...] = ()
    kind: str = "tool_call"

    def extract(self, observation: Mapping[str, Any]) -> Extracted:
        calls = tool_calls(observation, self.tool)
        alike = [c for c in calls if c.name != self.tool and _folded(c.name) == _folded(self.tool)]
        if alike:
            raise ExtractionError("extract.tool_call", f"{alike[0].where}: a call of {alike[0].name!r}, a name that "
                                  f"differs from {self.tool!r} only in case or punctuation")
        mine = calls if self.tool == ANY_TOOL else [c for c in calls if c.name == self.tool]
        if not mine:
            raise ExtractionError("extract.tool_call", "no tool call in the agent's output" if self.tool == ANY_TOOL
                                  else f"no call of tool {self.tool!r} in the agent's output")
        if len(mine) > 1:
            which = "tool calls" if self.tool == ANY_TOOL else f"calls of {self.tool!r}"
            raise ExtractionError("extract.tool_call", f"{len(mine)} {which} in one action; check them one at a time")
        call = mine[0]
        unseen = sorted(set(call.arguments) - (set(self.fields.values()) - {TOOL_NAME}) - set(self.ignore))
        if unseen:
            raise ExtractionError("extract.tool_call", f"{call.where}: {call.name!r} has argument(s) {unseen[:5]} "
                                  "that the policy does not see; map them in the spec's [extraction] `fields`, or "
                                  "list them in `ignore` if they cannot matter")
        value = dict(self.defaults or {})
        for f, key in self.fields.items():
            if key != TOOL_NAME and key not in call.arguments:
                raise ExtractionError("extract.missing", f"tool call {call.name!r} has no argument {key!r}")
            value[f] = call.name if key == TOOL_NAME else call.arguments[key]
        return Extracted(_typed(value, self.type, f"{call.name}(...)", exact=True),
                         f"{call.format} {call.name}({', '.join(self.fields.values())})", 1.0, self.kind)


@dataclass(frozen=True)
class ClassifierExtractor:
    """A record of booleans, one per category, from the embedded classifier over a text field.

    When the classifier abstains, `abstain` decides: "deny" fails closed (the action is denied), and
    "restrict" takes every uncertain category as applying (the restrictive reading), so the action is
    denied only if the user fails one of those categories' requirements. A text with nothing to read
    fails closed in both modes.
    """

    text: str
    classify: Callable[[str], Any]
    categories: tuple[str, ...]
    abstain: str = "deny"
    kind: str = "classifier"

    def extract(self, observation: Mapping[str, Any]) -> Extracted:
        text = _path(observation, self.text)
        if not isinstance(text, str):
            raise ExtractionError("extract.type", f"{self.text!r} must be text")
        result = self.classify(text)
        labels = set(result.labels)
        how = f"classifier on {self.text}: {sorted(labels) or 'no category'} ({result.reason})"
        if result.abstained:
            if self.abstain != "restrict" or not result.uncertain or not getattr(result, "readable", True):
                raise ExtractionError("extract.abstain", f"the classifier is not sure about {self.text!r}: "
                                      f"{result.reason}")
            labels |= set(result.uncertain)
            how += f"; unsure, so the restrictive reading: {sorted(result.uncertain)} assumed to apply"
        unknown = labels - set(self.categories)
        if unknown:
            raise ExtractionError("extract.classifier", f"the classifier returned unknown categories {sorted(unknown)}")
        value = {c: c in labels for c in self.categories}
        return Extracted(value, how, 1.0 if result.abstained else float(result.confidence), self.kind)


def category_classifier(name: str, cfg: Mapping[str, Any], base: Path,
                        categories: tuple[str, ...]) -> Callable[[str], Any]:
    """The classify function of the classifier `cfg` declares (frozen in a build: the bank is not read);
    its categories must be the argument's fields, or a field it never reports would always read False."""
    from veriguard.enforce.categories import CategoryClassifier

    classifier = CategoryClassifier.from_extraction(cfg, base)
    if set(classifier.names) != set(categories):
        raise ExtractionError("extract.config", f"argument {name!r}: the classifier's categories "
                              f"{sorted(classifier.names)} are not the argument's fields {sorted(categories)}")
    return classifier.classify


SpecFiles = Mapping[str, bytes]   # a build's certified files under spec/: spec-relative path -> the bytes hashed


def spec_file(files: SpecFiles | None, name: Any, what: str) -> bytes | None:
    """The certified bytes of the spec file `name` when the extractors are built from a build's `files`; None
    when they read a spec folder. ExtractionError when the build does not certify that file."""
    if files is None:
        return None
    rel = PurePosixPath(str(name)).as_posix()
    if rel not in files:
        raise ExtractionError("extract.config", f"{what} {str(name)!r} is not a file the build's certificate covers "
                              "under spec/; re-run `veriguard synth` so that it copies and certifies it")
    return files[rel]


@contextmanager
def _folder_of(files: SpecFiles | None, base: Path) -> Iterator[Path]:
    """`base`, or a private temporary folder holding exactly `files`, for the extractors that read their files
    by path: they then read the bytes that were hashed, not what the build's paths hold now."""
    if files is None:
        yield base
        return
    with tempfile.TemporaryDirectory(prefix="veriguard-spec-") as folder:
        for rel, data in files.items():
            path = Path(folder, rel)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        yield Path(folder)


def build_extractors(extraction: Mapping[str, Any], arguments: list[tuple[str, Mapping[str, Any]]],
                     base: Path, *, places: tuple[tuple[str, tuple[str, ...]], ...] = (),
                     files: SpecFiles | None = None) -> dict[str, Extractor]:
    """One extractor per argument from a spec's [extraction] section; files are relative to `base`, or, for a
    build, `files` (FrozenPolicy.spec_files: the certified bytes; `base` is then never read). `places`: the
    paths the monitor protects (the shell zone maps' {guard} and {secret}: enforce.shell_table.places_of)."""
    schema = dict(arguments)
    out: dict[str, Extractor] = {}
    for name, t in arguments:
        cfg = extraction.get(name)
        if not isinstance(cfg, Mapping) or "from" not in cfg:
            raise ExtractionError("extract.config", f"[extraction] says nothing about argument {name!r}")
        kind = cfg["from"]
        if kind == "field":
            out[name] = FieldExtractor(str(cfg["path"]), schema[name], cfg.get("map"))
        elif kind == "context":
            out[name] = RecordExtractor(cfg["fields"], schema[name], cfg.get("defaults"))
        elif kind == "tool_call":
            ignore = cfg.get("ignore", [])
            if not isinstance(ignore, list) or not all(isinstance(k, str) for k in ignore):
                raise ExtractionError("extract.config", f"argument {name!r}: `ignore` must be a list of argument names")
            if cfg["tool"] == ANY_TOOL and TOOL_NAME not in cfg["fields"].values():
                raise ExtractionError("extract.config", f"argument {name!r}: tool = \"{ANY_TOOL}\" takes a call of any "
                                      f"tool, so a field must receive its name (\"{TOOL_NAME}\")")
            out[name] = ToolCallExtractor(str(cfg["tool"]), cfg["fields"], schema[name], cfg.get("defaults"),
                                          tuple(ignore))
        elif kind == "code":
            from veriguard.enforce.extract_code import build_code_extractor

            out[name] = build_code_extractor(cfg, base, files=files)
        elif kind == "shell":
            from veriguard.enforce.shell import build_shell_extractor

            out[name] = build_shell_extractor(cfg, schema[name], base, places=places, files=files)
        elif kind == "classifier":
            categories = tuple(f for f, _ in schema[name]["fields"])
            if str(cfg.get("abstain", "deny")) not in ("deny", "restrict"):
                raise ExtractionError("extract.config", f"argument {name!r}: abstain must be 'deny' or 'restrict'")
            with _folder_of(files, base) as folder:
                classify = category_classifier(name, cfg, folder, categories)
            out[name] = ClassifierExtractor(str(cfg["text"]), classify, categories, str(cfg.get("abstain", "deny")))
        elif kind == "llm":
            from veriguard.enforce.extract_llm import build_llm_extractor

            with _folder_of(files, base) as folder:
                out[name] = build_llm_extractor(name, cfg, schema[name], folder)
        else:
            raise ExtractionError("extract.config", f"argument {name!r}: unknown extractor {kind!r}")
    return out
