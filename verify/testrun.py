"""Child process that runs a policy's tests against its frozen module, the module that ships: spec
examples, Hypothesis properties and systematic inputs against the runtime contract, and mutants (each
frozen the same way) against the same inputs. Policy code (ours or a model's) only ever runs here,
under CPU, memory and wall-clock limits.

Every module that runs here is first built by verify.runnable.frozen_module, here, which checks each
generated part against the allowlist (contracts.generated) and the module against its parts before
anything of it runs; the policy's own module must be byte for byte the one the caller will ship.

Usage (by verify.testing): python -m veriguard.verify.testrun REQUEST.pickle  -> one JSON object on stdout.
"""
from __future__ import annotations

from collections import Counter
import itertools
import json
import pickle
import resource
import signal
import sys
import time
import types
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from veriguard.contracts.runtime_support import ArgumentError, flatten_arguments
from veriguard.contracts.schema import argument_schema
from veriguard.contracts.spec import Example, Spec
from veriguard.contracts.to_python import RuntimeChecker, compile_checker
from veriguard.verify.runnable import frozen_module
from veriguard.verify.verdicts import Verdict

_COUNTER = itertools.count()
Schema = list[tuple[str, dict[str, Any]]]
Observed = tuple[bool, list[str], list[Any]]


@dataclass(frozen=True)
class TestRequest:
    spec: Spec
    examples: tuple[Example, ...]
    runnable: str                         # the policy, contracts stripped
    module: str                           # its frozen module, as it will ship
    mutants: tuple[tuple[int, str], ...]  # (mutant id, the mutant, contracts stripped)
    hypothesis_examples: int
    per_mutant_seconds: int = 10
    replays: tuple[dict[str, Any], ...] = ()  # flat arguments (a counterexample's values)


@dataclass(frozen=True)
class Shipped:
    """A frozen module's entry points. `evaluate_checked` (None for mutants) is held to its promise:
    the decision of `evaluate` when the contract agrees with it, PolicyMismatch when it does not."""

    evaluate: Callable[[Mapping[str, Any]], Any]
    evaluate_checked: Callable[[Mapping[str, Any]], Any] | None
    mismatch: type[BaseException]

    def checked_problem(self, args: Mapping[str, Any], decision: Any, *, agrees: bool) -> str | None:
        if self.evaluate_checked is None:
            return None
        try:
            checked = self.evaluate_checked(args)
        except Exception as e:
            if not agrees and isinstance(e, self.mismatch):
                return None
            return f"evaluate_checked raised {type(e).__name__}: {e}"
        if not agrees:
            return f"evaluate_checked let through {checked}, which the contract disagrees with"
        return None if checked == decision else f"evaluate_checked answers {checked}, evaluate {decision}"


def load(spec: Spec, runnable: str, *, checked: bool = True, expected: str | None = None) -> Shipped:
    """Freeze `runnable` (every generated part checked before anything runs) and import the module;
    with `expected`, refuse a module that is not byte for byte `expected`."""
    source = frozen_module(spec, runnable)
    if expected is not None and source != expected:
        raise ValueError("the module to test differs from the frozen module of this policy")
    module = types.ModuleType(f"frozen_under_test_{next(_COUNTER)}")
    sys.modules[module.__name__] = module  # dataclasses look their module up while the class is built
    exec(compile(source, "<frozen policy>", "exec"), module.__dict__)
    evaluate, evaluate_checked = getattr(module, "evaluate", None), getattr(module, "evaluate_checked", None)
    mismatch = getattr(module, "PolicyMismatch", None)
    if not callable(evaluate) or not callable(evaluate_checked) or not isinstance(mismatch, type):
        raise ValueError("the frozen module lacks `evaluate`, `evaluate_checked` or `PolicyMismatch`")
    return Shipped(evaluate, evaluate_checked if checked else None, mismatch)


def observed(decision: Any) -> Observed:
    return decision.allowed, list(decision.violations), [_key(x) for x in decision.denied]


def nest(schema: Schema, flat: Mapping[str, Any]) -> dict[str, Any]:
    """The nested arguments a frozen module takes, from the policy's flat parameters (records -> fields)."""
    out: dict[str, Any] = {}
    for name, t in schema:
        out[name] = {f: flat[f"{name}_{f}"] for f, _ in t["fields"]} if t["kind"] == "record" else flat[name]
    return out


def _key(x: Any) -> Any:
    return tuple(x) if isinstance(x, list) else x


def _named_twice(violations: Sequence[str]) -> list[str]:
    """A rule a decision reports more than once (compared as sets, the decision would pass; the monitor refuses it)."""
    twice = sorted(v for v, n in Counter(violations).items() if n > 1)
    return [f"violations={list(violations)} names {', '.join(twice)} more than once"] if twice else []


