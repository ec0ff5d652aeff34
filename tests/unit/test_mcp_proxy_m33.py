"""Red-team pass M33 on the MCP proxy (2026-12-01): the real proxy process in front of a real child, fed raw JSON-RPC
lines through M25's session. Failing on the code before:
- a host that calls without listing the tools in this session (it listed in an earlier one) had nothing pinned: a
  server that re-described send_payment (its amount read as whole dollars) and said so, or that was started again
  with the new definition, was paid as it now defined the tool (45000 cents decided, 45000 dollars paid). Now the
  proxy lists the tools itself when the server is up, before any call, and pins them as it does the host's lists;
- a tool the server never listed was called as the server defined it, out of sight: now an allowed call to it is not
  run (recorded);
- a server that closed its input (its end of the pipe) while it kept running took every call into nothing (asyncio
  drops writes to a closed pipe silently): each was refused only at its --timeout. Now it is gone at the next call.
The controls: a normal session; a server that logs to stdout, answers a call twice, or answers ids it was never sent
(the proxy's own tools/list has an id of its own, so the list read at the start is not taken by such an answer);
batches, logging/setLevel, ping floods, a 10 MB line; a server that ignores SIGTERM or closes its
stdout; servers that do not start."""
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.unit.test_guard import OVER_LIMIT, PAYMENT
from tests.unit.test_mcp_proxy_m25 import INIT, call, cancel, normal_session, records, session_fixture, text
from tests.unit.test_mcp_proxy_m29 import everything
from tests.unit.test_mcp_proxy_m31 import LIST
from tests.unit.test_mcp_proxy_m32 import STARTED_AGAIN, said
from tests.unit.test_monitor import payments_build  # noqa: F401  (fixture)

pytest.importorskip("mcp", reason="the MCP proxy needs the mcp SDK")

CHILDREN = Path(__file__).resolve().parent.parent
session = session_fixture(CHILDREN / "mcp_child_m33.py")
m32 = session_fixture(CHILDREN / "mcp_child_m32.py")
m27 = session_fixture(CHILDREN / "mcp_child_m27.py")
SMALL = {**PAYMENT, "amount_cents": 1000}
CHANGED = "changed the definition of tool 'send_payment'"


# --- 1. a host that never listed the tools in this session ------------------------------------------------------------
def test_a_tool_re_described_before_the_host_ever_listed_is_not_called(m32):
    """Before: call 2 was paid as re-described (nothing was pinned: the host had not listed). Now the proxy's own list
    at the start pinned send_payment, the server's list_changed is read, and call 2 is refused undecided, recorded."""
    s = m32(child=["notify", "redescribe"])
    try:
        s.send(call(1))
        assert text(s.answer(1)) == "sent 45000"
        s.send(call(2))
        second = s.answer(2)["result"]
    finally:
        s.close()
    assert second["isError"] is True and CHANGED in second["content"][0]["text"], second
    assert s.paid() == [45000]
    assert records(s)[1][:2] == ("2", False) and CHANGED in records(s)[1][2], records(s)


def test_a_server_started_again_is_pinned_though_the_host_never_listed(m32):
    """Before: M32 listed a restarted server only when the host had listed; a host that had not got call 2 paid as
    the new process defined the tool. Now it is refused, recorded, never sent."""
    s = m32(child=["slow=30", "again_changed"], options=["--timeout", "0.5"])
    try:
        s.send(call(1))
        assert s.answer(1)["result"]["isError"] is True
        said(s, STARTED_AGAIN)
        s.send(call(2))
        second = s.answer(2)["result"]
    finally:
        s.close()
    assert second["isError"] is True and CHANGED in second["content"][0]["text"], second
    assert s.paid() == []
    assert [r[:2] for r in records(s)] == [("1", True), ("1", False), ("2", False)], records(s)


