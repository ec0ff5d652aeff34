"""Prompt templates (synth/prompts/*.md, `$name` placeholders) and demonstration formatting."""
from __future__ import annotations

from functools import lru_cache
from importlib import resources
from string import Template
from typing import Any


@lru_cache(maxsize=None)
def template(name: str) -> Template:
    return Template(resources.files("veriguard.synth").joinpath("prompts", f"{name}.md").read_text(encoding="utf-8"))


def render(name: str, **values: Any) -> str:
    return template(name).substitute({k: "" if v is None else str(v) for k, v in values.items()})


def system() -> str:
    return render("system")


def demonstrations(demos: list[dict[str, Any]], what: str) -> str:
    """Past syntheses retrieved from memory, shown as worked examples."""
    if not demos:
        return ""
    parts = ["\n## Worked examples from earlier syntheses (most similar first)\n"]
    for d in demos:
        parts.append(f"### Request\n{d.get('request', '').strip()}\n\n### {what}\n```\n{d.get(what, '').strip()}\n```\n")
    return "\n".join(parts)


def feedback(items: list[str]) -> str:
    if not items:
        return ""
    return "\n## Your previous attempt failed; fix these and answer again\n" + "\n".join(f"- {i}" for i in items) + "\n"
