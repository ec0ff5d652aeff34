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


# --- no traceback anywhere: check, report, eval, log, synth --replay, verify-log, keys ---
@pytest.fixture(scope="module")
def payments_build(tmp_path_factory):
    from veriguard.synth.freeze import write_build
    from veriguard.synth.specfile import load_spec
    from tests.conftest import SHIPPED
    from tests.unit.test_compile_and_freeze import fake_result

    spec = load_spec(next(p for p in SHIPPED if p.stem == "payments"))
    build, _ = write_build(fake_result(spec), tmp_path_factory.mktemp("b"), run_info={})
    return build


GOOD_ARGS = ('{"user": {"role": "treasurer", "sent_today_cents": 0, "mfa": true}, "payment": {"recipient": '
             '"acme-supplies", "amount_cents": 100, "currency": "USD", "method": "ach", "human_approved": false}}')


def test_check_decides(payments_build, capsys):
    code, out, _ = run(capsys, "check", str(payments_build), "--args", GOOD_ARGS)
    assert code == 0 and '"allowed": true' in out


@pytest.mark.parametrize("args,needle", [
    ('{"x": ' + "9" * 5000 + "}", "4300 digits"),
    ("[" * 100_000, "nested too deeply"),
    ('{"user": 1, "user": 2}', "duplicate key"),
    ('{"x": NaN}', "NaN"),
    ("{oops", "check.args"),
])
def test_check_with_bad_json(payments_build, capsys, args, needle):
    code, _, err = run(capsys, "check", str(payments_build), "--args", args)
    assert code == 2 and needle in err and "check.args" in err


@pytest.mark.parametrize("content,needle", [(b'{"a": "\xff"}', "not UTF-8"), (b"[" * 100_000, "nested too deeply"),
                                            (b'{\n  "a": }', ":2:8:")])
def test_check_with_a_bad_args_file(payments_build, tmp_path, capsys, content, needle):
    f = tmp_path / "args.json"
    f.write_bytes(content)
    code, _, err = run(capsys, "check", str(payments_build), "--args", f"@{f}")
    assert code == 2 and needle in err and str(f) in err


@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_check_never_reads_an_args_file_that_is_not_a_regular_file(payments_build, tmp_path, capsys, kind):
    path = "/dev/zero" if kind == "device" else str(tmp_path / "fifo")
    if kind == "fifo":
        os.mkfifo(path)
    code, _, err = run(capsys, "check", str(payments_build), "--args", f"@{path}")
    assert code == 2 and "not a regular file" in err and path in err and "fix:" in err


def test_check_never_reads_an_args_file_over_the_limit(payments_build, tmp_path, capsys):
    f = tmp_path / "args.json"
    with open(f, "wb") as out:
        out.truncate(64 * 2**20 + 1)  # sparse: no disk used
    code, _, err = run(capsys, "check", str(payments_build), "--args", f"@{f}")
    assert code == 2 and "larger than 67,108,864 bytes" in err and str(f) in err and "64 MiB" in err


def test_check_with_a_missing_args_file(payments_build, tmp_path, capsys):
    code, _, err = run(capsys, "check", str(payments_build), "--args", f"@{tmp_path / 'nope.json'}")
    assert code == 2 and "cannot read" in err


def test_check_with_arguments_outside_the_schema_fails_closed(payments_build, capsys):
    for args in ("[]", '{"user": 1}', GOOD_ARGS.replace("true", "1", 1)):
        code, out, _ = run(capsys, "check", str(payments_build), "--args", args)
        assert code == 2 and '"allowed": false' in out and "fail closed" in out
    code, out, _ = run(capsys, "check", str(payments_build), "--args", GOOD_ARGS.replace("100", "1" + "0" * 4000))
    assert code == 0 and '"allowed": false' in out  # a 4,001-digit amount is an int: over the limit, denied


@pytest.mark.parametrize("damage", ["list", "not json", "not utf-8", "deep", "policy edited", "no policy"])
def test_check_on_a_broken_build_is_exit_2(payments_build, tmp_path, capsys, damage):
    import shutil

    build = tmp_path / "b" / "payments"
    shutil.copytree(payments_build, build)
    cert = build / "certificate.json"
    edits = {"list": lambda: cert.write_text("[1, 2]"), "not json": lambda: cert.write_text("{"),
             "not utf-8": lambda: cert.write_bytes(b'{"policy": "\xff"}'), "deep": lambda: cert.write_text("[" * 100_000),
             "policy edited": lambda: (build / "policy.py").write_text("print('hi')\n"),
             "no policy": lambda: (build / "policy.py").unlink()}
    edits[damage]()
    code, _, err = run(capsys, "check", str(build), "--args", GOOD_ARGS)
    assert code == 2 and "error[load." in err


@pytest.mark.parametrize("cert", [b"[1]", b"{", b'{"a": "\xff"}', b'{"gates": 5, "properties": "x", "proof": []}'])
def test_report_on_a_bad_certificate(tmp_path, capsys, cert):
    (tmp_path / "certificate.json").write_bytes(cert)
    code, _, err = run(capsys, "report", str(tmp_path))
    assert code == 2 and "report.input" in err


def test_report_on_a_missing_build(tmp_path, capsys):
    code, _, err = run(capsys, "report", str(tmp_path / "nope"))
    assert code == 2 and "cannot read" in err


