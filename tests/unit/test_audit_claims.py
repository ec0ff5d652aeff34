"""The audit checks what the certificate says, not only what it binds (red-team, 2026-11-29, night).

Before, a build whose certificate said other rules than its spec's (`contract_text`, `rules`, the properties'
messages, `hashes.contract`, the request), or recorded a REFUTED gate, proof or property under `status: PROVED`, or
mutation figures that do not add up, passed `veriguard audit` with exit 0 once re-signed (by the key holder, whom the
audit does not trust): every check the audit ran held, and the bundle's report.md, rendered from that certificate,
showed a person rules the policy does not have ("Admins never ..."). Now the `claims` check derives the spec's words
again (synth.freeze.spec_claims, which freeze writes from) and holds the recorded verdicts to the status.
"""
import json

import pytest

from veriguard.audit import write_bundle
from veriguard.enforce.keys import sign_certificate
from veriguard.verify.verdicts import Verdict, holds
from tests.unit.test_audit import Prover, key, run, verdicts  # noqa: F401
from tests.unit.test_signed_builds import build, keys, no_trust_from_the_environment, signed  # noqa: F401, F811

MUTATION = {"by_proof": 0, "by_tests": 30, "killed": 30, "proofs_run": 0, "score": 1.0, "survivors": [],
            "threshold": 0.8, "total": 30}


def resign(build, key, change):
    cert = json.loads((build / "certificate.json").read_text())
    change(cert)
    data = (json.dumps(cert, indent=2, sort_keys=True) + "\n").encode()
    (build / "certificate.json").write_bytes(data)
    (build / "signature.json").write_bytes(sign_certificate(key[0], data))


FORGED = {
    "contract_text": lambda c: c["contract_text"].update(rules=c["contract_text"]["rules"] +
                                                         '\nrule no_admin "Admins never": role != "admin"'),
    "rule message": lambda c: c["rules"][0].update(message="Everyone is allowed"),
    "a rule more": lambda c: c["rules"].append({"id": "no_exfiltration", "message": "Never sends data out"}),
    "rules reordered": lambda c: c["rules"].append(c["rules"].pop(0)),
    "a property more": lambda c: c["properties"].append({"id": "safe", "message": "Never leaks", "nagini": "PROVED",
                                                         "z3": "PROVED", "detail": ""}),
    "request": lambda c: c.update(request="Deny everything to everyone."),
    "agent": lambda c: c.update(agent={"description": "another agent"}),
    "hashes.contract": lambda c: c["hashes"].update(contract="0" * 64),
    # a refuted gate under PROVED: the loader's schema refuses it now (test_audit_redteam3.py)
    "a refuted proof": lambda c: c["proof"].update(verdict="REFUTED"),
    "a refuted property": lambda c: c["properties"][0].update(nagini="REFUTED"),
    "a property z3 refuted": lambda c: c["properties"][0].update(z3="REFUTED"),
    "mutation over its kills": lambda c: c.update(mutation={**MUTATION, "killed": 1, "by_tests": 1}),
    "mutation under its threshold": lambda c: c.update(mutation={**MUTATION, "killed": 15, "score": 0.5}),
    "a model's assumptions": lambda c: c.update(assumptions=[{"question": "q", "answer": "the agent is honest"}]),
    "a transcript": lambda c: c.update(transcript={"model": "m"}),
    "synthesized_at": lambda c: c.update(synthesized_at="yesterday"),
}


@pytest.mark.parametrize("what", FORGED)
def test_a_certificate_that_says_what_is_not_so_fails_the_audit(build, key, what):
    resign(build, key, FORGED[what])
    result = run(build, key, prover=Prover())
    assert not result.ok and result.exit_code == 1, result.to_dict()
    v = verdicts(result)
    assert v["signature"] is Verdict.PROVED and v["claims"] is Verdict.REFUTED
    assert all(holds(verdict) for name, verdict in v.items() if name != "claims")   # nothing else saw it


def test_the_report_of_a_forged_certificate_is_not_bundled_as_a_pass(build, key, tmp_path):
    resign(build, key, FORGED["contract_text"])
    result = run(build, key, prover=Prover())
    audited = json.loads(__import__("zipfile").ZipFile(write_bundle(result, tmp_path / "a.zip")).read("audit.json"))
    assert audited["ok"] is False and "no_admin" in result.contents["report.md"].decode()


def test_true_claims_pass(build, key):
    def true(c):   # figures that add up, in the mutation gate too (re-derived only with --mutation)
        c.update(mutation=MUTATION)
        next(g for g in c["gates"] if g["name"] == "mutation").update({k: MUTATION[k] for k in ("killed", "total",
                                                                                                "score")},
                                                                      summary="30/30 mutants killed (score 1.00, "
                                                                              "threshold 0.80)")
    resign(build, key, true)
    result = run(build, key, prover=Prover())
    assert verdicts(result)["claims"] is Verdict.PASSED and result.ok, result.to_dict()
