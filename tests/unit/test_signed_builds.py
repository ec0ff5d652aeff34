"""Signed builds (issue 11, item 1): `synth --sign`, signature.json over the certificate's exact bytes, and
the loader's checks against trusted keys, from parameters or VERIGUARD_TRUSTED_KEYS / VERIGUARD_REQUIRE_SIGNED."""
import json
import os
import shutil

import pytest

from veriguard.cli import main
from veriguard.enforce.keys import load_signing_key, new_key_pair, sign_certificate
from veriguard.enforce.loader import REQUIRE_SIGNED_ENV, TRUSTED_KEYS_ENV, PolicyLoadError, load_policy
from veriguard.enforce.monitor import Monitor
from veriguard.synth.freeze import policy_code, sha256, write_build
from veriguard.synth.specfile import load_spec
from tests.conftest import MINIMAL, SHIPPED, write_spec
from tests.unit.test_compile_and_freeze import fake_result


FIELDS = MINIMAL + """
[extraction]
role = { from = "field", path = "role" }
age = { from = "field", path = "age" }
items = { from = "field", path = "items" }
"""


@pytest.fixture(autouse=True)
def no_trust_from_the_environment(monkeypatch):
    monkeypatch.delenv(TRUSTED_KEYS_ENV, raising=False)
    monkeypatch.delenv(REQUIRE_SIGNED_ENV, raising=False)


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    root = tmp_path_factory.mktemp("keys")
    made = {}
    for who in ("signer", "stranger"):
        private, public, key_id = new_key_pair(root / who)
        made[who] = (private, public, key_id)
    return made


@pytest.fixture(scope="module")
def signed(tmp_path_factory, keys):
    folder = tmp_path_factory.mktemp("spec")
    key = load_signing_key(keys["signer"][0])
    build, _ = write_build(fake_result(load_spec(write_spec(folder, FIELDS)), z3=True), folder / "out", run_info={},
                           signer=lambda cert: sign_certificate(key, cert))
    return build


@pytest.fixture
def build(signed, tmp_path):
    target = tmp_path / "mini"
    shutil.copytree(signed, target)
    return target


def refused(build, code, **kw):
    with pytest.raises(PolicyLoadError) as e:
        load_policy(build, **kw)
    assert e.value.code == code, e.value
    assert e.value.fix
    return e.value


def test_a_signed_build_loads_verified_by_its_trusted_key(build, keys):
    policy = load_policy(build, trusted_keys=[keys["signer"][1]], require_signed=True)
    assert (policy.signature, policy.signed_by) == ("verified", keys["signer"][2])
    doc = json.loads((build / "signature.json").read_text())
    assert doc["key_id"] == keys["signer"][2] and doc["algorithm"] == "ed25519"
    assert doc["signed_file"] == "certificate.json"


def test_a_tampered_file_with_a_consistently_rewritten_hash_is_refused_once_signatures_are_checked(build, keys):
    policy_py = build / "policy.py"
    policy_py.write_text(policy_py.read_text().replace("def evaluate(", "def evaluate(  ", 1))
    code = policy_code(policy_py.read_text())
    (build / "policy.code").write_bytes(code)
    cert = json.loads((build / "certificate.json").read_text())
    digest = sha256(policy_py.read_bytes())
    cert["hashes"]["policy"] = cert["hashes"]["files"]["policy.py"] = digest
    cert["hashes"]["files"]["policy.code"] = sha256(code)
    (build / "certificate.json").write_text(json.dumps(cert, indent=2, sort_keys=True) + "\n")
    assert load_policy(build).signature == "unchecked"   # the hole a signature closes: no trust, no check
    refused(build, "load.signature", trusted_keys=[keys["signer"][1]])
    os.remove(build / "signature.json")
    assert load_policy(build, trusted_keys=[keys["signer"][1]]).signature == "unsigned"
    refused(build, "load.unsigned", trusted_keys=[keys["signer"][1]], require_signed=True)


def test_a_signature_by_an_unknown_key_is_refused(build, keys):
    e = refused(build, "load.signature_key", trusted_keys=[keys["stranger"][1]])
    assert keys["signer"][2][:16] in e.message


def test_a_signature_of_other_bytes_is_refused(build, keys):
    doc = json.loads((build / "signature.json").read_text())
    stranger = load_signing_key(keys["signer"][0])
    doc["signature"] = stranger.sign((build / "certificate.json").read_bytes())   # no domain: a log-style signature
    (build / "signature.json").write_text(json.dumps(doc))
    refused(build, "load.signature", trusted_keys=[keys["signer"][1]])


