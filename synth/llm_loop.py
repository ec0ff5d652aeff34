"""The LLM path: clarify -> formalize -> test -> implement -> gates -> repair, within a budget.

The model proposes; the loader, the z3 checks, the tests and Nagini dispose. Every exchange
(memory lookups included) goes through a RecordingProvider into the transcript store, so a
synthesis can be listed, audited and replayed to the same certificate.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from veriguard.contracts.errors import SpecError, VeriguardError
from veriguard.synth.specfile import SpecFile
from veriguard.synth import clarify, formalize, implement, testgen
from veriguard.synth.compile import CompiledPolicy, compile_policy
from veriguard.synth.freeze import write_build
from veriguard.synth.memory import DemonstrationMemory
from veriguard.synth.pipeline import SynthResult, synthesize
from veriguard.providers.types import Completion, CompletionRequest, Provider, ProviderError
from veriguard.synth.transcripts import RecordingProvider, TranscriptStore, transcript_hash
from veriguard.verify import counterexample as cx
from veriguard.verify.nagini import NaginiWorker
from veriguard.verify.proof_cache import ProofCache
from veriguard.verify.verdicts import Verdict, holds
from veriguard.verify.z3check import check_contract

Progress = Callable[[str], None]
MEMORY_SCHEMA: dict[str, Any] = {"type": "object", "required": ["demonstrations"],
                                 "properties": {"demonstrations": {"type": "array"}}}


@dataclass(frozen=True)
class Budget:
    rounds: int = 4              # implement attempts (each a full set of gates)
    formalize_rounds: int = 3    # formalize attempts
    max_tokens: int = 400_000    # input + output tokens over the whole synthesis


@dataclass
class Outcome:
    status: str                  # proved | failed | budget | needs_answers | provider | refused | bad_input
    exit_code: int
    message: str
    result: SynthResult | None = None
    build: Path | None = None
    certificate: dict[str, Any] | None = None
    questions_file: Path | None = None
    synthesis_id: str = ""
    never_proved: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class MemoryStage:
    """Answers the pseudo-stage "memory" with the most similar past syntheses."""

    name = "memory"
    model = "memory"

    def __init__(self, memory: DemonstrationMemory, k: int = 2) -> None:
        self.memory, self.k = memory, k

    def complete(self, request: CompletionRequest) -> Completion:
        spec_request, _, agent = request.prompt.partition("\n---\n")
        demos = [m.as_prompt_case() for m in self.memory.retrieve(spec_request, agent, k=self.k)]
        data = {"demonstrations": demos}
        return Completion(data, json.dumps(data), self.model, 0, 0, 0.0, "memory", {}, {})


class Router:
    """The model for every stage, the memory for the "memory" stage."""

    def __init__(self, llm: Provider, memory: MemoryStage) -> None:
        self.llm, self.memory = llm, memory
        self.name, self.model = llm.name, llm.model

    def complete(self, request: CompletionRequest) -> Completion:
        return (self.memory if request.stage == "memory" else self.llm).complete(request)


def gate_feedback(result: SynthResult) -> list[str]:
    """What failed, as targeted feedback: the clause, the function, the counterexample, the failing test."""
    out = []
    proof = result.proof
    if proof is not None and proof.verdict is not Verdict.PROVED:
        for d in proof.diagnostics[:6]:
            where = f" in `{d.function}` (line {d.line})" if d.function else ""
            values = f"; counterexample: {cx.render(d.counterexample)}" if d.counterexample else ""
            out.append(f"Nagini {proof.verdict.value}: {d.clause or d.code}{where}: {d.message}{values}")
        if not proof.diagnostics:
            out.append(f"Nagini {proof.verdict.value}: {proof.detail}")
    tests = result.tests
    if tests is not None:
        if tests.error:
            out.append(f"the tests could not run: {tests.error}")
        for e in tests.examples:
            if e["verdict"] != Verdict.PASSED.value:
                out.append(f"example {e['name']!r} fails ({e['verdict']}): {e.get('error', '')}")
        failure = (tests.hypothesis or {}).get("failure")
        if failure:
            out.append(f"property test fails on {json.dumps(failure.get('args'))}: {failure.get('problem')}")
    return out[:12]


def never_proved(result: SynthResult | None) -> list[str]:
    if result is None:
        return ["no implementation reached the verifier"]
    out = [f"{g.name}: {g.verdict.value}: {g.summary}" for g in result.gates if not holds(g.verdict)]
    if result.proof is not None:
        out += [f"{d.clause or d.code} ({d.function})" for d in result.proof.diagnostics]
    return out


def _tokens(store: TranscriptStore, sid: str) -> int:
    return sum((t.input_tokens or 0) + (t.output_tokens or 0) for t in store.stage_totals(sid).values())


class _Loop:
    def __init__(self, spec: SpecFile, provider: Provider, worker: NaginiWorker, store: TranscriptStore,
                 budget: Budget, progress: Progress, workdir: Path, cache: ProofCache | None = None) -> None:
        self.spec, self.worker, self.store, self.budget = spec, worker, store, budget
        self.progress, self.workdir, self.cache = progress, workdir, cache
        self.inner = provider
        self.sid = ""
        self.provider: Provider = provider

    def over_budget(self) -> bool:
        return _tokens(self.store, self.sid) > self.budget.max_tokens

    def formalized(self, assumptions: list[dict[str, str]], demos: list[dict[str, Any]], notes: list[str], *,
                   fixed: bool) -> tuple[SpecFile, CompiledPolicy] | str:
        feedback: list[str] = []
        for round_ in range(self.budget.formalize_rounds):
            if self.over_budget():
                return "the token budget ran out while formalizing"
            self.progress(f"formalize (round {round_ + 1}/{self.budget.formalize_rounds})")
            draft = formalize.formalize(self.provider, self.spec, assumptions, self.workdir / f"draft{round_}",
                                        feedback=feedback, demos=demos, round=round_, fixed=fixed)
            try:
                spec = formalize.load_draft(draft)
                compiled = compile_policy(spec, opaque_rules=False)  # a model's body may restate a rule
                problem = _spec_problem(spec)
                if problem is not None:
                    raise problem
            except VeriguardError as e:
                feedback = [formalize.error_feedback(e, draft)]
                notes.append(f"formalize round {round_ + 1}: {e.code}: {e.message}")
                continue
            spec = dataclasses.replace(spec, path=self.spec.path, sha256=self.spec.sha256,
                                       extraction=self.spec.extraction, enforcement=self.spec.enforcement,
                                       extraction_files=self.spec.extraction_files)
            tests = testgen.write_tests(self.provider, spec, round=round_)
            notes += [f"model example dropped: {m}" for m in tests.malformed]
            if tests.contradictions and round_ + 1 < self.budget.formalize_rounds:
                feedback = ["examples written from the request disagree with your contract; fix the contract if it "
                            "misreads the request: " + c for c in tests.contradictions[:6]]
                notes += [f"contradiction (formalize round {round_ + 1}): {c}" for c in tests.contradictions]
                continue
            notes += [f"example left out, it contradicts the contract: {c}" for c in tests.contradictions]
            return dataclasses.replace(spec, examples=spec.examples + tests.examples), compiled
        return "the formalize budget ran out: " + "; ".join(feedback)[:800]

    def implemented(self, spec: SpecFile, compiled: CompiledPolicy, demos: list[dict[str, Any]],
                    notes: list[str]) -> tuple[SynthResult | None, str]:
        feedback: list[str] = []
        last: SynthResult | None = None
        for round_ in range(self.budget.rounds):
            if self.over_budget():
                return last, "the token budget ran out"
            self.progress(f"implement (round {round_ + 1}/{self.budget.rounds})")
            impl = implement.implement(self.provider, compiled, feedback=feedback, demos=demos, round=round_)
            if impl.violations:
                feedback = ["code rejected before running, outside the allowed subset: " + str(v)
                            for v in impl.violations[:8]]
                notes.append(f"implement round {round_ + 1}: rejected by the allowlist ({len(impl.violations)} "
                             f"violations, first: {impl.violations[0]})")
                continue
            result = synthesize(spec, self.worker, impl.source, workdir=self.workdir / f"round{round_}",
                                progress=lambda m: self.progress("  " + m), cache=self.cache)
            result.transcript = None
            last = result
            if result.ok:
                return result, ""
            feedback = gate_feedback(result) or ["a gate failed: " + "; ".join(never_proved(result))]
            notes.append(f"implement round {round_ + 1}: " + "; ".join(never_proved(result))[:300])
        return last, f"{self.budget.rounds} implementation rounds did not prove the policy"


def _spec_problem(spec: SpecFile) -> SpecError | None:
    from veriguard.synth.pipeline import spec_problems

    assert spec.contract is not None
    return spec_problems(check_contract(spec.contract, bound=spec.settings.z3_bound), spec)


def run(spec: SpecFile, provider: Provider, worker: NaginiWorker, store: TranscriptStore, *, out_dir: Path,
        workdir: Path, memory: DemonstrationMemory | None = None, autonomous: bool = False,
        answers: Path | None = None, questions_file: Path | None = None, budget: Budget = Budget(),
        progress: Progress = lambda _m: None, mode: str = "", replay_started: str | None = None,
        fixed_signature: bool = False, signer: Callable[[bytes], bytes] | None = None,
        cache: ProofCache | None = None) -> Outcome:
    """One LLM synthesis of `spec`, ending in a build (proved or not) or a reason it stopped. With a proof `cache`
    (verify.proof_cache), a source the verifier already answered for is not proved again (a replay, a model that
    repeats itself)."""
    memory = memory or DemonstrationMemory(enabled=False)
    routed: Provider = provider if provider.name == "replay" else Router(provider, MemoryStage(memory))
    loop = _Loop(spec, routed, worker, store, budget, progress, workdir, cache)
    loop.sid = store.begin(spec_name=spec.name, spec_sha256=spec.sha256, provider=provider.name, model=provider.model,
                           mode=mode or ("autonomous" if autonomous else "interactive"))
    loop.provider = RecordingProvider(routed, store, loop.sid)
    notes: list[str] = []
    outcome = _run(loop, spec, memory, autonomous=autonomous, answers=answers, questions_file=questions_file,
                   notes=notes, out_dir=out_dir, replay_started=replay_started, fixed=fixed_signature, signer=signer)
    store.finish(loop.sid, status=outcome.status, certificate_path=str(outcome.build) if outcome.build else None)
    outcome.synthesis_id, outcome.notes = loop.sid, notes
    return outcome


def _run(loop: _Loop, spec: SpecFile, memory: DemonstrationMemory, *, autonomous: bool, answers: Path | None,
         questions_file: Path | None, notes: list[str], out_dir: Path, replay_started: str | None,
         fixed: bool, signer: Callable[[bytes], bytes] | None) -> Outcome:
    try:
        recalled = loop.provider.complete(CompletionRequest("memory", "", f"{spec.request}\n---\n"
                                                            f"{json.dumps(spec.agent, sort_keys=True)}", MEMORY_SCHEMA))
        demos = list(recalled.data.get("demonstrations", []))
        if answers is not None:
            assumptions = clarify.read_answers(answers, spec)
        else:
            loop.progress("clarify: asking the model what is ambiguous")
            questions = clarify.ask(loop.provider, spec, demos)
            if questions and not autonomous:
                path = questions_file or Path(spec.path).with_suffix(".answers.toml")
                clarify.write_questions(path, spec, questions)
                return Outcome("needs_answers", 4, f"{len(questions)} questions for the engineer in {path}: answer "
                               f"them, set approved = true, then run `veriguard synth {spec.path} --llm --answers "
                               f"{path}`", questions_file=path)
            assumptions = clarify.assumptions(questions)
        got = loop.formalized(assumptions, demos, notes, fixed=fixed)
        if isinstance(got, str):
            return Outcome("budget", 1, got, never_proved=["no contract was formalized"])
        formal, compiled = got
        result, why = loop.implemented(formal, compiled, demos, notes)
    except SpecError as e:
        return Outcome("bad_input", 2, str(e))
    except ProviderError as e:
        status = "refused" if e.code == "provider.refusal" else "provider"
        code = 1 if e.code in ("provider.refusal", "provider.malformed", "provider.empty") else 3
        return Outcome(status, code, f"{e.code}: {e.message}")
    if result is None:
        return Outcome("budget", 1, why, never_proved=never_proved(None))
    exported = loop.store.export(loop.sid)
    exchanges = exported["exchanges"]
    result.assumptions = assumptions
    result.transcript = {"hash": transcript_hash(exported), "exchanges": len(exchanges),
                         "input_tokens": sum(x["input_tokens"] or 0 for x in exchanges),
                         "output_tokens": sum(x["output_tokens"] or 0 for x in exchanges),
                         "models": sorted({x["model"] for x in exchanges if x["model"] and x["stage"] != "memory"})}
    started = replay_started or exported["synthesis"]["started_at"]
    run_info = {"seconds": round(result.seconds, 3), "synthesis_id": loop.sid, "notes": notes,
                "gate_seconds": {g.name: round(g.seconds, 3) for g in result.gates}}
    build, cert = write_build(result, out_dir, run_info=run_info, synthesized_at=started, path="llm",
                              signer=signer)
    if result.ok:
        memory.add(spec_name=spec.name, request=spec.request, agent=json.dumps(spec.agent, sort_keys=True),
                   contract=(result.spec.rules_text + "\n" + result.spec.properties_text).strip(),
                   policy=result.verified_source, clarifications=clarify.answers_text(assumptions),
                   synthesis_id=loop.sid)
        return Outcome("proved", 0, "every gate passed", result, build, cert)
    return Outcome("budget" if why else "failed", 1, why or "a gate failed", result, build, cert,
                   never_proved=never_proved(result))


@dataclass
class Comparison:
    """`synth --compare`: the model's formalization of the request against the spec's formal rules."""
    spec: str
    synthesis_id: str
    bound: int
    not_formalized: str = ""                 # why the model's contract did not formalize
    differences: list[Any] | None = None     # z3's disagreements; None when z3 could not decide

    @property
    def decide_alike(self) -> bool:
        return not self.not_formalized and self.differences == []

    def to_dict(self) -> dict[str, Any]:
        return {"spec": self.spec, "synthesis_id": self.synthesis_id, "decide_alike": self.decide_alike,
                "bound": self.bound, "undecided": not self.not_formalized and self.differences is None,
                "not_formalized": self.not_formalized or None,
                "differences": [{"args": d.args, "formal": d.formal, "synthesized": d.other}
                                for d in (self.differences or [])]}


def compare(spec: SpecFile, provider: Provider, worker: NaginiWorker, store: TranscriptStore, *, workdir: Path,
            budget: Budget = Budget(), progress: Progress = lambda _m: None) -> Comparison:
    """Formalize `spec`'s request with the model (its signature fixed) and ask z3 whether the model's
    contract decides like the spec's formal rules."""
    from veriguard.synth.compare import differences

    contract = spec.contract
    if contract is None:
        raise SpecError("synth.compare", "the spec has no [contract] rules to compare with", file=spec.path,
                        fix="add the formal rules, or synthesize without --compare")
    loop = _Loop(spec, provider, worker, store, budget, progress, workdir)
    loop.sid = store.begin(spec_name=spec.name, spec_sha256=spec.sha256, provider=provider.name, model=provider.model,
                           mode="compare")
    loop.provider = RecordingProvider(provider, store, loop.sid)
    questions = clarify.ask(loop.provider, spec, [])
    got = loop.formalized(clarify.assumptions(questions), [], [], fixed=True)
    store.finish(loop.sid, status="compared" if not isinstance(got, str) else "failed")
    result = Comparison(spec.name, loop.sid, spec.settings.z3_bound)
    if isinstance(got, str):
        result.not_formalized = got
    elif got[0].contract is None:
        result.not_formalized = "the model's draft has no contract"
    else:
        result.differences = differences(contract, got[0].contract, bound=spec.settings.z3_bound)
    return result
