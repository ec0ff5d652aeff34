"""The seventh red-team pass on builds, keys and the audit (helper C26, 2026-11-30).

1. Who may replace a build from above it. The loader and the audit refused a folder above the build only when every
   user could rename its entries (o+w without the sticky bit). A folder above it owned by another user, or writable by
   a group that may not write the build (g+w, no sticky bit), or a sticky folder (/tmp-like) owned by another user, or
   a symbolic link to the build owned by another user in a sticky folder, let that user or group move the build away
   and put their own in its place; a signed build there loaded as verified and `veriguard audit` passed. Each is now
   `load.shared` and the audit's files check REFUTED: one function (contracts.regular_file.build_folders_exposed)
   answers both, where the audit had its own near-copy that checked only the folders holding files, not the folders
   between them (spec/a/ on the way to spec/a/b/t.json).
2. Trust anchors are judged the same way: a trusted .pub (or the verifier's key) with a second name (a hard link),
   owned by another user than its folder's, in a folder a group may write that may not write the key, or under a
   folder owned by another user, is `key.permissions` (it was refused only when every user could write it).
"""
import json
import os
import shutil

import pytest

from veriguard.cli import main
from veriguard.enforce.keys import KeyFileError, load_trusted_keys, load_verify_key
from veriguard.enforce.loader import load_policy
from veriguard.synth.freeze import write_build
from veriguard.synth.specfile import load_spec
from veriguard.verify.verdicts import Verdict
from tests.conftest import MINIMAL, write_spec
from tests.unit.test_audit import Prover, key, run, verdicts  # noqa: F401
from tests.unit.test_compile_and_freeze import fake_result
from tests.unit.test_signed_builds import build, keys, no_trust_from_the_environment, refused, signed  # noqa: F401, F811

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user or group needs root")
OTHER = 12345


def placed(build, tmp_path, *names):
    """`build` moved to tmp_path/names.../mini, each folder on the way 0755 and root's (the test's)."""
    folder = tmp_path.joinpath(*names)
    folder.mkdir(parents=True)
    target = folder / "mini"
    shutil.move(build, target)
    return target


def exposed(build, key, why):
    assert why in refused(build, "load.shared").message
    result = run(build, key)
    assert verdicts(result)["files"] is Verdict.REFUTED and not result.ok
    assert why in result.checks[2].summary


@needs_root
@pytest.mark.parametrize("depth", [1, 2])
def test_a_folder_above_the_build_of_another_owner_is_refused(build, key, tmp_path, depth):
    target = placed(build, tmp_path, "theirs", *["x"] * (depth - 1))
    os.chown(tmp_path / "theirs", OTHER, OTHER)
    exposed(target, key, f"owned by user {OTHER}")


@needs_root
@pytest.mark.parametrize("depth", [1, 2])
def test_a_folder_above_the_build_a_group_may_write_that_may_not_write_the_build_is_refused(build, key, tmp_path,
                                                                                           depth):
    target = placed(build, tmp_path, "shared", *["x"] * (depth - 1))
    os.chown(tmp_path / "shared", 0, OTHER)
    os.chmod(tmp_path / "shared", 0o775)
    exposed(target, key, f"its group {OTHER} may rename")


@needs_root
def test_a_sticky_folder_above_the_build_owned_by_another_user_is_refused(build, key, tmp_path):
    target = placed(build, tmp_path, "sticky")
    os.chown(tmp_path / "sticky", OTHER, OTHER)
    os.chmod(tmp_path / "sticky", 0o1777)
    exposed(target, key, f"owned by user {OTHER}")


@needs_root
def test_a_link_to_the_build_owned_by_another_user_in_a_sticky_folder_is_refused(build, key, tmp_path):
    target = placed(build, tmp_path, "real")
    (tmp_path / "sticky").mkdir(mode=0o1777)
    os.chmod(tmp_path / "sticky", 0o1777)
    os.symlink(target, tmp_path / "sticky" / "mini")
    assert load_policy(tmp_path / "sticky" / "mini").name == "mini"   # the control: root's link there
    os.lchown(tmp_path / "sticky" / "mini", OTHER, OTHER)
    exposed(tmp_path / "sticky" / "mini", key, "symbolic link owned by user")


