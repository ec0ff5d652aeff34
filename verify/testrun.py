"""Child process that runs a policy's tests: spec examples, Hypothesis properties against the
runtime contract, and mutants against the same inputs. Policy code (ours or a model's) only
ever runs here, under CPU, memory and wall-clock limits.

Usage (by verify.testing): python -m verify.testrun REQUEST.pickle  -> one JSON object on stdout.
"""
from __future__ import annotations

import itertools
import json
import pickle
import resource
import signal
import sys
import types
from dataclasses import dataclass
from typing import Any, Callable

from contracts.check import Contract
from contracts.generated import check_generated
from contracts.runtime_support import ArgumentError, flatten_arguments
from contracts.schema import argument_schema
from contracts.spec import Example
from contracts.to_python import RuntimeChecker, compile_checker


_COUNTER = itertools.count()


@dataclass(frozen=True)
class TestRequest:
    contract: Contract
    examples: tuple[Example, ...]
    policy_source: str
    mutants: tuple[tuple[int, str], ...]
    hypothesis_examples: int
    seed: int = 0
    per_mutant_seconds: int = 10
    replays: tuple[dict[str, Any], ...] = ()


def _load(source: str) -> Callable[..., Any]:
    check_generated(source, "runnable")  # before anything of it runs (GeneratedCodeError)
    module = types.ModuleType(f"policy_under_test_{next(_COUNTER)}")
    sys.modules[module.__name__] = module  # dataclasses look their module up while the class is built
    exec(compile(source, "<policy>", "exec"), module.__dict__)
    fn = getattr(module, "decide", None)
    if not callable(fn):
        raise ValueError("the policy defines no function `decide`")
    return fn  # type: ignore[no-any-return]


def _key(x: Any) -> Any:
    return tuple(x) if isinstance(x, list) else x


def _decision(d: Any, rule_ids: list[str]) -> tuple[bool, list[str], list[Any]]:
    """The policy's decision with rule numbers mapped to rule ids (as the frozen module does)."""
    violations = [rule_ids[v] if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < len(rule_ids) else
                  f"<not a rule: {v!r}>" for v in d.violations]
    return bool(d.allowed), violations, [_key(x) for x in d.denied]


def compare(checker: RuntimeChecker, decide: Callable[..., Any], flat: dict[str, Any]) -> str | None:
    """None when the policy decides `flat` as the contract says, else what differs."""
    return diagnose(checker, decide, flat)["problem"]


def diagnose(checker: RuntimeChecker, decide: Callable[..., Any], flat: dict[str, Any]) -> dict[str, Any]:
    """{"problem": text or None, "kind": exception|decision|property|None, "properties": [failed ids]}.

    Properties are judged on the policy's own decision, so a property failure is reported even
    when the decision also differs from the rules."""
    problem = _mismatch(checker, decide, flat)
    if problem is None:
        return {"problem": None, "kind": None, "properties": []}
    if problem.startswith("the policy raised"):
        return {"problem": problem, "kind": "exception", "properties": []}
    call = {k: list(v) if isinstance(v, list) else v for k, v in flat.items()}
    got = _decision(decide(**call), checker.rule_ids)
    failed = checker.failed_properties(**flat, vg_allowed=got[0], vg_violations=got[1], vg_denied=got[2])
    return {"problem": problem, "kind": "property" if problem.startswith("property ") else "decision",
            "properties": failed}


def _mismatch(checker: RuntimeChecker, decide: Callable[..., Any], flat: dict[str, Any]) -> str | None:
    call = {k: list(v) if isinstance(v, list) else v for k, v in flat.items()}
    try:
        got = _decision(decide(**call), checker.rule_ids)
    except Exception as e:  # a policy exception is a failed test, never a pass
        return f"the policy raised {type(e).__name__}: {e}"
    allowed, violations, denied = checker.spec_decision(**flat)
    differences = []
    if got[0] != allowed:
        differences.append(f"allowed={got[0]} but the rules say allowed={allowed}")
    if set(got[1]) != set(violations):
        differences.append(f"violations={sorted(set(got[1]))} but the rules say {sorted(set(violations))}")
    if set(got[2]) != set(map(_key, denied)):
        differences.append(f"denied={sorted(set(got[2]), key=repr)} but the rules say "
                           f"{sorted(set(map(_key, denied)), key=repr)}")
    if differences:
        return "; ".join(differences)
    failed = checker.failed_properties(**flat, vg_allowed=got[0], vg_violations=got[1], vg_denied=got[2])
    if failed:
        return "property " + ", ".join(failed) + " fails"
    return None


def run_example(ex: Example, schema: Any, checker: RuntimeChecker, decide: Callable[..., Any]) -> dict[str, Any]:
    flat = flatten_arguments(schema, ex.args)
    out: dict[str, Any] = {"name": ex.name, "line": ex.pos.line}
    try:
        got = _decision(decide(**{k: list(v) if isinstance(v, list) else v for k, v in flat.items()}),
                        checker.rule_ids)
    except Exception as e:
        return {**out, "passed": False, "error": f"the policy raised {type(e).__name__}: {e}"}
    spec = checker.spec_decision(**flat)
    problems = []
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
    return {**out, "passed": not problems, "error": "; ".join(problems),
            "got": {"allowed": got[0], "violations": got[1], "denied": [list(x) if isinstance(x, tuple) else x
                                                                         for x in got[2]]}}


