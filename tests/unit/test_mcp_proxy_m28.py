"""Red-team pass M28 on the MCP proxy (2026-11-30): the real proxy process in front of a real child
(tests/mcp_child_m28.py, a payments server that can read params loosely, answer twice and answer ids it was never
sent; tests/mcp_child_m27.py for a slow one), fed raw JSON-RPC lines through M25's session. Each test but the
controls failed on the code before:
- a forwarded request (tools/list, and with --unchecked resources/read, prompts/list, completion/complete...) took
  any params to the server: a tools/list whose params held a payment's name and arguments made a server that reads
  params loosely pay 250000, past a clerk's per-payment limit, with no decision and no record;
- a method of nine letters of a script with no Latin lookalikes (Arabic, Hebrew, Devanagari, kana) counted as a
  refused tools/call and halted a replan_halt run;
- the host closing its input while an allowed call ran in the server killed the server 2 s later: the call never
  completed, its record an allow with nothing after it."""
import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from tests.unit.test_guard import CONTEXT, OVER_LIMIT
from tests.unit.test_mcp_proxy_m25 import call, normal_session, records, session_fixture, stoppable, text
from tests.unit.test_mcp_proxy_m27 import method_then_a_call
from tests.unit.test_monitor import payments_build  # noqa: F401  (fixture)
from veriguard.enforce.integrations.mcp_proxy import OWN_ID

pytest.importorskip("mcp", reason="the MCP proxy needs the mcp SDK")

CHILDREN = Path(__file__).resolve().parent.parent
session = session_fixture(CHILDREN / "mcp_child_m28.py")
slow_session = session_fixture(CHILDREN / "mcp_child_m27.py")
UNCHECKED = ["--unchecked", "resources", "--unchecked", "prompts", "--unchecked", "completions"]


def hosts(s) -> list[dict]:
    """The requests the server got but the proxy's own tools/list (M33: it lists the tools itself at the start)."""
    return [m for m in s.requests() if not str(m.get("id")).startswith(OWN_ID)]


# --- 1. a forwarded request takes only its own params to the server -----------------------------------------------
@pytest.mark.parametrize("method", ["tools/list", "resources/list", "resources/templates/list", "prompts/list",
                                    "resources/read", "completion/complete"])
def test_a_forwarded_request_carrying_a_tool_call_never_reaches_the_server(session, method):
    """Before: the params went to the server as they came, and a server that reads params loosely paid 250000 (past
    the per-payment limit) from a tools/list, undecided and unrecorded. Now params MCP does not give the method are
    refused (invalid params) and, carrying a tool call, recorded as a refused call."""
    s = session(child=["lenient"], options=UNCHECKED)
    try:
        params = {"name": "send_payment", "arguments": OVER_LIMIT, **({"uri": "ledger://x"} if "read" in method else {})}
        s.send({"jsonrpc": "2.0", "id": "x", "method": method, "params": params}, call(2))
        assert s.answer("x")["error"]["code"] == -32602
        assert text(s.answer(2)) == "sent 45000"
    finally:
        s.close()
    assert s.paid() == [45000]   # before: [250000, 45000]
    assert [m.get("method") for m in hosts(s)].count(method) == 0
    got = records(s)
    assert got[0][1] is False and "carry a tool's name and arguments" in got[0][2] and got[1] == ("2", True, ""), got


@pytest.mark.parametrize("params,sent", [
    (None, None), ({}, {}), ({"cursor": "c2"}, {"cursor": "c2"}), ({"_meta": {"progressToken": 7}}, {}),
    ({"cursor": "c", "_meta": {"x": {"name": "send_payment", "arguments": OVER_LIMIT}}}, {"cursor": "c"})])
def test_a_tools_list_takes_its_own_params_without_meta(session, params, sent):
    """Control and fix: a tools/list with no params, a cursor or _meta is forwarded, without _meta (read by nobody,
    like a tools/call's), so nothing the host puts there reaches the server."""
    s = session()
    try:
        s.send({"jsonrpc": "2.0", "id": "l", "method": "tools/list", **({"params": params} if params is not None else {})})
        assert [t["name"] for t in s.answer("l")["result"]["tools"]] == ["send_payment"]
    finally:
        s.close()
    listed = [m for m in hosts(s) if m.get("method") == "tools/list"]
    assert len(listed) == 1 and listed[0].get("params") == sent, listed
    assert records(s) == []


