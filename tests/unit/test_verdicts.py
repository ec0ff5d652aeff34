"""One verdict vocabulary from a proof obligation to the certificate: its precedence, the gates' verdicts
(from a real run of the gates, with a stand-in for Nagini so no JVM starts), and the certificate's status."""
import dataclasses
import itertools
import re
from pathlib import Path

import pytest

from veriguard.enforce.loader import PolicyLoadError, load_policy
from veriguard.synth.compile import compile_policy
from veriguard.synth.freeze import property_verdict, write_build
from veriguard.synth.pipeline import synthesize
from veriguard.synth.specfile import load_spec
from tests.conftest import MINIMAL, write_spec
from tests.unit.test_compile_and_freeze import fake_result
from veriguard.verify import verdicts
from veriguard.verify.report import render
from veriguard.verify.verdicts import Diagnostic, ProofResult, Verdict, holds, worst
from veriguard.verify.z3check import check_contract

FAST = MINIMAL + "\n[verify]\nhypothesis_examples = 40\nmutants_per_nagini = 1\n"


class FakeWorker:
    """Stands in for the Nagini worker: answers every file with `reply`, and records the files."""

    def __init__(self, reply):
        self.reply, self.files = reply, []

    def verify_file(self, path, *, timeout=60, counterexample=True, wall_limit=None, select=()):
        self.files.append(Path(path).name)
        return dict(self.reply)


def test_the_precedence_is_the_documented_one():
    documented = re.findall(r"^  ([A-Z_]+) ", verdicts.__doc__, flags=re.M)
    assert documented == [v.value for v in sorted(Verdict, key=lambda v: -verdicts._SEVERITY.index(v))]
    assert documented == ["REFUTED", "ERROR", "TIMEOUT", "UNKNOWN", "NOT_CHECKED", "PASSED", "PROVED"]
    for a, b in itertools.combinations(Verdict, 2):
        more = a if documented.index(a.value) < documented.index(b.value) else b
        assert worst([a, b]) is worst([b, a]) is more


def test_nothing_checked_is_never_proved():
    assert worst([]) is Verdict.NOT_CHECKED
    assert [v for v in Verdict if holds(v)] == [Verdict.PROVED, Verdict.PASSED]


@pytest.mark.parametrize("verdict", list(Verdict), ids=lambda v: v.value)
def test_the_certificate_status_is_the_worst_gate(verdict, tmp_path):
    spec = load_spec(write_spec(tmp_path))
    result = fake_result(spec)
    # the last certified gate takes the verdict (a gate synthesis never records is refused at load: test_audit_redteam6)
    result.gates = result.gates[:-1] + [dataclasses.replace(result.gates[-1], verdict=verdict)]
    build, cert = write_build(result, tmp_path / "out", run_info={})
    assert cert["fully_proved"] is holds(verdict) and cert["status"] == ("PROVED" if holds(verdict) else "FAILED")
    assert [g["verdict"] for g in cert["gates"]] == ["PROVED", "PROVED", "PASSED", "PASSED", verdict.value]
    headline = render(cert, {}).splitlines()[0]
    if holds(verdict):
        assert headline == "# Policy `mini`: PROVED" and load_policy(build).trusted
    else:
        assert headline == f"# Policy `mini`: FAILED ({verdict.value})"
        with pytest.raises(PolicyLoadError) as e:
            load_policy(build)
        assert e.value.code == "load.unproved"


def test_without_a_proof_nothing_is_certified(tmp_path):
    result = fake_result(load_spec(write_spec(tmp_path)))
    result.proof = None
    _, cert = write_build(result, tmp_path / "out", run_info={})
    assert cert["status"] == "FAILED" and {p["nagini"] for p in cert["properties"]} == {"NOT_CHECKED"}


def lemma(prop, confirmed):
    return Diagnostic("postcondition.violated", "m", function=f"property_{prop}", confirmed=confirmed)


@pytest.mark.parametrize("proof, expected", [
    (None, Verdict.NOT_CHECKED),
    (ProofResult(Verdict.TIMEOUT, detail="Silicon timed out"), Verdict.TIMEOUT),
    (ProofResult(Verdict.ERROR, detail="verifier crashed"), Verdict.ERROR),
    (ProofResult(Verdict.REFUTED, (lemma("minors", True),)), Verdict.REFUTED),
    (ProofResult(Verdict.UNKNOWN, (lemma("minors", False),)), Verdict.UNKNOWN),
    (ProofResult(Verdict.UNKNOWN, (lemma("minors", None),)), Verdict.UNKNOWN),   # a model nobody replayed
    (ProofResult(Verdict.REFUTED, (Diagnostic("c", "m", function="decide", confirmed=True),)), Verdict.UNKNOWN),
    (ProofResult(Verdict.UNKNOWN), Verdict.UNKNOWN),
    (ProofResult(Verdict.REFUTED, (lemma("other", True),)), Verdict.PROVED),   # another property's lemma
    (ProofResult(Verdict.PROVED), Verdict.PROVED),
])
def test_a_property_is_proved_only_when_its_lemma_and_the_contract_are(proof, expected):
    verdict, why = property_verdict(proof, "minors")
    assert verdict is expected and (why == "") == (expected is Verdict.PROVED)


