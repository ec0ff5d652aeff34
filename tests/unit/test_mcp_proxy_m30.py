"""Red-team pass M30 on the MCP proxy and the console script's start (2026-11-30): the real `veriguard` entry and the
real proxy process in front of a real child (tests/mcp_child_m29.py, tests/mcp_child_m30.py). Each test but the
controls failed on the code before:
- a stop signal while `veriguard hook` loaded its modules killed it (SIGTERM) or exited 1 with a KeyboardInterrupt
  traceback (SIGINT): Claude Code takes both for a hook error and runs the tool; `veriguard mcp-proxy` stopped while
  veriguard.cli loaded printed the traceback or died unannounced, and other commands printed the traceback;
- after the host's output failed (EPIPE), the next call the proxy read was decided and run, its answer lost, and the
  lines already read were dropped with no record;
- a request whose id the SDKs' clients take for the id of a call still running (" 1", "01", "1.0", "0x1" for 1:
  Python's int(), JavaScript's Number()) was answered at once, and the host took that answer for the running call's;
- a server's request asking the client to run a tool was answered "method not found" with no record."""
import contextlib
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.unit.test_guard import CONTEXT, OVER_LIMIT
from tests.unit.test_mcp_proxy_m25 import INIT, call, records, session_fixture, stoppable, text
from tests.unit.test_mcp_proxy_m29 import everything
from tests.unit.test_monitor import payments_build  # noqa: F401  (fixture)

pytest.importorskip("mcp", reason="the MCP proxy needs the mcp SDK")

CHILDREN = Path(__file__).resolve().parent.parent
session = session_fixture(CHILDREN / "mcp_child_m29.py")
asking = session_fixture(CHILDREN / "mcp_child_m30.py")


# --- 1. a stop signal while a command's modules load (veriguard/entry.py) -------------------------------------------
SLOW_LOAD = ("import importlib.abc, os, sys, time\n"
             "flag, module = sys.argv[1], sys.argv[2]\n"
             "class Slow(importlib.abc.MetaPathFinder):\n"
             "    def find_spec(self, name, path, target=None):\n"
             "        if name == module:\n"
             "            open(flag, 'w').close()\n"
             "            while not os.path.exists(flag + '.go'):\n"
             "                time.sleep(0.01)\n"
             "sys.meta_path.insert(0, Slow())\n"
             "sys.argv = ['veriguard', *sys.argv[3:]]\n"
             "from veriguard.entry import main\n"
             "sys.exit(main())\n")


def loading(tmp_path: Path, module: str, argv: list[str], signum: int, *, ignored: bool = False, code: str = SLOW_LOAD):
    """Start the console script's main (or another `code` reading the same argv) with `module` made slow to load, send
    `signum` while it loads; returns the process (ended), its stderr, and the flag file (whose `.go` lets the load go
    on)."""
    flag = tmp_path / "loading"
    full = [sys.executable, "-c", code, str(flag), module, *argv]
    previous = signal.signal(signum, signal.SIG_IGN) if ignored else None
    try:
        with stoppable(full) as p:
            end = time.monotonic() + 60
            while not flag.exists():
                assert time.monotonic() < end and p.poll() is None, "it never loaded the module"
                time.sleep(0.02)
            p.send_signal(signum)
            if ignored:
                time.sleep(0.3)
                flag.with_name("loading.go").touch()
            _, err = p.communicate(timeout=60)
    finally:
        if ignored:
            signal.signal(signum, previous)
    return p, err


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_hook_stopped_while_it_loads_denies(payments_build, tmp_path, signum):
    """Before: SIGTERM and SIGHUP killed the hook (Claude Code runs the tool when a hook dies), SIGINT exited 1 with a
    traceback (Claude Code: a non-blocking error, the tool runs). Now: exit 2, the reason on stderr: a denial."""
    p, err = loading(tmp_path, "veriguard.hook", ["hook", "claude-code", "--build", str(payments_build)], signum)
    assert p.returncode == 2, (p.returncode, err)
    assert f"stopped by {signum.name} while it started; denied".encode() in err and b"Traceback" not in err, err


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_the_proxy_stopped_while_the_cli_loads_exits_quietly(payments_build, tmp_path, signum):
    """`veriguard mcp-proxy` stopped while veriguard.cli loads (before the proxy's own module: M29's handler came too
    late). Before: a traceback (SIGINT) or death by the signal. Now: 128 + n, nothing started."""
    got = tmp_path / "received.txt"
    p, err = loading(tmp_path, "veriguard.cli", ["mcp-proxy", "--build", str(payments_build), "--", sys.executable,
                                                 str(CHILDREN / "mcp_child_m29.py"), str(got), str(tmp_path / "c.json")],
                     signum)
    assert p.returncode == 128 + signum, (p.returncode, err)
    assert f"stopped by {signum.name} while it loaded".encode() in err and b"Traceback" not in err, err
    assert not got.exists()


