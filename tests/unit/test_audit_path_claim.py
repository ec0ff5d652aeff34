"""The certificate's `path` does not choose which checks the audit runs (red-team G, 2026-11-29).

Before, `compiled source` (the spec compiled again gives policy_verified.py byte for byte) ran only when the
certificate said `"path": "compile"`. A compile-path build re-signed with `"path": "llm"` and a policy_verified.py
whose decide no longer carried the rule's Ensures (and always allowed) passed `veriguard audit` with exit 0: Nagini
proved the weakened contract, policy.py was its frozen module, the examples allowed what they expected
(reproduced with a real Nagini run: /tmp/s20/G/work/forge.py).
"""
import json

import pytest

from veriguard.enforce.keys import sign_certificate
from veriguard.synth.freeze import policy_code, sha256
from veriguard.synth.specfile import load_spec
from veriguard.verify.runnable import frozen_module, runnable_policy
from veriguard.verify.verdicts import Verdict
from tests.unit.test_audit import Prover, key, run, verdicts  # noqa: F401
from tests.unit.test_signed_builds import build, keys, no_trust_from_the_environment, signed  # noqa: F401, F811


def forge(build, key, path, verified_change=lambda s: s):
    """Rewrite policy_verified.py, regenerate policy.py and policy.code from it, set the certificate's `path`, rewrite
    every hash consistently and re-sign (what the key holder, whom the audit does not trust, could do)."""
    spec = load_spec(next((build / "spec").glob("*.toml")))
    verified = verified_change((build / "policy_verified.py").read_text())
    frozen = frozen_module(spec, runnable_policy(spec.contract, verified))
    (build / "policy_verified.py").write_text(verified)
    (build / "policy.py").write_text(frozen)
    (build / "policy.code").write_bytes(policy_code(frozen))
    cert = json.loads((build / "certificate.json").read_text())
    cert["path"] = path
    files = cert["hashes"]["files"]
    cert["hashes"]["policy"] = files["policy.py"] = sha256(frozen)
    cert["hashes"]["verified_source"] = files["policy_verified.py"] = sha256(verified)
    files["policy.code"] = sha256(policy_code(frozen))
    data = (json.dumps(cert, indent=2, sort_keys=True) + "\n").encode()
    (build / "certificate.json").write_bytes(data)
    (build / "signature.json").write_bytes(sign_certificate(key[0], data))


def weaken(source):
    """decide without the Ensures that tie it to its rules, always allowing."""
    lines = [line for line in source.splitlines(keepends=True)
             if not (line.lstrip().startswith("Ensures(") and ("# rule " in line or "iff every rule" in line))]
    out = "".join(lines)
    start = out.index("    vg_violations = violation_list(")
    end = out.index("\n", start)
    return out[:start] + "    vg_violations: List[int] = []" + out[end:]


@pytest.mark.parametrize("path", ["llm", "Compile", 5, None])
def test_a_weakened_contract_claimed_as_another_path_does_not_pass(build, key, path):
    forge(build, key, path, weaken)
    result = run(build, key, prover=Prover())   # Nagini proves the weakened contract (it did, for real)
    v = verdicts(result)
    assert v["signature"] is Verdict.PROVED and v["frozen module"] is Verdict.PASSED
    assert v["compiled source"] is Verdict.NOT_CHECKED, result.to_dict()
    assert not result.ok and result.exit_code == 1


def test_an_unchanged_compile_build_claimed_as_llm_is_not_checked(build, key):
    forge(build, key, "llm")
    result = run(build, key, prover=Prover())
    assert verdicts(result)["compiled source"] is Verdict.NOT_CHECKED and result.exit_code == 1
    assert "path \"llm\"" in next(c.summary for c in result.checks if c.name == "compiled source")


def test_a_weakened_contract_under_the_compile_path_is_refuted(build, key):
    forge(build, key, "compile", weaken)
    v = verdicts(run(build, key, prover=Prover()))
    assert v["compiled source"] is Verdict.REFUTED


def test_the_compile_path_still_passes(build, key):
    forge(build, key, "compile")
    result = run(build, key, prover=Prover())
    assert all(c.verdict in (Verdict.PASSED, Verdict.PROVED) for c in result.checks), result.to_dict()
