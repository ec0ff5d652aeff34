"""veriguard: policies for LLM agents, proved with Nagini, frozen with a certificate, enforced at run time.

The runtime API needs none of the synthesis tools (Nagini, z3, lark, Hypothesis, an LLM SDK)::

    from veriguard import Monitor
    monitor = Monitor.from_build("build/payments", log="decisions.jsonl")
    record = monitor.check(observation)       # never raises; a failure anywhere is a denial
    record.allowed, record.violations, record.enforcement.feedback

    from veriguard import load_policy
    policy = load_policy("build/payments")   # refuses a tampered or unproved build (PolicyLoadError)
    policy.evaluate_checked(arguments)       # a Decision; ArgumentError or PolicyMismatch: deny

Every error a person must act on is a VeriguardError with a code, a message, a place and a fix, in one
group of who must act: SpecError, OperatorError, EnvironmentProblem, AgentInputError, InternalError.
"""
from __future__ import annotations

import sys

if sys.argv[:1] == ["-m"]:   # `python -m veriguard.cli hook ...` as it starts: stop signals held as veriguard.entry does
    from veriguard.entry import hold_for_module

    hold_for_module(sys.orig_argv, sys.argv)

import importlib  # noqa: E402
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from veriguard.contracts.errors import (AgentInputError, EnvironmentProblem, InternalError, OperatorError,
                                            SpecError, VeriguardError)
    from veriguard.enforce.extract_errors import ExtractionError
    from veriguard.enforce.guard import Guard, GuardOutcome, RunTerminated
    from veriguard.enforce.loader import (ArgumentError, Decision, FrozenPolicy, PolicyLoadError, PolicyMismatch,
                                          load_policy)
    from veriguard.enforce.monitor import DecisionRecord, Enforcement, Monitor

# Loaded on first use (PEP 562): a process that needs one of them (the Claude Code hook, a short
# `veriguard` command) does not pay for importing all of them.
_HOME = {**dict.fromkeys(("VeriguardError", "SpecError", "OperatorError", "EnvironmentProblem", "AgentInputError",
                          "InternalError"), "veriguard.contracts.errors"),
         "ExtractionError": "veriguard.enforce.extract_errors",
         "Guard": "veriguard.enforce.guard", "GuardOutcome": "veriguard.enforce.guard",
         "RunTerminated": "veriguard.enforce.guard", "ArgumentError": "veriguard.enforce.loader",
         "Decision": "veriguard.enforce.loader", "FrozenPolicy": "veriguard.enforce.loader",
         "PolicyLoadError": "veriguard.enforce.loader", "PolicyMismatch": "veriguard.enforce.loader",
         "load_policy": "veriguard.enforce.loader", "DecisionRecord": "veriguard.enforce.monitor",
         "Enforcement": "veriguard.enforce.monitor", "Monitor": "veriguard.enforce.monitor"}

__all__ = ["AgentInputError", "ArgumentError", "Decision", "DecisionRecord", "Enforcement", "EnvironmentProblem",
           "ExtractionError", "FrozenPolicy", "Guard", "GuardOutcome", "InternalError", "Monitor", "OperatorError",
           "PolicyLoadError", "PolicyMismatch", "RunTerminated", "SpecError", "VeriguardError", "load_policy"]


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module 'veriguard' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