@pytest.mark.parametrize("method,params", [
    ("tools/list", {"cursor": 5}), ("tools/list", {"x": 1}), ("tools/list", ["c"]), ("resources/read", {}),
    ("resources/read", {"uri": "ledger://x", "inputResponses": {}}), ("prompts/get", {"name": "p", "arguments": {"a": 1}}),
    ("completion/complete", {"ref": {"type": "ref/prompt", "name": "p"}})])
def test_params_mcp_does_not_give_a_method_are_refused_unrecorded(session, method, params):
    """Params of the wrong type or with keys the method does not have are refused as invalid, never forwarded; with
    no tool call in them nothing is recorded (a prompt's name and arguments are prompts/get's own)."""
    s = session(child=["lenient"], options=UNCHECKED)
    try:
        s.send({"jsonrpc": "2.0", "id": "x", "method": method, "params": params})
        assert s.answer("x")["error"]["code"] == -32602
    finally:
        s.close()
    assert [m.get("method") for m in hosts(s)].count(method) == 0 and records(s) == []


# --- 2. only scripts whose letters pass for Latin ones read as tools/call ----------------------------------------
@pytest.mark.parametrize("method,recorded", [
    ("\u0645\u0631\u062d\u0628\u0627\u0628\u0643\u0645\u0627", False),     # Arabic
    ("\u05e9\u05dc\u05d5\u05de\u05e2\u05dc\u05d9\u05db\u05dd", False),     # Hebrew
    ("\u0928\u092e\u0938\u0924\u0926\u0941\u0928\u093f\u092f", False),     # Devanagari
    ("\uff71\uff72\uff73\uff74\uff75\uff76\uff77\uff78\uff79", False),     # halfwidth katakana
    ("\u3072\u3089\u304c\u306a\u3067\u304b\u3044\u305f\u306a", False),     # hiragana
    ("\u4e5d\u500b\u306e\u6f22\u5b57\u3067\u540d\u524d\u3060", False),     # CJK and kana
    ("\u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35\u0e04\u0e23\u0e31", False),     # Thai
    ("\uff54\uff4f\uff4f\uff4c\uff53\uff0f\uff43\uff41\uff4c\uff4c", True),  # fullwidth Latin
    ("\u03c4\u03bf\u03bfl\u03c2/c\u03b1ll", True),                          # Greek
    ("t\u043e\u043els/call", True),                                         # Cyrillic
    ("t\u0585\u0585ls/call", True),                                         # Armenian
    ("\u13a2ools/call", True),                                              # Cherokee
    ("tools/ca\u0627l", True), ("t\u0647\u0647ls/call", True),               # Arabic letters among Latin ones
    ("\u5de5ools/c\u53e3ll", True)])                                          # CJK among Latin
def test_a_method_of_another_script_reads_as_tools_call_only_through_lookalikes(session, method, recorded):
    """Before: any nine letters not ASCII read as tools/call: an Arabic or kana method was recorded as a refused call
    and halted a run under replan_halt --halt-after 1. Now only letters of scripts that pass for Latin (Cyrillic,
    Greek, Armenian, Cherokee...) and fullwidth forms do, and any letter among Latin ones (a spelling, not a word)."""
    method_then_a_call(session, method, recorded=recorded)


# --- 3. the host's end of input lets the calls running in the server finish -------------------------------------
def test_a_call_running_when_the_host_closes_its_input_completes(slow_session):
    """Before: the server's input was closed once the calls were decided and the server killed 2 s later, so a
    payment of 4 s never completed (the host read "the MCP server is gone"), its record an allow with nothing after
    it. Now the proxy waits for the calls running in the server (up to --timeout) before it stops the server."""
    s = slow_session(child=["slow=4"])
    s.send(call(1), call(2, OVER_LIMIT))
    s.p.stdin.close()
    assert text(s.answer(1, timeout=30)) == "sent 45000"
    assert s.answer(2)["result"]["isError"]
    assert s.p.wait(timeout=30) == 0
    assert s.paid() == [45000] and sorted(records(s)) == [("1", True, ""), ("2", False, "")]


