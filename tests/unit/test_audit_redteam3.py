"""The third red-team pass on builds (helper C22, 2026-11-29, night): what a certificate must carry, and what the
audit re-derives.

Before, a re-signed certificate whose `gates` list was empty, or lacked the proof, the examples, the Hypothesis
properties or the mutation gate, passed the audit's `claims` check under `status: PROVED` (the check looked only
at the gates listed), and freeze wrote PROVED for a result that recorded one gate ("unit", the test fixture's). Now
a PROVED certificate must carry each gate synthesis records (synth.freeze.CERTIFIED_GATES) once, holding, with the
mutation gate's figures those of `mutation`; freeze writes FAILED for a result without them.
"""
import json

import pytest

from veriguard.contracts.build_format import CERTIFIED_GATES
from veriguard.enforce.loader import PolicyLoadError, load_policy
from veriguard.synth.freeze import write_build
from veriguard.synth.pipeline import PROVED_TOO_NOTE
from veriguard.synth.specfile import load_spec
from veriguard.verify.verdicts import Verdict, holds
from tests.conftest import write_spec
from tests.unit.test_audit import Prover, key, run, verdicts  # noqa: F401
from tests.unit.test_audit_claims import resign
from tests.unit.test_compile_and_freeze import fake_result
from tests.unit.test_signed_builds import build, keys, no_trust_from_the_environment, signed  # noqa: F401, F811


def _drop(name):
    return lambda c: c.update(gates=[g for g in c["gates"] if g["name"] != name])


GATE_FORGERIES = {
    "no gates": lambda c: c.update(gates=[]),
    "gates not a list": lambda c: c.update(gates={}),
    "one made-up gate": lambda c: c.update(gates=[{"name": "unit", "verdict": "PASSED", "summary": "fake"}]),
    **{f"without {name}": _drop(name) for name in CERTIFIED_GATES},
    "the proof gate twice": lambda c: c["gates"].append(dict(next(g for g in c["gates"]
                                                                  if g["name"] == "proof (Nagini)"))),
    "a gate renamed": lambda c: c["gates"][0].update(name=c["gates"][0]["name"].upper()),
    "a refuted gate": lambda c: c["gates"].append({"name": "examples", "verdict": "REFUTED", "summary": "1 failed"}),
    "a verdict with a space": lambda c: c["gates"][1].update(verdict="PROVED "),
    "mutation gate without figures": lambda c: [g.pop(k) for g in c["gates"] if g["name"] == "mutation"
                                                for k in ("killed", "total", "score")],
    "no mutation run": lambda c: c.update(mutation={}),
    "mutation with no mutants": lambda c: c.update(mutation={"score": 0.0, "killed": 0, "total": 0,
                                                             "threshold": 0.0}),
}


GATES_ONLY = {k: v for k, v in GATE_FORGERIES.items() if "mutation" not in k or k.startswith("without")}


@pytest.mark.parametrize("what", GATE_FORGERIES)
def test_a_proved_certificate_must_carry_every_gate_synthesis_records(build, key, what):
    resign(build, key, GATE_FORGERIES[what])
    result = run(build, key, prover=Prover())
    v = verdicts(result)
    assert result.exit_code == 1 and v["signature"] is Verdict.PROVED, result.to_dict()
    if what in GATES_ONLY:   # the loader's schema refuses it: nothing is compiled or run from such a build
        assert v["certificate"] is Verdict.ERROR and "gates" in result.checks[0].summary
    else:                    # the mutation figures: the claims check
        assert v["claims"] is Verdict.REFUTED
        assert all(holds(verdict) for name, verdict in v.items() if name != "claims")


@pytest.mark.parametrize("what", GATES_ONLY)
def test_the_loader_refuses_a_proved_certificate_without_its_gates(build, key, what):
    """The online path: a signed certificate saying PROVED over an empty or partial gates list loaded as proved."""
    resign(build, key, GATE_FORGERIES[what])
    with pytest.raises(PolicyLoadError) as e:
        load_policy(build, trusted_keys={key[0].key_id: key[0].public})
    assert e.value.code == "load.certificate" and "gates" in e.value.message


