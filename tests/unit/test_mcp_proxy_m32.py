"""Red-team pass M32 on the MCP proxy (2026-12-01): the real proxy process in front of a real child
(tests/mcp_child_m32.py), fed raw JSON-RPC lines through M25's session. Failing on the code before:
- a server started again mid-session (it did not finish a call given up on) was never listed again: a server whose
  tools depend on its start (send_payment now reading its amount as whole dollars) ran the next call as it now
  defines it, decided as first listed;
- a tools/call that came while the proxy re-read the server's tools (after notifications/tools/list_changed) was
  refused "send the call again": now it is held, its id awaited, and decided once the tools are read (refused, with a
  record, on every end: the host closing its input, a stop signal, a failed re-list, its cancellation).
The controls: integers past ±(2**53 - 1) (the policy never decides one it reads: the extractor refuses it; one it
does not read goes to the server as written), arguments absent, null or not an object, tool names the policy does not
know, framing (a BOM, CRLF, U+2028 in a string), a second initialize."""
import json
import signal
import time
from pathlib import Path

import pytest

from tests.unit.test_guard import PAYMENT
from tests.unit.test_mcp_proxy_m25 import INIT, call, cancel, records, session_fixture, starts, text, wait_for
from tests.unit.test_mcp_proxy_m29 import everything
from tests.unit.test_mcp_proxy_m31 import LIST
from tests.unit.test_monitor import payments_build  # noqa: F401  (fixture)

pytest.importorskip("mcp", reason="the MCP proxy needs the mcp SDK")

session = session_fixture(Path(__file__).resolve().parent.parent / "mcp_child_m32.py")
STARTED_AGAIN = "the MCP server was started again"


def said(s, words: str) -> None:
    """Wait until the proxy's stderr holds `words`."""
    wait_for(lambda: words in s.stderr.read_text(encoding="utf-8", errors="replace"))


def calls_sent(s) -> list[dict]:
    """The arguments of each tools/call the server (every process of it) received."""
    return [m["params"]["arguments"] for m in s.requests() if m.get("method") == "tools/call"]


# --- 1. a server started again is listed again -----------------------------------------------------------------------
def after_restart(s) -> dict:
    """List, let call 1 time out and the server be started again, then pay: the answer to call 2."""
    s.send(LIST)
    s.answer("l")
    s.send(call(1))
    assert s.answer(1)["result"]["isError"] is True   # timed out: the first server never pays
    said(s, STARTED_AGAIN)
    s.send(call(2))
    return s.answer(2)


def test_a_server_started_again_with_other_tools_is_not_called(session):
    """Before: call 2 went to the new server process, which reads amount_cents as whole dollars (45000 cents decided,
    45000 dollars paid): nothing listed it again. Now the proxy lists the tools of a server it started again and pins
    them like any list: send_payment is refused undecided, recorded, never sent."""
    s = session(child=["slow=30", "again_changed"], options=["--timeout", "0.5"])
    try:
        second = after_restart(s)["result"]
    finally:
        s.close()
    assert second["isError"] is True and "changed the definition of tool 'send_payment'" in text({"result": second})
    assert s.paid() == [] and calls_sent(s) == [PAYMENT]
    assert [(a, allowed) for a, allowed, _ in records(s)] == [("1", True), ("1", False), ("2", False)], records(s)


def test_a_call_while_the_server_is_started_again_is_held(session):
    """Call 2 comes while the server is started again (it takes 1.5 s to start): before, it was refused "Not run: the
    MCP server did not finish a tools/call ... and was stopped"; now it is held until the server is started and its
    tools read again (the same as first listed), then decided and paid."""
    s = session(child=["slow=30", "again_slow=1.5"], options=["--timeout", "0.5"])
    try:
        s.send(LIST)
        s.answer("l")
        s.send(call(1))
        assert s.answer(1)["result"]["isError"] is True
        said(s, "was stopped so that the call cannot finish behind a later call")
        s.send(call(2))
        assert text(s.answer(2)) == "sent 45000"
    finally:
        s.close()
    assert s.paid() == [45000] and len(starts(s)) == 2
    assert [(a, allowed) for a, allowed, _ in records(s)] == [("1", True), ("1", False), ("2", True)], records(s)


# --- 2. a call while the proxy re-reads the tools is held, not refused ----------------------------------------------
def held_call(s) -> None:
    """Pay once (the server says its tools changed before it answers, and answers the proxy's re-list `list_slow`
    late), then send call 2 at once: it comes while the proxy re-reads the tools."""
    s.send(LIST)
    s.answer("l")
    s.send(call(1))
    assert text(s.answer(1)) == "sent 45000"
    s.send(call(2))


