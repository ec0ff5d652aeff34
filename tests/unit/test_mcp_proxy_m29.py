"""Red-team pass M29 on the MCP proxy (2026-11-30): the real proxy process in front of a real child
(tests/mcp_child_m29.py, a payments server that can be slow, answer with an error or garbage, exit on a call, or answer
70 MB), fed raw JSON-RPC lines through M25's session. Each test but the controls failed on the code before:
- a request reusing the id of a call still running in the server was refused at once, under that id: the host took
  the refusal for the answer to the running call (which paid) and dropped the real answer;
- an allowed call that ended without the server's result (timed out, an error or garbage answer, the server gone,
  a 70 MB answer, the host's cancellation) left only its allow record;
- a host line was read whole however long (100 MB held, parsed, decided);
- a stop signal while the proxy's modules loaded printed a traceback (SIGINT) or killed it unannounced;
- on a platform without SIGHUP (Windows) the proxy died at import with an AttributeError traceback;
- a notification, or a request the proxy answers itself (ping, initialize, logging/setLevel), carrying a tool's name
  and arguments was answered or dropped with no record."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.unit.test_guard import CONTEXT, OVER_LIMIT, PAYMENT
from tests.unit.test_mcp_proxy_m25 import (call, cancel, normal_session, records, session_fixture, stoppable, text,
                                         wait_for)
from tests.unit.test_monitor import payments_build  # noqa: F401  (fixture)

pytest.importorskip("mcp", reason="the MCP proxy needs the mcp SDK")

CHILDREN = Path(__file__).resolve().parent.parent
session = session_fixture(CHILDREN / "mcp_child_m29.py")
ROOT = CHILDREN.parent


def everything(s, settle=0.5) -> list[dict]:
    """Every answer the host got (but the handshake's), in order, once the proxy has exited."""
    time.sleep(settle)
    while not s.queue.empty():
        s.answers.append(s.queue.get())
    return [a for a in s.answers if a.get("id") != "init"]


# --- 1. an answer to a reused id goes out after the answer of the request holding that id ------------------------
@pytest.mark.parametrize("second", [call(1, OVER_LIMIT), call("1", OVER_LIMIT), call(1),
                                    {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                                    {"jsonrpc": "2.0", "id": "1", "method": "ping"}])
def test_a_reused_id_is_answered_after_the_call_holding_it(session, second):
    """Before: the refusal of the second request came at once under id 1, so the host read the payment that ran as
    refused (and could send it again) and dropped the server's "sent 45000". Now the host gets the server's answer
    first, then the refusal, in the order it sent them; the log holds the allow, then the refusal that says why."""
    s = session(child=["slow=1.5"])
    try:
        s.send(call(1))
        s.wait_received(1)
        s.send(second)
        time.sleep(2.5)
    finally:
        s.close()
    got = everything(s)
    assert [str(a["id"]) for a in got] == ["1", "1"], got
    assert text(got[0]) == "sent 45000", got
    assert got[1].get("error") or got[1]["result"]["isError"], got
    assert s.paid() == [45000]
    assert records(s)[0] == ("1", True, "")
    assert all("still in use" in why for _, _, why in records(s)[1:]), records(s)


def test_an_id_used_again_once_its_call_ended_is_a_new_call(session):
    """Control: the same id sent again after its answer came is decided and run like any call."""
    s = session()
    try:
        s.send(call(1))
        assert text(s.answer(1)) == "sent 45000"
        s.answers.clear()
        s.send(call(1))
        assert text(s.answer(1)) == "sent 45000"
    finally:
        s.close()
    assert s.paid() == [45000, 45000] and records(s) == [("1", True, ""), ("1", True, "")]


# --- 2. an allowed call that ends without the server's result has a record of its end ---------------------------
@pytest.mark.parametrize("child,options,why", [
    (["slow=5"], ["--timeout", "1"], "did not answer within 1 s"),
    (["error"], [], "answered with error"),
    (["garbage"], [], "not valid MCP"),
    (["exit_on_call"], [], "the MCP server is gone"),
    (["big=70"], [], "longer than 67108864 bytes")])
def test_an_allowed_call_that_did_not_complete_has_a_record_of_it(session, child, options, why):
    """Before: the log held the allow and nothing else, though the host was told the call did not complete. Now a
    record follows (counting in no run's denials): allowed, but did not complete, and why."""
    s = session(child=child, options=options)
    try:
        s.send(call(1))
        assert "did not complete" in text(s.answer(1, timeout=60))
    finally:
        s.p.stdin.close()
        assert s.p.wait(timeout=60) == 0
    got = records(s)
    assert got[0] == ("1", True, "") and len(got) == 2, got
    assert got[1][:2] == ("1", False) and "did not complete" in got[1][2] and why in got[1][2], got


def test_a_call_the_host_cancels_after_it_went_to_the_server_has_a_record_of_it(session):
    """Before: the allow alone, though the host gave up on the call and its answer is dropped. Now a record says it
    was cancelled after it went to the server, and that it may have run there (it did)."""
    s = session(child=["slow=1"])
    try:
        s.send(call(1))
        s.wait_received(1)
        s.send(cancel(1))
        s.wait_paid(1)
        time.sleep(0.5)
    finally:
        s.close()
    assert s.paid() == [45000] and everything(s) == []
    got = records(s)
    assert got[0] == ("1", True, "") and len(got) == 2 and got[1][:2] == ("1", False), got
    assert "cancelled by the host" in got[1][2] and "may have run" in got[1][2], got


# --- 3. a host line longer than the proxy reads -------------------------------------------------------------------
def test_a_100_mb_host_line_is_dropped_unread_and_recorded(session):
    """Before: the 100 MB line was read whole and parsed (its call decided and answered under its id). Now a line
    longer than 64 MiB is dropped as it is read (a parse error, recorded as a refused call) and the next line is
    served as usual."""
    s = session()
    try:
        huge = json.dumps(call(1, {**PAYMENT, "memo": "x" * (100 << 20)})).encode() + b"\n"
        s.send(huge, call(2))
        assert text(s.answer(2, timeout=120)) == "sent 45000"
        peak = int(Path(f"/proc/{s.p.pid}/status").read_text().split("VmHWM:")[1].split()[0]) >> 10
    finally:
        s.close()
    got = everything(s)
    dropped = [a for a in got if a.get("id") is None]
    assert len(dropped) == 1 and dropped[0]["error"]["code"] == -32700, got
    assert "longer than 67108864" in dropped[0]["error"]["message"], got
    assert [a["id"] for a in got if a.get("id") is not None] == [2], got
    assert records(s)[0][:2] == ("", False) and "longer than" in records(s)[0][2] and records(s)[1] == ("2", True, "")
    assert peak < 400, peak   # MB: one line of at most 64 MiB in memory


# --- 4. a stop signal while the proxy's modules load ------------------------------------------------------------
SLOW_IMPORT = ("import importlib.abc, sys, time\n"
               "flag = sys.argv[1]\n"
               "class Slow(importlib.abc.MetaPathFinder):\n"
               "    def find_spec(self, name, path, target=None):\n"
               "        if name == 'mcp_types':\n"
               "            open(flag, 'w').close()\n"
               "            time.sleep(60)\n"
               "sys.meta_path.insert(0, Slow())\n"
               "entry, sys.argv = sys.argv[2], [sys.argv[0], *sys.argv[3:]]\n"
               "if entry == 'cli':\n"
               "    from veriguard.cli import main\n"
               "    sys.exit(main())\n"
               "import runpy\n"
               "sys.argv.pop(1)\n"
               "runpy.run_module('veriguard.enforce.integrations.mcp_proxy', run_name='__main__', alter_sys=True)\n")


@pytest.mark.parametrize("entry", ["cli", "module"])
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_stop_signal_while_the_proxy_loads_its_modules_exits_quietly(payments_build, tmp_path, entry, signum):
    """`veriguard mcp-proxy ...` and `python -m veriguard.enforce.integrations.mcp_proxy ...` stopped while the SDK's
    types load (made slow here). Before: SIGINT printed a KeyboardInterrupt traceback, SIGTERM and SIGHUP killed the
    process with no word. Now it exits 128 + the signal's number, saying nothing was read and no server started."""
    loading, got = tmp_path / "loading", tmp_path / "received.txt"
    context = tmp_path / "context.json"
    context.write_text(json.dumps(CONTEXT), encoding="utf-8")
    argv = [sys.executable, "-c", SLOW_IMPORT, str(loading), entry, "mcp-proxy", "--build", str(payments_build),
            "--context", str(context), "--", sys.executable, str(CHILDREN / "mcp_child_m29.py"), str(got), str(context)]
    with stoppable(argv) as p:
        end = time.monotonic() + 60
        while not loading.exists():
            assert time.monotonic() < end and p.poll() is None, p.stderr.read() if p.poll() is not None else "slow"
            time.sleep(0.02)
        p.send_signal(signum)
        _, err = p.communicate(timeout=30)
    assert p.returncode == 128 + signum, (p.returncode, err)
    assert f"stopped by {signum.name} while it loaded".encode() in err and b"Traceback" not in err, err
    assert not got.exists()


# --- 5. a platform without SIGHUP ------------------------------------------------------------------------------------
NO_SIGHUP = ("import signal, sys\n"
             "del signal.SIGHUP\n"
             "from veriguard.cli import main\n"
             "sys.exit(main())\n")


def test_a_platform_without_sighup_is_refused_with_a_precise_error(payments_build, tmp_path):
    """Windows has no SIGHUP (nor process groups). Before: `veriguard mcp-proxy` died importing the proxy, an
    AttributeError traceback, exit 1. Now: exit 2 with error[mcp.platform] naming what is missing, nothing started."""
    got = tmp_path / "received.txt"
    argv = [sys.executable, "-c", NO_SIGHUP, "mcp-proxy", "--build", str(payments_build), "--",
            sys.executable, str(CHILDREN / "mcp_child_m29.py"), str(got), str(tmp_path / "c.json")]
    p = subprocess.run(argv, capture_output=True, timeout=60, cwd=ROOT)
    assert p.returncode == 2, p
    assert b"error[mcp.platform]" in p.stderr and b"signal.SIGHUP" in p.stderr and b"Traceback" not in p.stderr, p
    assert not got.exists()


# --- 6. a tool call carried by a notification or by a request the proxy answers itself ------------------------------
CARRIED = {"name": "send_payment", "arguments": OVER_LIMIT}


@pytest.mark.parametrize("message,answered", [
    ({"jsonrpc": "2.0", "method": "notifications/initialized", "params": CARRIED}, False),
    ({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1, **CARRIED}},
     False),
    ({"jsonrpc": "2.0", "method": "notifications/roots/list_changed", "params": CARRIED}, False),
    ({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9, **CARRIED}}, False),
    ({"jsonrpc": "2.0", "id": "r", "method": "ping", "params": CARRIED}, True),
    ({"jsonrpc": "2.0", "id": "r", "method": "initialize", "params": {**CARRIED, "protocolVersion": "2025-06-18",
                                                                      "capabilities": {}}}, True),
    ({"jsonrpc": "2.0", "id": "r", "method": "logging/setLevel", "params": {"level": "info", **CARRIED}}, True)])