def test_the_fake_build_carries_every_gate_and_passes(build, key):
    result = run(build, key, prover=Prover())
    assert result.ok, result.to_dict()
    names = [g["name"] for g in json.loads((build / "certificate.json").read_text())["gates"]]
    assert names == list(CERTIFIED_GATES)


@pytest.mark.parametrize("kept", [("proof (Nagini)",), CERTIFIED_GATES[:-1]], ids=["proof", "no mutation"])
def test_freeze_writes_failed_for_a_result_missing_a_gate(tmp_path, kept):
    result = fake_result(load_spec(write_spec(tmp_path)))
    result.gates = [g for g in result.gates if g.name in kept]
    assert result.ok   # every gate it has holds and Nagini proved: only the missing ones are wrong
    _, cert = write_build(result, tmp_path / "out", run_info={})
    assert cert["status"] == "FAILED" and cert["fully_proved"] is False


# `audit --mutation` re-runs the mutation score (before, the figures were only checked to add up: a re-signed
# certificate claiming 30 of 30 killed passed whatever the tests kill). The mini spec's 30 mutants are all killed by
# its tests (so Nagini is never asked: the worker below fails the test if it is made).
# a mutant that survived the tests, sent to Nagini (the spec's budget lets it see 3) and proved equivalent, as synth
# records it (synth.pipeline.mutation_gate)
SURVIVOR = {"id": 3, "killed_by": None, "note": PROVED_TOO_NOTE}
TRUE_MUTATION = {"by_proof": 0, "by_tests": 30, "killed": 30, "proofs_run": 0, "score": 1.0, "survivors": [],
                 "threshold": 0.8, "total": 30, "limit": 30}


def no_worker():
    raise AssertionError("a mutant survived the tests: Nagini was asked")


def with_mutation(figures):
    def change(c):
        c.update(mutation=figures)
        next(g for g in c["gates"] if g["name"] == "mutation").update(
            {k: figures[k] for k in ("killed", "total", "score")},   # and the summary synth writes for them
            summary=f"{figures['killed']}/{figures['total']} mutants killed (score "
                    f"{figures['killed'] / figures['total']:.2f}, threshold {figures['threshold']:.2f})")
    return change


MUTATION_FORGERIES = {
    "more mutants than the policy has": {**TRUE_MUTATION, "killed": 500, "by_tests": 500, "total": 500,
                                         "limit": 500},
    "one kill said to be Nagini's": {**TRUE_MUTATION, "by_tests": 29, "by_proof": 1},
    "a survivor hidden from the tests": {**TRUE_MUTATION, "killed": 29, "by_tests": 29, "score": 0.9667,
                                         "survivors": [SURVIVOR]},
    "a lower threshold": {**TRUE_MUTATION, "threshold": 0.5},
}


@pytest.mark.parametrize("what", MUTATION_FORGERIES)
def test_audit_mutation_refutes_figures_the_mutants_do_not_give(build, key, what):
    resign(build, key, with_mutation(MUTATION_FORGERIES[what]))
    result = run(build, key, prover=Prover(), mutation=True, mutation_worker=no_worker)
    v = verdicts(result)
    assert v["mutation (re-run)"] is Verdict.REFUTED and result.exit_code == 1, result.to_dict()
    # the figures add up: only the re-run sees they are not so (the claims check compares the threshold with the spec's)
    assert v["claims"] is (Verdict.REFUTED if what == "a lower threshold" else Verdict.PASSED)


def test_audit_mutation_passes_the_figures_synth_records(build, key):
    resign(build, key, with_mutation(TRUE_MUTATION))
    messages = []
    result = run(build, key, prover=Prover(), mutation=True, mutation_worker=no_worker, progress=messages.append)
    assert result.ok and verdicts(result)["mutation (re-run)"] is Verdict.PASSED, result.to_dict()
    assert any("30 mutants" in m for m in messages)


def test_a_score_synth_rounded_adds_up(build, key):
    """synth records the score to 4 places: 29 of 30 is 0.9667, which the claims check refuted (|0.9667 - 29/30| is
    3e-5, over its 1e-9), failing a genuine build whose one mutant survived."""
    resign(build, key, with_mutation({**TRUE_MUTATION, "killed": 29, "by_tests": 29, "score": 0.9667,
                                      "survivors": [SURVIVOR]}))
    assert verdicts(run(build, key, prover=Prover()))["claims"] is Verdict.PASSED
