"""`veriguard audit` with the real Nagini on one real signed build (payments): it passes, and a proved
source rewritten with consistent hashes and a fresh signature fails the re-run proof and the regeneration."""
import functools
import json

import pytest

from veriguard.audit import audit_build, prove_fresh
from veriguard.enforce.keys import load_signing_key, new_key_pair, sign_certificate
from veriguard.synth.freeze import sha256, write_build
from veriguard.verify.verdicts import Verdict

pytestmark = pytest.mark.integration


def test_audit_re_proves_a_signed_build_and_catches_a_re_signed_broken_proof(nagini_worker, shipped_synthesis,
                                                                              tmp_path):
    _spec, result = shipped_synthesis("payments")
    assert result.ok, [(g.name, g.verdict, g.summary) for g in result.gates]
    private, _, _ = new_key_pair(tmp_path / "keys")
    key = load_signing_key(private)
    build, _ = write_build(result, tmp_path / "build", run_info={},
                           signer=lambda cert: sign_certificate(key, cert))
    prover = functools.partial(prove_fresh, worker=nagini_worker)
    trusted = {key.key_id: key.public}

    audited = audit_build(build, trusted_keys=trusted, prover=prover)
    assert audited.ok and audited.exit_code == 0, audited.to_dict()
    assert {c.name: c.verdict for c in audited.checks}["proof (Nagini)"] is Verdict.PROVED

    # the key holder (or whoever has the key) re-signs a proved source with a bug: the audit re-derives it all
    source = build / "policy_verified.py"
    assert source.read_text().count("vg_out.append(2)") == 1
    source.write_text(source.read_text().replace("vg_out.append(2)", "vg_out.append(3)"))
    cert = json.loads((build / "certificate.json").read_text())
    cert["hashes"]["verified_source"] = cert["hashes"]["files"]["policy_verified.py"] = sha256(source.read_bytes())
    data = (json.dumps(cert, indent=2, sort_keys=True) + "\n").encode()
    (build / "certificate.json").write_bytes(data)
    (build / "signature.json").write_bytes(sign_certificate(key, data))
    checks = {c.name: c for c in audit_build(build, trusted_keys=trusted, prover=prover).checks}
    v = {name: c.verdict for name, c in checks.items()}
    assert v["signature"] is Verdict.PROVED and v["files"] is Verdict.PASSED
    # Nagini fails on it and a spec example reproduces the failure on a concrete input (no second run for models)
    proof = checks["proof (Nagini)"]
    assert v["proof (Nagini)"] is Verdict.REFUTED and "a test input reproduces the failure" in proof.summary, proof
    assert "not asked" in proof.summary, proof.summary
    assert v["compiled source"] is Verdict.REFUTED and v["frozen module"] is Verdict.REFUTED