@needs_root
def test_check_refuses_a_build_under_a_folder_of_another_owner(build, tmp_path, capsys):
    target = placed(build, tmp_path, "theirs")
    os.chown(tmp_path / "theirs", OTHER, OTHER)
    code = main(["check", str(target), "--args", '{"role": "admin", "age": 30, "items": [["db", "x"]]}'])
    out, err = capsys.readouterr()
    assert code == 2 and "load.shared" in err and '"allowed": false' in out and "Traceback" not in err


def test_a_sticky_folder_of_root_above_the_build_and_a_group_that_may_write_the_build_pass(build, key, tmp_path):
    target = placed(build, tmp_path, "tmp", "team")
    os.chmod(tmp_path / "tmp", 0o1777)            # /tmp: root's, sticky
    os.chmod(tmp_path / "tmp" / "team", 0o775)    # the build's own group may write the folder above
    os.chmod(target, 0o775)
    assert load_policy(target).name == "mini"
    assert verdicts(run(target, key))["files"] is Verdict.PASSED


NESTED = MINIMAL.replace('file = "ok.json"', 'file = "a/b/ok.json"')


def test_the_audit_checks_every_folder_on_the_way_to_a_certified_file(tmp_path, key):
    """spec/a/ holds no file, only b/: the audit looked at the folders holding files, the loader at every folder."""
    spec_dir = tmp_path / "spec"
    spec_dir.mkdir()
    path = write_spec(spec_dir, NESTED)
    (spec_dir / "a" / "b").mkdir(parents=True)
    os.replace(spec_dir / "ok.json", spec_dir / "a" / "b" / "ok.json")
    build, _ = write_build(fake_result(load_spec(path)), tmp_path / "out", run_info={})
    os.chmod(tmp_path / "out", 0o755)
    assert load_policy(build).name == "mini" and verdicts(run(build))["files"] is Verdict.PASSED
    os.chmod(build / "spec" / "a", 0o777)
    assert "every user may replace" in refused(build, "load.shared").message
    assert verdicts(run(build))["files"] is Verdict.REFUTED


# --- trust anchors --------------------------------------------------------------------------------------------

def anchor(keys, tmp_path, name="trusted"):
    folder = tmp_path / name
    folder.mkdir(parents=True)
    shutil.copy(keys["signer"][1], folder / "signer.pub")
    return folder


def key_refused(call):
    with pytest.raises(KeyFileError) as e:
        call()
    assert e.value.code == "key.permissions" and e.value.fix
    return e.value


def test_a_trusted_key_with_a_second_name_is_refused(keys, tmp_path):
    folder = anchor(keys, tmp_path)
    assert load_trusted_keys(folder) and load_verify_key(folder / "signer.pub")   # the control
    os.link(folder / "signer.pub", tmp_path / "elsewhere.pub")
    assert "2 names" in key_refused(lambda: load_trusted_keys(folder)).message
    key_refused(lambda: load_trusted_keys(folder / "signer.pub"))
    key_refused(lambda: load_verify_key(folder / "signer.pub"))


@needs_root
def test_a_trusted_key_of_another_owner_is_refused(keys, tmp_path):
    folder = anchor(keys, tmp_path)
    os.chown(folder / "signer.pub", OTHER, OTHER)
    assert f"owned by user {OTHER}" in key_refused(lambda: load_trusted_keys(folder)).message
    key_refused(lambda: load_verify_key(folder / "signer.pub"))


@needs_root
@pytest.mark.parametrize("mode, owner", [(0o775, (0, OTHER)), (0o755, (OTHER, OTHER)), (0o1777, (OTHER, OTHER))],
                         ids=["group-writable", "another owner", "sticky, another owner"])
def test_a_trusted_key_in_a_folder_others_may_write_is_refused(keys, tmp_path, mode, owner):
    folder = anchor(keys, tmp_path / "up" if mode == 0o1777 else tmp_path, "trusted")
    target = folder if mode != 0o1777 else folder.parent
    os.chown(target, *owner)
    os.chmod(target, mode)
    for call in (lambda: load_trusted_keys(folder), lambda: load_trusted_keys(folder / "signer.pub"),
                 lambda: load_verify_key(folder / "signer.pub")):
        key_refused(call)


