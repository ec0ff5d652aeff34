"""The entry points of every frozen policy module: `evaluate` and `evaluate_checked`.

Stdlib only: verify.runnable.frozen_module copies this file verbatim (less this docstring) into every
frozen module, after the argument checks (contracts.runtime_support), the proved policy and the runtime
contract checker, and binds `entry_points` to them in one line (verify.runnable.ENTRY_BINDING). The
gates (verify.testrun) call the frozen module's `evaluate` and `evaluate_checked`, so the tests
exercise this code as it ships.
"""
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Sequence, Tuple


@dataclass(frozen=True)
class PolicyDecision:
    """What the policy decided: allowed, the ids of the violated rules, the denied items."""

    allowed: bool
    violations: Tuple[str, ...]
    denied: Tuple[Any, ...]


class PolicyMismatch(RuntimeError):
    """The policy gave a malformed decision, or one the independent contract checker disagrees with: fail closed."""


Evaluate = Callable[[Mapping[str, Any]], PolicyDecision]


def tuple_of(x: Any) -> Any:
    """A denied item as decisions report it: a list becomes a tuple."""
    return tuple(x) if isinstance(x, list) else x


def public_decision(decision: Any, rule_ids: Sequence[str]) -> PolicyDecision:
    """The policy's own decision with rule numbers turned into rule ids (inside the proof rules are
    numbered, see synth.toolbox.violation_list). Anything malformed raises PolicyMismatch."""
    allowed = decision.allowed
    if allowed is not True and allowed is not False:
        raise PolicyMismatch(f"the policy answered allowed={allowed!r}, which is not a bool")
    numbers = tuple(decision.violations)
    for k in numbers:
        if type(k) is not int or not 0 <= k < len(rule_ids):
            raise PolicyMismatch(f"the policy reported the violation {k!r}, which is not a rule number")
    return PolicyDecision(allowed, tuple(rule_ids[k] for k in numbers), tuple(tuple_of(x) for x in decision.denied))


def entry_points(flatten: Callable[[Mapping[str, Any]], Dict[str, Any]],
                 assumes: Callable[..., List[str]],
                 decide: Callable[..., Any],
                 spec_decision: Callable[..., Tuple[bool, List[str], List[Any]]],
                 rule_ids: Sequence[str],
                 argument_error: Callable[[str, str], Exception]) -> Tuple[Evaluate, Evaluate]:
    """`evaluate` and `evaluate_checked` for the policy `decide`, its argument checks (`flatten`, `assumes`)
    and its runtime contract checker (`spec_decision`)."""

    def arguments(args: Mapping[str, Any]) -> Dict[str, Any]:
        flat = flatten(args)
        failed = assumes(**flat)
        if failed:
            raise argument_error(failed[0], "is outside the domain the proof covers (assumption failed)")
        return flat

    def evaluate(args: Mapping[str, Any]) -> PolicyDecision:
        """Decide one request given nested arguments (records as dicts, tuples as lists).

        Raises ArgumentError for a missing or mistyped argument or an input outside the domain the
        proof covers, and PolicyMismatch for a malformed decision; the caller must deny (fail closed).
        """
        return public_decision(decide(**arguments(args)), rule_ids)

    def evaluate_checked(args: Mapping[str, Any]) -> PolicyDecision:
        """evaluate(), then the runtime contract checker on the same input; a disagreement raises PolicyMismatch."""
        flat = arguments(args)
        # the policy gets its own copies of the lists, so nothing it does can change what the checker reads
        decision = public_decision(decide(**{k: list(v) if type(v) is list else v for k, v in flat.items()}),
                                   rule_ids)
        allowed, violations, denied = spec_decision(**flat)
        if decision.allowed != allowed or set(decision.violations) != set(violations) or \
                set(decision.denied) != set(map(tuple_of, denied)):
            raise PolicyMismatch(f"policy says {decision}, contract says allowed={allowed} violations={violations}")
        return decision

    return evaluate, evaluate_checked
