"""Bad input ends with exit code 2 (3 for the environment) and a located message, never a traceback."""
import os
import stat

import pytest

from tests.conftest import MINIMAL, write_spec
from veriguard.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out.out, out.err


def test_malformed_spec(tmp_path, capsys):
    path = write_spec(tmp_path, MINIMAL.replace("[arguments]", "[arguments"))
    code, _, err = run(capsys, "synth", str(path), "--out", str(tmp_path / "o"), "--quiet")
    assert code == 2 and f"{path}:7:11:" in err and "fix:" in err


def test_malformed_contract(tmp_path, capsys):
    path = write_spec(tmp_path, MINIMAL.replace("age >= 18", "age >== 18"))
    code, _, err = run(capsys, "synth", str(path), "--out", str(tmp_path / "o"), "--quiet")
    assert code == 2 and "contract.syntax" in err and f"{path}:" in err


def test_unknown_argument_and_table(tmp_path, capsys):
    for wrong, needle in (("agee >= 18", "unknown name 'agee'"), ("okk(role, a, b)", "unknown table")):
        path = write_spec(tmp_path, MINIMAL.replace("age >= 18" if "agee" in wrong else "ok(role, a, b)", wrong))
        code, _, err = run(capsys, "synth", str(path), "--out", str(tmp_path / "o"), "--quiet")
        assert code == 2 and needle in err


def test_rule_that_can_never_fire(tmp_path, capsys):
    path = write_spec(tmp_path, MINIMAL.replace('rule adult "Users must be adults": age >= 18',
                                                'rule adult "Users must be adults": age >= 18 or age < 18'))
    code, _, err = run(capsys, "synth", str(path), "--out", str(tmp_path / "o"), "--quiet")
    assert code == 2 and "contract.can_fire" in err and "never be violated" in err
    assert f"{path}:" in err and not (tmp_path / "o" / "mini").exists()


@pytest.mark.parametrize("extra,code_name,needle", [
    ('rule child "Users must be children": age < 18', "contract.not_deny_all", "contradict"),  # contradictory rules
    ('rule grown "Users must be over 21": age >= 21', "contract.not_shadowed", "adult"),       # a shadowed rule
])
def test_contradictory_or_shadowed_rules(tmp_path, capsys, extra, code_name, needle):
    adult = 'rule adult "Users must be adults": age >= 18'
    path = write_spec(tmp_path, MINIMAL.replace(adult, adult + "\n" + extra))
    code, _, err = run(capsys, "synth", str(path), "--out", str(tmp_path / "o"), "--quiet")
    assert code == 2 and code_name in err and needle in err


def test_check_with_bad_json_and_bad_build(tmp_path, capsys):
    code, _, err = run(capsys, "check", str(tmp_path), "--args", "{}")
    assert code == 2 and "load.missing" in err


def test_verify_needs_a_python_file(tmp_path, capsys):
    code, _, err = run(capsys, "verify", str(tmp_path / "nope.txt"), "--quiet")
    assert code == 2 and "not a Python file" in err


def fake_java(tmp_path, version_line):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    java = bin_dir / "java"
    java.write_text(f"#!/bin/sh\necho '{version_line}' >&2\n")
    java.chmod(java.stat().st_mode | stat.S_IEXEC)
    return bin_dir


def test_java_too_old(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(fake_java(tmp_path, 'java version "1.8.0_392"')) + os.pathsep + "/usr/bin")
    (tmp_path / "p.py").write_text("x = 1\n")
    code, _, err = run(capsys, "verify", str(tmp_path / "p.py"), "--quiet")
    assert code == 3 and "env.java_old" in err and "Java 8" in err and "openjdk" in err


def test_java_missing(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    (tmp_path / "p.py").write_text("x = 1\n")
    code, _, err = run(capsys, "verify", str(tmp_path / "p.py"), "--quiet")
    assert code == 3 and "env.java_missing" in err


def test_every_command_has_help(capsys):
    for cmd in ("synth", "verify", "check", "report"):
        with pytest.raises(SystemExit) as e:
            main([cmd, "--help"])
        assert e.value.code == 0
        assert "exit codes" in capsys.readouterr().out
