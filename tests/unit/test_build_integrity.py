"""Files stay where they belong (finding 8, r6) and the certificate covers every file the monitor trusts,
with a strictly typed schema (findings 5 and 7, r3)."""
import dataclasses
import json
import os
import shutil

import pytest

from veriguard.contracts.errors import SpecError
from veriguard.contracts.build_format import certificate_bytes
from veriguard.enforce.loader import PolicyLoadError, load_policy
from veriguard.enforce.monitor import Monitor
from veriguard.synth.freeze import _write, sha256, write_build
from veriguard.synth.specfile import load_spec
from tests.conftest import MINIMAL, SHIPPED, write_spec
from tests.unit.test_compile_and_freeze import fake_result
from veriguard.cli import main

TRAVERSAL = '''
name = "trav"
request = "test"
[arguments]
age = { type = "int" }
[contract]
rules = """
rule adult "Users must be adults": age >= 18
"""
[extraction]
age = { from = "code", schema = "SCHEMA" }
'''


def traversal_spec(tmp_path, schema):
    folder = tmp_path / "a" / "b" / "c"
    folder.mkdir(parents=True, exist_ok=True)
    (tmp_path / "PLANTED.txt").write_text("ATTACKER CONTENT\n")
    path = folder / "trav.toml"
    path.write_text(TRAVERSAL.replace("SCHEMA", schema).lstrip("\n"))
    return path


