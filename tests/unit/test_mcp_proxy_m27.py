"""Red-team pass M27 on the MCP proxy (2026-11-30): the real proxy process in front of a real child
(tests/mcp_child_m27.py, M26's payments server that can also pay through a helper in a session of its own or a
daemon, answer ids it was never sent and start slowly; its read loop is tests/mcp_child_m25.py's), fed raw JSON-RPC
lines through M25's session. Each test but the controls failed on the code before:
- ids 1 and "1" sent one after the other were two calls with one action id in the decision log;
- a payment made by a helper of the server that left its process group (setsid) or was orphaned (a daemon) survived
  the restart at the end of a given-up call's hold, and was made behind the next call's back (540000 past 500000);
- SIGTERM, SIGINT or SIGHUP while a call was decided wrote two records for it (an allow, then "not run");
- a method of digits ("123456789") was recorded as a refused tools/call and halted a replan_halt run;
- a signal while the server started killed the proxy (exit -15) and left the server running;
- a host that never reads the proxy's stderr got no answer at all (the loop blocked writing to a full pipe)."""
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.unit.test_guard import CONTEXT, OVER_LIMIT, PAYMENT
from tests.unit.test_mcp_proxy_m25 import (INIT, call, normal_session, records, session_fixture, starts, stoppable,
                                           text, wait_for)
from tests.unit.test_monitor import payments_build  # noqa: F401  (fixture)

pytest.importorskip("mcp", reason="the MCP proxy needs the mcp SDK")

CHILDREN = Path(__file__).resolve().parent.parent
ABANDONED = "abandoned by the caller before it was logged: "
session = session_fixture(CHILDREN / "mcp_child_m27.py")   # M25's harness in front of this pass's server


# --- 1. one action id per request id ----------------------------------------------------------------------------
def test_ids_spelt_differently_get_action_ids_of_their_own(session):
    """Before: 1 and "1" (and -3 and "-3") were two calls recorded under one action id."""
    ids = [1, "1", -3, "-3", '"1"', "x", "", 10 ** 30, str(10 ** 30)]
    s = session()
    try:
        for n, request_id in enumerate(ids):
            s.send(call(request_id, {**PAYMENT, "amount_cents": 1000 + n}))
            assert text(s.answer(request_id)) == f"sent {1000 + n}"
    finally:
        s.close()
    got = [action for action, allowed, _ in records(s)]
    assert got == ["1", '"1"', "-3", '"-3"', '"\\"1\\""', "x", '""', str(10 ** 30), f'"{10 ** 30}"'], got
    assert len(set(got)) == len(ids)


# --- 2. a helper that left the server's process group dies with it ---------------------------------------------
@pytest.mark.parametrize("helper", ["setsid", "daemon", "setpgid", "daemon2"])
def test_a_helper_that_left_the_process_group_cannot_pay_after_the_restart(session, helper):
    """Before: the server was killed with its process group at the end of call 1's hold, but its helper (in a session
    of its own, a group of its own, or a daemon whose parent exited) paid 8 s after call 1 came, after call 2 had been decided on 450000
    and paid: 540000 past a clerk's daily 500000. Now every process below the proxy is killed at the restart."""
    s = session(ledger=450000, child=["slow=8", "first_slow", helper], options=["--timeout", "1"])
    try:
        s.send(call(1))
        assert "did not answer within 1 s" in text(s.answer(1))
        wait_for(lambda: len(starts(s)) == 2)   # the hold ended: the server was stopped and started again
        for n in range(2, 40):
            s.send(call(n))
            if "Not run" not in text(second := s.answer(n)):   # refused undecided while the restart was finishing
                break
            time.sleep(0.2)
        assert text(second) == "sent 45000", second
        time.sleep(7)   # past call 1's payment, had its helper lived
        assert s.paid() == [45000], s.paid()   # before: [45000, 45000]
        assert json.loads(s.context.read_text())["ledger"]["sent_today_cents"] == 495000
    finally:
        s.close()