def test_a_call_the_server_never_answers_after_the_host_left_ends_at_its_timeout(slow_session):
    """Control: waiting for the server is bounded by --timeout: a call it never answers is refused then, and the
    proxy exits."""
    s = slow_session(child=["slow=60"], options=["--timeout", "2"])
    s.send(call(1))
    s.p.stdin.close()
    started = time.monotonic()
    assert "did not answer within 2 s" in text(s.answer(1, timeout=30))
    assert s.p.wait(timeout=30) == 0 and time.monotonic() - started < 15
    assert s.paid() == []


# --- 4. a stop signal while the policy loads -----------------------------------------------------------------------
SLOW_LOAD = ("import sys, time\n"
             "from veriguard.enforce.guard import Guard\n"
             "load = Guard.from_build.__func__\n"
             "def slow(cls, *a, **k):\n"
             "    open(sys.argv[1], 'w').close()\n"
             "    time.sleep(60)\n"
             "    return load(cls, *a, **k)\n"
             "Guard.from_build = classmethod(slow)\n"
             "from veriguard.enforce.integrations.mcp_proxy import main\n"
             "sys.exit(main(sys.argv[2:]))\n")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_while_the_policy_loads_exits_with_the_signal_and_starts_nothing(payments_build, tmp_path, signum):
    """Control (held before, untested until now): the real proxy whose build load is made slow; a stop signal in it
    exits 128 + the signal's number, says so, and no server is started."""
    loading, got = tmp_path / "loading", tmp_path / "received.txt"
    context = tmp_path / "context.json"
    context.write_text(json.dumps(CONTEXT), encoding="utf-8")
    argv = [sys.executable, "-c", SLOW_LOAD, str(loading), "--build", str(payments_build), "--context", str(context),
            "--", sys.executable, str(CHILDREN / "mcp_child_m27.py"), str(got), str(context)]
    with stoppable(argv) as p:
        end = time.monotonic() + 60
        while not loading.exists():
            assert time.monotonic() < end and p.poll() is None, p.stderr.read() if p.poll() is not None else "slow"
            time.sleep(0.05)
        os.kill(p.pid, signum)
        _, err = p.communicate(timeout=30)
    assert p.returncode == 128 + signum, err
    assert f"stopped by {signum.name} before it served".encode() in err and b"Traceback" not in err, err
    assert not got.exists() and not got.with_name(got.name + ".starts").exists()


# --- controls ------------------------------------------------------------------------------------------------------
def test_a_normal_session_is_unchanged(session):
    """Control: initialize, list, ping and several payments, each decided on the ledger the last one updated."""
    normal_session(session(ledger=300000))


@pytest.mark.parametrize("child", [["stray"], ["twice"]])
def test_answers_for_ids_never_sent_or_answered_twice_go_nowhere(session, child):
    """Control (held before): a server answering ids the proxy never sent (0, the next, "1", 1.0, true), or a call
    twice, gets no answer to the host beyond one per request; a denied call with a reused id is refused."""
    s = session(child=child)
    try:
        s.send(call(1))
        assert text(s.answer(1)) == "sent 45000"
        s.send(call(1, OVER_LIMIT), call(2))
        assert text(s.answer(2)) == "sent 45000"
        time.sleep(0.5)
    finally:
        s.close()
    time.sleep(0.2)
    while not s.queue.empty():   # every answer the host got
        s.answers.append(s.queue.get())
    assert [a.get("id") for a in s.answers if a.get("id") != "init"].count(1) == 2
    assert [a["result"].get("isError", False) for a in s.answers if a.get("id") == 1] == [False, True]
    assert s.paid() == [45000, 45000] and len(s.answers) == 4