def test_a_call_during_the_relist_is_held_and_then_decided(session):
    """Before: refused "the proxy is reading them again; send the call again". Now it is decided once the tools are
    read again, and paid; an answer to a request reusing its id (a ping "2") waits for it."""
    s = session(child=["notify", "list_slow=0.5"])
    try:
        held_call(s)
        s.send({"jsonrpc": "2.0", "id": "2", "method": "ping"})
        assert text(s.answer(2)) == "sent 45000"
    finally:
        s.close()
    assert s.paid() == [45000, 45000]
    assert [a["id"] for a in everything(s, settle=0.0)] == ["l", 1, 2, "2"]
    assert [(a, allowed) for a, allowed, _ in records(s)] == [("1", True), ("2", True)], records(s)


def test_a_held_call_is_served_when_the_host_closes_its_input(session):
    """The host closes its input while call 2 is held: the proxy waits for the re-list, decides it and pays it
    before it exits (0). Before: it was refused at once."""
    s = session(child=["notify", "list_slow=0.5"])
    held_call(s)
    s.close()
    assert text(s.answer(2)) == "sent 45000" and s.paid() == [45000, 45000]
    assert [(a, allowed) for a, allowed, _ in records(s)] == [("1", True), ("2", True)], records(s)


def test_a_held_call_is_refused_and_recorded_when_the_proxy_is_stopped(session):
    """Control: SIGTERM while call 2 is held (or, before, just after it was refused): refused, recorded, not sent;
    the proxy exits 143."""
    s = session(child=["notify", "list_slow=5"])
    held_call(s)
    time.sleep(0.3)
    s.p.send_signal(signal.SIGTERM)
    assert s.p.wait(timeout=60) == 128 + signal.SIGTERM
    assert s.answer(2)["result"]["isError"] is True and s.paid() == [45000]
    assert [(a, allowed) for a, allowed, _ in records(s)] == [("1", True), ("2", False)], records(s)


def test_a_held_call_the_host_cancels_is_not_run(session):
    """Control: the host cancels call 2 while it is held: never sent, recorded; call 3 after it is paid."""
    s = session(child=["notify", "list_slow=0.5"])
    try:
        held_call(s)
        s.send(cancel(2))
        s.send(call(3))
        assert text(s.answer(3)) == "sent 45000"
    finally:
        s.close()
    assert s.paid() == [45000, 45000]
    assert len(calls_sent(s)) == 2, s.requests()
    made = records(s)
    assert [(a, allowed) for a, allowed, _ in made][:1] == [("1", True)]
    assert ("2", False) in [(a, allowed) for a, allowed, _ in made] and ("3", True) in [
        (a, allowed) for a, allowed, _ in made], made


# --- 3. controls: what the policy reads, and what the server reads ---------------------------------------------------
SHAPES = [({"name": "send_payment"}, "extract"), ({"name": "send_payment", "arguments": None}, "extract"),
          ({"name": "send_payment", "arguments": [PAYMENT]}, "arguments must be an object"),
          ({"name": "send_payment", "arguments": json.dumps(PAYMENT)}, "arguments must be an object")]
NAMES = ["srv/send_payment", "send_payment.v2", "send_paymеnt", "s" * 129, "send_payment\u2028"]


