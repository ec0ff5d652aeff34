"""The audit bundle holds the bytes the audit checked (red-team, 2026-11-29): it read the build again after the
audit, so a file changed while the audit ran (60-200 s of Nagini) went into the archive beside an audit.json that
says PASS; and report.md, which no hash covers, was packed as the build had it, saying whatever it was made to."""
import json
import zipfile

from tests.unit.test_audit import Prover, run, key  # noqa: F401  (fixture)
from tests.unit.test_signed_builds import build, keys, no_trust_from_the_environment, signed  # noqa: F401
from veriguard.audit import audit_build, write_bundle


def members(target):
    with zipfile.ZipFile(target) as z:
        return {n: z.read(n) for n in z.namelist()}


def test_a_file_changed_after_it_was_read_is_not_what_the_bundle_holds(build, key, tmp_path):
    audited = {rel: (build / rel).read_bytes() for rel in ("policy.py", "certificate.json", "spec/mini.toml")}
    result = run(build, key)
    assert result.ok
    (build / "policy.py").write_text("# swapped after the audit read it\n")
    (build / "spec" / "mini.toml").write_text("swapped")
    got = members(write_bundle(result, tmp_path / "a.zip"))
    for rel, data in audited.items():
        assert got[f"mini/{rel}"] == data, rel


def test_the_bundles_report_is_the_one_the_audited_certificate_renders(build, key, tmp_path):
    honest = (build / "report.md").read_bytes()
    (build / "report.md").write_text("# Policy `mini`: PROVED\n\nEvery payment is denied.\n")
    result = run(build, key)
    assert result.ok
    got = members(write_bundle(result, tmp_path / "a.zip"))
    assert got["mini/report.md"] == honest
    note = json.loads(got["audit.json"])["report"]
    assert "differs" in note


def test_the_bundle_of_an_audit_run_from_the_cli_holds_what_was_read(build, key, tmp_path, monkeypatch):
    import veriguard.audit as audit

    calls = []

    def prover(spec, verified, progress):
        (build / "policy_verified.py").write_text("# changed while Nagini ran\n")
        calls.append(verified)
        return Prover()(spec, verified, progress)

    result = audit_build(build, trusted_keys={key[0].key_id: key[0].public}, prover=prover)
    got = members(write_bundle(result, tmp_path / "b.zip"))
    assert calls and got["mini/policy_verified.py"].decode() == calls[0]
    assert audit  # the module under test


def test_the_audited_log_is_checked_against_its_checkpoint_and_counted_by_build(build, key, tmp_path):
    import hashlib
    import shutil

    from veriguard.enforce.decision_log import DecisionLog, read_head

    cert = (build / "certificate.json").read_bytes()
    policy, this_build = json.loads(cert)["hashes"]["policy"], hashlib.sha256(cert).hexdigest()
    path, cp = tmp_path / "d.jsonl", tmp_path / "d.checkpoint"
    log = DecisionLog(path, key=key[0], checkpoint=cp)
    log.append({"policy_sha256": policy, "build_sha256": this_build, "allowed": True})
    log.append({"policy_sha256": policy, "build_sha256": "e" * 64, "allowed": True})   # same policy.py, other build
    shutil.copy(path, tmp_path / "old")
    shutil.copy(str(path) + ".head", tmp_path / "old.head")
    log.append({"policy_sha256": policy, "build_sha256": this_build, "allowed": False})
    result = run(build, key, log=path, log_key=key[0].public, log_expected=read_head(cp))
    assert result.ok and result.log["expected"] == 3
    assert result.log["decisions"]["this_policy"] == 2 and result.log["decisions"]["other_builds"] == 1
    shutil.copy(tmp_path / "old", path)
    shutil.copy(tmp_path / "old.head", str(path) + ".head")
    result = run(build, key, log=path, log_key=key[0].public, log_expected=read_head(cp))
    assert not result.ok and "rolled back" in result.log["problem"] and result.exit_code == 1


def test_an_uncertified_name_that_is_a_folder_fails_the_files_check(build, key):
    (build / "run.json").unlink()
    (build / "run.json").mkdir()
    result = run(build, key)
    files = next(c for c in result.checks if c.name == "files")
    assert files.verdict.value == "REFUTED" and "run.json" in files.summary and not result.ok


def test_an_audit_passes_a_log_only_when_it_is_anchored(build, key, tmp_path):
    """An unsigned build, or one audited without a key, fails the audit (NOT_CHECKED); a log verified without its
    public key (or written without a key) was 'intact' and let the audit pass, though anyone could have rewritten
    it with a recomputed chain."""
    from veriguard.enforce.decision_log import DecisionLog

    unsigned = DecisionLog(tmp_path / "plain.jsonl")
    unsigned.append({"allowed": True})
    result = run(build, key, log=tmp_path / "plain.jsonl")
    assert result.log["ok"] and not result.log["anchored"] and not result.ok and result.exit_code == 1
    signed = DecisionLog(tmp_path / "signed.jsonl", key=key[0])
    signed.append({"allowed": True})
    assert not run(build, key, log=tmp_path / "signed.jsonl").ok               # no --log-public-key
    assert run(build, key, log=tmp_path / "signed.jsonl", log_key=key[0].public).ok