def test_another_command_interrupted_while_the_cli_loads_says_so(tmp_path):
    """`veriguard check ...` interrupted while veriguard.cli loads. Before: a KeyboardInterrupt traceback. Now the
    CLI's own answer to ^C: "interrupted", exit 130."""
    p, err = loading(tmp_path, "veriguard.cli", ["check", "--build", str(tmp_path)], signal.SIGINT)
    assert p.returncode == 130 and b"interrupted" in err and b"Traceback" not in err, (p.returncode, err)


def test_a_signal_ignored_at_the_start_stays_ignored(payments_build, tmp_path):
    """Control: a hook started with SIGHUP ignored (nohup) is not stopped by it while it loads, and goes on to its
    answer (a denial here: no CLAUDE_PROJECT_DIR, no input)."""
    p, err = loading(tmp_path, "veriguard.hook", ["hook", "claude-code", "--build", str(payments_build)], signal.SIGHUP,
                     ignored=True)
    assert p.returncode == 2 and b"while it started" not in err and b"Traceback" not in err, (p.returncode, err)


# --- 2. the host's output gone ---------------------------------------------------------------------------------------
def proxy_with_closed_output(payments_build, tmp_path: Path, *child: str) -> tuple[subprocess.Popen, Path, Path]:
    """The proxy after its handshake, the host's end of its stdout closed."""
    context, got, log = tmp_path / "context.json", tmp_path / "received.txt", tmp_path / "log.jsonl"
    context.write_text(json.dumps(CONTEXT), encoding="utf-8")
    argv = [sys.executable, "-m", "veriguard.enforce.integrations.mcp_proxy", "--build", str(payments_build),
            "--context", str(context), "--log", str(log), "--", sys.executable, str(CHILDREN / "mcp_child_m29.py"),
            str(got), str(context), *child]
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    p.stdin.write(json.dumps(INIT).encode() + b"\n")
    p.stdin.flush()
    assert b'"init"' in p.stdout.readline()
    p.stdout.close()
    return p, got, log


def logged(log: Path) -> list[tuple[str, bool, str]]:
    from veriguard.enforce.decision_log import DecisionLog

    return [(r["action_id"], r["allowed"], r["fail_closed"]) for r in DecisionLog(log).records()] if log.exists() else []


def send(p: subprocess.Popen, *messages: dict) -> None:
    try:
        p.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
        p.stdin.flush()
    except BrokenPipeError:   # the proxy has ended: nothing it did not read can run
        pass


def test_a_call_read_after_the_hosts_output_failed_is_not_run(payments_build, tmp_path):
    """Before: the proxy noticed the failed write of call 1's answer only after it had read the next line, and call 2
    was decided and paid, its answer lost. Now the proxy stops reading at the failure and ends (exit 0): call 2 never
    runs."""
    p, got, log = proxy_with_closed_output(payments_build, tmp_path, "slow=0.3")
    try:
        send(p, call(1))
        end = time.monotonic() + 30
        while not Path(f"{got}.paid").exists():
            assert time.monotonic() < end
            time.sleep(0.05)
        time.sleep(1.0)   # its answer is written, and fails
        send(p, call(2))
        time.sleep(1.0)
        with contextlib.suppress(BrokenPipeError):   # what it did not read stays in the pipe
            p.stdin.close()
        assert p.wait(timeout=60) == 0
    finally:
        if p.poll() is None:
            p.kill()
    assert len(Path(f"{got}.paid").read_text().splitlines()) == 1
    assert logged(log) == [("1", True, "")], logged(log)


def test_calls_read_with_the_failed_answer_are_recorded_as_not_run(payments_build, tmp_path):
    """A ping whose answer cannot be written, and two calls read with it. Before: the loop stopped at the failure and
    the two calls it had read left no record. Now each is refused unrun, recorded (counting in no run's denials), and
    nothing reaches the server."""
    p, got, log = proxy_with_closed_output(payments_build, tmp_path)
    try:
        send(p, {"jsonrpc": "2.0", "id": "p", "method": "ping"}, call(1), call(2, OVER_LIMIT))
        assert p.wait(timeout=60) == 0   # it ends by itself: nobody can read its answers
    finally:
        if p.poll() is None:
            p.kill()
    got_records = logged(log)
    assert [r[:2] for r in got_records] == [("1", False), ("2", False)], got_records
    assert all("not run" in why and "closed the proxy's output" in why for _, _, why in got_records), got_records
    assert not Path(f"{got}.paid").exists()


# --- 3. ids a client takes for the id of a call still running ------------------------------------------------------
EQUATED = [" 1", "01", "+1", "\u0661", "1.0", "1e0", "0x1"]   # 1 to the Python SDK's int() or to JavaScript's Number()


def while_call_1_runs(session, ids: list) -> tuple[list[dict], list[tuple[str, bool, str]], list[int]]:
    """Call 1 runs in the server (1.5 s) while a call over the limit comes under each of `ids`; returns every answer
    in order, the records and the payments made."""
    s = session(child=["slow=1.5"])
    try:
        s.send(call(1))
        s.wait_received(1)
        s.send(*(call(other, OVER_LIMIT) for other in ids))
        time.sleep(2.5)
    finally:
        s.close()
    return everything(s), records(s), s.paid()