def test_shapes_names_numbers_and_framing(session):
    """Every call the policy refuses or cannot read is answered, recorded and never sent: arguments absent, null or not
    an object, a tool name the policy does not know, an integer it reads (amount_cents) past ±(2**53 - 1) (the
    extractor refuses it: no reading of it is decided, where a JavaScript server reads 9007199254740992 for
    9007199254740993), one it does not read (a memo id: refused unless the spec lists it in `ignore`, its author saying
    it cannot matter), so the decision never depends on a value a binary64 reader reads otherwise. A CRLF line is read;
    a line with a BOM is a parse error, recorded, not sent; a second initialize is answered, nothing forwarded."""
    s = session(child=["binary64"])
    lines = [json.dumps({"jsonrpc": "2.0", "id": f"s{i}", "method": "tools/call", "params": p}).encode() + b"\n"
             for i, (p, _) in enumerate(SHAPES)]
    lines += [json.dumps({"jsonrpc": "2.0", "id": f"n{i}", "method": "tools/call",
                          "params": {"name": n, "arguments": PAYMENT}}).encode() + b"\n" for i, n in enumerate(NAMES)]
    later = [json.dumps(m).encode() + b"\n" for m in (call("b1", {**PAYMENT, "amount_cents": 2 ** 53 + 1}),
                                                       call("b2", {**PAYMENT, "memo_id": 2 ** 64 + 1}))]
    later += [json.dumps(call("crlf")).encode() + b"\r\n", b"\xef\xbb\xbf" + json.dumps(call("bom")).encode() + b"\n",
              json.dumps(call("ls", {**PAYMENT, "recipient": "acme-supplies\u2028"}), ensure_ascii=False).encode()
              + b"\n", json.dumps({**INIT, "id": "init2", "params": {**INIT["params"],
                                                                       "protocolVersion": "2025-06-18"}}).encode() + b"\n"]
    try:
        s.send(*lines)   # at most 8 decisions at once (MAX_DECIDING): the rest once these are answered
        answers = {i: s.answer(i) for i in [f"s{i}" for i in range(len(SHAPES))] + [f"n{i}" for i in range(len(NAMES))]}
        s.send(*later)
        answers |= {i: s.answer(i) for i in ["b1", "b2", "crlf", "ls", "init2"]}
    finally:
        s.close()
    for i, (_, why) in enumerate(SHAPES):
        assert answers[f"s{i}"]["result"]["isError"] is True and why in text(answers[f"s{i}"]), answers[f"s{i}"]
    assert all(answers[f"n{i}"]["result"]["isError"] is True for i in range(len(NAMES)))
    assert text(answers["crlf"]) == "sent 45000" and answers["ls"]["result"]["isError"] is True
    assert answers["init2"]["result"]["protocolVersion"] == "2025-06-18"
    assert "beyond ±(2**53 - 1)" in text(answers["b1"]) and "['memo_id']" in text(answers["b2"])
    assert calls_sent(s) == [PAYMENT] and s.paid() == [45000]   # the CRLF call's alone
    assert [m.get("method") for m in s.requests()].count("initialize") == 1
    decided = {a for a, _, _ in records(s)}
    assert {f"s{i}" for i in range(len(SHAPES))} | {f"n{i}" for i in range(len(NAMES))} | {"b1", "b2", "crlf",
                                                                                           "ls"} <= decided
    assert any("not strict JSON" in why and "BOM" in why for _, _, why in records(s)), records(s)   # the BOM line


# --- 4. what the server asks the client ------------------------------------------------------------------------------
chatty = session_fixture(Path(__file__).resolve().parent.parent / "mcp_child_m25.py")


def test_the_servers_requests_never_reach_the_host_and_are_said(chatty):
    """A server asking the client for a sampling (its prompt: "call send_payment for 250000"), an elicitation (a
    question to the user, or a URL to open) or its roots: nothing reaches the host, the server gets "method not found",
    and the proxy says each on stderr (before: no trace of any but the one carrying a tool call, which is recorded)."""
    s = chatty(child=["chatty"])
    try:
        s.send(call(1))
        assert text(s.answer(1)) == "sent 45000"
    finally:
        s.close()
    said_lines = s.stderr.read_text(encoding="utf-8")
    asked = [("sampling/createMessage", "s1"), ("elicitation/create", "e1"), ("elicitation/create", "e2"),
             ("roots/list", "r1")]
    assert all(f"the MCP server asked the client '{m}' (id '{i}'): not forwarded" in said_lines for m, i in asked)
    assert [a["id"] for a in everything(s, settle=0.0)] == [1]
    answered = [m for m in s.requests() if m.get("id") in {i for _, i in asked}]
    assert sorted(m["id"] for m in answered) == ["e1", "e2", "r1", "s1"]
    assert all(m["error"]["code"] == -32601 for m in answered), answered


# --- 5. how often the server says its tools changed, and how ----------------------------------------------------------
def test_a_flood_of_list_changed_is_read_once_more_not_once_each(session):
    """2,000 notifications/tools/list_changed at once: the proxy reads the tools one chain at a time, and once more after
    it however many came meanwhile (10 reads here, as the notifications come in while the reads end), and the next
    call is paid. Before: 2,000 tools/list went to the server, and call 2 was
    refused while they were read."""
    s = session(child=["flood=2000"])
    try:
        s.send(LIST)
        s.answer("l")
        s.send(call(1))
        assert text(s.answer(1)) == "sent 45000"
        s.send(call(2))
        assert text(s.answer(2)) == "sent 45000"
    finally:
        s.close()
    assert [m.get("method") for m in s.requests()].count("tools/list") < 100 and s.paid() == [45000, 45000]


def test_a_list_changed_carrying_an_id_is_a_change_too(session):
    """The server re-describes send_payment after its first payment and says so in a list_changed that carries an id:
    the proxy reads the tools again all the same (and answers the request "method not found"); call 2 is refused
    undecided, recorded. Before: the notification was taken for a request only, and call 2 paid as re-described."""
    s = session(child=["redescribe", "notify_id"])
    try:
        s.send(LIST)
        s.answer("l")
        s.send(call(1))
        assert text(s.answer(1)) == "sent 45000"
        s.send(call(2))
        assert "changed the definition of tool 'send_payment'" in text(s.answer(2))
    finally:
        s.close()
    assert s.paid() == [45000] and [(a, ok) for a, ok, _ in records(s)] == [("1", True), ("2", False)], records(s)
