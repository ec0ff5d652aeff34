"""synth --previous: an update that allows what the previous build denied is refused (nothing written) unless
approved; the approval goes into the certificate and the report. The proof is faked (no JVM): `synthesize`
returns fake_result, everything after it (diff, freeze, load) is real."""
import json

import pytest
from veriguard.enforce.loader import load_policy
from veriguard.synth import pipeline
from veriguard.synth.freeze import write_build
from veriguard.synth.specfile import load_spec

from tests.conftest import MINIMAL, write_spec
from tests.unit.test_compile_and_freeze import fake_result
from veriguard.cli import main

LOOSER = MINIMAL.replace("age >= 18", "age >= 16").replace("age < 18 ==>", "age < 16 ==>")
TIGHTER = MINIMAL.replace("age >= 18", "age >= 21").replace("age < 18 ==>", "age < 21 ==>")


@pytest.fixture
def fake_proof(monkeypatch):
    calls = []

    def synthesize(spec, worker, source, **kw):
        calls.append(spec.name)
        return fake_result(spec)

    monkeypatch.setattr(pipeline, "synthesize", synthesize)
    return calls


@pytest.fixture
def previous(tmp_path):
    folder = tmp_path / "old"
    folder.mkdir()
    return write_build(fake_result(load_spec(write_spec(folder))), folder / "out", run_info={})[0]


def new_spec(tmp_path, body):
    folder = tmp_path / "new"
    folder.mkdir(exist_ok=True)
    return write_spec(folder, body)


def approval(tmp_path, text='by = "Dana Sec"\nreason = "16-year-olds may use the service since the policy change"\n'):
    path = tmp_path / "approval.toml"
    path.write_text(text, encoding="utf-8")
    return path


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out.out, out.err


def test_a_loosening_update_without_approval_is_refused_and_nothing_is_written(tmp_path, capsys, fake_proof,
                                                                               previous):
    out = tmp_path / "out"
    code, _, err = run(capsys, "synth", new_spec(tmp_path, LOOSER), "--previous", previous, "--out", out, "--quiet")
    assert code == 1 and fake_proof == ["mini"]
    assert "error[update.unapproved]" in err and '"age": 1' in err and "OLD: denied (adult); NEW: allowed" in err
    assert not out.exists() or not any(out.iterdir())


def test_an_approved_loosening_update_records_the_approval(tmp_path, capsys, fake_proof, previous):
    out = tmp_path / "out"
    code, stdout, _ = run(capsys, "synth", new_spec(tmp_path, LOOSER), "--previous", previous, "--out", out,
                          "--approve", approval(tmp_path), "--quiet")
    assert code == 0 and "approved by Dana Sec" in stdout
    policy = load_policy(out / "mini")
    a = policy.certificate["approval"]
    assert a["by"] == "Dana Sec" and a["previous_policy"] == load_policy(previous).sha256 and a["newly_allowed"] >= 1
    assert "## Approved update" in (out / "mini" / "report.md").read_text() and "Dana Sec" in \
        (out / "mini" / "report.md").read_text()


def test_a_tightening_update_needs_no_approval_and_says_what_is_newly_denied(tmp_path, capsys, fake_proof,
                                                                            previous):
    out = tmp_path / "out"
    code, stdout, _ = run(capsys, "synth", new_spec(tmp_path, TIGHTER), "--previous", previous, "--out", out,
                          "--json", "--quiet")
    assert code == 0
    update = json.loads(stdout)["results"][0]["update"]
    assert update["diff"]["newly_allowed"]["verdict"] == "PROVED"
    assert update["diff"]["newly_denied"]["verdict"] == "REFUTED" and "approval" not in update
    assert "approval" not in load_policy(out / "mini").certificate


def test_an_unchanged_policy_passes_without_approval(tmp_path, capsys, fake_proof, previous):
    code, stdout, _ = run(capsys, "synth", new_spec(tmp_path, MINIMAL), "--previous", previous,
                          "--out", tmp_path / "out", "--quiet")
    assert code == 0 and "newly allowed: PROVED" in stdout and "newly denied: PROVED" in stdout


def test_different_arguments_are_refused_before_any_proof(tmp_path, capsys, fake_proof, previous):
    body = MINIMAL.replace('items = "list[(str, str)]"', 'items = "list[(str, str)]"\nadmin = "bool"') \
        .replace('items = [["db", "x"]] }', 'items = [["db", "x"]], admin = true }')
    code, _, err = run(capsys, "synth", new_spec(tmp_path, body), "--previous", previous, "--out", tmp_path / "o",
                       "--quiet")
    assert code == 2 and "error[diff.arguments]" in err and "only NEW has the argument 'admin'" in err
    assert fake_proof == []


@pytest.mark.parametrize("text,needle", [
    ('reason = "why"\n', "`by` (who approves the update) must be a non-empty string, got missing"),
    ('by = "Dana"\n', "`reason` (why the new policy may allow more) must be a non-empty string, got missing"),
    ('by = "Dana"\nreason = "   "\n', "approval.toml:2:10: error[approval.missing]"),
    ('by = 3\nreason = "why"\n', "approval.toml:1:6: error[approval.missing]"),
    ('by = "Dana"\nreason = "why"\nwhen = "now"\n', "approval.toml:3:8: error[approval.key]: unknown key 'when'"),
    ('by = "Dana\n', "approval.toml:1:"),
    ('by = "Dana\\nEve"\nreason = "why"\n', "approval.toml:1:6: error[approval.by]"),
])
def test_a_bad_approval_file_is_refused_with_its_place(tmp_path, capsys, fake_proof, previous, text, needle):
    code, _, err = run(capsys, "synth", new_spec(tmp_path, LOOSER), "--previous", previous, "--approve",
                       approval(tmp_path, text), "--out", tmp_path / "o", "--quiet")
    assert code == 2 and needle in err and "fix:" in err and fake_proof == []


@pytest.mark.parametrize("extra,needle", [
    (("--llm",), "compile-path syntheses only"),
    (("--approve", "x.toml"), None),
])
def test_previous_is_refused_where_it_cannot_check(tmp_path, capsys, fake_proof, previous, extra, needle):
    spec = new_spec(tmp_path, LOOSER)
    if needle is None:  # --approve without --previous
        code, _, err = run(capsys, "synth", spec, *extra, "--out", tmp_path / "o", "--quiet")
        assert code == 2 and "--approve needs --previous" in err
    else:
        code, _, err = run(capsys, "synth", spec, "--previous", previous, *extra, "--out", tmp_path / "o", "--quiet")
        assert code == 2 and needle in err
    code, _, err = run(capsys, "synth", spec, spec, "--previous", previous, "--out", tmp_path / "o", "--quiet")
    assert code == 2 and "one new policy" in err and fake_proof == []