def test_an_id_a_client_reads_as_a_running_ones_is_answered_after_it(session):
    """Calls come with ids the official Python SDK (int()) or the TypeScript SDK (Number()) matches to 1 while call 1
    runs. Before: each refusal went out at once, and such a client took it for the answer to the payment, which ran.
    Now each is refused as an id still in use, after the running call's answer."""
    got, logged_, paid = while_call_1_runs(session, EQUATED)
    assert [a["id"] for a in got] == [1, *EQUATED], got
    assert text(got[0]) == "sent 45000" and all(a["result"]["isError"] for a in got[1:]), got
    assert logged_[0] == ("1", True, "") and all("still in use" in why for _, _, why in logged_[1:]), logged_
    assert paid == [45000]


def test_ids_no_client_reads_as_the_running_ones_are_answered_at_once(session):
    """Control: ids that no client matches to 1 are decided and answered while call 1 runs, as before."""
    others = ["10", "1.5", "one", 2]
    got, _, paid = while_call_1_runs(session, others)
    assert sorted(map(str, (a["id"] for a in got[:-1]))) == sorted(map(str, others)) and got[-1]["id"] == 1, got
    assert all("per-payment limit" in text(a) for a in got[:-1]) and text(got[-1]) == "sent 45000", got
    assert paid == [45000]


def test_the_ids_each_sdk_matches():
    """id_keys: the ids a client may take for one another, by Python's int() and JavaScript's Number()."""
    from veriguard.enforce.integrations.mcp_proxy import id_keys, js_number

    def same(a, b) -> bool:
        return not id_keys(a).isdisjoint(id_keys(b))
    assert all(same(1, x) for x in ["1", " 1\n", "01", "+1", "\u0661", "1.0", "1e0", "0x1", "0b1", "0o1", ".1e1"])
    assert same(0, "") and same("1.5", "1.50") and same("Infinity", "1e999") and same(10, "1_0")
    assert not any(same(1, x) for x in ["10", "1.5", "one", "1x", "0x", "NaN", 2, "-1"])
    assert js_number("NaN") is None and js_number(" \ufeff-0x1") is None and js_number("\u2003 7 ") == 7.0


# --- 4. a server asking its client to run a tool -------------------------------------------------------------------
def test_a_servers_request_carrying_a_tool_call_is_recorded_and_goes_nowhere(asking):
    """The server sends the client a tools/call, a sampling and an elicitation carrying a payment of 250000. Before:
    answered "method not found", no record. Now each is recorded (counting in no run's denials: the host's calls go
    on), still never forwarded; the host's calls are decided as usual."""
    s = asking(child=["ask_tool"])
    try:
        time.sleep(1.0)
        s.send(call(1), call(2, OVER_LIMIT))
        assert text(s.answer(1)) == "sent 45000" and s.answer(2)["result"]["isError"]
    finally:
        s.close()
    assert all(a.get("method") is None for a in everything(s)), "a server request reached the host"
    got = records(s)
    server = [r for r in got if "the MCP server sent the client" in r[2]]
    asked = sorted(m for _, _, why in server for m in ("tools/call", "sampling/createMessage", "elicitation/create")
                   if f"'{m}'" in why)
    assert asked == ["elicitation/create", "sampling/createMessage", "tools/call"], server
    assert all(not allowed for _, allowed, _ in server), server
    assert sorted(r for r in got if r not in server) == [("1", True, ""), ("2", False, "")], got
    assert s.paid() == [45000]


def test_a_servers_notifications_carrying_a_call_leave_no_record(asking):
    """Control: a server that logs its own calls (notifications/message, notifications/progress whose params hold the
    call) adds no record; its answers come as usual."""
    s = asking(child=["log_call"])
    try:
        s.send(call(1))
        assert text(s.answer(1)) == "sent 45000"
    finally:
        s.close()
    assert records(s) == [("1", True, "")]


# --- 5. Content-Length frames on stdio -------------------------------------------------------------------------------
def test_a_content_length_header_is_refused_saying_how_the_proxy_reads(session):
    """A host speaking LSP-style frames ("Content-Length: N", a blank line, the body): each header line was a bare
    parse error. Now the error and its record say that the proxy reads one message per line; nothing is forwarded.
    A line-delimited call after it is served as usual (the control)."""
    s = session()
    body = json.dumps(call(1)).encode()
    try:
        s.send(b"Content-Length: %d\r\n\r\n" % len(body) + body + b"Content-Length: 2\r\n\r\n{}\n", call(2))
        assert text(s.answer(2)) == "sent 45000"
    finally:
        s.close()
    errors = [a for a in everything(s) if a.get("id") is None]
    assert errors and all("not Content-Length frames" in a["error"]["message"] for a in errors[:1]), errors
    assert "not Content-Length frames" in records(s)[0][2], records(s)
    assert s.paid() == [45000] and records(s)[-1] == ("2", True, "") and len(records(s)) == 3, records(s)
