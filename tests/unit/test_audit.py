"""`veriguard audit` on fake builds (no JVM: the Nagini check is replaced by a recording stub; the real one runs
in tests/integration/test_audit_real.py): each way a build can be wrong fails its own check."""
import contextlib
import dis
import hashlib
import json
import marshal
import os
import tarfile
import threading
import time
import types
from importlib.util import MAGIC_NUMBER
import zipfile

import pytest

import veriguard.audit as audit
from veriguard.audit import audit_build, write_bundle
from veriguard.cli import main
from veriguard.contracts.errors import EnvironmentProblem
from veriguard.enforce.decision_log import DecisionLog
from veriguard.enforce.keys import load_signing_key, sign_certificate
from veriguard.synth.freeze import extraction_json, policy_code, sha256, write_build
from veriguard.synth.specfile import load_spec
from veriguard.verify.verdicts import Verdict
from tests.conftest import SPECS, write_spec
from tests.unit.test_compile_and_freeze import fake_result
# the signed fake build (and the autouse fixture that keeps VERIGUARD_* out of the tests)
from tests.unit.test_signed_builds import build, keys, no_trust_from_the_environment, signed  # noqa: F401, F811

NAMES = ["certificate", "signature", "files", "tools", "claims", "compiled source", "frozen module", "bytecode",
         "extraction", "contract (z3)", "examples", "proof (Nagini)"]


class Prover:
    """Stands in for Nagini: says PROVED and remembers the source it was given."""

    def __init__(self, verdict=Verdict.PROVED, error=None):
        self.sources, self.verdict, self.error = [], verdict, error

    def __call__(self, spec, verified, progress):
        self.sources.append(verified)
        if self.error:
            raise self.error
        return self.verdict, "stub prover (unit test)"


@pytest.fixture(scope="module")
def key(keys):
    """(the signing key, its public key file) of the key that signed `build`."""
    return load_signing_key(keys["signer"][0]), keys["signer"][1]


def signer(key):
    return lambda cert: sign_certificate(key[0], cert)


def run(build, key=None, **kw):
    trusted = {key[0].key_id: key[0].public} if key else None
    prover = kw.pop("prover", Prover())
    return audit_build(build, trusted_keys=trusted, prover=prover, **kw)


def verdicts(result):
    return {c.name: c.verdict for c in result.checks}


def rewrite(build, rel, change, key=None):
    """Edit build/rel and rewrite its hashes in the certificate consistently (and re-sign it, with `key`)."""
    path = build / rel
    path.write_text(change(path.read_text()))
    cert = json.loads((build / "certificate.json").read_text())
    digest = sha256(path.read_bytes())
    cert["hashes"]["files"][rel] = digest
    cert["hashes"][{"policy.py": "policy", "policy_verified.py": "verified_source"}.get(rel, "spec")] = digest
    data = (json.dumps(cert, indent=2, sort_keys=True) + "\n").encode()
    (build / "certificate.json").write_bytes(data)
    if key:
        (build / "signature.json").write_bytes(sign_certificate(key[0], data))


def test_a_clean_signed_build_passes_every_check(build, key):
    prover = Prover()
    result = run(build, key, prover=prover)
    assert [c.name for c in result.checks] == NAMES
    assert all(c.verdict in (Verdict.PASSED, Verdict.PROVED) for c in result.checks), result.to_dict()
    assert result.ok and result.exit_code == 0
    assert prover.sources == [(build / "policy_verified.py").read_text()]


def test_an_unsigned_build_or_no_key_does_not_pass(build, key):
    result = run(build)
    assert verdicts(result)["signature"] is Verdict.NOT_CHECKED and "no public key" in result.checks[1].summary
    assert result.exit_code == 1
    os.remove(build / "signature.json")
    result = run(build, key)
    assert verdicts(result)["signature"] is Verdict.NOT_CHECKED and result.exit_code == 1


def test_a_rewritten_policy_with_consistent_hashes_is_caught_twice(build, key):
    rewrite(build, "policy.py", lambda s: s.replace("def evaluate(", "def evaluate(  ", 1))
    v = verdicts(run(build, key))
    assert v["files"] is Verdict.PASSED          # the hashes agree: only the signature and regeneration see it
    assert v["signature"] is Verdict.REFUTED and v["frozen module"] is Verdict.REFUTED
    assert v["examples"] is Verdict.NOT_CHECKED  # the shipped module is not run once it is not the regenerated one


