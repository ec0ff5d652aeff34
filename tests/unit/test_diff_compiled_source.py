"""`diff` reasons about the specs' contracts only for builds whose proved source is the compiled spec (red-team G,
2026-11-29). Before, a build whose policy_verified.py lost decide's rule Ensures and always allowed (policy.py and
policy.code regenerated from it, the certificate's hashes rewritten) diffed as "the same decisions", exit 0,
against the honest build of the same spec, while its `evaluate` (a monitor with double_check=False) allowed what
the spec denies."""
import json

from veriguard.synth.freeze import policy_code, sha256
from veriguard.synth.specfile import load_spec
from veriguard.verify.runnable import frozen_module, runnable_policy
from tests.unit.test_audit_path_claim import weaken
from tests.unit.test_policy_diff import build, run


def rewrite_proved_source(build_dir, change):
    spec = load_spec(next((build_dir / "spec").glob("*.toml")))
    verified = change((build_dir / "policy_verified.py").read_text())
    frozen = frozen_module(spec, runnable_policy(spec.contract, verified))
    (build_dir / "policy_verified.py").write_text(verified)
    (build_dir / "policy.py").write_text(frozen)
    (build_dir / "policy.code").write_bytes(policy_code(frozen))
    cert = json.loads((build_dir / "certificate.json").read_text())
    files = cert["hashes"]["files"]
    cert["hashes"]["policy"] = files["policy.py"] = sha256(frozen)
    cert["hashes"]["verified_source"] = files["policy_verified.py"] = sha256(verified)
    files["policy.code"] = sha256(policy_code(frozen))
    (build_dir / "certificate.json").write_text(json.dumps(cert, indent=2, sort_keys=True) + "\n")


def test_a_build_proved_against_another_contract_is_refused(tmp_path, capsys):
    old, new = build(tmp_path, "a"), build(tmp_path, "b")
    rewrite_proved_source(new, weaken)
    code, out, err = run(capsys, "diff", old, new)
    assert code == 2 and "error[diff.inconsistent]" in err and "not what the compile path makes" in err, (out, err)
    code, out, err = run(capsys, "diff", new, old)
    assert code == 2 and "error[diff.inconsistent]" in err


def test_the_honest_builds_still_diff(tmp_path, capsys):
    old, new = build(tmp_path, "a"), build(tmp_path, "b")
    rewrite_proved_source(new, lambda s: s)
    code, out, _ = run(capsys, "diff", old, new)
    assert code == 0 and "the same decisions" in out
