"""Red-team pass M26 on the MCP proxy (2026-11-30): the real proxy process in front of a real child
(tests/mcp_child_m26.py, a payments server that keeps the ledger in the context file, finishes a payment it has
started even when it is cancelled, and can pay through a helper process of its own or exit mid-call), fed raw JSON-RPC
lines through M25's session (tests/unit/test_mcp_proxy_m25.py). Each test but the controls failed on the code before:
- a given-up call the server finished after its hold (--timeout after it was cancelled or timed out) ran beside the
  next call, decided on the ledger without it: 450000 + 45000 + 45000 past a clerk's daily 500000;
- a method spelt with letters of another script or digits ("tооls/call" in Cyrillic, "t00ls/call"), or an unknown
  method carrying a tool call's name and arguments, was answered "method not found" with no decision record;
- ids 1 and "1" (and 10**30 and its string) were used at once, for two requests the log records alike;
- a call made after the server exited was recorded as allowed, though it was never sent anywhere;
- SIGTERM, SIGINT or SIGHUP while a call ran or was decided: no answer and no record of the refusal (a decision under
  way left no record at all); SIGINT ended in a traceback and "Fatal Python error" (exit -6)."""
import json
import os
import signal
import time
from pathlib import Path

import pytest

from tests.unit.test_guard import OVER_LIMIT, PAYMENT
from tests.unit.test_mcp_proxy_m25 import call, cancel, session_fixture, starts, text, wait_for
from tests.unit.test_monitor import payments_build  # noqa: F401  (fixture)

pytest.importorskip("mcp", reason="the MCP proxy needs the mcp SDK")

CHILD = Path(__file__).resolve().parent.parent / "mcp_child_m26.py"
session = session_fixture(CHILD)   # M25's harness in front of this pass's server


# --- 1. a call given up on cannot finish behind the next one ------------------------------------------------------
@pytest.mark.parametrize("give_up", ["timed out", "cancelled", "paid by a helper process"])
def test_a_call_finished_after_its_hold_cannot_run_beside_the_next(session, give_up):
    """Before: call 1 was released --timeout after it was given up on, call 2 was allowed on a ledger of 450000, and the
    server made both (540000, past the daily 500000). Now the server is stopped (with the helper it started) when the
    hold ends and started again: call 1 never completes, call 2 is decided and made on the fresh server."""
    child = ["slow=4", "first_slow"] + (["helper"] if "helper" in give_up else [])
    s = session(ledger=450000, child=child, options=["--timeout", "1"])
    try:
        s.send(call(1))
        if give_up == "cancelled":
            s.wait_received(1)
            s.send(cancel(1))
        else:
            assert "did not answer within 1 s" in text(s.answer(1))
        time.sleep(1.6)   # past the hold
        s.send(call(2))
        second = s.answer(2)
        if "has not finished" in text(second):   # the server was still being started again: one at a time
            wait_for(lambda: len(starts(s)) == 2)
            time.sleep(0.5)
            s.send(call(3))
            second = s.answer(3)
        time.sleep(4.5)   # call 1's time to finish, had it not been stopped
        assert s.paid() == [45000], s.paid()   # before: [45000, 45000], 540000 on the ledger
        assert json.loads(s.context.read_text())["ledger"]["sent_today_cents"] == 495000
        assert text(second) == "sent 45000" and len(starts(s)) == 2
    finally:
        s.close()
    assert "was stopped so that the call cannot finish behind a later call: starting it again" in s.stderr.read_text()


def test_a_server_that_answers_a_cancelled_call_in_time_is_not_restarted(session):
    """Control: the hold ends with the server's answer, and the next call is decided on the ledger it updated."""
    s = session(ledger=200000, child=["slow=0.5"], options=["--timeout", "2"])
    try:
        s.send(call(1))
        s.wait_received(1)
        s.send(cancel(1))
        s.wait_paid(1)
        time.sleep(0.3)
        for n in (2, 3, 4):
            s.send(call(n, {**PAYMENT, "amount_cents": 60000}))
            assert text(s.answer(n)) == "sent 60000"
        assert s.paid() == [45000, 60000, 60000, 60000] and len(starts(s)) == 1
    finally:
        s.close()


# --- 2. a method that reads as tools/call to the eye, or that carries a call, is recorded -------------------------
@pytest.mark.parametrize("method", ["t\u043e\u043els/call", "tools/c\u0430ll", "t\u03bfols/call", "\u0442ools/call",
                                    "too\u04cfs/call", "t00ls/call", "tools/ca11", "tools/execute", "tool/call"])
def test_a_method_that_reads_as_tools_call_or_carries_one_is_recorded(session, method):
    s = session()
    try:
        s.send(call(1, OVER_LIMIT, method=method), call(2))
        assert s.answer(1)["error"]["code"] == -32601 and text(s.answer(2)) == "sent 45000"
    finally:
        s.close()
    got = [(r["action_id"], r["allowed"], r["fail_closed"]) for r in s.records()]
    assert len(got) == 2 and got[0][1] is False and "reads as it" in got[0][2] and got[1] == ("2", True, ""), got
    assert s.paid() == [45000]