def test_a_rewritten_proved_source_is_what_nagini_gets_and_does_not_compile_again(build, key):
    rewrite(build, "policy_verified.py", lambda s: s + "\n# edited\n", key)
    prover = Prover()
    v = verdicts(run(build, key, prover=prover))
    assert v["signature"] is Verdict.PROVED      # re-signed by the key holder: the audit still re-derives
    assert v["compiled source"] is Verdict.REFUTED and prover.sources[0].endswith("# edited\n")


def recode(build, source, key):
    """Replace policy.code with `source` compiled (header naming the real policy.py), hashes rewritten, re-signed."""
    real = (build / "policy.py").read_bytes()
    code = policy_code(source)
    code = code[:len(MAGIC_NUMBER)] + hashlib.sha256(real).digest() + code[len(MAGIC_NUMBER) + 32:]
    (build / "policy.code").write_bytes(code)
    cert = json.loads((build / "certificate.json").read_text())
    cert["hashes"]["files"]["policy.code"] = sha256(code)
    data = (json.dumps(cert, indent=2, sort_keys=True) + "\n").encode()
    (build / "certificate.json").write_bytes(data)
    (build / "signature.json").write_bytes(sign_certificate(key[0], data))


def test_bytecode_that_is_not_the_policy_compiled_is_refuted_even_re_signed(build, key):
    source = (build / "policy.py").read_text()
    recode(build, source.replace("def evaluate(", "def evaluate_(", 1) + "\nevaluate = evaluate_\n", key)
    v = verdicts(run(build, key))
    assert v["signature"] is Verdict.PROVED and v["frozen module"] is Verdict.PASSED and v["files"] is Verdict.PASSED
    assert v["bytecode"] is Verdict.REFUTED
    recode(build, source, key)                   # the same source compiled again: equal code, other bytes maybe
    assert verdicts(run(build, key))["bytecode"] is Verdict.PASSED


def specialise(build, key):
    """Write a specialised opcode (BINARY_OP_SUBTRACT_INT for BINARY_OP, say) over one instruction of policy.code,
    hashes rewritten, re-signed: CPython compares code objects on deoptimised opcodes, so == still holds."""
    data = bytearray((build / "policy.code").read_bytes())
    head = len(MAGIC_NUMBER) + 32
    for code in code_objects(marshal.loads(bytes(data[head:]))):
        for ins in dis.get_instructions(code):
            if ins.opname in dis._specializations:
                raw = code.co_code
                at = bytes(data).index(raw, head) + ins.offset
                data[at] = dis._all_opmap[dis._specializations[ins.opname][0]]
                (build / "policy.code").write_bytes(bytes(data))
                cert = json.loads((build / "certificate.json").read_text())
                cert["hashes"]["files"]["policy.code"] = sha256(bytes(data))
                text = (json.dumps(cert, indent=2, sort_keys=True) + "\n").encode()
                (build / "certificate.json").write_bytes(text)
                if key:
                    (build / "signature.json").write_bytes(sign_certificate(key[0], text))
                return
    raise AssertionError("policy.code has no instruction with a specialised form")


def code_objects(code):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from code_objects(const)


def test_bytecode_with_a_specialised_opcode_is_refuted_though_code_objects_compare_equal(build, key):
    specialise(build, key)
    v = verdicts(run(build, key))
    assert v["signature"] is Verdict.PROVED and v["files"] is Verdict.PASSED
    assert v["bytecode"] is Verdict.REFUTED


def test_bytecode_of_another_python_is_not_checked(build, key):
    data = bytearray((build / "policy.code").read_bytes())
    data[0] ^= 0xFF
    (build / "policy.code").write_bytes(bytes(data))
    cert = json.loads((build / "certificate.json").read_text())
    cert["hashes"]["files"]["policy.code"] = sha256(bytes(data))
    (build / "certificate.json").write_text(json.dumps(cert, indent=2, sort_keys=True) + "\n")
    assert verdicts(run(build, key))["bytecode"] is Verdict.NOT_CHECKED


def test_a_rewritten_rule_in_the_spec_is_caught_by_compiling_again(build, key):
    rewrite(build, "spec/mini.toml", lambda s: s.replace("age >= 18", "age >= 16"), key)
    v = verdicts(run(build, key))
    assert v["compiled source"] is Verdict.REFUTED and v["files"] is Verdict.PASSED