# --- 3. a signal while a call is decided: one record --------------------------------------------------------------
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_while_a_call_is_decided_writes_one_record(session, signum):
    """Before: the decision was logged as an allow and then a second record said it was not run. Now the shutdown
    gives the decision up before it is logged: its one record is a denial saying why (a 10 MB context to read; "~" is no encoding the extractor decodes)."""
    default = signal.signal(signal.SIGINT, signal.default_int_handler)   # the proxy must not inherit an ignored SIGINT
    try:
        s = session(child=["slow=2"], options=["--decision-timeout", "60"])
    finally:
        signal.signal(signal.SIGINT, default)
    s.context.write_text(json.dumps({**json.loads(s.context.read_text()), "pad": ["~" * 100] * 100000}))
    s.send(call(1))
    time.sleep(0.2)
    os.kill(s.p.pid, signum)
    assert s.p.wait(timeout=150) == 128 + signum
    assert not s.received.read_text().count('"tools/call"'), "decided before the signal: nothing tested"
    assert f"Not run: the proxy was stopped by {signum.name}" in text(s.answer(1, timeout=5))
    got = records(s)
    assert len(got) == 1 and got[0][:2] == ("1", False) and got[0][2].startswith(ABANDONED + "the proxy was stopped "
                                                                                 f"by {signum.name}"), got
    assert s.paid() == []


# --- 4. digits stand only for the letters they look like ------------------------------------------------------------
@pytest.mark.parametrize("method,recorded", [("123456789", False), ("000000000", False), ("t99ls/c8ll", False),
                                             ("9ools/call", False), ("12345/6789", False), ("\u0660" * 9, False),
                                             ("7oo1s/c411", True), ("t00ls/ca11", True), ("7\u0660\u06601s/call", True)])
def test_a_method_of_digits_is_no_refused_call(session, method, recorded):
    """Before: any digit stood for any letter, so "123456789" read as tools/call, was recorded as a refused call and
    halted a run under replan_halt --halt-after 1. Now a digit stands only for the letter it looks like (0 o, 1 l, 3 e,
    4 a, 5 s, 7 t): the lookalikes are still recorded (and halt)."""
    method_then_a_call(session, method, recorded=recorded)


# --- 5. a signal before the proxy serves ---------------------------------------------------------------------------
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_while_the_server_starts_stops_it_and_exits_with_the_signal(payments_build, tmp_path, signum):
    """Before: SIGTERM or SIGHUP while the server started (before its handshake) killed the proxy outright (exit -15,
    -1), and the server, in a process group of its own, went on running. Now the server is killed and the proxy says
    so and exits 128 + the signal's number."""
    context, received = tmp_path / "context.json", tmp_path / "received.txt"
    context.write_text(json.dumps(CONTEXT), encoding="utf-8")
    argv = [sys.executable, "-m", "veriguard.enforce.integrations.mcp_proxy", "--build", str(payments_build),
            "--context", str(context), "--", sys.executable, str(CHILDREN / "mcp_child_m27.py"), str(received),
            str(context), "start_slow=60"]
    starts = received.with_name(received.name + ".starts")
    with stoppable(argv) as p:
        wait_for(lambda: starts.exists() and starts.read_text().strip())
        server = int(starts.read_text().split()[0])
        os.kill(p.pid, signum)
        assert p.wait(timeout=30) == 128 + signum
        err = p.stderr.read().decode()
        assert f"stopped by {signum.name} before it served" in err and "Traceback" not in err, err
        wait_for(lambda: not Path(f"/proc/{server}").exists() or "Z" in Path(f"/proc/{server}/stat").read_text()
                 .rsplit(")", 1)[1].split()[:1], timeout=10)


