"""The Claude Code PreToolUse hook (veriguard/hook.py): as its own process (`python -m veriguard.hook
claude-code --build B`, JSON on stdin) and in-process. Allow is a silent exit 0; deny is exit 2 with
the reason on stderr and the deny object on stdout; a missing approval is "ask" in default mode; every
bad input and every internal failure, native crashes and hangs included, is exit 2 with a reason,
never exit 1 and never a traceback. Builds are made without Nagini."""
from __future__ import annotations

import faulthandler
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from veriguard import hook
from veriguard.enforce.decision_log import verify_log
from veriguard.synth.freeze import write_build
from veriguard.synth.specfile import load_spec
from tests.conftest import ROOT
from tests.unit.test_compile_and_freeze import fake_result

pytest.importorskip("tree_sitter_bash", reason="the shell extractor needs tree-sitter-bash")

HOME = "/home/dev"
PROJECT = "/home/dev/project"


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("hook_builds")
    return {name: write_build(fake_result(load_spec(ROOT / "specs" / f"{name}.toml")), out, run_info={})[0]
            for name in ("shell_agent", "os_agent", "payments")}


@pytest.fixture(autouse=True)
def project_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    """Claude Code sets CLAUDE_PROJECT_DIR for its hooks; the hook refuses to guess the workspace without it."""
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", PROJECT)


def call(tool: str = "Bash", cwd: str = PROJECT, mode: str = "default", **tool_input: object) -> dict:
    return {"session_id": "s1", "transcript_path": "/tmp/t.jsonl", "cwd": cwd, "permission_mode": mode,
            "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input, "tool_use_id": "toolu_1"}


def bash(command: str, **kw: object) -> dict:
    return call("Bash", command=command, **kw)  # type: ignore[arg-type]


def run(build: Path | str, stdin: bytes | dict, *args: str, home: str = HOME, timeout: float = 60,
        env: dict | None = None) -> subprocess.CompletedProcess[str]:
    data = stdin if isinstance(stdin, bytes) else json.dumps(stdin).encode()
    environment = {**os.environ, "HOME": home, "CLAUDE_PROJECT_DIR": PROJECT, **(env or {})}
    environment = {k: v for k, v in environment.items() if v is not None}
    p = subprocess.run([sys.executable, "-m", "veriguard.hook", "claude-code", "--build", str(build), *args],
                       input=data, capture_output=True, timeout=timeout, env=environment, cwd=ROOT)
    return subprocess.CompletedProcess(p.args, p.returncode, p.stdout.decode(), p.stderr.decode())


def assert_denied(p: subprocess.CompletedProcess[str] | hook.Answer, *words: str) -> str:
    code = p.returncode if isinstance(p, subprocess.CompletedProcess) else p.code
    out, err = p.stdout, p.stderr
    assert code == 2, (code, out, err)
    assert "Traceback" not in err and "Traceback" not in out
    obj = json.loads(out)
    reason = obj["hookSpecificOutput"]["permissionDecisionReason"]
    assert obj["hookSpecificOutput"]["permissionDecision"] == "deny" and obj["hookSpecificOutput"]["hookEventName"] == \
        "PreToolUse"
    assert reason and reason in err
    for w in words:
        assert w in reason, (w, reason)
    return reason


def answer(build: Path, stdin: bytes | dict, *args: str, home: str = HOME) -> hook.Answer:
    """The in-process decision (no fork)."""
    opts = hook.parse_options(["--build", str(build), *args])
    assert isinstance(opts, hook.Options)
    opts = opts._replace(env={"HOME": home, "CLAUDE_PROJECT_DIR": PROJECT})
    data = stdin if isinstance(stdin, bytes) else json.dumps(stdin).encode()
    return hook.decide(data, opts)


# ------------------------------------------------------------------------------------------------
# through a process

def test_allow_is_silent_exit_0(builds) -> None:
    p = run(builds["shell_agent"], bash("git status && pytest -q tests/"))
    assert (p.returncode, p.stdout, p.stderr) == (0, "", "")


def test_deny_is_exit_2_with_the_reason_and_the_deny_object(builds) -> None:
    reason = assert_denied(run(builds["shell_agent"], bash("cat ~/.ssh/id_rsa")), "ssh_keys", "shell_agent")
    assert "cat ~/.ssh/id_rsa" in reason


def test_only_missing_approval_asks_the_user(builds) -> None:
    p = run(builds["shell_agent"], bash("rm -rf build"))
    assert p.returncode == 0 and p.stderr == ""
    out = json.loads(p.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "ask" and "approval" in out["permissionDecisionReason"]


@pytest.mark.parametrize("mode", ["bypassPermissions", "acceptEdits", "dontAsk", "auto", ""])
def test_no_ask_where_no_person_is_asked(builds, mode: str) -> None:
    assert_denied(run(builds["shell_agent"], bash("rm -rf build", mode=mode)), "approval")


def test_approval_deny_option(builds) -> None:
    assert_denied(run(builds["shell_agent"], bash("rm -rf build"), "--approval", "deny"), "--approval deny")


def test_approval_never_lifts_what_the_policy_forbids(builds) -> None:
    assert_denied(run(builds["shell_agent"], bash("sudo rm -rf build")), "sudo")
    assert_denied(run(builds["os_agent"], bash("rm -rf /etc/ssh", cwd="/home/user"), home="/home/user"))


def test_decisions_are_logged_with_the_integration_and_tool(builds, tmp_path: Path) -> None:
    log = tmp_path / "decisions.jsonl"
    assert run(builds["shell_agent"], bash("ls"), "--log", str(log)).returncode == 0
    assert_denied(run(builds["shell_agent"], call("Read", file_path="/home/dev/.aws/credentials"), "--log", str(log)))
    assert run(builds["shell_agent"], bash("rm -r dist"), "--log", str(log)).returncode == 0  # ask
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["integration"], r["tool"], r["allowed"], r["mode"]) for r in records] == [
        ("claude_code_hook", "Bash", True, "enforce"), ("claude_code_hook", "Read", False, "enforce"),
        ("claude_code_hook", "Bash", False, "enforce"), ("claude_code_hook", "Bash", True, "ask")]
    assert all(r["action_id"] == "toolu_1" for r in records)
    assert verify_log(log).ok


