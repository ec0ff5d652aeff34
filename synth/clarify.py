"""Stage 1, clarify: the model lists what is ambiguous in the request; the engineer answers in a file
and approves it (interactive), or the model's suggested readings are recorded as assumptions
(autonomous)."""
from __future__ import annotations

import json
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from veriguard.contracts.errors import Pos, SpecError
from veriguard.contracts.spec import Spec
from veriguard.synth import prompting
from veriguard.providers.types import CompletionRequest, Provider
from veriguard.synth.tomlpos import key_positions

SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["questions"],
    "properties": {"questions": {"type": "array", "items": {
        "type": "object", "required": ["id", "question", "options", "suggested", "why"],
        "properties": {"id": {"type": "string"}, "question": {"type": "string"},
                       "options": {"type": "array", "items": {"type": "string"}},
                       "suggested": {"type": "string"}, "why": {"type": "string"}}}}},
}


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    options: tuple[str, ...]
    suggested: str
    why: str


def ask(provider: Provider, spec: Spec, demos: list[dict[str, Any]]) -> list[Question]:
    prompt = prompting.render("clarify", request=spec.request, agent=_agent(spec), answers="",
                              demonstrations=prompting.demonstrations(demos, "clarifications"))
    data = provider.complete(CompletionRequest("clarify", prompting.system(), prompt, SCHEMA)).data
    out: list[Question] = []
    seen: set[str] = set()
    for q in data["questions"]:
        qid = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in q["id"]) or f"q{len(out) + 1}"
        while qid in seen:
            qid += "_"
        seen.add(qid)
        out.append(Question(qid, q["question"].strip(), tuple(q["options"]), q["suggested"].strip(), q["why"].strip()))
    return out


def assumptions(questions: list[Question]) -> list[dict[str, str]]:
    """Autonomous mode: the suggested reading of each question, recorded for the certificate."""
    return [{"id": q.id, "question": q.question, "answer": q.suggested, "why": q.why, "by": "model (autonomous)"}
            for q in questions]


def _agent(spec: Spec) -> str:
    return "\n".join(f"{k}: {v}" for k, v in spec.agent.items()) or "(not described)"


def _toml_string(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def write_questions(path: Path, spec: Spec, questions: list[Question]) -> None:
    """The questions file the engineer answers; written atomically."""
    lines = [f"# Clarifications for {spec.path}: write each `answer`, then set `approved = true` and run",
             f"#   veriguard synth {spec.path} --llm --answers {path}",
             f"spec_sha256 = {_toml_string(spec.sha256)}", "approved = false", ""]
    for q in questions:
        lines += ["[[questions]]", f"id = {_toml_string(q.id)}", f"question = {_toml_string(q.question)}",
                  f"options = [{', '.join(_toml_string(o) for o in q.options)}]",
                  f"suggested = {_toml_string(q.suggested)}", f"why = {_toml_string(q.why)}",
                  f"answer = {_toml_string('')}", ""]
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("\n".join(lines), encoding="utf-8")
    os.replace(tmp, path)


def read_answers(path: Path, spec: Spec) -> list[dict[str, str]]:
    """The approved answers as assumptions, or SpecError at file:line:col with the fix."""
    file = str(path)
    try:
        text = path.read_text(encoding="utf-8")
        raw = tomllib.loads(text)
    except OSError as e:
        raise SpecError("answers.file", f"cannot read {path}: {e.strerror}", file=file,
                        fix="pass the file `veriguard synth --llm` wrote") from None
    except tomllib.TOMLDecodeError as e:
        import re
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(e))
        raise SpecError("answers.toml", re.sub(r"\s*\(at line.*\)", "", str(e)), file=file,
                        pos=Pos(int(m.group(1)), int(m.group(2))) if m else Pos(0, 0),
                        fix="fix the TOML syntax; answers are strings in double quotes") from None
    where = key_positions(text)

    def fail(code: str, message: str, key: tuple[object, ...], fix: str) -> SpecError:
        return SpecError(code, message, file=file, pos=where.get(key, Pos(1, 1)), fix=fix)

    if raw.get("spec_sha256") != spec.sha256:
        raise fail("answers.stale", "these answers were written for another version of the spec", ("spec_sha256",),
                   "delete the file and run `veriguard synth --llm` again to get fresh questions")
    if raw.get("approved") is not True:
        raise fail("answers.not_approved", "the answers are not approved", ("approved",),
                   "review every answer, then set `approved = true`")
    out = []
    questions = raw.get("questions", [])
    if not isinstance(questions, list):
        raise fail("answers.format", "`questions` must be an array of tables", ("questions",), "use [[questions]]")
    for i, q in enumerate(questions):
        if not isinstance(q, dict) or not isinstance(q.get("answer"), str):
            raise fail("answers.format", f"question {i + 1} has no string `answer`", ("questions", i),
                       'write answer = "..." (or answer = suggested text)')
        if not q["answer"].strip():
            raise fail("answers.missing", f"question {q.get('id', i + 1)!r} is not answered", ("questions", i, "answer"),
                       f"answer it (suggested: {q.get('suggested', '')!r})")
        out.append({"id": str(q.get("id", i + 1)), "question": str(q.get("question", "")), "answer": q["answer"].strip(),
                    "why": "answered and approved by the engineer", "by": "engineer"})
    return out


def answers_text(assumptions: list[dict[str, str]]) -> str:
    if not assumptions:
        return "(none: nothing in the request was found ambiguous)"
    return "\n".join(f"- {a['question']} -> {a['answer']} ({a['by']})" for a in assumptions)