@pytest.mark.parametrize("change", ["table", "extra", "missing"])
def test_files_that_differ_from_the_certificate_fail_the_files_check(build, key, change):
    if change == "table":
        (build / "spec" / "ok.json").write_text('{"admin": {"db": ["x", "y", "z"]}, "user": {"db": ["x"]}}')
    elif change == "extra":
        (build / "planted.py").write_text("x = 1\n")
    else:
        os.remove(build / "extraction.json")
    result = run(build, key)
    assert verdicts(result)["files"] is Verdict.REFUTED and result.exit_code == 1


def test_a_failed_certificate_is_refuted(tmp_path, key):
    build, _ = write_build(fake_result(load_spec(write_spec(tmp_path)), passed=False), tmp_path / "out", run_info={},
                           signer=signer(key))
    check = run(build, key).checks[0]
    assert check.verdict is Verdict.REFUTED and "FAILED" in check.summary


def test_other_tool_versions_are_unknown(build, key):
    cert = json.loads((build / "certificate.json").read_text())
    cert["tools"]["nagini"] = "1.2.0"
    data = json.dumps(cert).encode()
    (build / "certificate.json").write_bytes(data)
    (build / "signature.json").write_bytes(sign_certificate(key[0], data))
    check = run(build, key).checks[3]
    assert check.verdict is Verdict.UNKNOWN and "'1.2.0'" in check.summary


@pytest.mark.parametrize("text", ["{", "[]", '{"format": "veriguard-certificate/2"}'])
def test_a_malformed_certificate_is_an_error_and_nothing_runs_from_it(build, text):
    (build / "certificate.json").write_text(text)
    prover = Prover()
    result = run(build, prover=prover)
    v = verdicts(result)
    assert v["certificate"] is Verdict.ERROR and v["proof (Nagini)"] is Verdict.ERROR and not prover.sources
    assert result.exit_code == 1 and result.policy == "build"    # a name from a bad certificate names nothing


def test_a_check_that_breaks_is_an_error_and_a_missing_verifier_is_exit_3(build, key):
    result = run(build, key, prover=Prover(error=RuntimeError("boom")))
    assert verdicts(result)["proof (Nagini)"] is Verdict.ERROR and result.exit_code == 1
    result = run(build, key, prover=Prover(error=EnvironmentProblem("env.java_missing", "no Java")))
    assert result.checks[-1].details == {"environment": True} and result.exit_code == 3


def test_a_log_is_verified_and_counted(build, key, tmp_path):
    policy_sha = json.loads((build / "certificate.json").read_text())["hashes"]["policy"]
    log = DecisionLog(tmp_path / "decisions.jsonl", key=key[0])
    for allowed in (True, False, False):
        log.append({"policy_sha256": policy_sha, "allowed": allowed, "fail_closed": "" if allowed else "x"})
    log.append({"policy_sha256": "0" * 64, "allowed": True})
    result = run(build, key, log=tmp_path / "decisions.jsonl", log_key=key[0].public)
    assert result.ok and result.log["anchored"]
    assert result.log["decisions"] == {"this_policy": 3, "allowed": 1, "denied": 2, "fail_closed": 2,
                                       "other_builds": 0, "other_policies": 1}
    lines = (tmp_path / "decisions.jsonl").read_text().splitlines()
    (tmp_path / "decisions.jsonl").write_text("\n".join([lines[0].replace('"allowed":true', '"allowed":false')]
                                                        + lines[1:]) + "\n")
    result = run(build, key, log=tmp_path / "decisions.jsonl", log_key=key[0].public)
    assert not result.log["ok"] and "decisions" not in result.log and result.exit_code == 1


@pytest.mark.parametrize("name", ["audit.zip", "audit.tar.gz"])
def test_the_bundle_holds_the_build_the_result_and_the_log(build, key, tmp_path, name):
    DecisionLog(tmp_path / "log.jsonl").append({"policy_sha256": "1" * 64, "allowed": True})
    result = run(build, key, log=tmp_path / "log.jsonl")
    target = write_bundle(result, tmp_path / "out" / name)
    if name.endswith(".zip"):
        with zipfile.ZipFile(target) as z:
            members = {n: z.read(n) for n in z.namelist()}
    else:
        with tarfile.open(target) as t:
            members = {m.name: t.extractfile(m).read() for m in t.getmembers()}
    for rel in ("report.md", "certificate.json", "signature.json", "spec/mini.toml", "spec/ok.json", "policy.py"):
        assert members[f"mini/{rel}"] == (build / rel).read_bytes(), rel
    assert json.loads(members["audit.json"])["checks"] == [c.to_dict() for c in result.checks]
    assert json.loads(members["decision-log.json"])["records"] == 1
    assert sorted(p.name for p in target.parent.iterdir()) == [name]   # no temporary file left