def test_an_unwritable_log_denies(builds, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    assert_denied(run(builds["shell_agent"], bash("ls"), "--log", str(tmp_path / "file" / "l.jsonl")))


# ------------------------------------------------------------------------------------------------
# file tools: the equivalent command

@pytest.mark.parametrize("tool_call,allowed", [
    (call("Read", file_path="/home/dev/project/README.md"), True),
    (call("Read", file_path="/home/dev/.ssh/id_rsa"), False),
    (call("Read", file_path="/home/dev/project/../.aws/credentials"), False),
    (call("NotebookRead", notebook_path="/home/dev/project/a.ipynb"), True),
    (call("Write", file_path="/home/dev/project/src/x.py", content="print(1)"), True),
    (call("Write", file_path="/home/dev/.bashrc", content="curl x | sh"), False),
    (call("Write", file_path="/etc/hosts", content=""), False),
    (call("Edit", file_path="/home/dev/project/src/x.py", old_string="a", new_string="b"), True),
    (call("MultiEdit", file_path="/home/dev/.zshrc", edits=[]), False),
    (call("NotebookEdit", notebook_path="/home/dev/project/n.ipynb", new_source="x"), True),
    (call("NotebookEdit", notebook_path="/usr/share/n.ipynb", new_source="x"), False),
    (call("Grep", pattern="TODO"), True),
    (call("Grep", pattern="TODO", path="/home/dev/project/src"), True),
    (call("Grep", pattern="BEGIN", path="/home/dev"), False),          # recursive: reaches ~/.ssh
    (call("Glob", pattern="**/*.py"), True),
    (call("Glob", pattern="src/**/*.ts", path="/home/dev/project"), True),
    (call("Glob", pattern="/home/dev/.ssh/*"), False),
    (call("Glob", pattern="../../**/id_rsa"), False),
    (call("Glob", pattern="../*/id_*", path="/home/dev/project"), False),
    (call("Glob", pattern="**/../../.ssh/*"), False),                  # `..` after a glob climbs out
    (call("Glob", pattern="{/home/dev/.ssh,src}/*"), False),           # braces expand to an absolute pattern
    (call("Glob", pattern="{x,{y,/home/dev/.aws}}/*"), False),
    (call("Glob", pattern="*/{..,x}/../.ssh/*"), False),
    (call("Glob", pattern="**/*.{ts,tsx}"), True),
    (call("Glob", pattern="{src,tests}/**/*.py"), True),
    (call("LS", path="/home/dev/project"), True),
    (call("LS", path="/home/dev/.ssh"), False),
    (call("Read", file_path="/home/dev/project/it's $(rm -rf ~) `x`.txt"), True),   # quoted: nothing expands
])
def test_file_tools_use_the_same_zone_map(builds, tool_call: dict, *, allowed: bool) -> None:
    a = answer(builds["shell_agent"], tool_call)
    if allowed:
        assert (a.code, a.stdout, a.stderr) == (0, "", ""), a
    else:
        assert_denied(a)


@pytest.mark.parametrize("tool_call", [
    call("Read", file_path="README.md"), call("Read", file_path="~/.ssh/id_rsa"), call("Write", content="x"),
    call("Edit", file_path=7), call("Grep", pattern="x", path="src"), call("Glob", pattern="~/.ssh/*"),
    call("Glob"), call("Read", file_path="/home/dev/project/a\x00b"), call("Bash"), call("Bash", command=["ls"]),
])
def test_file_tool_inputs_that_cannot_be_judged_are_denied(builds, tool_call: dict) -> None:
    assert_denied(answer(builds["shell_agent"], tool_call))


def test_other_tools_are_denied_unless_let_through(builds) -> None:
    for tool in ("mcp__github__create_issue", "WebFetch", "TodoWrite", "Task"):
        assert_denied(answer(builds["shell_agent"], call(tool, url="https://x")), tool)
    assert answer(builds["shell_agent"], call("TodoWrite", todos=[]), "--allow-tool", "TodoWrite").code == 0
    assert_denied(answer(builds["shell_agent"], call("WebFetch", url="x"), "--allow-tool", "TodoWrite"))
    assert answer(builds["shell_agent"], call("mcp__fs__read", path="/etc/shadow"), "--other-tools", "allow").code == 0
    # the tools the hook decides are decided whatever the options say
    assert_denied(answer(builds["shell_agent"], bash("cat ~/.ssh/id_rsa"), "--other-tools", "allow",
                         "--allow-tool", "Bash"))


# ------------------------------------------------------------------------------------------------
# bad input: a denial with a reason, exit 2, never exit 1, never a traceback

DEEP = "echo " + "$(" * 400 + "x" + ")" * 400
BAD_STDIN = {
    "empty": b"",
    "whitespace": b"  \n",
    "binary": b"\x00\xff\xfe garbage \x80",
    "malformed": b"{tool_name: Bash}",
    "truncated": json.dumps(bash("ls -la")).encode()[:-7],
    "array": b"[1, 2]",
    "duplicate key": b'{"tool_name": "Bash", "tool_name": "Read"}',
    "no tool_input": json.dumps({"tool_name": "Bash", "cwd": PROJECT}).encode(),
    "relative cwd": json.dumps(bash("ls", cwd="project")).encode(),
    "another event": json.dumps({**bash("ls"), "hook_event_name": "PostToolUse"}).encode(),
    "empty command": json.dumps(bash("")).encode(),
    "blank command": json.dumps(bash("   \n ")).encode(),
    "binary command": json.dumps(bash("cat \x00\x1b[31m x")).encode(),
    "1 MB command": json.dumps(bash("echo " + "a" * (1 << 20))).encode(),
    "unterminated quotes": json.dumps(bash("echo 'unterminated")).encode(),
    "unterminated double quotes": json.dumps(bash('cat "~/.ssh/id_rsa')).encode(),
    "deeply nested substitutions": json.dumps(bash(DEEP)).encode(),
    "unknown tool": json.dumps(call("FrobnicateTool", x=1)).encode(),
    "NaN": b'{"tool_name": "Bash", "tool_input": {"command": "ls"}, "cwd": "/x", "n": NaN}',
}


@pytest.mark.parametrize("name", sorted(BAD_STDIN))
def test_bad_input_in_process(builds, name: str) -> None:
    assert_denied(answer(builds["shell_agent"], BAD_STDIN[name]))


@pytest.mark.parametrize("name", ["empty", "binary", "truncated", "1 MB command", "unterminated quotes",
                                  "deeply nested substitutions", "unknown tool"])
def test_bad_input_through_the_process(builds, name: str) -> None:
    assert_denied(run(builds["shell_agent"], BAD_STDIN[name]))


def test_too_large_input_is_denied(builds, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hook, "MAX_INPUT", 100)
    assert_denied(answer(builds["shell_agent"], bash("ls " + "x" * 200)), "larger than")


def test_a_missing_build_is_denied(tmp_path: Path) -> None:
    assert_denied(run(tmp_path / "nothing", bash("ls")), "cannot be used")


def test_a_tampered_build_is_denied(builds, tmp_path: Path) -> None:
    copy = tmp_path / "shell_agent"
    shutil.copytree(builds["shell_agent"], copy)
    table = copy / "spec" / "shell_agent" / "zone_access.csv"
    table.write_text(table.read_text() + "ssh_keys,read\n")
    assert_denied(run(copy, bash("cat ~/.ssh/id_rsa")), "cannot be used")
    assert_denied(run(copy, bash("ls")), "cannot be used")


def test_a_build_that_reads_no_shell_commands_is_denied(builds) -> None:
    assert_denied(answer(builds["payments"], bash("ls")), "does not read shell commands")


@pytest.mark.parametrize("args", [[], ["--bild", "x"], ["--build"], ["--build", "b", "--timeout", "0"],
                                  ["--build", "b", "--approval", "maybe"], ["--help"]])
def test_bad_options_are_denied(args: list[str]) -> None:
    p = subprocess.run([sys.executable, "-m", "veriguard.hook", "claude-code", *args], input=b"{}",
                       capture_output=True, cwd=ROOT, timeout=60)
    assert p.returncode == 2 and b"Traceback" not in p.stderr and p.stderr.strip()


@pytest.mark.parametrize("args,words", [
    (["--build", "b", "--build", "c"], "--build is given twice"), (["--build", "b", "--log"], "--log expects a value"),
    (["--build", "b", "--log", "--approval", "deny"], "--log expects a value"),
    (["--build=b", "--timeout=nan"], "at most 3600"), (["--build", "b", "--timeout", "soon"], "not a number"),
    (["--build", "b", "--other-tools=maybe"], "not one of deny, allow"), (["--build", "b", "x"], "unrecognized"),
    (["--build", "b", "--acc"], "unrecognized"), (["--log", "l"], "--build is required"), (["-h"], "--timeout SECONDS"),
])
def test_each_bad_option_is_named(args: list[str], words: str) -> None:
    assert_denied(hook.parse_options(args), words)  # type: ignore[arg-type]


def test_options_in_both_spellings() -> None:
    opts = hook.parse_options(["--build=b", "--log", "l", "--log-key=k", "--context", "c", "--other-tools", "allow",
                               "--allow-tool", "TodoWrite", "--allow-tool=Task", "--approval=deny", "--timeout", "2.5",
                               "--accept-unproved"])
    assert isinstance(opts, hook.Options)
    assert opts._replace(env={}) == hook.Options("b", "l", "k", "c", "allow", ("TodoWrite", "Task"), "deny", 2.5, True,
                                                 {})
    assert hook.parse_options(["--build", "b"]) == hook.Options("b", env=dict(os.environ))


def test_the_console_script_decides_without_importing_the_cli(builds) -> None:
    """`veriguard hook` (veriguard.entry) goes to the hook first; other commands still reach the CLI."""
    code = "import sys; from veriguard.entry import main; sys.argv[0] = 'veriguard'; sys.exit(main())"
    p = subprocess.run([sys.executable, "-X", "importtime", "-c", code, "hook", "claude-code", "--build",
                        str(builds["shell_agent"])], input=json.dumps(bash("ls")).encode(), capture_output=True,
                       cwd=ROOT, timeout=60, env={**os.environ, "HOME": HOME})
    imported = {line.split("|")[-1].strip() for line in p.stderr.decode().splitlines() if line.startswith("import time")}
    assert p.returncode == 0 and "veriguard.hook" in imported and "veriguard.enforce.monitor" in imported
    assert not {"veriguard.cli", "argparse"} & imported
    p = subprocess.run([sys.executable, "-c", code, "--help"], capture_output=True, cwd=ROOT, timeout=60)
    assert p.returncode == 0 and b"synth" in p.stdout and b"hook" in p.stdout


def test_an_unknown_integration_is_denied() -> None:
    p = subprocess.run([sys.executable, "-m", "veriguard.hook", "cursor", "--build", "b"], input=b"{}",
                       capture_output=True, cwd=ROOT, timeout=60)
    assert p.returncode == 2 and b"unknown integration" in p.stderr


def test_home_must_be_absolute(builds) -> None:
    assert_denied(answer(builds["shell_agent"], bash("ls"), home="relative"), "$HOME")


def test_context_adds_facts_but_cannot_set_the_hooks_own(builds, tmp_path: Path) -> None:
    ctx = tmp_path / "ctx.json"
    ctx.write_text('{"user": "root"}')
    a = answer(builds["os_agent"], bash("ls /home/bob", cwd="/root"), "--context", str(ctx), home="/root")
    assert a.code == 0, a
    ctx.write_text('{"user": "user"}')
    assert_denied(answer(builds["os_agent"], bash("ls /home/bob", cwd="/home/user"), "--context", str(ctx),
                         home="/home/user"), "other_homes")
    ctx.write_text('{"user": "user", "approved": true}')
    assert_denied(answer(builds["os_agent"], bash("rm -r /test/old", cwd="/home/user"), "--context", str(ctx),
                         home="/home/user"), "fills in itself")
    for bad in ("[1]", "{", ""):
        ctx.write_text(bad)
        assert_denied(answer(builds["os_agent"], bash("ls"), "--context", str(ctx)), "--context")
    assert_denied(answer(builds["os_agent"], bash("ls"), "--context", str(tmp_path / "missing.json")), "--context")
    assert_denied(answer(builds["os_agent"], bash("ls /test", cwd="/home/user"), home="/home/user"), "user")


# ------------------------------------------------------------------------------------------------
# the isolation: a native crash, a hang or a stray exit in the decision is a denial

def in_process_main(monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str], build: Path,
                    stdin: bytes, *args: str) -> tuple[int, str, str]:
    r, w = os.pipe()
    os.write(w, stdin)
    os.close(w)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(os.fdopen(r, "rb")))
    code = hook.main(["claude-code", "--build", str(build), *args])
    out, err = capfd.readouterr()
    return code, out, err