@pytest.mark.parametrize("records", [b"{", b'{"a": 1}', b'[{"id": 1}]', b'[{"id": 1, "identity": "x", "label": "one", '
                                     b'"inaccessible_db": {}}]', b"\xff\xfe", b"[" * 100_000])
def test_eval_on_bad_data(payments_build, tmp_path, capsys, records):
    (tmp_path / "ehragent").mkdir()
    (tmp_path / "ehragent" / "eicu_ac.json").write_bytes(records)
    code, _, err = run(capsys, "eval", "eicu-ac", "--data", str(tmp_path), "--build", str(payments_build), "--quiet",
                       "--cases-dir", str(tmp_path / "cases"))
    assert code == 2 and "eval.data" in err


def test_eval_on_a_missing_build(tmp_path, capsys):
    code, _, err = run(capsys, "eval", "eicu-ac", "--data", str(tmp_path), "--build", str(tmp_path / "nope"), "--quiet")
    assert code == 2 and "load.missing" in err and "veriguard synth" in err


def test_log_on_a_garbage_store(tmp_path, capsys):
    store = tmp_path / "t.db"
    store.write_bytes(b"not a database" * 100)
    code, _, err = run(capsys, "log", "--store", str(store))
    assert code == 2 and "store" in err


@pytest.mark.parametrize("content", [b"{", b"[]", b'{"exchanges": []}', b"\xff"])
def test_synth_replay_of_a_bad_transcript(tmp_path, capsys, content):
    spec = write_spec(tmp_path, MINIMAL)
    transcript = tmp_path / "t.json"
    transcript.write_bytes(content)
    code, _, err = run(capsys, "synth", str(spec), "--replay", str(transcript), "--store", str(tmp_path / "s.db"),
                       "--quiet")
    assert code == 2 and "synth.replay" in err


def test_keys_new_refuses_to_overwrite(tmp_path, capsys):
    assert run(capsys, "keys", "new", "--out", str(tmp_path))[0] == 0
    code, _, err = run(capsys, "keys", "new", "--out", str(tmp_path))
    assert code == 2 and "already exists" in err


def test_an_unexpected_error_is_one_line_with_exit_70(monkeypatch, capsys):
    import veriguard.cli as cli

    def boom(args):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(cli, "cmd_report", boom)
    monkeypatch.delenv("VERIGUARD_DEBUG", raising=False)
    code, _, err = run(capsys, "report", "x")
    assert code == 70 and err.startswith("internal error: ZeroDivisionError: a bug") and "VERIGUARD_DEBUG" in err
    monkeypatch.setenv("VERIGUARD_DEBUG", "1")
    with pytest.raises(ZeroDivisionError):
        main(["report", "x"])


def test_an_os_error_names_the_file(monkeypatch, capsys):
    import veriguard.cli as cli

    def unreadable(args):
        raise PermissionError(13, "Permission denied", "/some/file")

    monkeypatch.setattr(cli, "cmd_report", unreadable)
    code, _, err = run(capsys, "report", "x")
    assert code == 2 and err.startswith("/some/file: error[io]: Permission denied")


@pytest.mark.parametrize("argv", [
    ["check", "{build}", "--args", '{"x": ' + "9" * 5000 + "}"],
    ["check", "{build}", "--args", "@{tmp}/bad.json"],
    ["check", "{build}", "--args", "[" * 100_000],
    ["check", "{tmp}", "--args", "{}"],
    ["verify-log", "{tmp}/bad.jsonl"],
], ids=["5000-digit", "invalid-utf8-file", "deep", "broken-build", "bad-log"])
def test_as_a_process_no_traceback(payments_build, tmp_path, argv):
    import subprocess
    import sys

    (tmp_path / "bad.json").write_bytes(b'{"a": "\xff"}')
    (tmp_path / "bad.jsonl").write_bytes(b"5\n\xff\n")
    argv = [a.replace("{build}", str(payments_build)).replace("{tmp}", str(tmp_path)) for a in argv]
    p = subprocess.run([sys.executable, "-m", "veriguard.cli", *argv], capture_output=True, text=True, timeout=120)
    assert p.returncode in (1, 2) and "Traceback" not in p.stderr and (p.stderr.strip() or p.stdout.strip())


def test_an_openai_compatible_server_that_needs_a_key_is_usable_from_the_cli(monkeypatch, capsys):
    from tests.conftest import SPECS
    from veriguard.cli import _provider, build_parser

    argv = ["synth", str(SPECS / "payments.toml"), "--llm", "--provider", "openai", "--base-url", "http://127.0.0.1:9/v1",
            "--model", "m", "--api-key-env", "VG_TEST_SERVER_KEY"]
    monkeypatch.setenv("VG_TEST_SERVER_KEY", "sk-local")
    provider = _provider(build_parser().parse_args(argv))
    assert provider._headers == {"Authorization": "Bearer sk-local"}
    monkeypatch.delenv("VG_TEST_SERVER_KEY")
    assert main(argv) == 3 and "error[provider.no_key]" in capsys.readouterr().err


def test_errors_of_the_llm_path_and_the_transcript_store_are_rendered_by_main(tmp_path, capsys):
    from tests.conftest import SPECS

    spec = str(SPECS / "payments.toml")
    assert main(["synth", spec, spec, "--llm", "--quiet"]) == 2
    assert "error[synth.llm]: the LLM path takes one spec at a time, not 2" in capsys.readouterr().err
    assert main(["log", "no-such-id", "--store", str(tmp_path / "t.db")]) == 2
    assert "error[log.unknown]" in capsys.readouterr().err
