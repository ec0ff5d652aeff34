"""The offline stage for one spec: compile, then every gate, then freeze. Results are values;
the CLI prints them."""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from contracts.errors import SpecError
from contracts.generated import check_generated
from contracts.spec import Spec
from contracts.strategies import constant_pools
from verify import counterexample as cx
from verify.mutation import Mutant, mutants
from verify.nagini import NaginiWorker
from verify.proof import from_worker
from verify.runnable import strip_contracts
from verify.testing import TestReport, run_tests
from verify.verdicts import Diagnostic, ProofResult, Verdict
from verify.z3check import Z3Report, check_contract

Progress = Callable[[str], None]
SPEC_CHECKS = ("satisfiable", "can_fire", "can_hold", "not_deny_all", "not_allow_all", "not_shadowed")


@dataclass(frozen=True)
class Gate:
    name: str
    passed: bool
    summary: str
    seconds: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self, *, timings: bool = True) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "passed": self.passed, "summary": self.summary, **self.details}
        if timings:
            d["seconds"] = round(self.seconds, 3)
        return d


@dataclass
class SynthResult:
    spec: Spec
    verified_source: str
    runnable_source: str
    gates: list[Gate]
    proof: ProofResult | None
    z3: Z3Report | None
    tests: TestReport | None
    mutation: dict[str, Any]
    seconds: float = 0.0
    assumptions: list[dict[str, Any]] = field(default_factory=list)
    transcript: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return bool(self.gates) and all(g.passed for g in self.gates)


def spec_problems(report: Z3Report, spec: Spec) -> SpecError | None:
    """The first vacuity or contradiction finding, as a spec error with its place and a fix."""
    for f in report.failed(*SPEC_CHECKS):
        fixes = {"satisfiable": "relax the assumptions or the enum domains",
                 "can_fire": "the rule is vacuous: tighten it, or remove it",
                 "can_hold": "the rule can never be satisfied: it is contradictory on its own",
                 "not_deny_all": "the rules contradict each other; no request could ever be allowed",
                 "not_allow_all": "the rules can never deny; they say nothing",
                 "not_shadowed": "merge it into the rule that shadows it, or remove it"}
        if f.ok is None:
            return SpecError("contract.z3_unknown", f"z3 could not decide: {f.message}", file=spec.path, pos=f.pos,
                             fix="simplify the rule (no nonlinear arithmetic)")
        return SpecError(f"contract.{f.check}", f.message, file=spec.path, pos=f.pos, fix=fixes[f.check])
    return None


def replay_counterexamples(proof: ProofResult, spec: Spec, runnable: str) -> ProofResult:
    """Run each counterexample on the policy: REFUTED only when one reproduces, else UNKNOWN.

    Nagini's models can leave values open; those holes are filled from the constants the contract
    and its tables mention, and the first filling that reproduces the failure is reported.
    """
    assert spec.contract is not None
    params = spec.contract.signature.flat_params()
    strs, ints = constant_pools(spec.contract)
    batches = [cx.candidates(d.counterexample or {}, params, {"str": strs, "int": ints}) if d.counterexample else []
               for d in proof.diagnostics]
    flat = [c for batch in batches for c in batch]
    if not flat:
        return proof
    report = run_tests(spec.contract, (), runnable, hypothesis_examples=0, replays=flat)
    outcomes = report.extra.get("replays", [])
    diags, k = [], 0
    for d, batch in zip(proof.diagnostics, batches):
        results = outcomes[k:k + len(batch)]
        k += len(batch)
        if not batch:
            diags.append(d)
            continue
        wanted = d.clause.split()[1] if d.clause.startswith("property ") else None
        hit = next(((c, o) for c, o in zip(batch, results)
                    if (wanted in o.get("properties", []) if wanted else o.get("kind") in ("decision", "property"))),
                   None)
        if hit is not None:
            concrete, outcome = hit
            diags.append(replace(d, confirmed=True, counterexample=_as_values(concrete),
                                 message=d.message + f" Replayed on the policy: {outcome['problem']}."))
        else:
            first = results[0] if results else {"problem": report.error}
            note = (f" Replaying it on the policy: {first['problem']}." if first.get("problem") else
                    " The counterexample does not reproduce on the policy.")
            diags.append(replace(d, confirmed=False, message=d.message + note))
    verdict = Verdict.REFUTED if any(d.confirmed for d in diags) else Verdict.UNKNOWN
    detail = ("counterexample reproduces on the policy" if verdict is Verdict.REFUTED else
              "Nagini could not prove it and its counterexamples do not reproduce (verifier incompleteness)")
    return replace(proof, verdict=verdict, diagnostics=tuple(diags), detail=detail)


