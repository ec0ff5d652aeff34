"""The offline stage for one spec: freeze the policy's module in memory, run every gate on it, then
(synth.freeze.write_build) write exactly that module. Results are values; the CLI prints them."""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from veriguard.contracts.errors import Pos, SpecError
from veriguard.contracts.runtime_support import flatten_arguments
from veriguard.contracts.schema import argument_schema
from veriguard.contracts.spec import Example
from veriguard.contracts.generated import check_generated
from veriguard.synth.compile import CompiledPolicy, Reveals, compile_policy, property_reveals
from veriguard.synth.specfile import SpecFile
from veriguard.contracts.strategies import constant_pools
from veriguard.synth.classifier_build import frozen_extraction
from veriguard.verify import counterexample as cx
from veriguard.verify.mutation import Mutant, mutants
from veriguard.verify.nagini import Explained, Models, NaginiWorker, verify_explained
from veriguard.verify.proof import NOT_SENT, cache_note, from_worker
from veriguard.verify.proof_cache import ProofCache, through_cache, verify_cached
from veriguard.verify.runnable import contract_functions, frozen_module, lemma_function, runnable_policy, strip_contracts
from veriguard.verify.testing import TestReport, run_tests
from veriguard.verify.verdicts import Diagnostic, ProofResult, Verdict, holds, worst
from veriguard.verify.z3check import Finding, Z3Report, check_contract

Progress = Callable[[str], None]
SPEC_CHECKS = ("satisfiable", "can_fire", "can_hold", "not_deny_all", "not_allow_all", "not_shadowed")


@dataclass(frozen=True)
class Gate:
    name: str
    verdict: Verdict
    summary: str
    seconds: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self, *, timings: bool = True) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "verdict": self.verdict.value, "summary": self.summary, **self.details}
        if timings:
            d["seconds"] = round(self.seconds, 3)
        return d


@dataclass
class SynthResult:
    spec: SpecFile
    verified_source: str
    runnable_source: str
    frozen_source: str          # the frozen module the gates tested, byte for byte what freeze writes
    gates: list[Gate]
    proof: ProofResult | None
    z3: Z3Report | None
    tests: TestReport | None
    mutation: dict[str, Any]
    seconds: float = 0.0
    assumptions: list[dict[str, Any]] = field(default_factory=list)
    transcript: dict[str, Any] | None = None

    @property
    def verdict(self) -> Verdict:
        """The worst gate verdict (precedence in verify.verdicts); NOT_CHECKED when no gate ran."""
        return worst(g.verdict for g in self.gates)

    @property
    def ok(self) -> bool:
        """Certified: every gate holds and Nagini proved the policy."""
        return holds(self.verdict) and self.proof is not None and self.proof.verdict is Verdict.PROVED


def spec_problems(report: Z3Report, spec: SpecFile) -> SpecError | None:
    """The first vacuity or contradiction finding, as a spec error with its place and a fix."""
    for f in report.failed(*SPEC_CHECKS):
        fixes = {"satisfiable": "relax the assumptions or the enum domains",
                 "can_fire": "the rule is vacuous: tighten it, or remove it",
                 "can_hold": "the rule can never be satisfied: it is contradictory on its own",
                 "not_deny_all": "the rules contradict each other; no request could ever be allowed",
                 "not_allow_all": "the rules can never deny; they say nothing",
                 "not_shadowed": "merge it into the rule that shadows it, or remove it"}
        if f.verdict is Verdict.UNKNOWN:
            return SpecError("contract.z3_unknown", f.message, file=spec.path, pos=f.pos,
                             fix="simplify the rule (no nonlinear arithmetic)")
        return SpecError(f"contract.{f.check}", f.message, file=spec.path, pos=f.pos, fix=fixes[f.check])
    return None


