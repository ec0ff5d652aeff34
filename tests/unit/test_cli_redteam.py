"""Red-team pass of 2026-11-29 on the CLI: the order of checks, a closed stdout, --json on every error."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT, SPECS
from tests.unit.test_cli_bad_input import GOOD_ARGS, payments_build
from veriguard.cli import main

__all__ = ["payments_build"]  # the fixture, shared with test_cli_bad_input


def run_process(*argv: str, stdout: int | None = None, env: dict[str, str] | None = None,
                timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "veriguard.cli", *argv], stdout=stdout or subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=timeout, cwd=ROOT,
                          env={**os.environ, **(env or {})})


# --- synth --llm --answers: the file is checked before the key (class 4) ------------------------------------

@pytest.fixture
def no_key(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)


@pytest.mark.parametrize("make, needle", [
    (lambda tmp: tmp / "absent.toml", "answers"),
    (lambda tmp: tmp, "answers"),                                           # a directory
    (lambda tmp: (tmp / "a.toml").write_text("approved = [") and tmp / "a.toml", "answers.toml"),
    (lambda tmp: (tmp / "a.toml").write_text('spec_sha256 = "0"\napproved = true\n') and tmp / "a.toml",
     "answers.stale"),
    (lambda tmp: (tmp / "a.toml").write_bytes(b"approved = \"\xff\"\n") and tmp / "a.toml", "answers"),
], ids=["absent", "directory", "bad-toml", "stale", "not-utf8"])
def test_a_bad_answers_file_is_bad_input_before_any_key_is_needed(tmp_path, capsys, no_key, make, needle):
    """Before: exit 3 `provider.no_key`; the answers file was read only once a provider existed."""
    path = make(tmp_path)
    code = main(["synth", str(SPECS / "payments.toml"), "--llm", "--answers", str(path), "--quiet",
                 "--store", str(tmp_path / "t.db"), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and needle in err and "no_key" not in err and "Traceback" not in err


def test_an_answers_fifo_is_refused_without_waiting_on_it(tmp_path, no_key):
    fifo = tmp_path / "answers.toml"
    os.mkfifo(fifo)
    p = run_process("synth", str(SPECS / "payments.toml"), "--llm", "--answers", str(fifo), "--quiet",
                    "--store", str(tmp_path / "t.db"), "--out", str(tmp_path / "o"), timeout=60)
    assert p.returncode == 2 and "answers" in p.stderr and "Traceback" not in p.stderr


# --- a closed stdout: no traceback, no message, exit 141 (class 5) ------------------------------------------

def closed_pipe() -> int:
    """The write end of a pipe whose read end is already closed: every write to it fails with EPIPE."""
    read, write = os.pipe()
    os.close(read)
    return write


@pytest.mark.parametrize("argv", [["errors"], ["errors", "--json"], ["report", "{build}"],
                                  ["check", "{build}", "--args", GOOD_ARGS]], ids=lambda a: " ".join(a[:2]))
def test_a_closed_stdout_ends_quietly_with_the_shell_s_code_for_sigpipe(argv, payments_build):
    """Before: `error[env.io]: Broken pipe` on stderr and exit 3 (the machine's fault), or Python's
    'Exception ignored ... BrokenPipeError' and exit 120 when the output fit in the buffer."""
    argv = [a.replace("{build}", str(payments_build)) for a in argv]
    write = closed_pipe()
    try:
        p = run_process(*argv, stdout=write)
    finally:
        os.close(write)
    assert p.returncode == 141, p.stderr
    assert p.stderr == ""


# --- --json: one JSON object on stdout whatever happens (class 6) -------------------------------------------

@pytest.mark.parametrize("argv", [
    ["report", "{tmp}/absent", "--json"],
    ["diff", "{tmp}/a", "{tmp}/b", "--json"],
    ["audit", "{tmp}/absent", "--json", "--quiet"],
    ["eval", "mind2web-sc", "--data", "{tmp}", "--json", "--quiet"],
    ["log", "no-such-id", "--store", "{tmp}/t.db", "--json"],
    ["verify", "{tmp}/absent.py", "--json", "--quiet"],
    ["synth", "{tmp}/absent.toml", "--json", "--quiet", "--out", "{tmp}/o"],
    ["synth", "{tmp}/absent.toml", "--llm", "--json", "--quiet"],
    ["eval", "mind2web-sc", "--json"],                        # argparse: --data is required
    ["report", "--json", "--no-such-option", "x"],            # argparse: unknown option
    ["verify-log", "{tmp}", "--json"],
], ids=lambda a: " ".join(a[:2]))
def test_json_is_printed_even_on_error(tmp_path, capsys, argv):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    try:
        code = main(argv)
    except SystemExit as e:  # argparse's exit on a bad command line, kept (exit 2)
        code = e.code
    out = capsys.readouterr()
    assert code != 0 and "Traceback" not in out.err
    doc = json.loads(out.out)
    assert doc["ok"] is False and doc["exit_code"] == code
    errors = [doc["error"]] if "error" in doc else [r["error"] for r in doc["results"]]  # synth, verify: per file
    assert errors and all(e for e in errors)


def test_json_of_an_error_is_printed_once_with_the_command_s_own_json_untouched(tmp_path, capsys):
    """A command that printed its JSON and then returned a failing code (a gate failed) keeps its own object."""
    code = main(["errors", "--json"])
    out = capsys.readouterr().out
    assert code == 0 and "groups" in json.loads(out)


@pytest.mark.parametrize("argv", [["errors"], ["report", "absent", "--json"]])
def test_a_stdout_closed_from_the_start_is_refused_before_any_work(argv):
    """`veriguard errors >&-`: Python has no sys.stdout; before, the final flush was an internal error (exit 70),
    or, with --json, a traceback."""
    p = subprocess.run([sys.executable, "-m", "veriguard.cli", *argv], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, timeout=120, cwd=ROOT,
                       preexec_fn=lambda: os.close(1))
    assert p.returncode == 2 and "stdout is closed" in p.stderr and "Traceback" not in p.stderr


@pytest.mark.parametrize("argv", [["check", "{tmp}", "--args", "{}"], ["check", "{build}", "--args", "{"],
                                  ["check", "{build}", "--args", "@{tmp}/absent.json"], ["check", "{build}"]],
                         ids=["not-a-build", "bad-json", "absent-file", "usage"])
def test_check_prints_a_denial_as_json_whatever_fails(tmp_path, payments_build, capsys, argv):
    """check prints its decision as JSON; on a bad build or bad arguments it printed nothing on stdout, so a
    reader parsing stdout crashed instead of seeing a denial."""
    argv = [a.replace("{tmp}", str(tmp_path)).replace("{build}", str(payments_build)) for a in argv]
    try:
        code = main(argv)
    except SystemExit as e:
        code = e.code
    doc = json.loads(capsys.readouterr().out)
    assert code == 2 and doc["allowed"] is False and doc["exit_code"] == 2 and doc["error"]["code"]
