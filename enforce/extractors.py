"""Extractors: from what the agent produced to the policy's arguments, without an LLM.

Each extractor fills one argument and reports how it got the value and with what confidence.
Any doubt is an ExtractionError, which the monitor turns into a denial (fail closed).
Declared per spec in its [extraction] section; see `build_extractors`.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol

from enforce.extract_errors import ExtractionError


@dataclass(frozen=True)
class Extracted:
    value: Any
    how: str                 # provenance, for the decision log
    confidence: float = 1.0
    extractor: str = ""


class Extractor(Protocol):
    kind: str

    def extract(self, observation: Mapping[str, Any]) -> Extracted: ...


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


def _coerce(value: Any, t: Mapping[str, Any], where: str, mapping: Mapping[str, str] | None = None) -> Any:
    """Type-check one scalar against its schema type, mapping enum spellings; never guess."""
    kind = t["kind"]
    if kind == "bool":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        raise ExtractionError("extract.type", f"{where}: expected true/false, got {value!r}")
    if kind == "int":
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return int(value.strip())
        raise ExtractionError("extract.type", f"{where}: expected an integer, got {value!r}")
    if not isinstance(value, str):
        raise ExtractionError("extract.type", f"{where}: expected a string, got {value!r}")
    value = (mapping or {}).get(value, value)
    if kind == "enum" and value not in t["values"]:
        raise ExtractionError("extract.enum", f"{where}: {value!r} is not one of {t['values']}")
    return value


def _typed(value: Any, t: Mapping[str, Any], where: str, mapping: Mapping[str, str] | None = None) -> Any:
    kind = t["kind"]
    if kind == "record":
        if not isinstance(value, Mapping):
            raise ExtractionError("extract.type", f"{where}: expected an object, got {type(value).__name__}")
        out = {}
        for f, ft in t["fields"]:
            if f not in value:
                raise ExtractionError("extract.missing", f"{where}: field {f!r} is missing")
            out[f] = _coerce(value[f], ft, f"{where}.{f}", mapping)
        return out
    if kind == "list":
        if not isinstance(value, list):
            raise ExtractionError("extract.type", f"{where}: expected a list, got {type(value).__name__}")
        elem = t["elem"]
        if elem["kind"] == "tuple":
            return [[_coerce(x, it, f"{where}[{i}]", mapping) for it, x in zip(elem["items"], _tuple(v, elem, where))]
                    for i, v in enumerate(value)]
        return [_coerce(v, elem, f"{where}[{i}]", mapping) for i, v in enumerate(value)]
    return _coerce(value, t, where, mapping)


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


def tool_calls(observation: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any], str]]:
    """(tool name, arguments, format) for every tool call in Anthropic, OpenAI or MCP shape."""
    found: list[tuple[str, Mapping[str, Any], str]] = []

    def visit(x: Any) -> None:
        if isinstance(x, Mapping):
            if x.get("type") == "tool_use" and "name" in x:
                found.append((str(x["name"]), x.get("input") or {}, "anthropic tool_use"))
            elif x.get("method") == "tools/call" and isinstance(x.get("params"), Mapping):
                p = x["params"]
                found.append((str(p.get("name")), p.get("arguments") or {}, "mcp tools/call"))
            elif isinstance(x.get("function"), Mapping) and "name" in x["function"]:
                args = x["function"].get("arguments", {})
                if isinstance(args, str):
                    try:
                        args = json.loads(args)
                    except json.JSONDecodeError as e:
                        raise ExtractionError("extract.tool_call", f"function call arguments are not JSON: {e.msg}")
                found.append((str(x["function"]["name"]), args, "openai function call"))
            else:
                for v in x.values():
                    visit(v)
        elif isinstance(x, list):
            for v in x:
                visit(v)

    visit(observation)
    return found


@dataclass(frozen=True)
class ToolCallExtractor:
    """A record from the arguments of one named tool call (Anthropic tool_use, OpenAI, MCP tools/call)."""

    tool: str
    fields: Mapping[str, str]
    type: Mapping[str, Any]
    defaults: Mapping[str, Any] | None = None
    kind: str = "tool_call"

    def extract(self, observation: Mapping[str, Any]) -> Extracted:
        calls = [c for c in tool_calls(observation) if c[0] == self.tool]
        if not calls:
            raise ExtractionError("extract.tool_call", f"no call of tool {self.tool!r} in the agent's output")
        if len(calls) > 1:
            raise ExtractionError("extract.tool_call", f"{len(calls)} calls of {self.tool!r} in one action; check them "
                                  "one at a time")
        name, args, fmt = calls[0]
        if not isinstance(args, Mapping):
            raise ExtractionError("extract.tool_call", f"the arguments of {name!r} are not an object")
        value = dict(self.defaults or {})
        for f, key in self.fields.items():
            if key not in args:
                raise ExtractionError("extract.missing", f"tool call {name!r} has no argument {key!r}")
            value[f] = args[key]
        return Extracted(_typed(value, self.type, f"{name}(...)"), f"{fmt} {name}({', '.join(self.fields.values())})",
                         1.0, self.kind)


@dataclass(frozen=True)
class CodeExtractor:
    """(database, column) pairs the agent's code reads (Python + SQL), from its code or its whole log."""

    schema: Mapping[str, Any]
    source: str = "log"          # observation field: a full EHRAgent log ("log") or bare code ("code")
    kind: str = "code"

    def extract(self, observation: Mapping[str, Any]) -> Extracted:
        from enforce.agent_logs import parse_agent_log
        from enforce.extract_code import extract_accesses

        text = _path(observation, self.source)
        if not isinstance(text, str):
            raise ExtractionError("extract.type", f"{self.source!r} must be text")
        code = parse_agent_log(text).code if self.source == "log" else text
        access = extract_accesses(code, self.schema)
        pairs = [list(p) for p in access.pairs]
        how = "code: " + "; ".join(access.provenance) if access.provenance else "code: reads no column"
        return Extracted(pairs, how, access.confidence, self.kind)


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


def build_extractors(extraction: Mapping[str, Any], arguments: list[tuple[str, Mapping[str, Any]]],
                     base: Path) -> dict[str, Extractor]:
    """One extractor per argument from a spec's [extraction] section; files are relative to `base`."""
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
            out[name] = ToolCallExtractor(str(cfg["tool"]), cfg["fields"], schema[name], cfg.get("defaults"))
        elif kind == "code":
            db = json.loads((base / str(cfg["schema"])).read_text(encoding="utf-8"))
            out[name] = CodeExtractor(db.get("databases", db), str(cfg.get("source", "log")))
        elif kind == "classifier":
            from enforce.categories import CategoryClassifier

            classifier = CategoryClassifier.from_bank(base / str(cfg["bank"]))
            categories = tuple(f for f, _ in schema[name]["fields"])
            if str(cfg.get("abstain", "deny")) not in ("deny", "restrict"):
                raise ExtractionError("extract.config", f"argument {name!r}: abstain must be 'deny' or 'restrict'")
            out[name] = ClassifierExtractor(str(cfg["text"]), classifier.classify, categories,
                                            str(cfg.get("abstain", "deny")))
        else:
            raise ExtractionError("extract.config", f"argument {name!r}: unknown extractor {kind!r}")
    return out


def referenced_files(extraction: Mapping[str, Any]) -> list[str]:
    """Files an [extraction] section points at (schemas, example banks), relative to the spec."""
    return sorted({str(cfg[k]) for cfg in extraction.values() if isinstance(cfg, Mapping)
                   for k in ("schema", "bank") if k in cfg})

