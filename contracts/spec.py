"""A loaded spec as the contract layer sees it: the request, the agent, the signature, the contract and the
examples. What the product does with it (extraction, enforcement, verifier settings) is synth.specfile.SpecFile."""
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
    files: tuple[tuple[str, str], ...] = ()  # (path relative to the spec, sha256) of every table file