def test_a_tool_call_carried_by_another_message_is_recorded_and_never_run(session, message, answered):
    """Before: dropped (a notification MCP has) or answered as if plain (ping, initialize), with no record of the call
    it carried. Now it is recorded as a refused call; a request gets an invalid-params error; nothing reaches the
    server, and the next call is served as usual."""
    s = session()
    try:
        s.send(message, call(2))
        assert text(s.answer(2)) == "sent 45000"
        if answered:
            assert s.answer("r")["error"]["code"] == -32602
    finally:
        s.close()
    got = records(s)
    assert got[0][:2] == ("", False) and "tool's name and arguments" in got[0][2] and got[1:] == [("2", True, "")], got
    assert s.paid() == [45000]
    # M33: the proxy's own tools/list at the start (no params) is the only other request the server gets
    assert [m.get("method") for m in s.requests()] == ["initialize", "notifications/initialized", "tools/list",
                                                      "tools/call"]
    assert "params" not in s.requests()[2]


@pytest.mark.parametrize("message,result", [
    ({"jsonrpc": "2.0", "id": "r", "method": "ping"}, {}),
    ({"jsonrpc": "2.0", "id": "r", "method": "ping", "params": {"_meta": {"progressToken": 1}}}, {}),
    ({"jsonrpc": "2.0", "id": "r", "method": "tools/list", "params": {}}, "tools")])