def test_verify_log_refuses_a_public_key_with_a_second_name(keys, tmp_path, capsys):
    folder = anchor(keys, tmp_path)
    os.link(folder / "signer.pub", tmp_path / "elsewhere.pub")
    (tmp_path / "log.jsonl").write_text("")
    code = main(["verify-log", str(tmp_path / "log.jsonl"), "--public-key", str(folder / "signer.pub")])
    assert code == 2 and "key.permissions" in capsys.readouterr().err


def test_a_key_in_a_sticky_folder_of_root_and_a_group_writable_folder_of_the_keys_group_load(keys, tmp_path):
    sticky = tmp_path / "tmp"
    sticky.mkdir()
    os.chmod(sticky, 0o1777)
    shutil.copy(keys["signer"][1], sticky / "signer.pub")
    assert load_verify_key(sticky / "signer.pub") and load_trusted_keys(sticky / "signer.pub")
    folder = anchor(keys, tmp_path, "team")
    os.chmod(folder, 0o775)
    os.chmod(folder / "signer.pub", 0o664)    # the group that may write the folder may write the key: nothing else
    assert load_trusted_keys(folder)


# --- the certificate's times -----------------------------------------------------------------------------------
# `synthesized_at` was checked only for being a date with a UTC offset: a re-signed 2999-01-01, or a time at +14:00
# (ahead of the clock), passed the audit, and the report showed it. It must now be as synth stamps it (UTC, to the
# second, +00:00) and not after the audit's clock (300 s of skew allowed). An approval (a verified update's) is made
# only on the compile path, before the build is written: one on another path, or approved after it, is refuted.

STAMPS = {"the year 2999": "2999-01-01T00:00:00+00:00", "an hour ahead": None, "+14:00": "2026-11-30T10:34:00+14:00",
          "Z": "2026-11-30T10:34:00Z", "microseconds": "2026-11-30T10:34:00.123456+00:00",
          "no offset": "2026-11-30T10:34:00", "a date only": "2026-11-30"}


def _later(seconds):
    import datetime as dt
    return (dt.datetime.now(dt.timezone.utc).replace(microsecond=0) + dt.timedelta(seconds=seconds)).isoformat()


@pytest.mark.parametrize("stamp", STAMPS.values(), ids=STAMPS.keys())
def test_a_synthesis_time_synth_does_not_stamp_is_refuted(build, key, stamp):
    from tests.unit.test_audit_claims import resign
    resign(build, key, lambda c: c.update(synthesized_at=stamp or _later(3600)))
    result = run(build, key)
    assert verdicts(result)["claims"] is Verdict.REFUTED and "synthesized_at" in result.checks[4].summary


def test_a_synthesis_time_in_the_past_or_within_the_skew_passes(build, key):
    from tests.unit.test_audit_claims import resign
    for stamp in ("2026-01-01T00:00:00+00:00", _later(60)):
        resign(build, key, lambda c: c.update(synthesized_at=stamp))
        assert verdicts(run(build, key))["claims"] is Verdict.PASSED


APPROVAL = {"by": "ciso", "reason": "ok", "previous_policy": "a" * 64, "newly_allowed": 1,
            "approved_at": "2026-01-01T00:00:00+00:00"}


@pytest.mark.parametrize("change", [
    lambda c: c.update(approval=APPROVAL, path="llm"),
    lambda c: c.update(approval={**APPROVAL, "approved_at": "2999-01-01T00:00:00+00:00"}),
    lambda c: c.update(approval={**APPROVAL, "approved_at": _later(120)}),
], ids=["on the LLM path", "in 2999", "after the build was written"])
def test_an_approval_synth_could_not_have_written_is_refuted(build, key, change):
    from tests.unit.test_audit_claims import resign
    resign(build, key, change)
    result = run(build, key)
    assert verdicts(result)["claims"] is Verdict.REFUTED and "approval" in result.checks[4].summary


