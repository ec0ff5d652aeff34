"""veriguard: policies for LLM agents, proved with Nagini, frozen with a certificate, enforced at run time.

The runtime API needs none of the synthesis tools (Nagini, z3, lark, Hypothesis, an LLM SDK)::

    from veriguard import Monitor
    monitor = Monitor.from_build("build/payments", log="decisions.jsonl")
    record = monitor.check(observation)       # never raises; a failure anywhere is a denial
    record.allowed, record.violations, record.enforcement.feedback

    from veriguard import load_policy
    policy = load_policy("build/payments")   # refuses a tampered or unproved build (PolicyLoadError)
    policy.evaluate_checked(arguments)       # a Decision; ArgumentError or PolicyMismatch: deny

Every error a person must act on is a VeriguardError with a code, a message, a place and a fix.
"""
from veriguard.contracts.errors import VeriguardError
from veriguard.enforce.extract_errors import ExtractionError
from veriguard.enforce.guard import Guard, GuardOutcome, RunTerminated
from veriguard.enforce.loader import ArgumentError, Decision, FrozenPolicy, PolicyLoadError, PolicyMismatch, load_policy
from veriguard.enforce.monitor import DecisionRecord, Enforcement, Monitor

__all__ = ["ArgumentError", "Decision", "DecisionRecord", "Enforcement", "ExtractionError", "FrozenPolicy", "Guard",
           "GuardOutcome", "Monitor", "PolicyLoadError", "PolicyMismatch", "RunTerminated", "VeriguardError",
           "load_policy"]