def replay_counterexamples(proof: ProofResult, spec: SpecFile, runnable: str, frozen: str) -> ProofResult:
    """Run each counterexample on the frozen policy: REFUTED only when one reproduces, else UNKNOWN.

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
    report = run_tests(spec, (), runnable, frozen, hypothesis_examples=0, replays=flat)
    outcomes = report.replays
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


def expect_proof(z3r: Z3Report) -> bool:
    """Whether z3 found nothing wrong: then the proof is expected to go through and Nagini is asked for
    counterexample models only if it does not (verify.nagini.verify_explained)."""
    return not z3r.failed("property")


def explained_by_tests(tests: TestReport) -> str | None:
    """Why a failed proof needs no counterexample models from Nagini: a test already fails on a concrete input
    (`confirm_by_tests` makes it the proof's counterexample). None when no test fails."""
    failures = failing_tests(tests)
    return f"the {failures[0][0]} already fails on the policy" if failures else None


def failing_tests(tests: TestReport, examples: tuple[Example, ...] = ()) -> list[tuple[str, str, Any]]:
    """(which test, its problem, its input or None) for each failing example (its input found by name in
    `examples`) and a failing property test."""
    refuted = Verdict.REFUTED.value
    inputs = {ex.name: ex.args for ex in examples}
    failures = [(f"example {e['name']!r}", e.get("error", ""), inputs.get(e["name"]))
                for e in tests.examples if e["verdict"] == refuted]
    if tests.hypothesis.get("verdict") == refuted:
        failure = tests.hypothesis["failure"]
        failures.append(("property test", failure.get("problem", ""), failure.get("args")))
    return failures


def confirm_by_tests(proof: ProofResult, tests: TestReport, spec: SpecFile) -> ProofResult:
    """A failing test is a concrete counterexample: it turns an unconfirmed failure into REFUTED. Its input is
    shown by flat parameter, as Nagini's counterexamples are."""
    assert spec.contract is not None
    failures = failing_tests(tests, spec.examples)
    if proof.verdict is not Verdict.UNKNOWN or not failures:
        return proof
    name, problem, args = failures[0]
    extra = Diagnostic(code="test.failure", message=f"the {name} fails on the policy: {problem}",
                       clause="tests", confirmed=True, counterexample=None if args is None else
                       _as_values(flatten_arguments(argument_schema(spec.contract.signature), args)))
    return replace(proof, verdict=Verdict.REFUTED, diagnostics=proof.diagnostics + (extra,),
                   detail="a test input reproduces the failure" + (f"; Nagini: {proof.detail}" if proof.detail else ""))


def _as_values(flat: dict[str, Any]) -> dict[str, Any]:
    """Concrete flat arguments in the decoded-counterexample shape used by reports."""
    return {k: {"length": len(v), "items": dict(enumerate(v))} if isinstance(v, list) else v for k, v in flat.items()}


def prove(worker: NaginiWorker, source: str, spec: SpecFile, workdir: Path, label: str,
          cache: ProofCache | None = None, *, models: Models = "on failure",
          skip: tuple[str, ...] = (), explained: Explained = lambda: None) -> ProofResult:
    """Nagini's verdict on `source`; through `cache` (verify.proof_cache) when given. `models` and `explained`: when
    Nagini is asked for counterexample models (verify.nagini.verify_explained). The functions in `skip` are not sent
    to Nagini (the lemmas `refuted_on_the_policy` found false): the result is about the others only
    (`with_refuted`)."""
    assert spec.contract is not None
    check_generated(source, "nagini")  # Nagini reads the module; nothing outside the allowlist reaches it
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / f"{label}.py"
    path.write_text(source, encoding="utf-8")
    timeout = spec.settings.nagini_timeout
    if cache is None and skip:
        cache = ProofCache()  # in memory: its selection leaves the refuted lemmas out
    raw = (verify_cached(worker, path, source, timeout=timeout, cache=cache, models=models, skip=skip,
                         explained=explained)
           if cache is not None else verify_explained(worker, path, timeout=timeout, models=models, explained=explained))
    proof = from_worker(raw, file=path.name, params=spec.contract.signature.flat_params())
    note = cache_note(proof.cache)
    return replace(proof, detail=f"{proof.detail}; {note}" if proof.detail and note else proof.detail or note)


def refuted_on_the_policy(z3r: Z3Report, spec: SpecFile, runnable: str, frozen: str) -> dict[str, Diagnostic]:
    """Lemma name -> why, for each property z3 refuted whose input breaks it on the frozen policy too.

    Such a lemma is false for this policy (the input is a concrete counterexample, replayed as Nagini's own
    are), so Nagini is not asked to prove it: a false lemma took 59-67 s of eicu_wrong_table's 78-80 s proof
    (2026-11-28). When the replay cannot run or does not break the property, the lemma goes to Nagini as usual."""
    assert spec.contract is not None
    found = [(f, f.witness) for f in z3r.failed("property") if f.verdict is Verdict.REFUTED and f.witness is not None]
    if not found:
        return {}
    schema = argument_schema(spec.contract.signature)
    flats = [flatten_arguments(schema, witness) for _, witness in found]
    report = run_tests(spec, (), runnable, frozen, hypothesis_examples=0, replays=flats)
    out = {}
    for (f, _), flat, outcome in zip(found, flats, report.replays if not report.error else []):
        if f.subject in outcome.get("properties", []):
            out[lemma_function(f.subject)] = Diagnostic(
                code=NOT_SENT, function=lemma_function(f.subject), clause=f"property {f.subject}",
                message=f"property {f.subject} was not sent to Nagini: z3's input breaks it on the policy "
                        f"({outcome['problem']})", counterexample=_as_values(flat), confirmed=True)
    return out


def with_refuted(proof: ProofResult, refuted: dict[str, Diagnostic]) -> ProofResult:
    """Nagini's result on the other functions, with the lemmas it was not sent: REFUTED unless it found worse."""
    detail = f"{len(refuted)} lemma(s) refuted by z3's input replayed on the policy, not sent to Nagini"
    return replace(proof, verdict=worst((proof.verdict, Verdict.REFUTED)), diagnostics=proof.diagnostics +
                   tuple(refuted.values()), detail=f"{detail}; Nagini on the rest: {proof.verdict.value}"
                   + (f" ({proof.detail})" if proof.detail else ""))


# The sentences the gates write from their figures. veriguard.audit writes them again from a certificate's figures
# and refutes a summary that differs, so each is spelt once, here.

def contract_summary(proved: int, total: int, bound: Any, unproved_properties: list[tuple[Any, Any]]) -> str:
    """contract (z3): `unproved_properties` is (subject, verdict) of each property z3 did not prove."""
    summary = f"{proved}/{total} checks proved (lists up to {bound} items)"
    if unproved_properties:
        summary += "; properties that do not follow from the rules: " + ", ".join(
            f"{subject} ({verdict})" for subject, verdict in unproved_properties)
    return summary


def proof_summary(verdict: Any, cached: Any, detail: Any) -> str:
    """proof (Nagini): its verdict, whether the proof cache had it, and its detail."""
    return f"{verdict}{' (cached)' if cached else ''}" + (f": {detail}" if detail else "")


def examples_summary(passed: int, total: int) -> str:
    """examples, when the spec has some."""
    return f"{passed}/{total} spec examples pass"


def hypothesis_summary(examples_run: Any, systematic: Any) -> str:
    """properties (Hypothesis), PASSED."""
    return f"{examples_run} random + {systematic} systematic inputs decided as the contract says"


def mutation_summary(killed: int, total: int, threshold: float) -> str:
    """mutation, with at least one mutant."""
    return f"{killed}/{total} mutants killed (score {killed / total:.2f}, threshold {threshold:.2f})"


def cached_summary(verdict: Any, summary: str) -> str:
    """A gate whose result came from the cache (labelled_cached)."""
    return f"{verdict} (cached): {summary}"


def contract_gate(z3r: Z3Report) -> Gate:
    bad = z3r.failed("property")
    summary = contract_summary(len(z3r.findings) - len(bad), len(z3r.findings), z3r.bound,
                               [(f.subject, f.verdict.value) for f in bad])
    return Gate("contract (z3)", worst(f.verdict for f in z3r.findings), summary, z3r.seconds,
                {"bound": z3r.bound, "findings": [f.to_dict() for f in z3r.findings]})


def proof_gate(proof: ProofResult) -> Gate:
    cached = (proof.cache or {}).get("hit")
    return Gate("proof (Nagini)", proof.verdict, proof_summary(proof.verdict.value, cached, proof.detail), proof.seconds,
                {"cache": proof.cache} if proof.cache is not None else {})


def examples_gate(tests: TestReport) -> Gate:
    seconds = tests.seconds.get("load", 0.0) + tests.seconds.get("examples", 0.0)
    if tests.error:
        return Gate("examples", tests.error_verdict, tests.error, tests.seconds.get("total", 0.0))
    rows = [{"name": e["name"], "line": e.get("line", 0), "verdict": e["verdict"], "error": e.get("error", "")}
            for e in tests.examples]
    passed = sum(1 for r in rows if r["verdict"] == Verdict.PASSED.value)
    summary = examples_summary(passed, len(rows)) if rows else "the spec has no [[examples]]"
    return Gate("examples", worst(Verdict(r["verdict"]) for r in rows), summary, seconds,
                {"passed": passed, "total": len(rows), "results": rows})


def hypothesis_gate(tests: TestReport, spec: SpecFile) -> Gate:
    name = "properties (Hypothesis)"
    if tests.error:
        return Gate(name, tests.error_verdict, f"the tests could not run: {tests.error}")
    hyp = tests.hypothesis
    verdict = Verdict(hyp["verdict"])
    systematic = (hyp.get("coverage") or {}).get("run", 0)
    summary = {Verdict.PASSED: hypothesis_summary(hyp["examples_run"], systematic),
               Verdict.NOT_CHECKED: f"not run: [verify] hypothesis_examples = {spec.settings.hypothesis_examples}"
               }.get(verdict, f"{verdict.value}: {(hyp.get('failure') or {}).get('problem')}")
    return Gate(name, verdict, summary, tests.seconds.get("hypothesis", 0.0),
                {"examples_run": hyp["examples_run"], "systematic": systematic, "rejected": hyp["rejected"],
                 "failure": hyp.get("failure")})


# the keys of mutation_gate's figures as a certificate records them (synth.freeze leaves "mutants" out); veriguard.audit
# refuses mutation figures with other keys
MUTATION_KEYS = frozenset({"score", "killed", "total", "threshold", "limit", "by_tests", "by_proof", "survivors",
                           "proofs_run"})
# which mutant a row of mutation_gate's is (veriguard.audit matches a certificate's survivors to the mutants by them)
MUTANT_KEYS = ("id", "operator", "line", "change")
# a survivor's note when Nagini proves the mutant too (veriguard.audit counts such survivors as sent to Nagini)
PROVED_TOO = "Nagini proves"
PROVED_TOO_NOTE = f"{PROVED_TOO} this mutant too: it is equivalent to the policy under the contract"


def mutant_row(m: Mutant) -> dict[str, Any]:
    """The keys of a mutant's row in mutation_gate's figures that say which mutant it is (MUTANT_KEYS)."""
    return dict(zip(MUTANT_KEYS, (m.id, m.operator, m.line, m.description)))


def mutation_gate(spec: SpecFile, worker: NaginiWorker, tests: TestReport, chosen: list[Mutant],
                  workdir: Path, progress: Progress, cache: ProofCache | None = None, *,
                  limit: int | None) -> tuple[Gate, dict[str, Any]]:
    """Mutants killed by the tests (of their frozen modules) or, within a budget, by Nagini.

    PASSED at or above the threshold; REFUTED below it (the survivors are the witnesses); NOT_CHECKED
    without mutants. `limit` is the mutant limit the mutants were made with (`synth --mutants`): the summary records
    it, so that `audit --mutation` makes the same mutants, all of them (None only for an old certificate's re-run)."""
    if tests.error:
        return Gate("mutation", tests.error_verdict, f"the tests could not run: {tests.error}"), {}
    t0 = time.monotonic()
    by_test = {m["id"]: m["killed_by"] for m in tests.mutants}
    rows = []
    budget = spec.settings.mutants_per_nagini
    proofs_run = 0
    for m in chosen:
        killed_by = by_test.get(m.id)
        row: dict[str, Any] = {**mutant_row(m), "killed_by": f"tests ({killed_by})" if killed_by else None}
        if killed_by is None and budget > 0:
            budget -= 1
            progress(f"  mutant {m.id} survived the tests; asking Nagini ({m.description})")
            result = prove(worker, m.source, spec, workdir, f"mutant_{m.id}", cache, models="never")
            proofs_run += not (result.cache or {}).get("hit")
            if result.verdict is not Verdict.PROVED:
                clause = next((d.clause for d in result.diagnostics if d.clause), result.detail)
                row["killed_by"] = f"proof ({result.verdict.value}: {clause})"
            else:
                row["killed_by"] = None
                row["note"] = PROVED_TOO_NOTE
        elif killed_by is None:
            row["note"] = "not proof-checked (Nagini budget for mutants spent)"
        rows.append(row)
    killed = sum(1 for r in rows if r["killed_by"])
    total = len(rows)
    score = killed / total if total else 0.0
    threshold = spec.settings.mutation_threshold
    summary = {"score": round(score, 4), "killed": killed, "total": total, "threshold": threshold,
               **({"limit": limit} if limit is not None else {}),
               "by_tests": sum(1 for r in rows if (r["killed_by"] or "").startswith("tests")),
               "by_proof": sum(1 for r in rows if (r["killed_by"] or "").startswith("proof")),
               "survivors": [r for r in rows if not r["killed_by"]], "mutants": rows, "proofs_run": proofs_run}
    if not total:
        verdict, text = Verdict.NOT_CHECKED, "no mutants were made (mutant limit 0, or no mutable site)"
    else:
        verdict = Verdict.PASSED if score >= threshold else Verdict.REFUTED
        text = mutation_summary(killed, total, threshold)
    seconds = tests.seconds.get("mutants", 0.0) + time.monotonic() - t0
    return Gate("mutation", verdict, text, seconds, {"score": summary["score"], "killed": killed, "total": total}), \
        summary


def spec_inputs(spec: SpecFile) -> dict[str, Any]:
    """What identifies a spec's content: its own sha256 and that of every file it names."""
    return {"spec": spec.sha256, "files": [list(f) for f in spec.files],
            "extraction_files": [list(f) for f in spec.extraction_files]}


def _z3_to_json(report: Z3Report) -> dict[str, Any]:
    return {"seconds": report.seconds, "bound": report.bound,
            "findings": [{"check": f.check, "subject": f.subject, "verdict": f.verdict.value, "message": f.message,
                          "witness": f.witness, "pos": [f.pos.line, f.pos.col, f.pos.end_line, f.pos.end_col]}
                         for f in report.findings]}


def _z3_from_json(doc: dict[str, Any]) -> Z3Report:
    findings = tuple(Finding(f["check"], f["subject"], Verdict(f["verdict"]), f["message"], f["witness"], Pos(*f["pos"]))
                     for f in doc["findings"])
    return Z3Report(findings, float(doc["seconds"]), int(doc["bound"]))


def _tests_to_json(report: TestReport) -> dict[str, Any]:
    return {k: v for k, v in asdict(report).items() if k not in ("error", "error_verdict")}


def cached_checks(spec: SpecFile, cache: ProofCache | None) -> tuple[Z3Report, dict[str, Any] | None]:
    """The z3 checks of the contract, from the cache when the spec (and its files) and settings are unchanged.

    A report with an UNKNOWN finding is not stored: z3 gave up within a time limit."""
    assert spec.contract is not None
    contract = spec.contract
    return through_cache(cache, "z3", {**spec_inputs(spec), "bound": spec.settings.z3_bound},
                         lambda: check_contract(contract, bound=spec.settings.z3_bound), encode=_z3_to_json,
                         decode=_z3_from_json,
                         storable=lambda r: all(f.verdict is not Verdict.UNKNOWN for f in r.findings))


def cached_reveals(spec: SpecFile, cache: ProofCache | None) -> Reveals:
    """property_reveals of the contract, from the cache when the spec (and its files) is unchanged. A wrong entry
    could only make a proof fail or reveal more than needed (the key also binds veriguard's code and z3's version)."""
    assert spec.contract is not None
    contract = spec.contract
    ids = [p.id for p in contract.properties]

    def decode(value: Any) -> Reveals:
        if not isinstance(value, dict) or sorted(value) != sorted(ids):
            raise ValueError("not the contract's properties")
        return {k: None if v is None else tuple(str(r) for r in v) for k, v in value.items()}

    def encode(reveals: Reveals) -> dict[str, list[str] | None]:
        return {k: None if v is None else list(v) for k, v in reveals.items()}

    reveals, _hit = through_cache(cache, "reveals", spec_inputs(spec), lambda: property_reveals(contract),
                                  encode=encode, decode=decode)
    return reveals


def cached_tests(spec: SpecFile, runnable: str, frozen: str, runnable_mutants: list[tuple[int, str]],
                 cache: ProofCache | None) -> tuple[TestReport, dict[str, Any] | None]:
    """Examples, Hypothesis (derandomized) and the mutants' tests, from the cache for the same inputs.

    A report whose tests could not run (a crash, the wall clock) is not stored; failed tests are."""
    inputs = {**spec_inputs(spec), "runnable": runnable, "frozen": frozen, "mutants": [list(m) for m in runnable_mutants],
              "hypothesis_examples": spec.settings.hypothesis_examples}
    return through_cache(cache, "tests", inputs,
                         lambda: run_tests(spec, spec.examples, runnable, frozen, mutants=runnable_mutants,
                                           hypothesis_examples=spec.settings.hypothesis_examples),
                         encode=_tests_to_json, decode=lambda d: TestReport(**d), storable=lambda r: not r.error)


def _encode_mutants(made: list[tuple[Mutant, str]]) -> list[list[Any]]:
    return [[asdict(m), runnable] for m, runnable in made]


def _decode_mutants(doc: Any) -> list[tuple[Mutant, str]]:
    return [(Mutant(**m), str(runnable)) for m, runnable in doc]


def cached_mutants(verified_source: str, contract_only: tuple[str, ...], limit: int,
                   cache: ProofCache | None) -> list[tuple[Mutant, str]]:
    """The mutants of the policy with their runnable (contracts stripped) sources, from the cache for the same
    source: stripping each mutant's contracts parses and unparses the module once per mutant. The
    `contract_only` functions (verify.runnable.contract_functions) are neither mutated nor part of a runnable
    mutant."""
    def make() -> list[tuple[Mutant, str]]:
        return [(m, strip_contracts(m.source, drop_functions=contract_only))
                for m in mutants(verified_source, limit=limit, seed=0, skip_functions=contract_only)]

    made, _hit = through_cache(cache, "mutants", {"source": verified_source, "lemmas": list(contract_only), "limit": limit,
                                                  "seed": 0}, make,
                               encode=_encode_mutants,
                               decode=_decode_mutants)
    return made


def labelled_cached(gate: Gate, hit: dict[str, Any] | None) -> Gate:
    """A gate whose result came from the cache says so, as the proof gate does: "PASSED (cached): ...". The lookup's
    time is the gate's time (a timing, left out of certificates), not part of the entry it names."""
    if hit is None:
        return gate
    entry = {k: v for k, v in hit.items() if k != "seconds"}
    return replace(gate, summary=cached_summary(gate.verdict.value, gate.summary), seconds=hit["seconds"],
                   details={**gate.details, "cache": entry})


def synthesize(spec: SpecFile, worker: NaginiWorker, verified_source: str, *, workdir: Path,
               progress: Progress = lambda _m: None, mutant_limit: int = 30,
               cache: ProofCache | None = None) -> SynthResult:
    """Freeze `verified_source` (a Nagini-annotated policy for `spec`), then run every gate: the tests
    run on the frozen module, the module freeze writes.

    With a `cache` (verify.proof_cache; `ProofCache()` keeps it in memory for this run only), proofs
    already made are reused and a mutant re-verifies only the functions it changes and those that see
    their bodies; without one, every proof runs whole."""
    assert spec.contract is not None
    t_start = time.monotonic()

    progress("checking the contract with z3 (satisfiable, non-vacuous, properties)")
    z3r, z3_hit = cached_checks(spec, cache)
    problem = spec_problems(z3r, spec)
    if problem is not None:
        raise problem

    runnable = runnable_policy(spec.contract, verified_source)
    frozen = frozen_module(spec, runnable)  # checks every generated part before any of it runs
    refuted = refuted_on_the_policy(z3r, spec, runnable, frozen)
    contract_only = contract_functions(spec.contract)

    def made_and_tested() -> tuple[list[tuple[Mutant, str]], TestReport, dict[str, Any] | None]:
        made = cached_mutants(verified_source, contract_only, mutant_limit, cache)
        tests, hit = cached_tests(spec, runnable, frozen, [(m.id, r) for m, r in made], cache)
        return made, tests, hit

    # The tests (a child process) run while Nagini proves (the worker process), on the machine's other core. A proof
    # that fails where a test fails too is explained by the test's input, so Nagini is not asked again for models.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="veriguard-tests") as pool:
        progress("testing the frozen module: spec examples, Hypothesis and systematic inputs against the runtime "
                 "contract, mutants")
        testing = pool.submit(made_and_tested)
        progress("proving the policy with Nagini" + (f" (not {', '.join(sorted(refuted))}: refuted by z3's input on "
                                                     "the policy)" if refuted else ""))
        proof = prove(worker, verified_source, spec, workdir, f"policy_{spec.name}", cache,
                      models="on failure" if expect_proof(z3r) else "always", skip=tuple(sorted(refuted)),
                      explained=lambda: explained_by_tests(testing.result()[1]))
        made, tests, tests_hit = testing.result()
    chosen = [m for m, _ in made]
    if proof.verdict is Verdict.UNKNOWN:
        proof = replay_counterexamples(proof, spec, runnable, frozen)
        proof = confirm_by_tests(proof, tests, spec)
    if refuted:
        proof = with_refuted(proof, refuted)

    if not tests.error:
        progress(f"mutation: {len(chosen)} mutants")
    gate, mutation = mutation_gate(spec, worker, tests, chosen, workdir, progress, cache, limit=mutant_limit)
    if cache is not None and spec.extraction:
        progress("freezing the extraction's classifiers")
        frozen_extraction(spec, cache)  # trained (or found) here; freeze's own call finds it in this process
    gates = [labelled_cached(contract_gate(z3r), z3_hit), proof_gate(proof),
             labelled_cached(examples_gate(tests), tests_hit), labelled_cached(hypothesis_gate(tests, spec), tests_hit),
             labelled_cached(gate, tests_hit if not mutation.get("proofs_run") else None)]
    return SynthResult(spec, verified_source, runnable, frozen, gates, proof, z3r, tests, mutation,
                       seconds=time.monotonic() - t_start)


def compiled_policy(spec: SpecFile, cache: ProofCache | None) -> CompiledPolicy:
    """The compile path's policy for `spec`, each lemma revealing what `cached_reveals` chose (SpecError when the
    spec has no formal rules)."""
    return compile_policy(spec, reveals=cached_reveals(spec, cache) if spec.contract else None)


def synthesize_spec(spec: SpecFile, worker: NaginiWorker, *, workdir: Path, progress: Progress = lambda _m: None,
                    mutant_limit: int = 30, cache: ProofCache | None = None,
                    compiled: CompiledPolicy | None = None) -> SynthResult:
    """The compile path: `synthesize` on the compiled policy. A lemma that reveals only the rules z3 found its
    property needs (z3 reasons about lists of at most 3 items; Nagini about any) and fails is not taken as the
    answer: the policy is proved again with every rule visible to every lemma, and that verdict stands."""
    compiled = compiled or compiled_policy(spec, cache)
    result = synthesize(spec, worker, compiled.source, workdir=workdir, progress=progress, mutant_limit=mutant_limit,
                        cache=cache)
    proof = result.proof
    failing = {d.function for d in proof.diagnostics} & set(compiled.partial_reveals) if proof else set()
    if not failing:
        return result
    progress(f"{', '.join(sorted(failing))} did not prove with the rules z3 chose; proving again with every rule "
             "visible to every lemma")
    return synthesize(spec, worker, compile_policy(spec, opaque_rules=False).source, workdir=workdir,
                      progress=progress, mutant_limit=mutant_limit, cache=cache)