def test_r6_a_path_out_of_the_spec_folder_is_refused_before_any_work(tmp_path, capsys):
    path = traversal_spec(tmp_path, "../../../PLANTED.txt")
    (tmp_path / "victim").mkdir()
    code = main(["synth", str(path), "--out", str(tmp_path / "victim" / "build"), "--mutants", "2", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and f"{path}:10:34: error[spec.path]" in err and "Traceback" not in err
    assert sorted(p.name for p in (tmp_path / "victim").iterdir()) == []


@pytest.mark.parametrize("schema, why", [
    ("../../../PLANTED.txt", "climbs out"), ("/etc/passwd", "absolute"), ("C:/x.json", "absolute"),
    ("sub/../../x.json", "climbs out"), ("a\\\\..\\\\x.json", "backslash"), ("out.json", "symbolic link"),
    ("outdir/x.json", "symbolic link"), ("", "not a file path")])
def test_every_way_out_of_the_spec_folder_is_refused(tmp_path, schema, why):
    path = traversal_spec(tmp_path, schema)
    os.symlink(tmp_path / "PLANTED.txt", path.parent / "out.json")
    os.symlink(tmp_path, path.parent / "outdir")
    with pytest.raises(SpecError) as e:
        load_spec(path)
    assert e.value.code == "spec.path" and why in e.value.message and e.value.pos.line == 10 and e.value.fix


def test_a_symbolic_link_that_stays_inside_is_fine(tmp_path):
    path = traversal_spec(tmp_path, "link.json")
    (path.parent / "real").mkdir()
    (path.parent / "real" / "schema.json").write_text("{}")
    os.symlink(path.parent / "real" / "schema.json", path.parent / "link.json")
    assert load_spec(path).extraction_files == (("link.json", sha256(b"{}")),)


def test_a_table_outside_the_folder_is_refused_without_echoing_its_rows(tmp_path):
    secret = tmp_path / "secret.json"
    secret.write_text('{"admin": {"db": ["TOP-SECRET-ROW", 12]}}')
    spec_dir = tmp_path / "s"
    spec_dir.mkdir()
    with pytest.raises(SpecError) as e:
        load_spec(write_spec(spec_dir, MINIMAL.replace('file = "ok.json"', 'file = "../secret.json"')))
    assert e.value.code == "spec.path" and e.value.file.endswith("mini.toml")
    assert "TOP-SECRET" not in str(e.value) and e.value.pos.line > 0


def test_freeze_writes_only_inside_the_build_directory(tmp_path):
    spec = load_spec(write_spec(tmp_path))
    escaped = dataclasses.replace(spec, extraction={"age": {"from": "code", "schema": "../../escape.json"}})
    (tmp_path.parent / "escape.json").write_text("{}")
    with pytest.raises(SpecError) as e:
        write_build(fake_result(escaped), tmp_path / "out", run_info={})
    assert e.value.code == "spec.path"
    assert not (tmp_path / "out" / "mini").exists() and [p.name for p in (tmp_path / "out").iterdir()] == []
    with pytest.raises(SpecError) as e:
        _write(tmp_path / "out", "spec/../../x", b"x")
    assert e.value.code == "freeze.path" and not (tmp_path / "x").exists()


def test_freeze_refuses_a_table_that_changed_after_the_proof_read_it(tmp_path):
    spec = load_spec(write_spec(tmp_path))
    (tmp_path / "ok.json").write_text('{"admin": {"db": ["x", "y", "z"]}, "user": {"db": ["x"]}}')
    with pytest.raises(SpecError) as e:
        write_build(fake_result(spec), tmp_path / "out", run_info={})
    assert e.value.code == "freeze.changed"


@pytest.fixture(scope="module")
def eicu_build(tmp_path_factory):
    spec = load_spec(next(p for p in SHIPPED if p.stem == "eicu_ac"))
    build, _ = write_build(fake_result(spec), tmp_path_factory.mktemp("b"), run_info={})
    return build


def copy(build, tmp_path):
    target = tmp_path / "copy" / build.name   # the folder named after its policy, as synth writes it
    shutil.copytree(build, target)
    return target


def certificate(build):
    return json.loads((build / "certificate.json").read_text())


def test_r3_a_swapped_extractor_is_refused(eicu_build, tmp_path):
    build = copy(eicu_build, tmp_path)
    doc = json.loads((build / "extraction.json").read_text())
    doc["extraction"]["accessed"] = {"from": "field", "path": "claimed"}
    (build / "extraction.json").write_text(json.dumps(doc))
    for load in (load_policy, Monitor.from_build):
        with pytest.raises(PolicyLoadError) as e:
            load(build)
        assert e.value.code == "load.tampered" and "extraction.json" in e.value.message


def test_the_certificate_covers_every_file_the_monitor_reads(eicu_build):
    files = certificate(eicu_build)["hashes"]["files"]
    assert set(files) == {"policy.py", "policy.code", "policy_verified.py", "extraction.json", "spec/eicu_ac.toml",
                          "spec/eicu_ac/permission_table.json", "spec/eicu_ac/schema.json"}
    assert all(sha256((eicu_build / rel).read_bytes()) == digest for rel, digest in files.items())


@pytest.mark.parametrize("rel", ["policy.py", "policy.code", "policy_verified.py", "extraction.json",
                                 "spec/eicu_ac.toml", "spec/eicu_ac/permission_table.json", "spec/eicu_ac/schema.json"])
@pytest.mark.parametrize("how", ["append", "delete", "symlink_out", "directory"])
def test_any_change_to_a_certified_file_is_refused(eicu_build, tmp_path, rel, how):
    build = copy(eicu_build, tmp_path)
    target = build / rel
    if how == "append":
        target.write_bytes(target.read_bytes() + b"\n")
    elif how == "delete":
        target.unlink()
    elif how == "symlink_out":
        outside = tmp_path / "same_bytes"
        outside.write_bytes(target.read_bytes())
        target.unlink()
        os.symlink(outside, target)
    else:
        target.unlink()
        target.mkdir()
    with pytest.raises(PolicyLoadError) as e:
        load_policy(build, accept_unproved=True)
    assert e.value.code in ("load.tampered", "load.missing")


@pytest.mark.parametrize("extra", ["spec/eicu_ac/other.json", "spec/new.toml"])
def test_a_file_slipped_into_spec_is_refused(eicu_build, tmp_path, extra):
    build = copy(eicu_build, tmp_path)
    (build / extra).write_text("{}")
    with pytest.raises(PolicyLoadError, match="does not cover") as e:
        load_policy(build)
    assert e.value.code == "load.tampered"


def test_the_mind2web_bank_is_covered(tmp_path):
    spec = load_spec(next(p for p in SHIPPED if p.stem == "mind2web_sc"))
    build, cert = write_build(fake_result(spec), tmp_path / "out", run_info={})
    assert "spec/mind2web_sc/categories.toml" in cert["hashes"]["files"]
    bank = build / "spec" / "mind2web_sc" / "categories.toml"
    bank.write_text(bank.read_text() + '\n[[category]]\nname = "x"\n')
    with pytest.raises(PolicyLoadError, match="categories.toml"):
        load_policy(build)


def rewrite(build, edit):
    cert = certificate(build)
    edit(cert)
    (build / "certificate.json").write_bytes(certificate_bytes(cert))


def set_in(path, value):
    def edit(cert):
        node = cert
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return edit


@pytest.mark.parametrize("edit, needle", [
    (set_in(["fully_proved"], "false"), "fully_proved"),
    (set_in(["fully_proved"], 1), "fully_proved"),
    (set_in(["fully_proved"], False), "contradicts"),
    (set_in(["status"], "proved"), "status"),
    (set_in(["hashes"], "x"), "hashes"),
    (set_in(["hashes", "policy"], "A" * 64), "hashes.policy"),
    (set_in(["hashes", "files"], []), "hashes.files"),
    (set_in(["hashes", "files", "../../../etc/passwd"], "0" * 64), "not a path inside"),
    (set_in(["hashes", "extraction_files", "x.json"], "0" * 64), "must list exactly"),
    (lambda c: c["hashes"]["files"].pop("extraction.json"), "must list exactly"),
    (lambda c: c["hashes"]["files"].pop("spec/eicu_ac/schema.json"), "must list exactly"),
    (set_in(["hashes", "tables", "eicu_ac/permission_table.json"], "0" * 64), "disagrees"),
    (set_in(["hashes", "spec"], "0" * 64), "disagrees"),
    (set_in(["hashes", "extra"], "0" * 64), "exactly the keys"),
    (set_in(["signature"], "trust me"), "unexpected keys"),
    (set_in(["policy"], "../x"), "policy"),
    (set_in(["format"], "veriguard-certificate/1"), "format"),
    (lambda c: c.pop("hashes"), "hashes"),
])
def test_a_malformed_certificate_is_a_clear_error(eicu_build, tmp_path, edit, needle):
    build = copy(eicu_build, tmp_path)
    rewrite(build, edit)
    with pytest.raises(PolicyLoadError) as e:
        load_policy(build, accept_unproved=True)
    assert e.value.code.startswith("load.certificate") and needle in e.value.message and e.value.fix


@pytest.mark.parametrize("raw", [b"[]", b'"cert"', b"\xff\xfe{}", b"[" * 100_000 + b"]" * 100_000, b"1" * 5000,
                                 b'{"format": 1, "format": 2}', b'{"x": NaN}', b"", b"{"])
def test_a_certificate_that_is_not_a_json_object_is_a_clear_error(eicu_build, tmp_path, raw):
    build = copy(eicu_build, tmp_path)
    (build / "certificate.json").write_bytes(raw)
    with pytest.raises(PolicyLoadError) as e:
        load_policy(build)
    assert e.value.code.startswith("load.certificate")


def test_editing_policy_py_and_one_of_its_hashes_is_refused(eicu_build, tmp_path):
    build = copy(eicu_build, tmp_path)
    policy = (build / "policy.py").read_bytes() + b"\ndef evaluate(args):\n    return PolicyDecision(True, (), ())\n"
    (build / "policy.py").write_bytes(policy)
    rewrite(build, set_in(["hashes", "policy"], sha256(policy)))
    with pytest.raises(PolicyLoadError) as e:
        load_policy(build)
    assert e.value.code == "load.certificate" and "disagrees" in e.value.message


def consistent(build, rel, data):
    """Replace a certified file and every hash of it: what only a signature could catch."""
    (build / rel).write_bytes(data)
    rewrite(build, set_in(["hashes", "files", rel], sha256(data)))


@pytest.mark.parametrize("data, needle", [(b"not json", "not valid JSON"), (b"\xff", "not UTF-8"), (b"[]", "object"),
                                          (b'{"policy": "other", "extraction": {}, "enforcement": {}}', "policy")])
def test_a_malformed_extraction_json_is_a_clear_error(eicu_build, tmp_path, data, needle):
    build = copy(eicu_build, tmp_path)
    consistent(build, "extraction.json", data)
    with pytest.raises(PolicyLoadError) as e:
        load_policy(build)
    assert e.value.code == "load.extraction" and needle in e.value.message


@pytest.mark.parametrize("data", [b"def broken(:\n", b"x = 1\n", b"\x00", b"raise SystemError('boom')\n"])
def test_a_policy_py_that_does_not_import_as_a_frozen_policy_is_a_clear_error(eicu_build, tmp_path, data):
    build = copy(eicu_build, tmp_path)
    consistent(build, "policy.py", data)
    rewrite(build, set_in(["hashes", "policy"], sha256(data)))
    with pytest.raises(PolicyLoadError) as e:
        load_policy(build)
    assert e.value.code == "load.exec"


def test_the_unmodified_build_loads_and_decides(eicu_build):
    policy = load_policy(eicu_build)
    assert policy.trusted and policy.extraction["extraction"]["accessed"]["from"] == "code"
    assert not policy.evaluate({"role": "nursing", "accessed": [["diagnosis", "diagnosisname"]]}).allowed