def test_z3_findings_are_verdicts(tmp_path):
    body = MINIMAL.replace('property minors "Minors are denied": age < 18 ==> not allowed',
                           'property minors "Minors are denied": age < 18 ==> not allowed\n'
                           'property adults "Adults are allowed": age >= 18 ==> allowed')
    report = check_contract(load_spec(write_spec(tmp_path, body)).contract)
    by = {(f.check, f.subject): f for f in report.findings}
    assert by[("property", "minors")].verdict is Verdict.PROVED and by[("property", "minors")].witness is None
    refuted = by[("property", "adults")]
    assert refuted.verdict is Verdict.REFUTED and refuted.witness["age"] >= 18 and "confirmed" in refuted.message
    assert refuted.to_dict()["verdict"] == "REFUTED" and "ok" not in refuted.to_dict()
    assert {f.verdict for f in report.findings if f.check != "property"} == {Verdict.PROVED}
    assert report.failed() == [refuted]


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory):
    """The MINIMAL spec through every gate, Nagini answering PROVED for every file."""
    tmp = tmp_path_factory.mktemp("s")
    spec = load_spec(write_spec(tmp, FAST))
    worker = FakeWorker({"status": "proved", "seconds": 0.5})
    result = synthesize(spec, worker, compile_policy(spec).source, workdir=tmp / "work", mutant_limit=8)
    return result, worker


def test_every_gate_has_a_verdict_and_its_own_time(synthesized):
    result, _ = synthesized
    gates = {g.name: g for g in result.gates}
    assert list(gates) == ["contract (z3)", "proof (Nagini)", "examples", "properties (Hypothesis)", "mutation"]
    assert {n: g.verdict for n, g in gates.items()} == {
        "contract (z3)": Verdict.PROVED, "proof (Nagini)": Verdict.PROVED, "examples": Verdict.PASSED,
        "properties (Hypothesis)": Verdict.PASSED, "mutation": Verdict.PASSED}
    assert result.ok and result.verdict is Verdict.PASSED
    assert gates["properties (Hypothesis)"].seconds > 0, "the Hypothesis gate's own time, not 0"
    assert gates["examples"].seconds > 0 and gates["mutation"].seconds > 0
    assert not [g.name for g in result.gates if isinstance(g.to_dict().get("passed"), bool)], "no bool verdicts"
    assert gates["properties (Hypothesis)"].details["examples_run"] > 0


def test_mutants_are_killed_through_the_frozen_module(synthesized):
    result, worker = synthesized
    rows = result.mutation["mutants"]
    assert rows and all(r["killed_by"] for r in rows if "note" not in r)
    assert sum(1 for r in rows if (r["killed_by"] or "").startswith("tests")) == result.mutation["by_tests"] > 0
    assert [m["id"] for m in result.tests.mutants] == [r["id"] for r in rows]
    assert worker.files[0] == "policy_mini.py"


def test_a_gate_that_did_not_run_is_not_checked_and_not_certified(tmp_path):
    body = FAST.replace("hypothesis_examples = 40", "hypothesis_examples = 0")
    spec = load_spec(write_spec(tmp_path, body))
    result = synthesize(spec, FakeWorker({"status": "proved"}), compile_policy(spec).source, workdir=tmp_path / "w",
                        mutant_limit=0)
    gates = {g.name: g for g in result.gates}
    assert gates["mutation"].verdict is Verdict.NOT_CHECKED and gates["properties (Hypothesis)"].verdict \
        is Verdict.NOT_CHECKED
    assert result.proof.verdict is Verdict.PROVED and not result.ok and result.verdict is Verdict.NOT_CHECKED
    _, cert = write_build(result, tmp_path / "out", run_info={})
    assert cert["status"] == "FAILED" and not cert["fully_proved"]


def model_of(age):
    """A worker reply as Nagini gives it for the clause `rule adult` with the model age=`age`."""
    return {"status": "failed", "seconds": 1.0, "errors": [{
        "code": "postcondition.violated:assertion.false", "message": "Postcondition of decide might not hold.",
        "function": "decide", "line": 9, "source": "Ensures(ResultT(Decision).allowed == ...)  # rule adult",
        "counterexample": {"inputs": {"role": "'admin'", "age": age, "items": "?0"},
                           "heap": {"?0": {"len(?0)": 0}}, "old_heap": {}}}]}


@pytest.mark.parametrize("bug, age, expected", [
    (None, 17, Verdict.UNKNOWN),              # the model does not reproduce on the (correct) policy
    (("return (age >= 18)", "return (age > 18)"), 18, Verdict.REFUTED),  # it does on the broken one
])
def test_a_nagini_model_is_replayed_on_the_frozen_module(tmp_path, bug, age, expected):
    body = FAST.replace("hypothesis_examples = 40", "hypothesis_examples = 0")
    spec = load_spec(write_spec(tmp_path, body))
    source = compile_policy(spec).source
    if bug:
        assert source.count(bug[0]) == 1
        source = source.replace(*bug)
    result = synthesize(spec, FakeWorker(model_of(age)), source, workdir=tmp_path / "w", mutant_limit=0)
    assert result.proof.verdict is expected, result.proof
    d = result.proof.diagnostics[0]
    assert d.confirmed is (expected is Verdict.REFUTED) and d.clause == "rule adult"
    if expected is Verdict.REFUTED:
        assert d.counterexample["age"] == 18 and "Replayed on the policy" in d.message
    else:
        assert "incompleteness" in result.proof.detail