# --- 6. a host that never reads the proxy's stderr --------------------------------------------------------------
def test_a_host_that_never_reads_the_proxys_stderr_is_answered(payments_build, tmp_path):
    """Before: the server's 8 MB of stderr, relayed to a pipe nobody read, blocked the proxy's loop: the host's
    initialize and call got no answer. Now a thread writes the proxy's stderr, and what it cannot take is dropped."""
    context, received = tmp_path / "context.json", tmp_path / "received.txt"
    context.write_text(json.dumps(CONTEXT), encoding="utf-8")
    argv = [sys.executable, "-m", "veriguard.enforce.integrations.mcp_proxy", "--build", str(payments_build),
            "--context", str(context), "--log", str(tmp_path / "log.jsonl"), "--", sys.executable,
            str(CHILDREN / "mcp_child_m25.py"), str(received), str(context), "noisy"]
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    answers: queue.Queue[dict] = queue.Queue()
    threading.Thread(target=lambda: [answers.put(json.loads(x)) for x in p.stdout], daemon=True).start()
    try:
        p.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in (INIT, call(1), call(2, OVER_LIMIT))))
        p.stdin.flush()
        got = {a["id"]: a for a in (answers.get(timeout=30) for _ in range(3))}
        assert text(got[1]) == "sent 45000" and "per-payment limit" in text(got[2]), got
        p.stdin.close()
        assert p.wait(timeout=30) == 0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    head = p.stderr.read(1 << 16).decode()   # what it wrote before the pipe filled: the server's, marked
    assert head.startswith("veriguard mcp-proxy: the MCP server's stderr: xxx"), head[:200]


# --- controls ------------------------------------------------------------------------------------------------------
def test_a_normal_session_is_unchanged(session):
    """Control: M25's benign session (initialize, list, ping and several payments) in front of this pass's server."""
    normal_session(session(ledger=300000))


RAW = {   # lines of the classes the brief named: none reaches the server, each is answered, each tools/call recorded
    "batch": json.dumps([call(1, OVER_LIMIT), call(2, OVER_LIMIT)]).encode() + b"\n",
    "id null": json.dumps(call(None, OVER_LIMIT)).encode() + b"\n",
    "id 1.0": json.dumps(call(1.0, OVER_LIMIT)).encode() + b"\n",
    "params array": b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":["send_payment",{"amount_cents":1}]}\n',
    "duplicate name": b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","name":"send_payment",'
                      b'"arguments":{}}}\n',
    "BOM": b"\xef\xbb\xbf" + json.dumps(call(1)).encode() + b"\n",
    "NaN": json.dumps(call(1, {**PAYMENT, "amount_cents": float("nan")})).encode() + b"\n",
    "CR only": json.dumps(call(1)).encode() + b"\r" + json.dumps(call(2)).encode() + b"\n",
    "digits over the limit": b'{"jsonrpc":"2.0","id":' + b"9" * 5000 + b',"method":"tools/call","params":{}}\n',
}


@pytest.mark.parametrize("line", list(RAW))
def test_lines_no_call_can_be_read_from_are_answered_and_recorded_never_run(session, line):
    """Control (these held before): each is answered with an error, recorded as a refused call, never forwarded."""
    s = session()
    try:
        s.send(RAW[line], call(3))
        assert text(s.answer(3)) == "sent 45000"
        refused = [a for a in s.answers if a.get("id") in (None, 1)]
        assert refused and all("error" in a or a["result"]["isError"] for a in refused), s.answers
    finally:
        s.close()
    got = records(s)
    assert got[-1] == ("3", True, "") or ("3", True, "") in got
    assert [r for r in got if r[0] != "3"] and all(r[1] is False for r in got if r[0] != "3"), got
    assert s.paid() == [45000]


def method_then_a_call(session, method: str, *, recorded: bool) -> None:
    """An unknown method, then an allowed call, under replan_halt --halt-after 1: a method that reads as tools/call is
    recorded as a refused call and halts the run (the call is refused); any other is only unknown (the call runs)."""
    s = session(options=["--strategy", "replan_halt", "--halt-after", "1"])
    try:
        s.send({"jsonrpc": "2.0", "id": "m", "method": method, "params": {}}, call(2))
        assert s.answer("m")["error"]["code"] == -32601
        second = s.answer(2)
    finally:
        s.close()
    got = records(s)
    if recorded:
        assert "halted" in text(second) and got[0][1] is False and "reads as it" in got[0][2], got
    else:
        assert text(second) == "sent 45000" and got == [("2", True, "")], got