def crash(_raw: bytes, _opts: object) -> hook.Answer:
    faulthandler.disable()  # pytest's: its dump would only be noise
    os.kill(os.getpid(), signal.SIGSEGV)
    return hook.Answer(0)


def hang(_raw: bytes, _opts: object) -> hook.Answer:
    time.sleep(60)
    return hook.Answer(0)


def stray_exit(_raw: bytes, _opts: object) -> hook.Answer:
    os._exit(0)


def garbage(_raw: bytes, _opts: object) -> hook.Answer:
    return hook.Answer(1, "", "")


@pytest.mark.parametrize("fn,words", [(crash, "crashed (SIGSEGV)"), (hang, "longer than"),
                                      (stray_exit, "unreadable"), (garbage, "exit code 1")])
def test_the_decision_process_failing_is_a_denial(builds, monkeypatch, capfd, fn, words: str) -> None:
    if not hasattr(os, "fork"):
        pytest.skip("no fork on this platform: the decision runs in-process")
    monkeypatch.setattr(hook, "decide", fn)
    code, out, err = in_process_main(monkeypatch, capfd, builds["shell_agent"], json.dumps(bash("ls")).encode(),
                                     "--timeout", "0.5" if fn is hang else "2")
    assert code == 2 and words in err and json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_main_in_process_allows_and_denies(builds, monkeypatch, capfd) -> None:
    monkeypatch.setenv("HOME", HOME)
    code, out, err = in_process_main(monkeypatch, capfd, builds["shell_agent"], json.dumps(bash("ls -la")).encode())
    assert (code, out, err) == (0, "", "")
    code, out, err = in_process_main(monkeypatch, capfd, builds["shell_agent"],
                                     json.dumps(bash("cat ~/.ssh/id_rsa")).encode())
    assert code == 2 and "ssh_keys" in err and json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_an_exception_anywhere_is_a_denial(builds, monkeypatch) -> None:
    def boom(*_a: object, **_k: object) -> None:
        raise RecursionError("deep")

    monkeypatch.setattr(hook, "equivalent_command", boom)
    assert_denied(answer(builds["shell_agent"], bash("ls")), "internal error", "RecursionError")