def test_a_tool_the_server_never_listed_is_not_run(m27):
    """Before: the server (which lists only get_balance, yet pays whatever it is called with) was paid by a call to
    send_payment, which nothing the host or the policy's author read describes. Now the allowed call is not run,
    with a record saying why."""
    s = m27(child=["tools=get_balance"])
    try:
        s.send(call(1))
        got = s.answer(1)["result"]
    finally:
        s.close()
    assert got["isError"] is True and "has not listed a tool 'send_payment'" in got["content"][0]["text"], got
    assert s.paid() == []
    assert [r[:2] for r in records(s)] == [("1", True), ("1", False)] and "not run" in records(s)[1][2], records(s)


def test_calls_before_the_first_list_is_read_are_held(session):
    """What a host that calls at once sees: its calls wait for the proxy's first tools/list (2 s here), then are
    decided and paid; one it cancels meanwhile is never sent to the server, and its end is recorded."""
    s = session(child=["list_slow=2"])
    try:
        s.send(call(1, SMALL), call(2, SMALL), cancel(2))
        assert text(s.answer(1)) == "sent 1000"
    finally:
        s.close()
    assert [m.get("method") for m in s.requests()].count("tools/call") == 1 and s.paid() == [1000]
    assert [r[:2] for r in records(s)] == [("2", False), ("1", True)] and "held" in records(s)[0][2], records(s)


@pytest.mark.parametrize("fails", [1, 99])
def test_a_tool_list_that_could_not_be_read_is_read_again_at_the_next_call(session, fails):
    """The proxy's first tools/list fails (the server answers it with no list): the next call reads it again, held
    meanwhile, and is paid when that works; a server whose list never reads has each call refused with the reason,
    recorded, never sent (M32's re-list failure refused every later call of the session)."""
    s = session(child=[f"list_fails={fails}"])
    try:
        time.sleep(0.3)   # the first list has failed
        s.send(call(1, SMALL))
        first = s.answer(1)["result"]
        s.send(call(2, SMALL))
        second = s.answer(2)["result"]
    finally:
        s.close()
    if fails == 1:
        assert text({"result": first}) == text({"result": second}) == "sent 1000" and s.paid() == [1000, 1000]
    else:
        assert all(r["isError"] and "tool list could not be read" in r["content"][0]["text"] for r in (first, second))
        assert s.paid() == [] and [r[:2] for r in records(s)] == [("1", False), ("2", False)], records(s)


# --- 2. a server that closed its input ----------------------------------------------------------------------------
def test_a_server_that_closed_its_input_is_gone_at_the_next_call(session):
    """Before: the call was written into a pipe nobody reads, and refused only at --timeout (10 s here; 30 s by
    default), the server then stopped and started again for a call it never got. Now it is refused at once, not run,
    recorded, and the proxy exits 0 when the host hangs up."""
    s = session(child=["close_stdin"], options=["--timeout", "10"])
    try:
        time.sleep(1.5)   # the server closes its input 0.5 s after the handshake
        started = time.monotonic()
        s.send(call(1, SMALL))
        got = s.answer(1)["result"]
        took = time.monotonic() - started
    finally:
        s.close()
    assert got["isError"] is True and "closed its input" in got["content"][0]["text"], got
    assert took < 5, took
    assert [r[:2] for r in records(s)] == [("1", False)] and "not run" in records(s)[0][2], records(s)


# --- 3. controls ----------------------------------------------------------------------------------------------------
def test_a_normal_session(session):
    normal_session(session(ledger=300000))


def test_a_server_that_logs_to_stdout_answers_twice_or_answers_unasked_ids(session):
    """Log lines and a partial object on stdout, a second answer to a call, answers to ids never sent (the proxy's own
    tools/list, sent as the server starts, is not taken by them): each call gets one answer, the first."""
    s = session(child=["stdout_noise", "twice", "stray"])
    try:
        # the server answers ids 1-5 as its handshake ends: a request of the host's sent meanwhile under one of them
        # (the proxy's numbering) would be answered by it, as on any server that answers ids it was not sent
        time.sleep(0.5)
        s.send(LIST)
        assert [t["name"] for t in s.answer("l")["result"]["tools"]] == ["send_payment"]
        for n in (1, 2, 3):
            s.send(call(n, SMALL))
            assert text(s.answer(n)) == "sent 1000", s.answer(n)
    finally:
        s.close()
    assert [a.get("id") for a in everything(s)] == ["l", 1, 2, 3]
    assert records(s) == [("1", True, ""), ("2", True, ""), ("3", True, "")]
    assert s.paid() == [1000] * 3