def test_plain_requests_are_answered_unrecorded(session, message, result):
    """Control: ping and tools/list without a tool call in them are answered as before, with no record."""
    s = session()
    try:
        s.send(message)
        got = s.answer("r")["result"]
        assert got == result if isinstance(result, dict) else result in got
    finally:
        s.close()
    assert records(s) == []


# --- controls ------------------------------------------------------------------------------------------------------
def test_a_normal_session_is_unchanged(session):
    """Control: initialize, list, ping and several payments, each decided on the ledger the last one updated."""
    normal_session(session(ledger=300000))


# --- 7. a server that writes to its stderr without end, to a host that never reads the proxy's --------------------
def rss_mb(pid: int) -> int:
    return int(Path(f"/proc/{pid}/status").read_text().split("VmRSS:")[1].split()[0]) >> 10


def test_a_server_flooding_its_stderr_holds_no_memory_in_the_proxy(payments_build, tmp_path):
    """The proxy's stderr is a pipe the host never reads; the server writes lines of control characters without end.
    Before: up to 10,000 escaped lines waited (16 KiB each, fourfold once escaped): the proxy grew by about 7 MB a
    second towards 640 MB, and a call took 1-4 s. Now at most 4 Mi characters wait; calls are still answered."""
    context, got = tmp_path / "context.json", tmp_path / "received.txt"
    context.write_text(json.dumps(CONTEXT), encoding="utf-8")
    argv = [sys.executable, "-m", "veriguard.enforce.integrations.mcp_proxy", "--build", str(payments_build),
            "--context", str(context), "--", sys.executable, str(CHILDREN / "mcp_child_m29.py"), str(got), str(context),
            "flood"]
    with stoppable(argv) as p:
        def ask(message: dict) -> dict:
            p.stdin.write(json.dumps(message).encode() + b"\n")
            p.stdin.flush()
            return json.loads(p.stdout.readline())
        assert "result" in ask({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
        time.sleep(2)
        first = rss_mb(p.pid)
        for n in range(3):
            assert text(ask(call(n, {**PAYMENT, "amount_cents": 100}))) == "sent 100"
            time.sleep(2)
        grown = rss_mb(p.pid) - first
    assert grown < 8, grown   # MB over 6 s (before: 20 to 45, with the machine's load)


# --- 8. where there is no /proc (macOS): the server's helpers that left its process group ------------------------
HELPER = ("import os, subprocess, sys, time\n"
          "subprocess.Popen([sys.executable, '-c', 'import os, sys, time; os.setsid(); "
          "open(sys.argv[1], \"w\").write(str(os.getpid())); time.sleep(60)', sys.argv[1]])\n"
          "time.sleep(60)\n")


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_without_proc_a_helper_that_left_the_servers_group_is_killed_with_it(monkeypatch, tmp_path):
    """The proxy's kill_tree where /proc tells no children (macOS, simulated: /proc's children read as none, no
    subreaper) on a real server whose helper called setsid. Before: only the process group was killed and the helper
    lived on (on macOS it would finish a payment behind the next call). Now the processes `ps` shows below the server
    are stopped, then killed."""
    import asyncio

    from veriguard.enforce.integrations import mcp_proxy

    monkeypatch.setattr(mcp_proxy, "PROC_TASKS", str(tmp_path / "no-proc"), raising=False)
    monkeypatch.setattr(mcp_proxy, "children", lambda pid: [])
    monkeypatch.setattr(mcp_proxy, "ADOPTING", False)
    pidfile = tmp_path / "helper.pid"

    async def run() -> None:
        server = await asyncio.create_subprocess_exec(sys.executable, "-c", HELPER, str(pidfile), process_group=0)
        end = time.monotonic() + 30
        while not pidfile.exists() or not pidfile.read_text():
            assert time.monotonic() < end
            await asyncio.sleep(0.05)
        mcp_proxy.kill_tree(server)
        await asyncio.wait_for(server.wait(), 10)

    asyncio.run(run())
    helper = int(pidfile.read_text())
    try:
        wait_for(lambda: not alive(helper), 5)
        assert not alive(helper)
    finally:
        if alive(helper):
            os.kill(helper, signal.SIGKILL)


def test_only_prompts_get_has_a_tool_calls_keys_of_its_own():
    """carries_foreign_call (review mend): a request's name and arguments are a call MCP does not give its method on
    every MCP method but prompts/get, whose own params they are (as the proxy's former special case had it)."""
    from veriguard.enforce.integrations import mcp_proxy

    owning = {m for m in mcp_proxy.MCP_METHODS if {"name", "arguments"} <= mcp_proxy.FORWARDED_KEYS.get(m, frozenset())}
    assert owning == {"prompts/get"}
    params = {"name": "send_payment", "arguments": {}}
    for method in mcp_proxy.MCP_METHODS:
        assert mcp_proxy.carries_foreign_call(method, params) is (method != "prompts/get")
        assert not mcp_proxy.carries_foreign_call(method, {"name": "send_payment"})