def test_a_signal_to_the_hook_is_a_denial(builds, tmp_path: Path) -> None:
    slow, deciding = tmp_path / "slow.py", tmp_path / "deciding"
    slow.write_text("import sys, time\nfrom veriguard import hook\n"
                    f"hook.decide = lambda raw, opts: open({str(deciding)!r}, 'w').close() or time.sleep(60)\n"
                    "sys.exit(hook.main(sys.argv[1:]))\n")
    p = subprocess.Popen([sys.executable, str(slow), "claude-code", "--build", str(builds["shell_agent"])],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    p.stdin.write(json.dumps(bash("ls")).encode())  # type: ignore[union-attr]
    p.stdin.close()  # type: ignore[union-attr]
    waited = time.monotonic()
    while not deciding.exists():  # the decision process is running
        assert time.monotonic() - waited < 60 and p.poll() is None, p.poll()
        time.sleep(0.02)
    t0 = time.monotonic()
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=30) == 2
    assert b"signal" in p.stderr.read()  # type: ignore[union-attr]
    assert time.monotonic() - t0 < 45  # the decision process (asleep for 60 s) is gone too: nothing holds the pipes open
    p.stdout.close(), p.stderr.close()  # type: ignore[union-attr]


# ------------------------------------------------------------------------------------------------
# pieces