def test_other_methods_leave_no_record(session):
    """Control: MCP's own methods the proxy does not offer, and unknown methods without a call in them, are answered
    "method not found" and are no refused calls."""
    s = session()
    try:
        s.send({"jsonrpc": "2.0", "id": "g", "method": "prompts/get", "params": {"name": "x", "arguments": {}}},
               {"jsonrpc": "2.0", "id": "u", "method": "tools/unknown", "params": {"name": "send_payment"}},
               {"jsonrpc": "2.0", "id": "c", "method": "completion/complete", "params": {}},
               {"jsonrpc": "2.0", "id": "l", "method": "logging/setLevel", "params": {"level": "debug"}},
               {"jsonrpc": "2.0", "id": "t", "method": "tools/list"}, call(1))
        assert [s.answer(x).get("error", {}).get("code") for x in "gucl"] == [-32601] * 4
        assert s.answer("t")["result"]["tools"][0]["name"] == "send_payment" and text(s.answer(1)) == "sent 45000"
    finally:
        s.close()
    assert [(r["action_id"], r["allowed"]) for r in s.records()] == [("1", True)]


# --- 3. one id spelt as a string and as an integer is one id --------------------------------------------------------
@pytest.mark.parametrize("first,second", [(1, "1"), ("1", 1), (10 ** 30, str(10 ** 30)), (7, "7")])
def test_an_id_in_use_spelt_the_other_way_is_refused(session, first, second):
    s = session(child=["slow=1"])
    try:
        s.send(call(first))
        s.wait_received(1)
        s.send(call(second, {**PAYMENT, "amount_cents": 1000}), {"jsonrpc": "2.0", "id": second,
                                                                  "method": "tools/list"})
        assert text(s.answer(first)) == "sent 45000"
        while len([a for a in s.answers if a.get("id") == second]) < 2:   # M29: they come after the first's answer
            s.answers.append(s.queue.get(timeout=30))
        refused, listed = [a for a in s.answers if a.get("id") == second]
        assert refused["result"]["isError"] and "still in use" in text(refused), refused
        assert "still in use" in listed["error"]["message"], listed
        s.answers.clear()
        s.send(call(second, {**PAYMENT, "amount_cents": 1000}))   # free again once the first is answered
        assert text(s.answer(second)) == "sent 1000"
    finally:
        s.close()
    assert s.paid() == [45000, 1000]
    assert [r["allowed"] for r in s.records()] == [True, False, True]


# --- 4. a call no server can take is recorded as not run -----------------------------------------------------------
def test_calls_after_the_server_exited_are_recorded_as_not_run(session):
    s = session(child=["exit_after=2"])
    try:
        s.send(call(1))
        assert text(s.answer(1)) == "sent 45000"
        s.send(call(2))
        assert "did not complete" in text(s.answer(2))
        time.sleep(0.3)
        s.send(call(3), call(4, OVER_LIMIT))
        assert "Not run: the MCP server is gone" in text(s.answer(3)) and s.answer(4)["result"]["isError"]
    finally:
        s.close()
    got = [(r["action_id"], r["allowed"], r["fail_closed"][:30]) for r in s.records()]
    assert got == [("1", True, ""), ("2", True, ""), ("2", False, "allowed by the policy, but did"),   # M29: its end
                   ("3", False, "not run: the MCP server is gon"),
                   ("4", False, "not run: the MCP server is gon")], got


# --- 5. SIGTERM and SIGINT: the calls under way are refused and recorded, and the proxy exits quietly ----------------
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
@pytest.mark.parametrize("when", ["running", "deciding"])
def test_a_signal_refuses_and_records_the_calls_under_way(session, signum, when):
    """Before: SIGTERM ended the proxy with no answer and no record of the call's end (none at all for one being
    decided); SIGINT gave a traceback and "Fatal Python error" (exit -6). 'deciding': a 10 MB context to read first."""
    default = signal.signal(signal.SIGINT, signal.default_int_handler)   # the proxy must not inherit an ignored SIGINT
    try:
        s = session(child=["slow=2"], options=["--decision-timeout", "60"])
    finally:
        signal.signal(signal.SIGINT, default)
    if when == "deciding":
        s.context.write_text(json.dumps({**json.loads(s.context.read_text()), "pad": ["x" * 100] * 100000}))
    s.send(call(1))
    if when == "running":
        s.wait_received(1)
    else:
        time.sleep(0.2)
    os.kill(s.p.pid, signum)
    assert s.p.wait(timeout=90) == 128 + signum
    answer = s.answer(1, timeout=5)
    assert answer["result"]["isError"] and f"stopped by {signum.name}" in text(answer), answer
    err = s.stderr.read_text()
    assert "Traceback" not in err and "Fatal Python error" not in err, err[-2000:]
    got = [(r["action_id"], r["allowed"]) for r in s.records()]
    assert got[-1] == ("1", False) and signum.name in s.records()[-1]["fail_closed"], got


def test_the_proxy_exits_0_when_the_host_hangs_up_mid_call(session):
    """Control: a host that closes its input while a call runs gets it done, and the proxy exits 0, as before."""
    s = session(child=["slow=1"])
    s.send(call(1))
    s.wait_received(1)
    s.p.stdin.close()
    assert s.p.wait(timeout=30) == 0
    assert s.paid() == [45000] and [r["allowed"] for r in s.records()] == [True]
