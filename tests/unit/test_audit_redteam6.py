"""The sixth red-team pass on builds, signatures and the audit (helper C25, 2026-11-30).

1. A signature has one spelling: base64 leaves 4 bits of an Ed25519 signature's last character unused, and the
   decoder ignored them, so signature.json with another spelling of the same signature (16 of them) verified: the
   build's bytes changed and it still loaded as verified. The same held for the log's records and heads
   (test_decision_log_redteam5.py).
2. A PROVED certificate's gates are the gates synthesis records, with the keys it writes: a re-signed certificate
   adding `{"name": "security review", "verdict": "PASSED"}`, or a key such as `"reviewed_by"` on a gate, loaded and
   passed `veriguard audit` with exit 0, and the report showed the claim. The loader refuses it (load.certificate),
   and so does the audit's certificate check (exit 1).
"""
import base64
import os
import json

import pytest

from veriguard.cli import main
from veriguard.contracts.build_format import CERTIFIED_GATES, unheld_gates
from veriguard.enforce.keys import load_verify_key, sign_certificate
from veriguard.enforce.loader import load_policy
from veriguard.verify.verdicts import Verdict
from tests.unit.test_audit import Prover, key, run, verdicts  # noqa: F401
from tests.unit.test_audit_claims import resign
from tests.unit.test_signed_builds import build, keys, no_trust_from_the_environment, refused, signed  # noqa: F401, F811

B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def respellings(signature):
    """Every other base64 spelling of the same 64 bytes (the last character's 4 unused bits set otherwise)."""
    body = signature.rstrip("=")
    last = B64.index(body[-1])
    out = [body[:-1] + B64[(last & ~0xF) | low] + signature[len(body):] for low in range(16)]
    assert all(base64.b64decode(s) == base64.b64decode(signature) for s in out)
    return [s for s in out if s != signature]


def test_a_build_signature_spelt_otherwise_is_refused(build, keys, key):
    doc = json.loads((build / "signature.json").read_text())
    spellings = respellings(doc["signature"])
    assert len(spellings) == 15
    for spelt in spellings:
        (build / "signature.json").write_text(json.dumps({**doc, "signature": spelt}))
        refused(build, "load.signature", trusted_keys=[keys["signer"][1]])
        assert verdicts(run(build, key))["signature"] is not Verdict.PROVED
    (build / "signature.json").write_text(json.dumps(doc))
    assert load_policy(build, trusted_keys=[keys["signer"][1]], require_signed=True).signature == "verified"


def test_the_signature_of_a_fresh_build_is_its_one_spelling(build, keys):
    signed_doc = json.loads(sign_certificate(key_of(keys), (build / "certificate.json").read_bytes()))
    assert base64.b64encode(base64.b64decode(signed_doc["signature"])).decode() == signed_doc["signature"]
    verify = load_verify_key(keys["signer"][1])
    assert verify.verify(b"m", key_of(keys).sign(b"m")) and not verify.verify(b"m", respellings(key_of(keys).sign(b"m"))[0])


def key_of(keys):
    from veriguard.enforce.keys import load_signing_key
    return load_signing_key(keys["signer"][0])


FORGED_GATES = {
    "a gate synthesis never runs": lambda c: c["gates"].append({"name": "security review", "summary": "by the CISO",
                                                                "verdict": "PASSED"}),
    "a gate named by a number": lambda c: c["gates"].append({"name": 5, "verdict": "PASSED"}),
    "a key synthesis never writes": lambda c: c["gates"][0].update(reviewed_by="an external auditor"),
    "the mutation gate's figures on the proof gate": lambda c: c["gates"][1].update(killed=30, total=30),
}


@pytest.mark.parametrize("forge", FORGED_GATES.values(), ids=FORGED_GATES.keys())
def test_a_gate_or_a_key_synthesis_does_not_record_is_refused(build, key, keys, forge):
    resign(build, key, forge)
    assert "gates" in refused(build, "load.certificate", trusted_keys=[keys["signer"][1]]).message
    result = run(build, key)
    assert verdicts(result)["certificate"] in (Verdict.REFUTED, Verdict.ERROR) and not result.ok
    assert "gates" in result.checks[0].summary


def test_the_gates_synthesis_records_pass(build, key):
    cert = json.loads((build / "certificate.json").read_text())
    assert [g["name"] for g in cert["gates"]] == list(CERTIFIED_GATES) and unheld_gates(cert["gates"]) == []
    cached = [{**g, "cache": {"hit": "x"}} for g in cert["gates"]]   # any gate may come from the proof cache
    assert unheld_gates(cached) == []
    assert run(build, key).ok


def test_audit_json_says_why_for_a_forged_gate(build, key, keys, capsys, monkeypatch):
    import veriguard.audit as audit
    monkeypatch.setattr(audit, "prove_fresh", Prover())
    resign(build, key, FORGED_GATES["a gate synthesis never runs"])
    assert main(["audit", str(build), "--public-key", str(keys["signer"][1]), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    first = out["checks"][0]
    assert out["ok"] is False and first["name"] == "certificate" and first["verdict"] in ("REFUTED", "ERROR")
    assert "security review" in first["summary"]


# 3. A build file (or spec/) that someone who may not write the build may write: owned by another user than root and
#    the folder's owner (an owner rewrites a file whatever its mode), or writable by a group that may not write the
#    folder. Only hard links and o+w were refused: a policy.py owned by user 12345, or g+w under a folder that is not,
#    loaded, and the audit's files check passed.

def _as(path, uid=None, mode=None):
    if uid is not None:
        os.chown(path, uid, -1)
    if mode is not None:
        os.chmod(path, mode)


@pytest.mark.parametrize("rel", ["policy.py", "certificate.json", "signature.json", "spec/ok.json", "policy.code"])
def test_a_build_file_its_group_may_write_but_not_its_folder_is_refused(build, key, rel):
    _as(build / rel, mode=0o664)
    assert "group" in refused(build, "load.shared").message
    assert verdicts(run(build, key))["files"] is Verdict.REFUTED


def test_a_group_that_may_write_the_folder_too_may_write_its_files(build, key):
    for folder in (build, build / "spec"):
        _as(folder, mode=0o775)
    for rel in ("policy.py", "spec/ok.json"):
        _as(build / rel, mode=0o664)
    assert load_policy(build).name == "mini"
    assert verdicts(run(build, key))["files"] is Verdict.PASSED


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")


@needs_root
@pytest.mark.parametrize("rel", ["policy.py", "certificate.json", "spec/ok.json", "spec"])
def test_a_build_file_or_folder_of_another_owner_is_refused(build, key, rel):
    _as(build / rel, uid=12345)
    assert "owned by user 12345" in refused(build, "load.shared").message
    assert verdicts(run(build, key))["files"] is Verdict.REFUTED


@needs_root
def test_a_build_its_owner_copied_whole_loads(build, key):
    for path in [build, *build.rglob("*")]:
        _as(path, uid=12345)
    assert load_policy(build).name == "mini"   # the folder's owner may write its files: nothing is exposed
    assert verdicts(run(build, key))["files"] is Verdict.PASSED