def confirm_by_tests(proof: ProofResult, tests: TestReport) -> ProofResult:
    """A failing test is a concrete counterexample: it turns an unconfirmed failure into REFUTED."""
    failures = [(f"example {e['name']!r}", e.get("error", ""), None) for e in tests.examples if not e.get("passed")]
    hyp = tests.hypothesis.get("failure") if tests.hypothesis else None
    if hyp:
        failures.append(("property test", hyp.get("problem", ""), hyp.get("args")))
    if proof.verdict is not Verdict.UNKNOWN or not failures:
        return proof
    name, problem, args = failures[0]
    extra = Diagnostic(code="test.failure", message=f"the {name} fails on the policy: {problem}",
                       clause="tests", counterexample=args, confirmed=True)
    return replace(proof, verdict=Verdict.REFUTED, diagnostics=proof.diagnostics + (extra,),
                   detail="a test input reproduces the failure")


def _as_values(flat: dict[str, Any]) -> dict[str, Any]:
    """Concrete flat arguments in the decoded-counterexample shape used by reports."""
    return {k: {"length": len(v), "items": dict(enumerate(v))} if isinstance(v, list) else v for k, v in flat.items()}


def prove(worker: NaginiWorker, source: str, spec: Spec, workdir: Path, label: str) -> ProofResult:
    assert spec.contract is not None
    check_generated(source, "nagini")  # Nagini reads the module; nothing outside the allowlist reaches it
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / f"{label}.py"
    path.write_text(source, encoding="utf-8")
    raw = worker.verify_file(path, timeout=spec.settings.nagini_timeout)
    return from_worker(raw, file=path.name, params=spec.contract.signature.flat_params())


def mutation_gate(spec: Spec, worker: NaginiWorker, verified: str, tests: TestReport, chosen: list[Mutant],
                  workdir: Path, progress: Progress) -> tuple[Gate, dict[str, Any]]:
    t0 = time.monotonic()
    by_test = {m["id"]: m["killed_by"] for m in tests.mutants}
    rows = []
    budget = spec.settings.mutants_per_nagini
    for m in chosen:
        killed_by = by_test.get(m.id)
        row = {"id": m.id, "operator": m.operator, "line": m.line, "change": m.description,
               "killed_by": f"tests ({killed_by})" if killed_by else None}
        if killed_by is None and budget > 0:
            budget -= 1
            progress(f"  mutant {m.id} survived the tests; asking Nagini ({m.description})")
            result = prove(worker, m.source, spec, workdir, f"mutant_{m.id}")
            if result.verdict is not Verdict.PROVED:
                clause = next((d.clause for d in result.diagnostics if d.clause), result.detail)
                row["killed_by"] = f"proof ({result.verdict.value}: {clause})"
            else:
                row["killed_by"] = None
                row["note"] = "Nagini proves this mutant too: it is equivalent to the policy under the contract"
        elif killed_by is None:
            row["note"] = "not proof-checked (Nagini budget for mutants spent)"
        rows.append(row)
    killed = sum(1 for r in rows if r["killed_by"])
    total = len(rows)
    score = killed / total if total else 1.0
    threshold = spec.settings.mutation_threshold
    summary = {"score": round(score, 4), "killed": killed, "total": total, "threshold": threshold,
               "by_tests": sum(1 for r in rows if (r["killed_by"] or "").startswith("tests")),
               "by_proof": sum(1 for r in rows if (r["killed_by"] or "").startswith("proof")),
               "survivors": [r for r in rows if not r["killed_by"]], "mutants": rows}
    gate = Gate("mutation", score >= threshold,
                f"{killed}/{total} mutants killed (score {score:.2f}, threshold {threshold:.2f})",
                time.monotonic() - t0, {"score": summary["score"], "killed": killed, "total": total})
    return gate, summary