def _differences(got: Observed, spec: tuple[bool, list[str], list[Any]]) -> list[str]:
    allowed, violations, denied = spec
    out = _named_twice(got[1])
    if got[0] != allowed:
        out.append(f"allowed={got[0]} but the rules say allowed={allowed}")
    if set(got[1]) != set(violations):
        out.append(f"violations={sorted(set(got[1]))} but the rules say {sorted(set(violations))}")
    if set(got[2]) != set(map(_key, denied)):
        out.append(f"denied={sorted(set(got[2]), key=repr)} but the rules say {sorted(set(map(_key, denied)), key=repr)}")
    return out


def diagnose(checker: RuntimeChecker, schema: Schema, policy: Shipped, args: Mapping[str, Any]) -> dict[str, Any]:
    """{"problem": text or None, "kind": input|exception|decision|property|entry|None, "properties": [failed ids]}.

    Properties are judged on the policy's own decision, so a property failure is reported even
    when the decision also differs from the rules."""
    try:
        flat = flatten_arguments(schema, args)
    except ArgumentError as e:
        return {"problem": f"the input is not an input of this policy: {e}", "kind": "input", "properties": []}
    try:
        decision = policy.evaluate(args)
    except Exception as e:  # a policy exception is a failed test, never a pass
        return {"problem": f"the policy raised {type(e).__name__}: {e}", "kind": "exception", "properties": []}
    got = observed(decision)
    differences = _differences(got, checker.spec_decision(**flat))
    failed = checker.failed_properties(**flat, vg_allowed=got[0], vg_violations=got[1], vg_denied=got[2])
    entry = policy.checked_problem(args, decision, agrees=not differences)
    if differences:
        return {"problem": "; ".join(differences), "kind": "decision", "properties": failed}
    if failed:
        return {"problem": "property " + ", ".join(failed) + " fails", "kind": "property", "properties": failed}
    if entry:
        return {"problem": entry, "kind": "entry", "properties": []}
    return {"problem": None, "kind": None, "properties": []}


def compare(checker: RuntimeChecker, schema: Schema, policy: Shipped, args: Mapping[str, Any]) -> str | None:
    """None when the policy decides `args` as the contract says, else what differs."""
    problem: str | None = diagnose(checker, schema, policy, args)["problem"]
    return problem


def run_example(ex: Example, schema: Schema, checker: RuntimeChecker, policy: Shipped) -> dict[str, Any]:
    out: dict[str, Any] = {"name": ex.name, "line": ex.pos.line}
    try:
        flat = flatten_arguments(schema, ex.args)
    except ArgumentError as e:
        return {**out, "verdict": Verdict.ERROR.value, "error": f"the example is not an input of this policy: {e}"}
    try:
        decision = policy.evaluate(ex.args)
    except Exception as e:
        return {**out, "verdict": Verdict.REFUTED.value, "error": f"the policy raised {type(e).__name__}: {e}"}
    got = observed(decision)
    spec = checker.spec_decision(**flat)
    problems = _named_twice(got[1])
    if got[0] != ex.allowed:
        problems.append(f"allowed={got[0]}, expected {ex.allowed}")
    if ex.violations is not None and set(got[1]) != set(ex.violations):
        problems.append(f"violations={sorted(set(got[1]))}, expected {sorted(set(ex.violations))}")
    if ex.denied is not None and set(got[2]) != {_key(d) for d in ex.denied}:
        problems.append(f"denied={sorted(set(got[2]), key=repr)}, expected {sorted({_key(d) for d in ex.denied}, key=repr)}")
    if problems and spec[0] == ex.allowed and (ex.violations is None or set(spec[1]) == set(ex.violations)):
        problems.append("the rules agree with the example: the policy is wrong")
    elif problems:
        problems.append(f"note: the rules themselves give allowed={spec[0]}, violations={sorted(set(spec[1]))}: "
                        "the example may be wrong")
    entry = policy.checked_problem(ex.args, decision, agrees=not _differences(got, spec))
    problems += [entry] if entry else []
    return {**out, "verdict": (Verdict.REFUTED if problems else Verdict.PASSED).value, "error": "; ".join(problems),
            "got": {"allowed": got[0], "violations": got[1], "denied": [list(x) if isinstance(x, tuple) else x
                                                                         for x in got[2]]}}