def test_an_approval_made_before_the_build_passes_the_claims(build, key):
    from tests.unit.test_audit_claims import resign
    resign(build, key, lambda c: c.update(approval=APPROVAL))
    assert verdicts(run(build, key))["claims"] is Verdict.PASSED


# --- one spelling per certificate --------------------------------------------------------------------------------
# A certificate re-serialised (another indent, unsorted keys, CRLF, a trailing blank, an escaped key, 1.0E0 for 1.0)
# and re-signed loaded and passed the audit: the same claims under another sha256, the hash that pins a build and that
# every decision record names. The audit's certificate check now refutes anything but the form synth writes
# (contracts.build_format.certificate_bytes, which synth.freeze writes with).

RESPELT = {
    "indent 4": lambda b: json.dumps(json.loads(b), indent=4, sort_keys=True).encode() + b"\n",
    "unsorted keys": lambda b: json.dumps(dict(reversed(list(json.loads(b).items()))), indent=2).encode() + b"\n",
    "CRLF": lambda b: b.replace(b"\n", b"\r\n"),
    "compact": lambda b: json.dumps(json.loads(b), sort_keys=True, separators=(",", ":")).encode(),
    "a trailing blank line": lambda b: b + b"\n",
    "an escaped key": lambda b: b.replace(b'"policy": "mini"', b'"\\u0070olicy": "mini"', 1),
    "a float spelt otherwise": lambda b: b.replace(b'"score": 1.0', b'"score": 1.0E0', 1),
}


@pytest.mark.parametrize("respell", RESPELT.values(), ids=RESPELT.keys())
def test_a_certificate_spelt_otherwise_is_refuted(build, key, respell):
    from veriguard.enforce.keys import sign_certificate
    data = respell((build / "certificate.json").read_bytes())
    assert data != (build / "certificate.json").read_bytes() and json.loads(data)["policy"] == "mini"
    (build / "certificate.json").write_bytes(data)
    (build / "signature.json").write_bytes(sign_certificate(key[0], data))
    result = run(build, key)
    assert verdicts(result)["certificate"] is Verdict.REFUTED and "as synth writes it" in result.checks[0].summary
    assert not result.ok


def test_synth_writes_the_one_spelling(build):
    from veriguard.contracts.build_format import certificate_bytes
    data = (build / "certificate.json").read_bytes()
    assert certificate_bytes(json.loads(data)) == data


@needs_root
def test_a_folder_above_writable_by_its_owners_private_group_passes(build, key, tmp_path):
    """umask 002 (user private groups) makes every folder a user creates g+w for the group named as the user: it adds
    no one, so it is not a way in (`daemon`, uid 1, group `daemon` with no listed member, stands in for such a user)."""
    import grp
    import pwd
    if pwd.getpwuid(1).pw_name != grp.getgrgid(1).gr_name or grp.getgrgid(1).gr_mem:
        pytest.skip("uid 1 and gid 1 are not a user and its private group here")
    target = placed(build, tmp_path, "home")
    os.chown(tmp_path / "home", 1, 1)
    os.chmod(tmp_path / "home", 0o775)
    os.chown(target, 1, -1)
    assert load_policy(target).name == "mini"
    assert verdicts(run(target, key))["files"] is Verdict.PASSED
    os.chown(tmp_path / "home", 1, OTHER)    # the control: a group that is not the owner's own
    exposed(target, key, f"its group {OTHER} may rename")


def test_synth_writes_the_build_folder_0755_whatever_the_umask(tmp_path):
    """The build folder kept mkdtemp's 0700 (its files and spec/ were 0644 and 0755, as the README says): a monitor
    running as another user could not read the build it was given."""
    path = write_spec(tmp_path, MINIMAL)
    old = os.umask(0o077)
    try:
        build, _ = write_build(fake_result(load_spec(path)), tmp_path / "out", run_info={})
    finally:
        os.umask(old)
    assert os.stat(build).st_mode & 0o7777 == 0o755
    assert {os.stat(p).st_mode & 0o7777 for p in build.rglob("*")} <= {0o644, 0o755}
    assert load_policy(build).name == "mini"