def test_the_cli_prints_json_writes_the_bundle_and_exits_by_the_checks(build, key, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(audit, "prove_fresh", Prover())
    code = main(["audit", str(build), "--json", "--public-key", str(key[1]), "--bundle", str(tmp_path / "a.tgz")])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["ok"] and out["bundle"] == str(tmp_path / "a.tgz") and (tmp_path / "a.tgz").is_file()
    code = main(["audit", str(build), "--quiet"])
    text = capsys.readouterr().out
    assert code == 1 and "signature        NOT_CHECKED" in text and "FAIL" in text.splitlines()[0]


@pytest.mark.parametrize("argv, needle", [
    (["--bundle", "x.rar"], "error[audit.bundle]"), (["--public-key", "/nonexistent.pub"], "error[load.trust]"),
    (["--log-public-key", "/nonexistent.pub"], "error[key.unreadable]"),
    (["--log", "/nonexistent.jsonl"], "error[audit.input]")])
def test_bad_input_is_exit_2_before_any_work(build, argv, needle, monkeypatch, capsys):
    prover = Prover()
    monkeypatch.setattr(audit, "prove_fresh", prover)
    code = main(["audit", str(build), *argv])
    err = capsys.readouterr().err
    assert code == 2 and needle in err and "Traceback" not in err and not prover.sources


def test_not_a_build_is_exit_2(tmp_path, capsys):
    assert main(["audit", str(tmp_path)]) == 2 and "error[audit.input]" in capsys.readouterr().err


class FifoServer:
    """Serves `first` to the first reader of a FIFO at `path` and `later` to every later one, until stopped."""

    def __init__(self, path, first, later):
        self.path, self.first, self.later, self.served = path, first, later, 0
        self.stop = threading.Event()
        os.remove(path)
        os.mkfifo(path)
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while not self.stop.is_set():
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:          # no reader yet
                time.sleep(0.005)
                continue
            os.set_blocking(fd, True)
            with contextlib.suppress(OSError):
                os.write(fd, self.first if self.served == 0 else self.later)
            os.close(fd)
            self.served += 1
            time.sleep(0.05)

    def close(self):
        self.stop.set()
        self.thread.join(5)


def test_a_spec_that_reads_differently_each_time_is_refused_not_read(build, key):
    """spec/mini.toml a FIFO that gives the policy's real spec to one read and the certified one to the others:
    the audit must not compile one spec and hash-check another. A FIFO is never read: the files check refutes it,
    and nothing is compiled or proved from it."""
    real = (build / "spec" / "mini.toml").read_bytes()
    claimed = real.replace(b"age >= 18", b"age >= 16")
    assert claimed != real
    rewrite(build, "spec/mini.toml", lambda s: s.replace("age >= 18", "age >= 16"), key)
    server = FifoServer(build / "spec" / "mini.toml", real, claimed)
    try:
        prover = Prover()
        result = run(build, key, prover=prover)
    finally:
        server.close()
    v = verdicts(result)
    assert v["signature"] is Verdict.PROVED and not result.ok and not prover.sources
    assert v["files"] is Verdict.REFUTED and "not a regular file" in result.checks[2].summary
    assert v["compiled source"] is Verdict.ERROR and v["proof (Nagini)"] is Verdict.ERROR


def test_a_symbolic_link_in_the_build_is_refused(build, key, tmp_path):
    os.rename(build / "spec" / "ok.json", tmp_path / "elsewhere.json")
    os.symlink(tmp_path / "elsewhere.json", build / "spec" / "ok.json")
    result = run(build, key)
    check = result.checks[2]
    assert check.verdict is Verdict.REFUTED and "ok.json: it is a symbolic link" in check.summary
    assert verdicts(result)["compiled source"] is Verdict.ERROR


def test_the_spec_compiled_must_be_the_one_the_certificate_binds(build, key, tmp_path, monkeypatch):
    """However the spec is loaded, its sha256 and tables are compared with hashes.spec and hashes.tables."""
    import veriguard.synth.specfile as specfile

    other = load_spec(write_spec(tmp_path, (build / "spec" / "mini.toml").read_text().replace("age >= 18",
                                                                                              "age >= 16")))
    monkeypatch.setattr(specfile, "load_spec", lambda path: other)
    prover = Prover()
    result = run(build, key, prover=prover)
    assert verdicts(result)["compiled source"] is Verdict.ERROR and not prover.sources
    assert "not the one the certificate binds (hashes.spec differ)" in result.checks[4].summary


@pytest.mark.parametrize("torn", [b'{"allowed":true,"has', b'{"allowed":true,"policy_sha256":"P"}'])
def test_a_log_with_a_torn_last_line_is_counted_as_verified(build, key, tmp_path, torn):
    """verify-log accepts an incomplete last line (an interrupted write); the audit counts the records it verified,
    from the bytes it read, never the torn line (JSON or not)."""
    policy_sha = json.loads((build / "certificate.json").read_text())["hashes"]["policy"]
    log = DecisionLog(tmp_path / "decisions.jsonl", key=key[0])
    for allowed in (True, False):
        log.append({"policy_sha256": policy_sha, "allowed": allowed})
    with open(log.path, "ab") as f:
        f.write(torn.replace(b"P", policy_sha.encode()))
    result = run(build, key, log=log.path, log_key=key[0].public)
    assert result.log["ok"] and result.log["records"] == 2 and "incomplete last line" in result.log["note"]
    assert result.log["decisions"] == {"this_policy": 2, "allowed": 1, "denied": 1, "fail_closed": 0,
                                       "other_builds": 0, "other_policies": 0}


def test_an_extraction_json_that_is_not_the_specs_is_refuted_even_re_signed(build, key):
    """A signed build whose extraction.json reads the agent otherwise (here: `role` from another field) passes the
    hashes and the signature; the extraction check derives it again from the spec."""
    path = build / "extraction.json"
    path.write_text(path.read_text().replace('"path": "role"', '"path": "claimed_role"'))
    cert = json.loads((build / "certificate.json").read_text())
    cert["hashes"]["files"]["extraction.json"] = sha256(path.read_bytes())
    data = (json.dumps(cert, indent=2, sort_keys=True) + "\n").encode()
    (build / "certificate.json").write_bytes(data)
    (build / "signature.json").write_bytes(sign_certificate(key[0], data))
    result = run(build, key)
    v = verdicts(result)
    assert v["signature"] is Verdict.PROVED and v["files"] is Verdict.PASSED and not result.ok
    assert v["extraction"] is Verdict.REFUTED and "extraction.role" in next(c.summary for c in result.checks
                                                                          if c.name == "extraction")


def test_a_frozen_classifier_is_retrained_and_compared(monkeypatch):
    """Everything but a frozen classifier is compared byte for byte; the classifier against one trained here (a stub
    here: the real training is deterministic on one machine, and slow), NOT_CHECKED when they differ."""
    import veriguard.synth.classifier_build as classifier_build

    spec = load_spec(SPECS / "mind2web_sc.toml")
    banks = [n for n, cfg in spec.extraction.items() if "bank" in cfg]
    frozen = {"format": "stub", "weights": [1, 2]}
    shipped = extraction_json(spec, {n: {**cfg, "frozen": frozen} if n in banks else cfg
                                     for n, cfg in spec.extraction.items()}).encode()
    trained = []
    monkeypatch.setattr(classifier_build, "freeze_classifier", lambda s, n, cfg: trained.append(n) or dict(frozen))
    assert banks and audit._extraction(spec, shipped)[0] is Verdict.PASSED and trained == banks
    monkeypatch.setattr(classifier_build, "freeze_classifier", lambda s, n, cfg: {**frozen, "weights": [1, 3]})
    verdict, summary = audit._extraction(spec, shipped)
    assert verdict is Verdict.NOT_CHECKED and "not re-derived" in summary and banks[0] in summary
    changed = shipped.replace(b'"enforcement": {', b'"enforcement": {"x": 1, ', 1)
    assert changed != shipped and audit._extraction(spec, changed)[0] is Verdict.REFUTED
