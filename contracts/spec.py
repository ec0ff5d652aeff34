"""A loaded spec: the request, the agent, the signature, the contract and the examples."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from veriguard.contracts.check import Contract
from veriguard.contracts.errors import NOWHERE, Pos
from veriguard.contracts.signature import Signature


@dataclass(frozen=True)
class Example:
    """One case the policy must decide as stated."""

    name: str
    args: dict[str, Any]
    allowed: bool
    violations: tuple[str, ...] | None = None
    denied: tuple[Any, ...] | None = None
    pos: Pos = field(default=NOWHERE, compare=False)


@dataclass(frozen=True)
class VerifySettings:
    nagini_timeout: int = 120
    hypothesis_examples: int = 300
    mutation_threshold: float = 0.8
    mutants_per_nagini: int = 3
    z3_bound: int = 3


@dataclass(frozen=True)
class Spec:
    name: str
    path: str
    sha256: str
    request: str
    agent: dict[str, Any]
    signature: Signature
    contract: Contract | None
    rules_text: str
    properties_text: str
    examples: tuple[Example, ...]
    extraction: dict[str, Any]
    enforcement: dict[str, Any]
    clarifications: dict[str, Any]
    settings: VerifySettings
    files: tuple[tuple[str, str], ...] = ()  # (path relative to the spec, sha256) of every table file
    extraction_files: tuple[tuple[str, str], ...] = ()  # the same for every file [extraction] names