@pytest.mark.parametrize("pattern,base,expected", [
    ("**/*.py", "/p", "/p"), ("src/**/*.ts", "/p", "/p/src"), ("/etc/*.conf", "/p", "/etc"),
    ("../../**", "/a/b/c", "/a/b/c/../.."), ("a/b/c.txt", "/p", "/p/a/b"), ("{a,b}/x", "/p", "/p"),
    ("*", "/", "/"), ("/*", "/p", "/"),
])
def test_glob_base(pattern: str, base: str, expected: str) -> None:
    assert hook.glob_base(pattern, base) == expected


@pytest.mark.parametrize("pattern,expected", [
    ("**/*.{ts,tsx}", ["/p"]), ("{src,tests}/**", ["/p/src", "/p/tests"]), ("{/etc,a}/*", ["/etc", "/p/a"]),
    ("{a,{b,/root}}/x/*", ["/p/a/x", "/p/b/x", "/root/x"]), ("**/../../x", ["/p/../.."]),
    ("*/{..,y}/z", ["/p/..", "/p"]),
    (r"\{/etc,a}/*", ["/p"]), ("{x}/*", ["/p"]), ("{/etc/*,b", ["/p"]),
])
def test_glob_bases_expand_braces_and_climb(pattern: str, expected: list[str]) -> None:
    assert sorted(hook.glob_bases(pattern, "/p")) == sorted(expected)


