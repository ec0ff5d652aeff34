"""Stage 2, formalize: the model writes types, arguments, tables and the contract; the draft is
rendered into a spec file and loaded by the same loader as a hand-written spec, so every parse
and type error goes back to the model with file:line:col."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contracts.spec import Spec
from synth import prompting
from synth.clarify import answers_text
from synth.providers import CompletionRequest, Provider
from synth.specfile import load_spec

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
    return json.dumps(str(value), ensure_ascii=False)


def _multiline(text: str) -> str:
    body = text.replace("\\", "\\\\").replace('"""', '""\\"')
    return '"""\n' + body.strip("\n") + '\n"""'


def render_draft(spec: Spec, data: dict[str, Any], workdir: Path) -> Draft:
    """The draft as a spec file in `workdir` (tables as JSON files beside it)."""
    workdir.mkdir(parents=True, exist_ok=True)
    lines = [f"name = {_s(spec.name)}", f"request = {_multiline(spec.request)}", "", "[agent]"]
    lines += [f"{json.dumps(k)} = {_s(v)}" for k, v in spec.agent.items()]
    lines += ["", "[types]"]
    # sorted: a draft must render the same whether it comes live or from a (key-sorted) transcript
    for name, body in sorted((data.get("types") or {}).items()):
        if isinstance(body, dict) and isinstance(body.get("enum"), list):
            lines.append(f"{json.dumps(name)} = {{ enum = [{', '.join(_s(v) for v in body['enum'])}] }}")
        elif isinstance(body, dict) and isinstance(body.get("record"), dict):
            fields = ", ".join(f"{json.dumps(f)} = {_s(t)}" for f, t in sorted(body["record"].items()))
            lines.append(f"{json.dumps(name)} = {{ record = {{ {fields} }} }}")
        else:
            lines.append(f"{json.dumps(name)} = {json.dumps(body)}  # not an enum or record")
    lines += ["", "[arguments]"]
    for name, body in sorted((data.get("arguments") or {}).items()):
        if isinstance(body, dict):
            lines.append(f"{json.dumps(name)} = {{ type = {_s(body.get('type', ''))}, doc = {_s(body.get('doc', ''))} }}")
        else:
            lines.append(f"{json.dumps(name)} = {_s(body)}")
    for name, body in sorted((data.get("tables") or {}).items()):
        body = body if isinstance(body, dict) else {}
        file = workdir / f"table_{name}.json"
        file.write_text(json.dumps(body.get("rows", []), indent=0), encoding="utf-8")
        lines += ["", f"[tables.{json.dumps(name)}]", f"file = {_s(file.name)}",
                  f"signature = {_s(body.get('signature', ''))}", f"doc = {_s(body.get('doc', ''))}"]
        if "default" in body:
            lines.append(f"default = {json.dumps(body['default'])}")
    lines += ["", "[contract]", f"rules = {_multiline(str(data.get('rules', '')))}",
              f"properties = {_multiline(str(data.get('properties', '')))}", ""]
    text = "\n".join(lines)
    path = workdir / f"{spec.name}.toml"
    path.write_text(text, encoding="utf-8")
    return Draft(data, text, path)


def fixed_signature_text(spec: Spec) -> str:
    """For --compare: the arguments and tables the model must use, as they stand in the spec."""
    lines = ["\n## Use exactly these types, arguments and tables (return only rules, properties, notes)"]
    lines += [f"- type {n}: {t!r}" for n, t in spec.signature.types]
    lines += [f"- argument {a.name}: {a.type} — {a.doc}" for a in spec.signature.arguments]
    lines += [f"- table {t.name}({', '.join(map(str, t.params))}) -> {t.result}: {t.doc or '(no description)'}; "
              f"{len(t.rows)} rows" for t in spec.signature.tables]
    return "\n".join(lines) + "\n"


def formalize(provider: Provider, spec: Spec, assumptions: list[dict[str, str]], workdir: Path, *,
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


def load_draft(draft: Draft) -> Spec:
    """Load the rendered draft (raises SpecError with the draft file's line and column)."""
    return load_spec(draft.path)


def error_feedback(err: Exception, draft: Draft) -> str:
    """One feedback line: the error, plus the draft line it points at."""
    from contracts.errors import VeriguardError

    if isinstance(err, VeriguardError) and err.pos.line and err.file == str(draft.path):
        line = draft.toml.splitlines()[err.pos.line - 1] if err.pos.line <= len(draft.toml.splitlines()) else ""
        return f"{err} — at draft line {err.pos.line}: `{line.strip()}`"
    return str(err)


def signature_as_draft(spec: Spec) -> dict[str, Any]:
    """The spec's own types, arguments and tables in draft form (for --compare, where they are fixed)."""
    from contracts.types import EnumT, RecordT

    types: dict[str, Any] = {}
    for name, t in spec.signature.types:
        if isinstance(t, EnumT):
            types[name] = {"enum": list(t.values)}
        elif isinstance(t, RecordT):
            types[name] = {"record": {f: str(ft) for f, ft in t.fields}}
    arguments = {a.name: {"type": str(a.type), "doc": a.doc} for a in spec.signature.arguments}
    tables: dict[str, Any] = {}
    for t in spec.signature.tables:
        sig = f"({', '.join(map(str, t.params))}) -> {t.result}"
        if t.is_relation:
            tables[t.name] = {"signature": sig, "rows": [list(k) for k, v in t.rows if v is True], "doc": t.doc}
        else:
            tables[t.name] = {"signature": sig, "rows": [list(k) + [v] for k, v in t.rows], "default": t.default,
                              "doc": t.doc}
    return {"types": types, "arguments": arguments, "tables": tables}