def run_hypothesis(req: TestRequest, checker: RuntimeChecker, decide: Callable[..., Any],
                   corpus: list[dict[str, Any]]) -> dict[str, Any]:
    from hypothesis import HealthCheck, assume, given, settings

    from contracts.strategies import from_contract

    schema = argument_schema(req.contract.signature)
    failing: dict[str, Any] = {}
    stats = {"run": 0, "rejected": 0}

    @settings(max_examples=req.hypothesis_examples, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck), print_blob=False)
    @given(from_contract(req.contract))
    def policy_matches_contract(args: dict[str, Any]) -> None:
        flat = flatten_arguments(schema, args)
        if checker.assumes(**flat):
            stats["rejected"] += 1
            assume(False)
        stats["run"] += 1
        corpus.append(flat)
        problem = compare(checker, decide, flat)
        if problem:
            failing.clear()
            failing.update({"args": args, "problem": problem})
            raise AssertionError(problem)

    try:
        policy_matches_contract()
    except AssertionError:
        return {"passed": False, "examples_run": stats["run"], "rejected": stats["rejected"], "failure": failing}
    except Exception as e:  # unsatisfiable assumptions and the like
        return {"passed": False, "examples_run": stats["run"], "rejected": stats["rejected"],
                "failure": {"problem": f"{type(e).__name__}: {e}"}}
    return {"passed": True, "examples_run": stats["run"], "rejected": stats["rejected"], "failure": None}


def run_coverage(req: TestRequest, checker: RuntimeChecker, decide: Callable[..., Any],
                 corpus: list[dict[str, Any]]) -> dict[str, Any]:
    """The systematic inputs of contracts.strategies.coverage_inputs, checked like the random ones."""
    from contracts.strategies import coverage_inputs

    schema = argument_schema(req.contract.signature)
    run = 0
    for args in coverage_inputs(req.contract):
        flat = flatten_arguments(schema, args)
        if checker.assumes(**flat):
            continue
        run += 1
        corpus.append(flat)
        problem = compare(checker, decide, flat)
        if problem:
            return {"run": run, "failure": {"args": args, "problem": problem}}
    return {"run": run, "failure": None}


class _Alarm(Exception):
    pass


def _on_alarm(signum: int, frame: Any) -> None:
    raise _Alarm()


def run_mutant(source: str, req: TestRequest, checker: RuntimeChecker, corpus: list[dict[str, Any]]) -> str | None:
    """How the mutant was killed (None when it survived every input)."""
    schema = argument_schema(req.contract.signature)
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(req.per_mutant_seconds)
    try:
        try:
            decide = _load(source)
        except Exception as e:
            return f"does not load ({type(e).__name__})"
        for ex in req.examples:
            if not run_example(ex, schema, checker, decide)["passed"]:
                return f"example: {ex.name}"
        for flat in corpus:
            if compare(checker, decide, flat) is not None:
                return "property test"
        return None
    except _Alarm:
        return "timeout"
    finally:
        signal.alarm(0)


def run(req: TestRequest) -> dict[str, Any]:
    checker = compile_checker(req.contract)
    schema = argument_schema(req.contract.signature)
    try:
        decide = _load(req.policy_source)
    except Exception as e:
        return {"error": f"the policy does not load: {type(e).__name__}: {e}"}
    examples = []
    for ex in req.examples:
        try:
            examples.append(run_example(ex, schema, checker, decide))
        except ArgumentError as e:
            examples.append({"name": ex.name, "line": ex.pos.line, "passed": False, "error": str(e)})
    replays = [diagnose(checker, decide, flat) for flat in req.replays]
    corpus: list[dict[str, Any]] = []
    hyp = run_hypothesis(req, checker, decide, corpus) if req.hypothesis_examples else {}
    if req.hypothesis_examples:
        hyp["coverage"] = run_coverage(req, checker, decide, corpus)
        if hyp["coverage"]["failure"] and hyp.get("passed"):
            hyp["passed"] = False
            hyp["failure"] = hyp["coverage"]["failure"]
    mutants = [{"id": mid, "killed_by": run_mutant(src, req, checker, corpus)} for mid, src in req.mutants]
    return {"examples": examples, "hypothesis": hyp, "mutants": mutants, "corpus": len(corpus), "replays": replays}


def main() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
    resource.setrlimit(resource.RLIMIT_CPU, (600, 600))
    with open(sys.argv[1], "rb") as f:
        req = pickle.load(f)  # written by verify.testing in this same run, never user input
    out = run(req)
    sys.stdout.write(json.dumps(out, default=repr) + "\n")


if __name__ == "__main__":
    main()
