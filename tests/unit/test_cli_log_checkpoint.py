"""The decision log's checkpoint on the command line (2026-11-29): `hook` and `mcp-proxy --log-checkpoint CP` keep a
copy of the log's signed head in CP; `verify-log --expect-head CP` and `audit --log-expect-head CP` check the log
against it. A log rolled back (an older copy of the log and its head put back) or swapped (another log of the same
key put in its place) verifies on disk alone, and is refused by both the verifier and the next hook call once the
checkpoint is given. A checkpoint path that cannot be one is bad input (exit 2, or a hook denial), named."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.unit.test_compile_and_freeze import fake_result
from tests.unit.test_monitor import payments_build  # noqa: F401  (fixture)
from veriguard import hook
from veriguard.cli import build_parser, main
from veriguard.enforce.decision_log import Head
from veriguard.enforce.integrations import mcp_proxy
from veriguard.enforce.keys import new_key_pair
from veriguard.synth.freeze import write_build
from veriguard.synth.specfile import load_spec

pytest.importorskip("tree_sitter_bash", reason="the hook's shell extractor needs tree-sitter-bash")

HOME = "/home/dev"
PROJECT = "/home/dev/project"


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cp_builds")
    return write_build(fake_result(load_spec(ROOT / "specs" / "shell_agent.toml")), out, run_info={})[0]


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    private, public, _ = new_key_pair(tmp_path_factory.mktemp("cp_keys") / "k")
    return {"private": private, "public": public}


def hook_call(build: Path, log: Path, key: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """One PreToolUse call (`ls` in the project) through the hook's own process, as Claude Code runs it."""
    call = {"session_id": "s1", "cwd": PROJECT, "permission_mode": "default", "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "toolu_1"}
    env = {**os.environ, "HOME": HOME, "CLAUDE_PROJECT_DIR": PROJECT}
    p = subprocess.run([sys.executable, "-m", "veriguard.hook", "claude-code", "--build", str(build), "--log",
                        str(log), "--log-key", str(key), *extra], input=json.dumps(call).encode(),
                       capture_output=True, timeout=120, env=env, cwd=ROOT)
    return subprocess.CompletedProcess(p.args, p.returncode, p.stdout.decode(), p.stderr.decode())


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out.out, out.err


def verify(capsys: pytest.CaptureFixture[str], log: Path, keys: dict[str, Path], *extra: str) -> tuple[int, dict]:
    code, out, _ = cli(capsys, "verify-log", str(log), "--public-key", str(keys["public"]), "--json", *extra)
    return code, json.loads(out)


def head_of(log: Path) -> Path:
    return log.with_name(log.name + ".head")


def snapshot(log: Path, to: Path) -> None:
    to.mkdir()
    shutil.copy2(log, to / log.name)
    shutil.copy2(head_of(log), to / head_of(log).name)


def put_back(saved: Path, log: Path) -> None:
    shutil.copy2(saved / log.name, log)
    shutil.copy2(saved / head_of(log).name, head_of(log))


def calls(build: Path, log: Path, key: Path, n: int, *extra: str) -> None:
    for _ in range(n):
        p = hook_call(build, log, key, *extra)
        assert p.returncode == 0, (p.stdout, p.stderr)


def test_the_happy_path_writes_the_checkpoint_and_verifies_against_it(build, keys, tmp_path, capsys) -> None:
    log, cp = tmp_path / "logs" / "d.jsonl", tmp_path / "safe" / "d.checkpoint"
    calls(build, log, keys["private"], 3, "--log-checkpoint", str(cp))
    assert cp.read_bytes() == head_of(log).read_bytes()
    code, result = verify(capsys, log, keys, "--expect-head", str(cp))
    assert code == 0 and result["ok"] and result["records"] == 3 and result["expected"] == 3
    assert result["log_id"] and "expected log" in result["note"]
    code, out, _ = cli(capsys, "verify-log", str(log), "--public-key", str(keys["public"]), "--expect-head", str(cp))
    assert code == 0 and "intact, 3 records" in out


def test_a_rollback_is_refused_by_verify_log_and_by_the_next_hook_call(build, keys, tmp_path, capsys) -> None:
    log, cp = tmp_path / "d.jsonl", tmp_path / "safe" / "d.checkpoint"
    calls(build, log, keys["private"], 2, "--log-checkpoint", str(cp))
    snapshot(log, tmp_path / "at2")
    calls(build, log, keys["private"], 2, "--log-checkpoint", str(cp))
    put_back(tmp_path / "at2", log)                          # between runs: the older log and its head put back
    code, result = verify(capsys, log, keys)
    assert code == 0 and result["ok"]                        # on disk alone: an earlier valid state
    code, result = verify(capsys, log, keys, "--expect-head", str(cp))
    assert code == 1 and not result["ok"] and "rolled back" in result["problem"] and "4 records" in result["problem"]
    code, out, _ = cli(capsys, "verify-log", str(log), "--public-key", str(keys["public"]), "--expect-head", str(cp))
    assert code == 1 and "BROKEN" in out and "rolled back" in out
    p = hook_call(build, log, keys["private"], "--log-checkpoint", str(cp))
    assert p.returncode == 2 and "rolled back" in json.loads(p.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert log.read_bytes() == (tmp_path / "at2" / log.name).read_bytes()   # nothing appended to the rolled-back log


def test_another_log_of_the_same_key_is_refused_by_verify_log_and_by_the_next_hook_call(build, keys, tmp_path,
                                                                                        capsys) -> None:
    mine, theirs, cp = tmp_path / "mine.jsonl", tmp_path / "theirs.jsonl", tmp_path / "safe" / "mine.checkpoint"
    calls(build, mine, keys["private"], 2, "--log-checkpoint", str(cp))
    calls(build, theirs, keys["private"], 3)                 # another session's log, the same key, longer
    shutil.copy2(theirs, mine)
    shutil.copy2(head_of(theirs), head_of(mine))
    code, result = verify(capsys, mine, keys)
    assert code == 0 and result["ok"]                        # on disk alone: a valid log of this key
    code, result = verify(capsys, mine, keys, "--expect-head", str(cp))
    assert code == 1 and "another log" in result["problem"]
    p = hook_call(build, mine, keys["private"], "--log-checkpoint", str(cp))
    assert p.returncode == 2 and "another log" in json.loads(p.stdout)["hookSpecificOutput"]["permissionDecisionReason"]


def test_a_missing_checkpoint_beside_a_log_with_records_denies_the_hook_call(build, keys, tmp_path) -> None:
    log, cp = tmp_path / "d.jsonl", tmp_path / "d.checkpoint"
    calls(build, log, keys["private"], 1, "--log-checkpoint", str(cp))
    cp.unlink()
    p = hook_call(build, log, keys["private"], "--log-checkpoint", str(cp))
    assert p.returncode == 2 and "checkpoint" in p.stderr and "missing" in p.stderr


# --- bad checkpoint paths: exit 2 (one JSON object with --json), or a named hook denial ---------------------------
def bad_paths(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """name -> (path, words its error must hold)."""
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "garbage").write_text("not a head\n")
    (tmp_path / "target").write_text("{}")
    (tmp_path / "link").symlink_to(tmp_path / "target")
    return {"folder": (tmp_path / "folder", "not a regular file"), "fifo": (tmp_path / "fifo", "not a regular file"),
            "garbage": (tmp_path / "garbage", "not JSON"), "link": (tmp_path / "link", "symlink"),
            "missing": (tmp_path / "missing", "does not exist")}


@pytest.mark.parametrize("name", ["folder", "fifo", "garbage", "link", "missing"])
def test_verify_log_refuses_a_bad_expected_head(name, build, keys, tmp_path, capsys) -> None:
    log = tmp_path / "d.jsonl"
    calls(build, log, keys["private"], 1)
    path, words = bad_paths(tmp_path)[name]
    code, out, err = cli(capsys, "verify-log", str(log), "--expect-head", str(path), "--json")
    obj = json.loads(out)                                    # one JSON object
    assert code == 2 and obj["exit_code"] == 2 and obj["error"]["code"] == "log.unreadable"
    assert "--expect-head" in obj["error"]["message"] and words in obj["error"]["message"] and str(path) in err
    code, out, err = cli(capsys, "verify-log", str(log), "--expect-head", str(path))
    assert code == 2 and not out and "--expect-head" in err and words in err and "fix:" in err


def test_empty_checkpoint_paths_are_usage_errors(tmp_path, capsys) -> None:
    code, out, _ = cli(capsys, "verify-log", str(tmp_path / "d.jsonl"), "--expect-head", "", "--json")
    assert code == 2 and json.loads(out)["error"]["code"] == "cli.usage" and "--expect-head" in out
    code, out, _ = cli(capsys, "audit", str(tmp_path), "--log", str(tmp_path / "l"), "--log-expect-head", "", "--json")
    assert code == 2 and json.loads(out)["error"]["code"] == "cli.usage" and "--log-expect-head" in out


def fake_audit(seen: dict):
    from veriguard.audit import AuditResult

    def audit_build(directory, **kw):
        seen.update(kw)
        return AuditResult(str(directory), "shell_agent", (), "now", {"ok": True, "anchored": True}, None, {})
    return audit_build


def test_audit_passes_the_checkpoint_to_audit_build(build, keys, tmp_path, capsys, monkeypatch) -> None:
    import veriguard.audit

    log, cp = tmp_path / "d.jsonl", tmp_path / "d.checkpoint"
    calls(build, log, keys["private"], 2, "--log-checkpoint", str(cp))
    seen: dict = {}
    monkeypatch.setattr(veriguard.audit, "audit_build", fake_audit(seen))
    code, out, _ = cli(capsys, "audit", str(build), "--log", str(log), "--log-public-key", str(keys["public"]),
                       "--log-expect-head", str(cp), "--json")
    assert code == 0 and isinstance(seen["log_expected"], Head) and seen["log_expected"].records == 2
    cli(capsys, "audit", str(build), "--log", str(log), "--json")
    assert seen["log_expected"] is None


def test_audit_checks_the_log_against_its_checkpoint(build, keys, tmp_path) -> None:
    """audit_build's own log summary with the head read as the CLI reads it: a rollback fails the audit."""
    from veriguard.audit import log_summary
    from veriguard.cli import expected_head
    from veriguard.enforce.keys import load_verify_key

    log, cp = tmp_path / "d.jsonl", tmp_path / "d.checkpoint"
    calls(build, log, keys["private"], 1, "--log-checkpoint", str(cp))
    snapshot(log, tmp_path / "at1")
    calls(build, log, keys["private"], 1, "--log-checkpoint", str(cp))
    pub = load_verify_key(keys["public"])
    assert log_summary(log, pub, "x", expected=expected_head(str(cp), "--log-expect-head"))["ok"]
    put_back(tmp_path / "at1", log)
    summary = log_summary(log, pub, "x", expected=expected_head(str(cp), "--log-expect-head"))
    assert not summary["ok"] and "rolled back" in summary["problem"]


@pytest.mark.parametrize("name", ["folder", "fifo", "garbage", "missing"])
def test_audit_refuses_a_bad_log_expect_head(name, build, keys, tmp_path, capsys, monkeypatch) -> None:
    import veriguard.audit

    log = tmp_path / "d.jsonl"
    calls(build, log, keys["private"], 1)
    monkeypatch.setattr(veriguard.audit, "audit_build", fake_audit({}))
    path, words = bad_paths(tmp_path)[name]
    code, out, _ = cli(capsys, "audit", str(build), "--log", str(log), "--log-expect-head", str(path), "--json")
    obj = json.loads(out)
    assert code == 2 and obj["error"]["code"] == "log.unreadable" and "--log-expect-head" in obj["error"]["message"]
    assert words in obj["error"]["message"]


def test_audit_log_expect_head_needs_a_log(build, tmp_path, capsys) -> None:
    (tmp_path / "cp").write_text("{}")
    code, out, _ = cli(capsys, "audit", str(build), "--log-expect-head", str(tmp_path / "cp"), "--json")
    assert code == 2 and json.loads(out)["error"]["code"] == "cli.usage" and "no --log" in out


def in_process(build: Path, *args: str) -> hook.Answer:
    opts = hook.parse_options(["--build", str(build), *args])
    if isinstance(opts, hook.Answer):
        return opts
    call = {"cwd": PROJECT, "tool_name": "Bash", "tool_input": {"command": "ls"}}
    return hook.decide(json.dumps(call).encode(), opts._replace(env={"HOME": HOME, "CLAUDE_PROJECT_DIR": PROJECT}))


@pytest.mark.parametrize("name", ["folder", "fifo", "garbage", "link"])
def test_the_hook_denies_a_bad_checkpoint_path_naming_it(name, build, tmp_path) -> None:
    path, words = bad_paths(tmp_path)[name]
    a = in_process(build, "--log", str(tmp_path / "d.jsonl"), "--log-checkpoint", str(path))
    reason = json.loads(a.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert a.code == 2 and "--log-checkpoint" in reason and str(path) in reason and words in reason
    assert not (tmp_path / "d.jsonl").exists()


def test_the_hook_option_is_parsed_and_needs_a_log(build, tmp_path) -> None:
    opts = hook.parse_options(["--build", "b", "--log", "l", "--log-checkpoint=c"])
    assert isinstance(opts, hook.Options) and opts.log_checkpoint == "c"
    a = in_process(build, "--log-checkpoint", str(tmp_path / "c"))
    assert a.code == 2 and "--log-checkpoint" in a.stderr and "no --log" in a.stderr
    a = in_process(build, "--log", str(tmp_path / "d.jsonl"), "--log-checkpoint", "")
    assert a.code == 2 and "--log-checkpoint" in a.stderr and "empty" in a.stderr
    assert "--log-checkpoint FILE" in hook.HELP and "certificate.json" in hook.HELP


def test_the_cli_dispatches_the_hook_with_a_checkpoint(build, keys, tmp_path, monkeypatch, capfd) -> None:
    """`veriguard hook ...` through cli.main (python -m veriguard.cli), in process: the checkpoint is written."""
    log, cp = tmp_path / "d.jsonl", tmp_path / "d.checkpoint"
    call = {"cwd": PROJECT, "tool_name": "Bash", "tool_input": {"command": "ls"}}
    monkeypatch.setenv("HOME", HOME)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", PROJECT)
    monkeypatch.setattr(hook, "_read_stdin", lambda: json.dumps(call).encode())
    monkeypatch.setattr(hook, "_ISOLATE", False)
    assert main(["hook", "claude-code", "--build", str(build), "--log", str(log), "--log-key", str(keys["private"]),
                 "--log-checkpoint", str(cp)]) == 0
    assert cp.read_bytes() == head_of(log).read_bytes()


# --- mcp-proxy ------------------------------------------------------------------------------------------------------
def test_mcp_proxy_passes_the_checkpoint_through(build, tmp_path, monkeypatch) -> None:
    seen: dict = {}
    monkeypatch.setattr(mcp_proxy, "run_proxy", lambda *a, **kw: seen.update(kw))
    cp = tmp_path / "d.checkpoint"
    assert mcp_proxy.main(["--build", str(build), "--log", str(tmp_path / "d.jsonl"), "--log-checkpoint", str(cp),
                           "--", "python", "server.py"]) == 0
    assert seen["log_checkpoint"] == cp
    assert mcp_proxy.main(["--build", str(build), "--", "python", "server.py"]) == 0 and seen["log_checkpoint"] is None


def test_mcp_proxy_run_proxy_gives_the_checkpoint_to_the_guard(build, keys, tmp_path, monkeypatch) -> None:
    """run_proxy hands log_checkpoint to Guard.from_build (and so to Monitor.from_build's DecisionLog)."""
    seen: dict = {}

    class Stop(Exception):
        pass

    def from_build(build, **kw):
        seen.update(kw)
        raise Stop

    monkeypatch.setattr(mcp_proxy.Guard, "from_build", from_build)
    cp = tmp_path / "d.checkpoint"
    with pytest.raises(Stop):
        mcp_proxy.run_proxy(build, "python", [], log=tmp_path / "d.jsonl", log_key=keys["private"], log_checkpoint=cp)
    assert seen["log_checkpoint"] == cp and seen["log_key"] == keys["private"]


@pytest.mark.parametrize("name", ["folder", "fifo", "garbage", "link"])
def test_mcp_proxy_refuses_a_bad_checkpoint_path(name, build, tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(mcp_proxy, "run_proxy", lambda *a, **kw: pytest.fail("started with a bad checkpoint"))
    path, words = bad_paths(tmp_path)[name]
    code = mcp_proxy.main(["--build", str(build), "--log", str(tmp_path / "d.jsonl"), "--log-checkpoint", str(path),
                           "--", "python", "server.py"])
    err = capsys.readouterr().err
    assert code == 2 and "--log-checkpoint" in err and str(path) in err and words in err


def test_mcp_proxy_checkpoint_needs_a_log(build, tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(mcp_proxy, "run_proxy", lambda *a, **kw: pytest.fail("started without a log"))
    code = mcp_proxy.main(["--build", str(build), "--log-checkpoint", str(tmp_path / "c"), "--", "python", "s.py"])
    assert code == 2 and "no --log" in capsys.readouterr().err


# --- check and the help texts ---------------------------------------------------------------------------------------
def test_check_prints_the_build_sha256(payments_build, capsys) -> None:
    import hashlib

    args = ('{"user": {"role": "treasurer", "sent_today_cents": 0, "mfa": true}, "payment": {"recipient": '
            '"acme-supplies", "amount_cents": 100, "currency": "USD", "method": "ach", "human_approved": false}}')
    code, out, _ = cli(capsys, "check", str(payments_build), "--args", args)
    certificate = hashlib.sha256((payments_build / "certificate.json").read_bytes()).hexdigest()
    assert code == 0 and json.loads(out)["build_sha256"] == certificate
    code, out, _ = cli(capsys, "check", str(payments_build), "--args", args, "--expect-sha256", certificate)
    assert code == 0 and json.loads(out)["allowed"] is True


def help_of(command: str) -> str:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    return sub.choices[command].format_help()   # type: ignore[union-attr]


def test_help_texts() -> None:
    check = " ".join(help_of("check").split())
    assert "certificate.json" in check and "policy.py" in check and "whole build" in check
    audit = " ".join(help_of("audit").split())
    assert "--log-expect-head" in audit and "intact and anchored" in audit and "not anchored" in audit
    assert "--expect-head" in help_of("verify-log")
    proxy = " ".join(mcp_proxy.parser().format_help().split())
    assert "--log-checkpoint" in proxy and "certificate.json" in proxy