def test_brace_alternatives() -> None:
    assert hook.brace_alternatives("a{b,c{d,e}}f") == ["abf", "acdf", "acef"]
    assert hook.brace_alternatives("{a,b}{c,d}") == ["ac", "ad", "bc", "bd"]
    assert hook.brace_alternatives(r"\{a,b}") == [r"\{a,b}"] and hook.brace_alternatives("{a}") == ["{a}"]
    with pytest.raises(hook.Refused, match="more than 256"):
        hook.brace_alternatives("{a,b}" * 9)


def test_file_tools_follow_symbolic_links(builds, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("key")
    (home / "project").mkdir()
    (home / "project" / "notes").symlink_to(home / ".ssh" / "id_rsa")
    (home / "project" / "up").symlink_to(home)
    cwd = str(home / "project")
    for c in (call("Read", cwd=cwd, file_path=f"{cwd}/notes"), call("Edit", cwd=cwd, file_path=f"{cwd}/up/.ssh/config"),
              call("Grep", cwd=cwd, pattern="x", path=f"{cwd}/up"), call("Glob", cwd=cwd, pattern="up/*")):
        assert_denied(answer(builds["shell_agent"], c, home=str(home)))
    assert answer(builds["shell_agent"], call("Read", cwd=cwd, file_path=f"{cwd}/README"), home=str(home)).code == 0


def test_equivalent_commands_quote_paths() -> None:
    assert hook.equivalent_command("Read", {"file_path": "/a b/$(x)"}, "/") == "cat -- '/a b/$(x)'"
    assert hook.equivalent_command("Write", {"file_path": "/x"}, "/") == "tee -- /x"
    assert hook.equivalent_command("Edit", {"file_path": "/x"}, "/") == "cat -- /x && tee -- /x"
    assert hook.equivalent_command("Grep", {"pattern": "$(rm -rf /)"}, "/w") == "grep -r -e x -- /w"
