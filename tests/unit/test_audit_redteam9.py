"""The ninth red-team pass on builds and the audit (helper C28, 2026-11-30): what a re-signed certificate says that
the audit did not derive again. Each forgery below passed `audit_build` on b0ab452 (every check PROVED or PASSED);
the key holder is not trusted by the audit.

1. z3's findings. The audit re-ran z3's contract checks but kept only the verdict: the certificate's record of them
   (each finding's subject, message, witness and place, and how many; report.md shows them) was never compared. The
   `contract (z3)` check now holds the certificate's findings and bound to the ones z3 gives here.
2. Tool versions were any strings: `"python": "3.12.1 (reviewed by NSA)"` passed both the tools check (which compares
   major.minor) and the claims; so did a Java or Hypothesis version that is a sentence, an empty one and a certificate
   without most tools. Each recorded version must now be written as the tool gives it, and every tool synth records
   must be there.
3. A cached proof or gate that took 1e308 s, 10**30 s, -0.0 s or 1e-320 s passed: a duration is now what the cache
   stores (seconds rounded to the millisecond, a float) and no longer than the run could take (a proof is killed at
   the spec's timeout plus the worker's grace, twice at most; a gate's run, one day).
4. Mutation figures: `by_tests` and `by_proof` swapped with the same total passed (30 kills by a proof where the spec
   lets Nagini see 3 mutants), and so did a negative `by_tests` that still added up, or `proofs_run` 999. The figures
   must now send Nagini the mutants synth sends it.
"""
import json

import pytest

from veriguard.audit import certificate_claims
from veriguard.enforce.keys import sign_certificate
from veriguard.synth.specfile import load_spec
from veriguard.verify.proof import cache_note
from veriguard.verify.verdicts import Verdict
from tests.unit.test_audit import Prover, key, run, verdicts  # noqa: F401
from tests.unit.test_audit_claims import resign
from tests.unit.test_signed_builds import build, keys, no_trust_from_the_environment, signed  # noqa: F401, F811


def gate(cert, name):
    return next(g for g in cert["gates"] if g["name"] == name)


def certificate(build):
    return json.loads((build / "certificate.json").read_text())


def claims(build):
    """The audit's claims check on the build's certificate and spec (the whole audit runs in the tests at the end)."""
    return certificate_claims(load_spec(build / "spec" / "mini.toml"), certificate(build))


def z3_findings(change):
    def forge(cert):
        change(gate(cert, "contract (z3)"))
    return forge


def recount(g):
    n = len(g["findings"])
    g["summary"] = f"{n}/{n} checks proved (lists up to {g['bound']} items)"


Z3_FORGED = {
    "every finding removed, the summary to match": lambda g: (g.update(findings=[]), recount(g)),
    "a finding's message rewritten": lambda g: g["findings"][1].update(message="rule adult was reviewed by the CISO"),
    "a witness added to a finding": lambda g: g["findings"][0].update(witness={"age": 17, "role": "admin", "items": []}),
    "a finding listed twice, the summary to match": lambda g: (g["findings"].append(dict(g["findings"][0])),
                                                                recount(g)),
    "a finding's subject renamed": lambda g: g["findings"][1].update(subject="reviewed"),
    "a finding moved to another line": lambda g: g["findings"][1].update(line=1),
    "the findings in another order": lambda g: g["findings"].reverse(),
}


@pytest.mark.parametrize("change", Z3_FORGED.values(), ids=Z3_FORGED.keys())
def test_z3_findings_the_certificate_records_are_the_ones_z3_gives(build, key, change):
    resign(build, key, z3_findings(change))
    result = run(build, key)
    v = verdicts(result)
    assert v["contract (z3)"] is Verdict.REFUTED and not result.ok, result.checks[9].summary
    assert v["claims"] is Verdict.PASSED   # the summary agrees with the figures beside it: only z3 again sees it


def tools(**versions):
    return lambda c: c["tools"].update(versions)


TOOLS_FORGED = {
    "python with a sentence": tools(python="3.12.1 (reviewed by NSA)"),
    "python without its patch level": tools(python="3.12"),
    "hypothesis with a sentence": tools(hypothesis="6.0 -- formally verified"),
    "an empty lark": tools(lark=""),
    "java with a sentence": tools(java="17; Coq 8.18 also ran"),
    "veriguard with a line break": tools(veriguard="0.1.0\nPROVED by hand"),
    "nagini with a trailing space": tools(nagini="1.3.1 "),
    "most tools left out": lambda c: c.update(tools={k: c["tools"][k] for k in ("nagini", "z3-solver", "python")}),
}


@pytest.mark.parametrize("forge", TOOLS_FORGED.values(), ids=TOOLS_FORGED.keys())
def test_tool_versions_are_written_as_the_tools_give_them(build, key, forge):
    resign(build, key, forge)
    verdict, summary = claims(build)
    assert verdict is Verdict.REFUTED, summary


