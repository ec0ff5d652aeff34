"""Stage 4, test: the model writes example cases from the request; each is checked for shape and
against the contract before it joins the spec's examples."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from veriguard.contracts.runtime_support import ArgumentError, flatten_arguments
from veriguard.contracts.schema import argument_schema
from veriguard.contracts.spec import Example, Spec
from veriguard.contracts.to_python import compile_checker
from veriguard.synth import prompting
from veriguard.providers.types import CompletionRequest, Provider

SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["examples"],
    "properties": {"examples": {"type": "array", "items": {
        "type": "object", "required": ["name", "args", "allowed", "violations"],
        "properties": {"name": {"type": "string"}, "args": {"type": "object"}, "allowed": {"type": "boolean"},
                       "violations": {"type": "array", "items": {"type": "string"}}}}}},
}


@dataclass(frozen=True)
class Tests:
    examples: tuple[Example, ...]
    malformed: tuple[str, ...]        # cases that do not fit the arguments (dropped, reported)
    contradictions: tuple[str, ...]   # cases whose expected decision the contract does not give


def _shapes(spec: Spec) -> str:
    return json.dumps({name: t for name, t in argument_schema(spec.signature)}, indent=1)


def write_tests(provider: Provider, spec: Spec, *, round: int = 0) -> Tests:
    assert spec.contract is not None
    prompt = prompting.render("tests", request=spec.request, arguments=_shapes(spec), rules=spec.rules_text.strip())
    data = provider.complete(CompletionRequest("test", prompting.system(), prompt, SCHEMA, round=round)).data
    return check_tests(spec, data["examples"])


def check_tests(spec: Spec, cases: list[dict[str, Any]]) -> Tests:
    assert spec.contract is not None
    schema = argument_schema(spec.signature)
    checker = compile_checker(spec.contract)
    ids = {d.id for d in spec.contract.rules}
    good, malformed, contradictions = [], [], []
    for i, case in enumerate(cases):
        name = str(case.get("name") or f"model example {i + 1}")
        try:
            flat = flatten_arguments(schema, case["args"])
        except (ArgumentError, KeyError) as e:
            malformed.append(f"{name}: {e}")
            continue
        unknown = set(case.get("violations", [])) - ids
        if unknown:
            malformed.append(f"{name}: {sorted(unknown)} are not rule ids")
            continue
        if checker.assumes(**flat):
            malformed.append(f"{name}: outside the assumptions {checker.assumes(**flat)}")
            continue
        allowed, violations, _ = checker.spec_decision(**flat)
        expected = (bool(case["allowed"]), set(case.get("violations", [])))
        if (allowed, set(violations)) != expected:
            contradictions.append(f"{name}: args {json.dumps(case['args'])} should give allowed={expected[0]}, "
                                  f"violations={sorted(expected[1])}, but the contract gives allowed={allowed}, "
                                  f"violations={sorted(violations)}")
            continue
        good.append(Example(f"model: {name}", case["args"], expected[0], tuple(sorted(expected[1]))))
    return Tests(tuple(good), tuple(malformed), tuple(contradictions))
