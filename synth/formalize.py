"""Stage 2, formalize: the model writes types, arguments, tables and the contract; the draft is
rendered into a spec file and loaded by the same loader as a hand-written spec, so every parse
and type error goes back to the model with file:line:col."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from veriguard.synth.specfile import SpecFile, load_spec
from veriguard.synth import prompting
from veriguard.synth.clarify import answers_text
from veriguard.providers.types import CompletionRequest, Provider

SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["types", "arguments", "tables", "rules", "properties", "notes"],
    "properties": {"types": {"type": "object"}, "arguments": {"type": "object"}, "tables": {"type": "object"},
                   "rules": {"type": "string"}, "properties": {"type": "string"}, "notes": {"type": "string"}},
}
FIXED_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["rules", "properties", "notes"],
    "properties": {"rules": {"type": "string"}, "properties": {"type": "string"}, "notes": {"type": "string"}},
}


@dataclass(frozen=True)
class Draft:
    data: dict[str, Any]
    toml: str
    path: Path


def _s(value: Any) -> str:
    """Any value as a TOML basic string: escaped so that it can never end early or start a new line."""
    out = []
    for ch in str(value):
        if ch in '\\"':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        elif 0xD800 <= ord(ch) <= 0xDFFF:  # a lone surrogate has no UTF-8 form
            out.append("\\uFFFD")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _key(name: Any) -> str:
    """A TOML key: bare when it is a plain word, else a quoted string (the loader then checks the name)."""
    return name if isinstance(name, str) and re.fullmatch(r"[A-Za-z0-9_]+", name) else _s(name)


def _value(value: Any) -> str:
    """A table default: a TOML bool or integer as such, anything else as a string the loader will refuse."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and abs(value) < 10 ** 18:
        return str(value)
    return _s(value if isinstance(value, str) else json.dumps(value, default=str))


def _multiline(text: str) -> str:
    """A multi-line basic string that keeps the text's columns (the contract's positions) where it can."""
    body = []
    for ch in text.strip("\n"):
        if ch == "\\":
            body.append("\\\\")
        elif (ord(ch) < 0x20 and ch not in "\n\t") or ord(ch) == 0x7F or 0xD800 <= ord(ch) <= 0xDFFF:
            body.append("\\uFFFD" if ord(ch) >= 0xD800 else f"\\u{ord(ch):04X}")
        else:
            body.append(ch)
    return '"""\n' + "".join(body).replace('"""', '""\\"') + '\n"""'


def render_draft(spec: SpecFile, data: dict[str, Any], workdir: Path) -> Draft:
    """The draft as a spec file in `workdir` (tables as JSON files beside it). Every name and value is
    escaped as TOML; the loader then checks the names like those of a hand-written spec."""
    workdir.mkdir(parents=True, exist_ok=True)
    lines = [f"name = {_s(spec.name)}", f"request = {_multiline(spec.request)}", "", "[agent]"]
    lines += [f"{_key(k)} = {_s(v)}" for k, v in spec.agent.items()]
    lines += ["", "[types]"]
    # sorted: a draft must render the same whether it comes live or from a (key-sorted) transcript
    for name, body in sorted((data.get("types") or {}).items()):
        if isinstance(body, dict) and isinstance(body.get("enum"), list):
            lines.append(f"{_key(name)} = {{ enum = [{', '.join(_s(v) for v in body['enum'])}] }}")
        elif isinstance(body, dict) and isinstance(body.get("record"), dict):
            fields = ", ".join(f"{_key(f)} = {_s(t)}" for f, t in sorted(body["record"].items()))
            lines.append(f"{_key(name)} = {{ record = {{ {fields} }} }}")
        else:
            lines.append(f"{_key(name)} = {_s(json.dumps(body, default=str))}  # not an enum or record")
    lines += ["", "[arguments]"]
    for name, body in sorted((data.get("arguments") or {}).items()):
        if isinstance(body, dict):
            lines.append(f"{_key(name)} = {{ type = {_s(body.get('type', ''))}, doc = {_s(body.get('doc', ''))} }}")
        else:
            lines.append(f"{_key(name)} = {_s(body)}")
    for k, (name, body) in enumerate(sorted((data.get("tables") or {}).items())):
        body = body if isinstance(body, dict) else {}
        file = workdir / f"table_{k}.json"  # never a name from the draft in a path
        file.write_text(json.dumps(body.get("rows", []), indent=0, default=str), encoding="utf-8")
        lines += ["", f"[tables.{_key(name)}]", f"file = {_s(file.name)}",
                  f"signature = {_s(body.get('signature', ''))}", f"doc = {_s(body.get('doc', ''))}"]
        if "default" in body:
            lines.append(f"default = {_value(body['default'])}")
    lines += ["", "[contract]", f"rules = {_multiline(str(data.get('rules', '')))}",
              f"properties = {_multiline(str(data.get('properties', '')))}", ""]
    text = "\n".join(lines)
    path = workdir / f"{spec.name}.toml"
    path.write_text(text, encoding="utf-8")
    return Draft(data, text, path)