@pytest.mark.parametrize("mutate", [
    lambda d: "not json", lambda d: json.dumps([d]), lambda d: json.dumps({**d, "extra": 1}),
    lambda d: json.dumps({k: v for k, v in d.items() if k != "key_id"}),
    lambda d: json.dumps({**d, "algorithm": "rsa"}), lambda d: json.dumps({**d, "format": "veriguard-signature/0"}),
    lambda d: json.dumps({**d, "signed_file": "policy.py"}), lambda d: json.dumps({**d, "key_id": "A" * 64}),
    lambda d: json.dumps({**d, "signature": 7}), lambda d: json.dumps({**d, "signature": "!!not base64!!"}),
    lambda d: json.dumps({**d, "signature": ""}), lambda d: ""],
    ids=["text", "list", "extra-key", "no-key-id", "algorithm", "format", "signed-file", "key-id", "number",
         "base64", "empty-signature", "empty-file"])
def test_a_malformed_signature_file_is_refused(build, keys, mutate):
    doc = json.loads((build / "signature.json").read_text())
    (build / "signature.json").write_text(mutate(doc))
    refused(build, "load.signature", trusted_keys=[keys["signer"][1]])


def test_a_malformed_signature_is_refused_even_when_no_key_is_trusted(build):
    (build / "signature.json").write_text("{}")
    refused(build, "load.signature")


def test_requiring_signatures_without_any_trusted_key_is_a_configuration_error(build, tmp_path):
    refused(build, "load.trust", require_signed=True)
    (tmp_path / "empty").mkdir()
    refused(build, "load.trust", trusted_keys=tmp_path / "empty")
    refused(build, "load.trust", trusted_keys=[tmp_path / "missing.pub"])


def test_a_private_key_is_not_a_trusted_key(build, keys):
    e = refused(build, "load.trust", trusted_keys=[keys["signer"][0]])
    assert "private key" in e.message


def test_the_environment_names_the_trusted_keys_and_requires_signatures(build, keys, monkeypatch, tmp_path):
    monkeypatch.setenv(REQUIRE_SIGNED_ENV, "1")
    refused(build, "load.trust")
    monkeypatch.setenv(TRUSTED_KEYS_ENV, str(keys["stranger"][1].parent))   # a directory of .pub files
    refused(build, "load.signature_key")
    monkeypatch.setenv(TRUSTED_KEYS_ENV, os.pathsep.join([str(keys["stranger"][1]), str(keys["signer"][1])]))
    assert load_policy(build).signed_by == keys["signer"][2]
    assert Monitor.from_build(build).policy.signature == "verified"
    for flag in ("yes", "true", " 1"):
        monkeypatch.setenv(REQUIRE_SIGNED_ENV, flag)
        assert flag in refused(build, "load.trust").message
    monkeypatch.setenv(REQUIRE_SIGNED_ENV, "0")
    os.remove(build / "signature.json")
    assert load_policy(build).signature == "unsigned"


def test_parameters_override_the_environment(build, keys, monkeypatch):
    monkeypatch.setenv(TRUSTED_KEYS_ENV, str(keys["stranger"][1]))
    monkeypatch.setenv(REQUIRE_SIGNED_ENV, "1")
    policy = Monitor.from_build(build, trusted_keys=[keys["signer"][1]], require_signed=False).policy
    assert policy.signature == "verified"


def test_check_refuses_an_unsigned_build_when_the_environment_requires_signatures(build, keys, monkeypatch, capsys):
    os.remove(build / "signature.json")
    monkeypatch.setenv(TRUSTED_KEYS_ENV, str(keys["signer"][1]))
    monkeypatch.setenv(REQUIRE_SIGNED_ENV, "1")
    code = main(["check", str(build), "--args", '{"role": "admin", "age": 30, "items": []}'])
    err = capsys.readouterr().err
    assert code == 2 and "error[load.unsigned]" in err and "fix:" in err and "Traceback" not in err


@pytest.mark.parametrize("extra", ["notes.txt", ".hidden", "sub/x.py"])
def test_a_file_added_to_the_build_is_refused(build, extra):
    (build / extra).parent.mkdir(exist_ok=True)
    (build / extra).write_text("x")
    e = refused(build, "load.tampered")
    assert extra.split("/")[0] in e.message