def cached_proof(seconds):
    def forge(cert):
        entry = {"hit": "file", "key": "ab" * 32, "seconds_then": seconds, "stored_at": "2026-11-30T10:34:12+00:00"}
        cert["proof"].update(cache=entry, detail=cache_note(entry))
        gate(cert, "proof (Nagini)").update(cache=entry, summary=f"PROVED (cached): {cache_note(entry)}")
    return forge


def cached_examples(seconds):
    def forge(cert):
        g = gate(cert, "examples")
        g.update(cache={"hit": "tests", "key": "cd" * 32, "seconds_then": seconds, "stored_at": cert["synthesized_at"]},
                 summary="PASSED (cached): " + g["summary"])
    return forge


DURATIONS = {"1e308 s": 1e308, "the largest float": 1.7976931348623157e308, "10**30 s (an integer)": 10 ** 30,
             "-0.0 s": -0.0, "1e-320 s": 1e-320, "a day and more for one proof": 86_401.0,
             "an integer number of seconds": 7, "more than the proof's timeout allows": 2 * (120 + 20) + 0.001}


@pytest.mark.parametrize("seconds", DURATIONS.values(), ids=DURATIONS.keys())
def test_a_cached_proofs_duration_is_one_the_cache_records(build, key, seconds):
    resign(build, key, cached_proof(seconds))
    verdict, summary = claims(build)
    assert verdict is Verdict.REFUTED, summary


@pytest.mark.parametrize("seconds", [1e308, 86_400.5], ids=["1e308 s", "more than a day"])
def test_a_cached_gates_duration_is_one_the_cache_records(build, key, seconds):
    resign(build, key, cached_examples(seconds))
    assert claims(build)[0] is Verdict.REFUTED


@pytest.mark.parametrize("seconds", [0.0, 7.263, 280.0], ids=["0 s", "7.263 s", "the longest a proof may take"])
def test_durations_synth_records_pass(build, key, seconds):
    """Controls: a proof answered from the cache as synth records it (280 s: two runs of 120 + 20 s)."""
    resign(build, key, cached_proof(seconds))
    assert claims(build) == (Verdict.PASSED, claims(build)[1])


def test_a_gates_cached_day_long_run_passes(build, key):
    resign(build, key, cached_examples(86_400.0))
    assert claims(build)[0] is Verdict.PASSED, claims(build)[1]


PROVED_TOO = {"id": 7, "operator": "flip", "line": 3, "change": "x", "killed_by": None,
              "note": "Nagini proves this mutant too: it is equivalent to the policy under the contract"}
BUDGET_SPENT = {**PROVED_TOO, "id": 8, "note": "not proof-checked (Nagini budget for mutants spent)"}


def mutation(**figures):
    def forge(cert):
        m = {"by_proof": 0, "by_tests": 30, "killed": 30, "proofs_run": 0, "score": 1.0, "survivors": [],
             "threshold": 0.8, "total": 30, "limit": 30, **figures}
        cert["mutation"] = m
        gate(cert, "mutation").update(killed=m["killed"], total=m["total"], score=m["score"],
                                      summary=f"{m['killed']}/{m['total']} mutants killed (score "
                                              f"{m['killed'] / m['total']:.2f}, threshold 0.80)")
    return forge


MUTATION_FORGED = {
    "by_tests and by_proof swapped": mutation(by_tests=0, by_proof=30),
    "by_tests and by_proof swapped, proofs run to match": mutation(by_tests=0, by_proof=30, proofs_run=30),
    "a negative by_tests that adds up": mutation(by_tests=-1, by_proof=31),
    "more proofs run than mutants sent": mutation(proofs_run=999),
    "4 kills by a proof where the spec sends Nagini 3": mutation(by_tests=26, by_proof=4),
    "a survivor never sent to Nagini though the budget lasted": mutation(
        killed=29, by_tests=29, score=0.9667, survivors=[BUDGET_SPENT]),
    "a survivor that says it was killed": mutation(killed=29, by_tests=29, score=0.9667,
                                                    survivors=[{**PROVED_TOO, "killed_by": "tests (x)"}]),
}


@pytest.mark.parametrize("forge", MUTATION_FORGED.values(), ids=MUTATION_FORGED.keys())
def test_mutation_figures_send_nagini_what_synth_sends_it(build, key, forge):
    resign(build, key, forge)
    verdict, summary = claims(build)
    assert verdict is Verdict.REFUTED, summary


MUTATION_TRUE = {
    "every mutant killed by the tests": mutation(),
    "2 by the tests' survivors killed by a proof, 1 proved equivalent": mutation(
        killed=29, by_tests=27, by_proof=2, proofs_run=3, score=0.9667, survivors=[PROVED_TOO]),
    "the budget spent: 3 sent, 2 more survive unproved": mutation(
        killed=28, by_tests=25, by_proof=3, proofs_run=3, score=0.9333,
        survivors=[BUDGET_SPENT, {**BUDGET_SPENT, "id": 9}]),
    "the proofs answered from the cache": mutation(killed=30, by_tests=28, by_proof=2, proofs_run=0),
}