def run_hypothesis(req: TestRequest, checker: RuntimeChecker, policy: Shipped,
                   corpus: list[dict[str, Any]]) -> dict[str, Any]:
    from hypothesis import HealthCheck, assume, given, settings

    from veriguard.contracts.strategies import from_contract

    contract = req.spec.contract
    assert contract is not None
    schema = argument_schema(req.spec.signature)
    failing: dict[str, Any] = {}
    stats = {"examples_run": 0, "rejected": 0}

    @settings(max_examples=req.hypothesis_examples, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck), print_blob=False)
    @given(from_contract(contract))
    def policy_matches_contract(args: dict[str, Any]) -> None:
        if checker.assumes(**flatten_arguments(schema, args)):
            stats["rejected"] += 1
            assume(False)
        stats["examples_run"] += 1
        corpus.append(args)
        problem = compare(checker, schema, policy, args)
        if problem:
            failing.clear()
            failing.update({"args": args, "problem": problem})
            raise AssertionError(problem)

    try:
        policy_matches_contract()
    except AssertionError:
        return {"verdict": Verdict.REFUTED.value, **stats, "failure": failing}
    except Exception as e:  # unsatisfiable assumptions and the like: the test could not run as asked
        return {"verdict": Verdict.ERROR.value, **stats, "failure": {"problem": f"{type(e).__name__}: {e}"}}
    return {"verdict": Verdict.PASSED.value, **stats, "failure": None}


def run_coverage(req: TestRequest, checker: RuntimeChecker, policy: Shipped,
                 corpus: list[dict[str, Any]]) -> dict[str, Any]:
    """The systematic inputs of contracts.strategies.coverage_inputs, checked like the random ones."""
    from veriguard.contracts.strategies import coverage_inputs

    assert req.spec.contract is not None
    schema = argument_schema(req.spec.signature)
    run = 0
    for args in coverage_inputs(req.spec.contract):
        if checker.assumes(**flatten_arguments(schema, args)):
            continue
        run += 1
        corpus.append(args)
        problem = compare(checker, schema, policy, args)
        if problem:
            return {"run": run, "failure": {"args": args, "problem": problem}}
    return {"run": run, "failure": None}


class _Alarm(Exception):
    pass


def _on_alarm(signum: int, frame: Any) -> None:
    raise _Alarm()


def run_mutant(source: str, req: TestRequest, checker: RuntimeChecker, corpus: list[dict[str, Any]]) -> str | None:
    """How the mutant `source` (contracts stripped), once frozen, was killed (None: it survived every input)."""
    schema = argument_schema(req.spec.signature)
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(req.per_mutant_seconds)
    try:
        try:
            policy = load(req.spec, source, checked=False)
        except Exception as e:  # a mutant that cannot be frozen or imported could never ship
            return f"does not freeze or load ({type(e).__name__})"
        for ex in req.examples:
            if run_example(ex, schema, checker, policy)["verdict"] != Verdict.PASSED.value:
                return f"example: {ex.name}"
        for args in corpus:
            if compare(checker, schema, policy, args) is not None:
                return "property test"
        return None
    except _Alarm:
        return "timeout"
    finally:
        signal.alarm(0)


def run(req: TestRequest) -> dict[str, Any]:
    clock = time.monotonic()
    seconds: dict[str, float] = {}

    def lap(phase: str) -> None:
        nonlocal clock
        now = time.monotonic()
        seconds[phase] = round(now - clock, 3)
        clock = now

    contract = req.spec.contract
    assert contract is not None
    checker = compile_checker(contract)
    schema = argument_schema(req.spec.signature)
    try:
        policy = load(req.spec, req.runnable, expected=req.module)
    except Exception as e:
        return {"error": f"the frozen policy does not load: {type(e).__name__}: {e}"}
    lap("load")
    examples = [run_example(ex, schema, checker, policy) for ex in req.examples]
    replays = [diagnose(checker, schema, policy, nest(schema, flat)) for flat in req.replays]
    lap("examples")
    corpus: list[dict[str, Any]] = []
    if req.hypothesis_examples:
        hyp = run_hypothesis(req, checker, policy, corpus)
        hyp["coverage"] = run_coverage(req, checker, policy, corpus)
        if hyp["coverage"]["failure"] and hyp["verdict"] == Verdict.PASSED.value:
            hyp["verdict"] = Verdict.REFUTED.value
            hyp["failure"] = hyp["coverage"]["failure"]
    else:
        hyp = {"verdict": Verdict.NOT_CHECKED.value, "examples_run": 0, "rejected": 0, "failure": None}
    lap("hypothesis")
    mutants = [{"id": mid, "killed_by": run_mutant(src, req, checker, corpus)} for mid, src in req.mutants]
    lap("mutants")
    return {"examples": examples, "hypothesis": hyp, "mutants": mutants, "replays": replays, "seconds": seconds}


def main() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
    resource.setrlimit(resource.RLIMIT_CPU, (600, 600))
    with open(sys.argv[1], "rb") as f:
        req = pickle.load(f)  # written by verify.testing in this same run, never user input
    out = run(req)
    sys.stdout.write(json.dumps(out, default=repr) + "\n")


if __name__ == "__main__":
    main()