def test_synth_sign_reads_the_key_before_any_work(tmp_path, keys, capsys):
    spec = write_spec(tmp_path)
    code = main(["synth", str(spec), "--out", str(tmp_path / "out"), "--sign", str(keys["signer"][1]), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "error[key.format]" in err and not (tmp_path / "out").exists()
    code = main(["synth", str(spec), "--compare", "--sign", str(keys["signer"][0]), "--quiet"])
    assert code == 2 and "error[synth.sign]" in capsys.readouterr().err


def test_the_hook_refuses_an_unsigned_build_when_the_environment_requires_signatures(tmp_path, keys):
    pytest.importorskip("tree_sitter_bash", reason="the shell extractor needs tree-sitter-bash")
    from tests.unit.test_hook import assert_denied, bash, run

    spec = load_spec(next(p for p in SHIPPED if p.stem == "shell_agent"))
    build, _ = write_build(fake_result(spec), tmp_path, run_info={})
    env = {REQUIRE_SIGNED_ENV: "1", TRUSTED_KEYS_ENV: str(keys["signer"][1])}
    assert_denied(run(build, bash("ls"), env=env), "cannot be used", "is not signed", "signature.json")
    assert run(build, bash("ls"), env={REQUIRE_SIGNED_ENV: "0"}).returncode == 0


def finishes(load, fifo, seconds=20.0):
    """What `load()` returns or raises, asserting it does not wait on `fifo` (unblocked afterwards if it does)."""
    import threading

    got: list[object] = []

    def run():
        try:
            got.append(load())
        except Exception as e:
            got.append(e)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        worker.join(seconds)
        pytest.fail(f"the load waited on the FIFO {fifo}")
    return got[0]


def test_a_fifo_among_the_trusted_keys_is_refused_without_waiting(build, keys, tmp_path):
    trusted = tmp_path / "trusted"
    trusted.mkdir()
    shutil.copy(keys["signer"][1], trusted / "signer.pub")
    os.mkfifo(trusted / "pipe.pub")
    error = finishes(lambda: load_policy(build, trusted_keys=trusted), trusted / "pipe.pub")
    assert isinstance(error, PolicyLoadError) and error.code == "load.trust", error
    assert "not a regular file" in error.message and error.fix


def test_a_signed_build_of_another_policy_in_the_expected_folder_is_refused(build, keys, tmp_path):
    foreign = tmp_path / "shell_agent"
    shutil.copytree(build, foreign)
    with pytest.raises(PolicyLoadError) as e:
        Monitor.from_build(foreign, trusted_keys=[keys["signer"][1]], require_signed=True)
    assert e.value.code == "load.foreign" and "the policy 'mini', not of 'shell_agent'" in e.value.message
    assert "DIR/mini" in e.value.fix
    assert load_policy(build, trusted_keys=[keys["signer"][1]], require_signed=True).name == "mini"


def test_an_expected_policy_hash_pins_the_build(build):
    digest = load_policy(build).sha256
    assert load_policy(build, expect_sha256=digest.upper()).sha256 == digest
    assert Monitor.from_build(build, expect_sha256=digest).policy.sha256 == digest
    e = refused(build, "load.expected", expect_sha256="0" * 64)
    assert f"sha256 {digest[:16]}" in e.message and "not the expected 0000" in e.message
    e = refused(build, "load.expected", expect_sha256="not-a-hash")
    assert "not 64 hex digits" in e.message


def test_check_takes_an_expected_policy_hash(build, capsys):
    arguments = ["--args", '{"role": "admin", "age": 30, "items": []}']
    digest = load_policy(build).sha256
    assert main(["check", str(build), *arguments, "--expect-sha256", digest]) == 0
    capsys.readouterr()
    assert main(["check", str(build), *arguments, "--expect-sha256", "f" * 64]) == 2
    err = capsys.readouterr().err
    assert "error[load.expected]" in err and "fix:" in err and "Traceback" not in err


def test_the_hook_takes_an_expected_policy_hash_and_refuses_another_policys_build(tmp_path):
    pytest.importorskip("tree_sitter_bash", reason="the shell extractor needs tree-sitter-bash")
    from tests.unit.test_hook import assert_denied, bash, run

    out = tmp_path / "out"
    built = {spec.stem: write_build(fake_result(load_spec(spec)), out, run_info={})[0]
             for spec in SHIPPED if spec.stem in ("shell_agent", "os_agent")}
    digest = load_policy(built["shell_agent"]).sha256
    assert run(built["shell_agent"], bash("ls"), "--expect-sha256", digest).returncode == 0
    assert_denied(run(built["shell_agent"], bash("ls"), "--expect-sha256", "0" * 64), "cannot be used",
                  "not the expected")
    foreign = tmp_path / "deploy" / "shell_agent"
    shutil.copytree(built["os_agent"], foreign)
    assert_denied(run(foreign, bash("cat ~/.ssh/id_rsa")), "cannot be used", "the policy 'os_agent'")


@pytest.mark.skipif(not os.path.exists("/proc/self/mem"), reason="needs Linux's /proc/self/mem")
def test_a_trusted_key_file_that_fails_to_read_is_a_key_error(build):
    error = refused(build, "load.trust", trusted_keys="/proc/self/mem")
    assert "cannot read the public key" in error.message
