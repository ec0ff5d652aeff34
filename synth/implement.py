"""Stage 3, implement: the model writes the body of `decide` (and optional helpers) against the
compiler's skeleton. Nothing of the model's runs before it passes the AST allowlist; afterwards
it runs only in the sandboxed test process and is read (never run) by Nagini."""
from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from typing import Any

from veriguard.synth import prompting
from veriguard.synth.compile import CompiledPolicy
from veriguard.providers.types import CompletionRequest, Provider
from veriguard.verify.subset import SubsetViolation, check_subset

SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["body", "helpers"],
    "properties": {"body": {"type": "string"}, "helpers": {"type": "string"}},
}


@dataclass(frozen=True)
class Implementation:
    body: str        # indented for the function
    helpers: str
    source: str      # the whole Nagini module
    violations: tuple[SubsetViolation, ...] = ()


def _skeleton_for_prompt(compiled: CompiledPolicy) -> str:
    """The prelude without the file header, so the prompt shows only what the model may call."""
    text = compiled.prelude
    return text.split("from nagini_contracts.contracts import *", 1)[-1].strip("\n")


def known_names(compiled: CompiledPolicy) -> set[str]:
    tree = ast.parse(compiled.prelude)
    names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    return names | {p for p, _ in compiled.params}


def assemble(compiled: CompiledPolicy, body: str, helpers: str) -> Implementation:
    """The module with the model's code, or the allowlist violations (line numbers in `body`/`helpers`)."""
    body = textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n"
    helpers = textwrap.dedent(helpers).strip("\n")
    params = ", ".join(p for p, _ in compiled.params)
    probe_body = f"def vg_body({params}):\n{body}"
    violations = check_subset(helpers, known_names(compiled)) if helpers.strip() else []
    helper_names = {n.name for n in ast.parse(helpers).body if isinstance(n, ast.FunctionDef)} \
        if helpers.strip() and not violations else set()
    body_problems = check_subset(probe_body, known_names(compiled) | helper_names)
    violations += [SubsetViolation(max(v.line - 1, 0), v.col, v.what, v.fix) for v in body_problems]
    source = compiled.with_body(body, helpers)
    return Implementation(body, helpers, source, tuple(violations))


def implement(provider: Provider, compiled: CompiledPolicy, *, feedback: list[str], demos: list[dict[str, Any]],
              round: int) -> Implementation:
    prompt = prompting.render("implement", skeleton=_skeleton_for_prompt(compiled),
                              header=compiled.decide_header.rstrip("\n") + "\n    ...",
                              demonstrations=prompting.demonstrations(demos, "policy"),
                              feedback=prompting.feedback(feedback))
    data = provider.complete(CompletionRequest("implement", prompting.system(), prompt, SCHEMA, round=round)).data
    return assemble(compiled, data["body"], data["helpers"])