def synthesize(spec: Spec, worker: NaginiWorker, verified_source: str, *, workdir: Path,
               progress: Progress = lambda _m: None, mutant_limit: int = 30) -> SynthResult:
    """Run every gate on `verified_source` (a Nagini-annotated policy for `spec`)."""
    assert spec.contract is not None
    t_start = time.monotonic()
    gates: list[Gate] = []

    progress("checking the contract with z3 (satisfiable, non-vacuous, properties)")
    t0 = time.monotonic()
    z3r = check_contract(spec.contract, bound=spec.settings.z3_bound)
    problem = spec_problems(z3r, spec)
    if problem is not None:
        raise problem
    bad_props = z3r.failed("property")
    gates.append(Gate("contract (z3)", not bad_props,
                      f"{len(z3r.findings) - len(bad_props)}/{len(z3r.findings)} checks passed"
                      + (f"; properties that do not follow from the rules: {', '.join(f.subject for f in bad_props)}"
                         if bad_props else ""),
                      time.monotonic() - t0, {"bound": z3r.bound, "findings": [f.to_dict() for f in z3r.findings]}))

    lemmas = tuple(f"property_{d.id}" for d in spec.contract.properties)
    runnable = strip_contracts(verified_source, drop_functions=lemmas)
    check_generated(runnable, "runnable")  # the test process checks every module again before it runs it

    progress("testing: spec examples, Hypothesis and systematic inputs against the runtime contract, mutants")
    chosen = mutants(verified_source, limit=mutant_limit, seed=0, skip_functions=lemmas)
    runnable_mutants = [(m.id, strip_contracts(m.source, drop_functions=lemmas)) for m in chosen]
    tests = run_tests(spec.contract, spec.examples, runnable, mutants=runnable_mutants,
                      hypothesis_examples=spec.settings.hypothesis_examples)

    progress("proving the policy with Nagini")
    proof = prove(worker, verified_source, spec, workdir, f"policy_{spec.name}")
    if proof.verdict in (Verdict.REFUTED, Verdict.UNKNOWN):
        proof = replay_counterexamples(proof, spec, runnable)
        proof = confirm_by_tests(proof, tests)
    gates.append(Gate("proof (Nagini)", proof.verdict is Verdict.PROVED, f"{proof.verdict.value}"
                      + (f": {proof.detail}" if proof.detail else ""), proof.seconds,
                      {"verdict": proof.verdict.value}))

    if tests.error:
        gates.append(Gate("examples", False, tests.error, tests.seconds))
    else:
        passed = sum(1 for e in tests.examples if e["passed"])
        rows = [{"name": e["name"], "line": e.get("line", 0), "passed": e["passed"], "error": e.get("error", "")}
                for e in tests.examples]
        gates.append(Gate("examples", tests.examples_passed, f"{passed}/{len(tests.examples)} spec examples pass",
                          tests.seconds, {"passed": passed, "total": len(tests.examples), "results": rows}))
        hyp = tests.hypothesis
        systematic = (hyp.get("coverage") or {}).get("run", 0)
        gates.append(Gate("properties (Hypothesis)", tests.hypothesis_passed,
                          f"{hyp.get('examples_run', 0)} random + {systematic} systematic inputs decided as the "
                          "contract says" if tests.hypothesis_passed else
                          f"failed: {(hyp.get('failure') or {}).get('problem')}",
                          0.0, {"examples_run": hyp.get("examples_run", 0), "systematic": systematic,
                                "rejected": hyp.get("rejected", 0), "failure": hyp.get("failure")}))
    mutation: dict[str, Any] = {}
    if not tests.error:
        progress(f"mutation: {len(chosen)} mutants")
        gate, mutation = mutation_gate(spec, worker, verified_source, tests, chosen, workdir, progress)
        gates.append(gate)
    return SynthResult(spec, verified_source, runnable, gates, proof, z3r, tests, mutation,
                       seconds=time.monotonic() - t_start)