def fixed_signature_text(spec: SpecFile) -> str:
    """For --compare: the arguments and tables the model must use, as they stand in the spec."""
    lines = ["\n## Use exactly these types, arguments and tables (return only rules, properties, notes)"]
    lines += [f"- type {n}: {t!r}" for n, t in spec.signature.types]
    lines += [f"- argument {a.name}: {a.type} — {a.doc}" for a in spec.signature.arguments]
    lines += [f"- table {t.name}({', '.join(map(str, t.params))}) -> {t.result}: {t.doc or '(no description)'}; "
              f"{len(t.rows)} rows" for t in spec.signature.tables]
    return "\n".join(lines) + "\n"


def formalize(provider: Provider, spec: SpecFile, assumptions: list[dict[str, str]], workdir: Path, *,
              feedback: list[str], demos: list[dict[str, Any]], round: int, fixed: bool = False) -> Draft:
    prompt = prompting.render("formalize", request=spec.request,
                              agent="\n".join(f"{k}: {v}" for k, v in spec.agent.items()) or "(not described)",
                              answers=answers_text(assumptions), language=prompting.render("contract_language"),
                              fixed=fixed_signature_text(spec) if fixed else "",
                              demonstrations=prompting.demonstrations(demos, "contract"),
                              feedback=prompting.feedback(feedback))
    data = provider.complete(CompletionRequest("formalize", prompting.system(), prompt,
                                               FIXED_SCHEMA if fixed else SCHEMA, round=round)).data
    if fixed:
        data = {**data, **signature_as_draft(spec)}
    return render_draft(spec, data, workdir)


def load_draft(draft: Draft) -> SpecFile:
    """Load the rendered draft (raises SpecError with the draft file's line and column)."""
    return load_spec(draft.path)


def error_feedback(err: Exception, draft: Draft) -> str:
    """One feedback line: the error, plus the draft line it points at."""
    from veriguard.contracts.errors import VeriguardError

    if isinstance(err, VeriguardError) and err.pos.line and err.file == str(draft.path):
        line = draft.toml.splitlines()[err.pos.line - 1] if err.pos.line <= len(draft.toml.splitlines()) else ""
        return f"{err} — at draft line {err.pos.line}: `{line.strip()}`"
    return str(err)


def signature_as_draft(spec: SpecFile) -> dict[str, Any]:
    """The spec's own types, arguments and tables in draft form (for --compare, where they are fixed)."""
    from veriguard.contracts.types import EnumT, RecordT

    types: dict[str, Any] = {}
    for name, t in spec.signature.types:
        if isinstance(t, EnumT):
            types[name] = {"enum": list(t.values)}
        elif isinstance(t, RecordT):
            types[name] = {"record": {f: str(ft) for f, ft in t.fields}}
    arguments = {a.name: {"type": str(a.type), "doc": a.doc} for a in spec.signature.arguments}
    tables: dict[str, Any] = {}
    for table in spec.signature.tables:
        sig = f"({', '.join(map(str, table.params))}) -> {table.result}"
        if table.is_relation:
            tables[table.name] = {"signature": sig, "rows": [list(k) for k, v in table.rows if v is True],
                                  "doc": table.doc}
        else:
            tables[table.name] = {"signature": sig, "rows": [list(k) + [v] for k, v in table.rows],
                                  "default": table.default, "doc": table.doc}
    return {"types": types, "arguments": arguments, "tables": tables}
