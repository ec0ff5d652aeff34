"""The fifth red-team pass on builds, the loader and the audit (helper C24, 2026-11-30).

1. A build's bytes could be changed by someone who cannot write the build: a certified file (or the certificate) with
   a second name, a hard link, whose other name lies outside the build; a file every user may write; a build folder
   every user may replace files in. The loader loaded such builds and the audit's files check passed them; now the
   loader refuses them (load.shared) and the audit's files check is REFUTED, each naming the file and the reason.
2. The folder-name rule (load.foreign) read the path as given: `DIR/mini/sub/..`, where `sub` leads into a folder
   `other`, reads `other`'s files under the name `mini`. Both the name as given and the name once links are resolved
   must be the policy's.
3. A decision naming a rule twice passed the loader (the gates compare rules as sets, so a repeat was never tested).
4. `audit_build(count_mutants=True)`: the recorded mutant limit makes the mutants again, none run, and their number
   must be the certificate's `total` (a re-signed certificate counting 1 of the 30 mutants its limit makes passed).
"""
import json
import os
import shutil

import pytest

from veriguard.enforce.loader import PolicyMismatch, load_policy
from veriguard.verify.verdicts import Verdict
from tests.unit.test_audit import Prover, key, run, verdicts  # noqa: F401
from tests.unit.test_audit_claims import resign
from tests.unit.test_signed_builds import build, keys, no_trust_from_the_environment, refused, signed  # noqa: F401, F811


def linked_from_outside(build, rel, tmp_path):
    """build/rel replaced by a hard link to a copy outside the build; returns the outside name."""
    outside = tmp_path / "outside" / rel.replace("/", "_")
    outside.parent.mkdir(exist_ok=True)
    shutil.copy2(build / rel, outside)
    os.remove(build / rel)
    os.link(outside, build / rel)
    return outside


@pytest.mark.parametrize("rel", ["policy.py", "certificate.json", "signature.json", "spec/ok.json"])
def test_a_build_file_with_a_second_name_outside_the_build_is_refused(build, key, tmp_path, rel):
    linked_from_outside(build, rel, tmp_path)
    e = refused(build, "load.shared")
    assert "hard links" in e.message and rel.split("/")[-1] in e.message
    result = run(build, key)
    assert verdicts(result)["files"] is Verdict.REFUTED and not result.ok
    assert "hard link" in result.checks[2].summary


def test_the_outside_name_of_a_hard_linked_unsigned_build_cannot_swap_its_policy(build, tmp_path):
    """The attack: the folder is read-only, but its files are links to files the attacker owns."""
    os.remove(build / "signature.json")
    outside = {rel: linked_from_outside(build, rel, tmp_path) for rel in ("certificate.json", "policy.py", "policy.code")}
    os.remove(build / "policy.code")   # the monitor then compiles policy.py
    outside["policy.py"].write_text(outside["policy.py"].read_text() + "\nEVIL = 1\n")
    cert = json.loads(outside["certificate.json"].read_text())
    digest = __import__("hashlib").sha256(outside["policy.py"].read_bytes()).hexdigest()
    cert["hashes"]["policy"] = cert["hashes"]["files"]["policy.py"] = digest
    del cert["hashes"]["files"]["policy.code"]
    outside["certificate.json"].write_text(json.dumps(cert))
    refused(build, "load.shared")


@pytest.mark.parametrize("rel", ["policy.py", "certificate.json", "spec/mini.toml"])
def test_a_build_file_every_user_may_write_is_refused(build, key, rel):
    os.chmod(build / rel, 0o666)
    assert "every user may write it" in refused(build, "load.shared").message
    assert verdicts(run(build, key))["files"] is Verdict.REFUTED


@pytest.mark.parametrize("folder", [".", "spec"])
def test_a_build_folder_every_user_may_replace_files_in_is_refused(build, key, folder):
    os.chmod(build / folder, 0o777)
    try:
        assert "no sticky bit" in refused(build, "load.shared").message
        assert verdicts(run(build, key))["files"] is Verdict.REFUTED
    finally:
        os.chmod(build / folder, 0o755)
    os.chmod(build / folder, 0o1777)   # sticky: no one may rename another's file; an added one is refused as before
    try:
        assert load_policy(build).name == "mini"
    finally:
        os.chmod(build / folder, 0o755)


def test_a_folder_above_the_build_that_every_user_may_replace_entries_in_is_refused(build, key, tmp_path):
    """A folder above the build that is o+w without the sticky bit lets anyone rename the build's folder away and put
    a build of their own in its place, whatever the build's own modes say: before, such a build loaded."""
    above = build.parent
    os.chmod(above, 0o777)
    try:
        assert "a folder above the build" in refused(build, "load.shared").message
        assert verdicts(run(build, key))["files"] is Verdict.REFUTED
    finally:
        os.chmod(above, 0o755)
    os.chmod(above, 0o1777)   # sticky, as /tmp: no one may rename another's folder
    try:
        assert load_policy(build).name == "mini"
    finally:
        os.chmod(above, 0o755)


def test_a_build_read_through_a_link_and_dot_dot_is_named_by_the_folder_it_reads(build, key, tmp_path):
    other = tmp_path / "x" / "other"
    shutil.move(build, other)                      # mini's build, in a folder named `other`
    (tmp_path / "y" / "mini").mkdir(parents=True)
    os.symlink(other / "spec", tmp_path / "y" / "mini" / "sub")
    path = tmp_path / "y" / "mini" / "sub" / ".."   # as given: `mini`; as read: `other`
    assert "not of 'other'" in refused(path, "load.foreign").message
    assert verdicts(run(path, key))["certificate"] is Verdict.REFUTED
    moved_back = tmp_path / "z" / "mini"
    shutil.move(other, moved_back)
    assert load_policy(f"{moved_back}/").name == "mini"   # a trailing slash, as before


def test_a_decision_naming_a_rule_twice_is_a_mismatch(build):
    policy = load_policy(build)
    twice = policy.module.PolicyDecision(False, ("adult", "adult"), ())
    with pytest.raises(PolicyMismatch, match="more than once"):
        policy._call(lambda _args: twice, {})
    once = policy.module.PolicyDecision(False, ("adult", "access"), (("db", "y"),))
    assert policy._call(lambda _args: once, {}).violations == ("adult", "access")


def counted(build, key, mutation):
    resign(build, key, lambda c: c["mutation"].update(mutation))
    result = run(build, key, count_mutants=True)
    return result, next(c for c in result.checks if c.name == "mutation (count)")


def test_the_mutant_count_refutes_a_certificate_counting_fewer_than_its_limit_makes(build, key):
    result, check = counted(build, key, {"killed": 1, "total": 1, "score": 1.0, "limit": 30})
    assert check.verdict is Verdict.REFUTED and not result.ok, check
    assert "makes 30 mutants" in check.summary and "counts 1" in check.summary


def test_the_mutant_count_passes_a_certificate_whose_limit_makes_what_it_counts(build, key):
    result, check = counted(build, key, {"killed": 1, "total": 1, "score": 1.0, "limit": 1})
    assert check.verdict is Verdict.PASSED, check


def test_the_mutant_count_of_an_old_certificate_is_not_checked_unless_every_site_is_counted(build, key):
    resign(build, key, lambda c: c["mutation"].pop("limit"))
    check = next(c for c in run(build, key, count_mutants=True).checks if c.name == "mutation (count)")
    assert check.verdict is Verdict.NOT_CHECKED and "no mutant limit" in check.summary