def test_batches_pings_setlevel_and_long_lines(session):
    """A batch holding a call: refused (invalid request), recorded, never sent; logging/setLevel, resources/read and
    prompts/get are not offered; 2,000 pings are answered; a 10 MB line over the limit is denied and recorded, and one
    within it paid."""
    s = session(child=["slow=0.2"], options=["--timeout", "5"])
    try:
        s.send(json.dumps([call(1), {"jsonrpc": "2.0", "id": "q", "method": "ping"}]).encode() + b"\n", b"[]\n")
        for method, params in [("logging/setLevel", {"level": "debug"}), ("resources/read", {"uri": "file:///etc/x"}),
                               ("prompts/get", {"name": "pay", "arguments": {"amount": "1"}})]:
            s.send({"jsonrpc": "2.0", "id": method, "method": method, "params": params})
            assert s.answer(method)["error"]["code"] == -32601
        s.send(*[{"jsonrpc": "2.0", "id": f"p{n}", "method": "ping"} for n in range(2000)])
        assert s.answer("p1999")["result"] == {}
        pad = b" " * (10 << 20)
        s.send(json.dumps(call(2, OVER_LIMIT)).encode()[:-1] + pad + b"}\n")
        assert "per-payment limit" in text(s.answer(2))
        s.send(json.dumps(call(3, SMALL)).encode()[:-1] + pad + b"}\n")
        assert text(s.answer(3)) == "sent 1000"
    finally:
        s.close()
    got = everything(s)
    assert [a["error"]["code"] for a in got[:2]] == [-32600, -32600], got[:2]
    assert [m["params"]["arguments"] for m in s.requests() if m.get("method") == "tools/call"] == [SMALL]
    assert [r[:2] for r in records(s)] == [("", False), ("2", False), ("3", True)], records(s)
    assert "batch" in records(s)[0][2]


@pytest.mark.parametrize("child,exits_within", [(["close_stdout"], 10), (["ignore_term"], 15)])
def test_a_server_that_closes_its_stdout_or_ignores_sigterm(session, child, exits_within):
    """A server that closes its stdout and keeps running: the call is refused at once, not run, recorded; one that
    ignores SIGTERM pays and is killed when the host hangs up. The proxy exits 0 in both, within seconds."""
    s = session(child=child)
    time.sleep(0.3)   # the server closes its stdout as the handshake ends
    s.send(call(1, SMALL))
    got = s.answer(1)["result"]
    started = time.monotonic()
    s.close()
    assert time.monotonic() - started < exits_within
    if "close_stdout" in child:
        assert got["isError"] is True and "is gone" in got["content"][0]["text"], got
        assert [r[:2] for r in records(s)] == [("1", False)] and s.paid() == []
    else:
        assert text({"result": got}) == "sent 1000" and records(s) == [("1", True, "")]


@pytest.mark.parametrize("command,says", [
    (["no-such-mcp-server-m33"], "no executable 'no-such-mcp-server-m33'"),
    (["false"], "it exited with status 1"),
    ([sys.executable, "-c", "import os, time; os.close(1); time.sleep(30)"], "closed its output and still runs"),
    ([sys.executable, "-c", "print('hello')"], "it exited with status 0; its last line: 'hello'")])
def test_a_server_that_does_not_start_exits_2_with_the_reason(payments_build, command, says):   # noqa: F811
    """Before: "it closed its output (exited?)" for a server that failed at once and one that closed its stdout and
    kept running alike; now its exit status, or that it still runs (then it is stopped). Exit 2, no traceback."""
    argv = [sys.executable, "-m", "veriguard.enforce.integrations.mcp_proxy", "--build", str(payments_build),
            "--start-timeout", "20", "--", *command]
    done = subprocess.run(argv, input=json.dumps(INIT).encode() + b"\n", capture_output=True, timeout=60)
    assert done.returncode == 2 and done.stdout == b"", done
    assert says in done.stderr.decode() and b"Traceback" not in done.stderr, done.stderr