@pytest.mark.parametrize("forge", MUTATION_TRUE.values(), ids=MUTATION_TRUE.keys())
def test_mutation_figures_synth_writes_pass(build, key, forge):
    resign(build, key, forge)
    assert claims(build)[0] is Verdict.PASSED, claims(build)[1]


def test_a_clean_build_passes_the_whole_audit(build, key):
    result = run(build, key)
    v = verdicts(result)
    assert v["contract (z3)"] is Verdict.PROVED and v["claims"] is Verdict.PASSED and result.ok, result.to_dict()


@pytest.mark.parametrize("forge", [TOOLS_FORGED["python with a sentence"], cached_proof(1e308),
                                   MUTATION_FORGED["by_tests and by_proof swapped"]], ids=["tools", "cache", "mutation"])
def test_the_whole_audit_fails_on_each_class(build, key, forge):
    resign(build, key, forge)
    result = run(build, key)
    assert verdicts(result)["claims"] is Verdict.REFUTED and not result.ok and result.exit_code == 1


def test_the_cli_refutes_a_forged_z3_record_with_exit_1(build, key, capsys, monkeypatch):
    import veriguard.audit as audit
    from veriguard.cli import main

    monkeypatch.setattr(audit, "prove_fresh", Prover())
    resign(build, key, z3_findings(lambda g: (g.update(findings=[]), recount(g))))
    cert = json.loads((build / "certificate.json").read_text())
    assert (build / "signature.json").read_bytes() == sign_certificate(key[0], (build / "certificate.json").read_bytes())
    assert gate(cert, "contract (z3)")["findings"] == []
    code = main(["audit", str(build), "--public-key", str(key[1]), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and not out["ok"], out
    z3 = next(c for c in out["checks"] if c["name"] == "contract (z3)")
    assert z3["verdict"] == "REFUTED" and "other findings" in z3["summary"]


# --- the survivors a certificate lists are mutants synth made ---------------------------------------------------
def made_mutant(build):
    from veriguard.synth.pipeline import cached_mutants
    from veriguard.verify.runnable import contract_functions

    spec = load_spec(build / "spec" / "mini.toml")
    verified = (build / "policy_verified.py").read_text()
    m, _ = cached_mutants(verified, contract_functions(spec.contract), 1, None)[0]
    return spec, verified, {"id": m.id, "operator": m.operator, "line": m.line, "change": m.description,
                            "killed_by": None, "note": PROVED_TOO["note"]}


@pytest.mark.parametrize("stray", [{"id": 99}, {"line": 0}, {"change": "reviewed: equivalent"}, {"operator": "none"}],
                         ids=["another id", "another line", "another change", "another operator"])
def test_a_survivor_that_is_no_mutant_synth_made_is_refuted_by_the_count(build, stray):
    from veriguard.audit import mutation_count

    spec, verified, row = made_mutant(build)
    verdict, summary = mutation_count(spec, verified, {"total": 1, "limit": 1, "survivors": [{**row, **stray}]})
    assert verdict is Verdict.REFUTED and "survivors" in summary, summary


def test_a_survivor_synth_made_passes_the_count(build):
    from veriguard.audit import mutation_count

    spec, verified, row = made_mutant(build)
    assert mutation_count(spec, verified, {"total": 1, "limit": 1, "survivors": [row]})[0] is Verdict.PASSED


def test_z3_findings_compare_as_the_certificate_writes_them():
    """z3_as_recorded compares z3's findings here (tuples in a witness, as the model gives them) with the
    certificate's JSON through _canonical alone (review mend: no JSON round trip first): the same findings hold,
    and a changed witness is the finding it names."""
    from veriguard.audit import z3_as_recorded
    from veriguard.synth.pipeline import Gate

    findings = [{"check": "property", "subject": "p", "verdict": "PROVED", "message": "holds", "line": 3, "col": 1,
                 "witness": {"pair": (1, "a"), "rows": [(2, True)], "rec": {"b": 1, "a": (None,)}}},
                {"check": "can_fire", "subject": "r", "verdict": "PROVED", "message": "fires", "line": 4, "col": 1,
                 "witness": None}]
    fresh = Gate("contract (z3)", Verdict.PROVED, "2 of 2 checks hold", 0.1, {"bound": 3, "findings": findings})
    recorded = json.loads(json.dumps({"name": "contract (z3)", "bound": 3, "findings": findings}))
    assert z3_as_recorded(fresh, {"gates": [recorded]}) == (Verdict.PROVED,
                                                             "2 of 2 checks hold, as the certificate records them")
    recorded["findings"][1]["witness"] = {"x": 1}
    assert z3_as_recorded(fresh, {"gates": [recorded]}) == (
        Verdict.REFUTED, "2 of 2 checks hold, but the certificate records other findings (2 where z3 gives 2; the "
                         "first that differs is #2)")
    recorded["bound"] = 4
    assert z3_as_recorded(fresh, {"gates": [recorded]}) == (
        Verdict.REFUTED, "2 of 2 checks hold, but the certificate records another bound and findings")
