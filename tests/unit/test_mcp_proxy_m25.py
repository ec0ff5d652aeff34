"""Red-team pass M25 on the MCP proxy (2026-11-30): the real proxy process in front of a real child
(tests/mcp_child_m25.py, a payments server that keeps the ledger in the context file and finishes a payment it has
started even when it is cancelled), fed raw JSON-RPC lines. Each test but the controls failed on the code before:
- a tools/call the host cancelled, or that timed out, freed the run's one running call at once, though the server
  was still at it: the next payment was decided on the ledger the first had not updated yet, and both ran (450000 +
  45000 + 45000 past a clerk's daily 500000);
- the server's stderr went to the proxy's own unmarked, so a server could write a line that passes for the proxy's
  ("veriguard mcp-proxy: shadow tools/call ... allowed");
- a method that reads as tools/call once its combining marks are dropped ("tools/c\\u0301all") was answered "method
  not found" with no decision record."""
import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Iterator

import pytest

from veriguard.enforce.decision_log import DecisionLog
from tests.unit.test_guard import CONTEXT, OVER_LIMIT, PAYMENT
from tests.unit.test_monitor import payments_build  # noqa: F401  (fixture)

pytest.importorskip("mcp", reason="the MCP proxy needs the mcp SDK")

CHILD = Path(__file__).resolve().parent.parent / "mcp_child_m25.py"
INIT = {"jsonrpc": "2.0", "id": "init", "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


def call(request_id, arguments=PAYMENT, method="tools/call"):
    return {"jsonrpc": "2.0", "id": request_id, "method": method,
            "params": {"name": "send_payment", "arguments": arguments}}


def cancel(request_id):
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id, "reason": "x"}}


class Session:
    """The proxy process (its child started by it), fed raw lines; its answers read on a thread."""

    def __init__(self, build, tmp: Path, *, ledger=0, child=(), options=()) -> None:
        self.context, self.received, self.log = tmp / "context.json", tmp / "received.txt", tmp / "log.jsonl"
        self.context.write_text(json.dumps({**CONTEXT, "ledger": {"sent_today_cents": ledger}}), encoding="utf-8")
        self.stderr = tmp / "proxy.stderr"
        argv = [sys.executable, "-m", "veriguard.enforce.integrations.mcp_proxy", "--build", str(build), "--context",
                str(self.context), "--log", str(self.log), *options, "--", sys.executable, str(CHILD),
                str(self.received), str(self.context), *child]
        with open(self.stderr, "wb") as err:   # the environment as given: a before-run points veriguard elsewhere
            self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                      env=dict(os.environ))
        self.queue: queue.Queue[dict] = queue.Queue()
        self.answers: list[dict] = []
        threading.Thread(target=self._read, daemon=True).start()
        self.send(INIT)
        self.answer("init")

    def _read(self) -> None:
        for raw in self.p.stdout:
            self.queue.put(json.loads(raw))

    def send(self, *messages) -> None:
        self.p.stdin.write(b"".join(m if isinstance(m, bytes) else json.dumps(m).encode() + b"\n" for m in messages))
        self.p.stdin.flush()

    def answer(self, request_id, timeout=60.0) -> dict:
        end = time.monotonic() + timeout
        while True:
            for got in self.answers:
                if got.get("id") == request_id:
                    return got
            self.answers.append(self.queue.get(timeout=max(0.01, end - time.monotonic())))

    def paid(self) -> list[int]:
        paid = self.received.with_name(self.received.name + ".paid")
        return [json.loads(x)["arguments"]["amount_cents"] for x in paid.read_text().splitlines()] if paid.exists() else []

    def wait_paid(self, count: int, timeout=30.0) -> None:
        end = time.monotonic() + timeout
        while len(self.paid()) < count and time.monotonic() < end:
            time.sleep(0.05)

    def requests(self) -> list[dict]:
        """The messages the server received, in order (RECEIVED, a line each)."""
        return [json.loads(x) for x in self.received.read_text().splitlines()]

    def wait_received(self, calls: int, timeout=30.0) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            got = self.requests() if self.received.exists() else []
            if sum(m.get("method") == "tools/call" for m in got) >= calls:
                return
            time.sleep(0.02)
        raise AssertionError(f"the server did not get {calls} tools/call in {timeout} s")

    def records(self) -> list[dict]:
        return list(DecisionLog(self.log).records()) if self.log.exists() else []

    def close(self) -> None:
        self.p.stdin.close()
        assert self.p.wait(timeout=60) == 0


def text(answer: dict) -> str:
    return answer["result"]["content"][0]["text"]


def records(s: Session) -> list[tuple[str, bool, str]]:
    """The session's decision records as (action id, allowed, fail_closed)."""
    return [(r["action_id"], r["allowed"], r["fail_closed"]) for r in s.records()]


@contextlib.contextmanager
def stoppable(argv: list[str]) -> Iterator[subprocess.Popen]:
    """A proxy process started from `argv` with SIGINT's default handler (it must not inherit an ignored SIGINT), its
    stdin, stdout and stderr pipes; killed (and reaped) at the end if it still runs."""
    default = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    finally:
        signal.signal(signal.SIGINT, default)
    try:
        yield p
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def session_fixture(child: Path):
    """A `session` fixture for a later pass's module: sessions of this harness in front of `child` (that pass's
    server); each is closed (or killed) at the end. The module imports payments_build beside it."""
    @pytest.fixture
    def session(payments_build, tmp_path, monkeypatch):   # noqa: F811
        monkeypatch.setattr(sys.modules[__name__], "CHILD", child)
        opened: list[Session] = []

        def start(**options) -> Session:
            (folder := tmp_path / str(len(opened))).mkdir()
            opened.append(Session(payments_build, folder, **options))
            return opened[-1]
        yield start
        for s in opened:
            if s.p.poll() is None:
                s.p.kill()
                s.p.wait()
    return session


def starts(s: Session) -> list[int]:
    """The pids of the server processes started so far (RECEIVED.starts, a line each)."""
    path = s.received.with_name(s.received.name + ".starts")
    return [int(x) for x in path.read_text().split()] if path.exists() else []


def wait_for(predicate, timeout=30.0) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.05)


# --- 1. a call given up on holds the run's one running call until the server answers it --------------------------
@pytest.mark.parametrize("give_up", ["cancelled", "timed out", "cancelled twice, then its id again"])
def test_a_payment_given_up_on_is_still_running_for_the_next_decision(payments_build, tmp_path, give_up):
    """Before: the second payment was allowed at once on a ledger of 450000 and the server made both (540000, past a
    clerk's daily 500000). Now it is refused as "one at a time" (not a denial), and sent again after the server's
    answer to the first, it is decided on the ledger the first updated: denied."""
    # timed out: the proxy gives up at 2 s, the server pays at 3 s, inside the hold (to 4 s) that ends in a restart;
    # a server paying as the hold ends (slow = timeout + hold) raced the restart, which rightly stopped the payment
    timeout = ["--timeout", "2"] if give_up == "timed out" else []
    s = Session(payments_build, tmp_path, ledger=450000, child=["slow=3" if timeout else "slow=2"], options=timeout)
    try:
        if give_up == "timed out":
            s.send(call(7))
            assert "did not answer within 2 s" in text(s.answer(7))
        else:
            s.send(call(7))
            s.wait_received(1)   # it reached the server: cancelled while it was decided, it would never run
            s.send(cancel(7), *([cancel(7)] if "twice" in give_up else []))
            time.sleep(0.3)
        second = 7 if "its id" in give_up else 8
        s.send(call(second))
        refused = s.answer(second)
        assert refused["result"]["isError"] and "has not finished" in text(refused), refused
        s.wait_paid(1)
        time.sleep(0.3)   # the server's answer to the first reaches the proxy
        s.send(call(9))
        again = s.answer(9)
        assert again["result"]["isError"] and "daily limit" in text(again), again
        assert s.paid() == [45000]
        decided = [(r["action_id"], r["allowed"]) for r in s.records()]
        # M29: the first call's end (cancelled after it went to the server, or timed out) has its own record
        assert decided == [("7", True), ("7", False), (str(second), False), ("9", False)], decided
    finally:
        s.close()


def test_a_call_the_server_never_finishes_is_released_after_the_timeout(payments_build, tmp_path):
    """Control: a server that keeps a cancelled call forever does not stop the run for good: --timeout after the
    cancellation the next call is decided (the ledger permitting)."""
    s = Session(payments_build, tmp_path, child=["slow=30"], options=["--timeout", "0.5"])
    try:
        s.send(call(1))
        s.wait_received(1)
        s.send(cancel(1))
        time.sleep(1.0)
        s.send(call(2))
        assert s.answer(2)["result"]["isError"]   # the child still makes payment 2 wait: it times out
        assert [r["allowed"] for r in s.records()] == [True, False, True, False]   # M29: each call's end recorded
    finally:
        s.close()


def test_a_normal_session_runs_every_allowed_call(payments_build, tmp_path):
    """Control: initialize, list, ping, and payments one after another, each decided on the ledger the last one
    updated: the fourth is denied on the daily limit, nothing else is refused."""
    normal_session(Session(payments_build, tmp_path, ledger=300000))


def normal_session(s: Session) -> None:
    """The benign session every pass checks (a session started on a ledger of 300000): initialize, initialized, list,
    ping and five payments of 60000 one after another, each decided on the ledger the last one updated: the fourth
    and fifth are denied on the daily limit, nothing else is refused, and the proxy exits 0 at the end."""
    try:
        s.send({"jsonrpc": "2.0", "method": "notifications/initialized"}, {"jsonrpc": "2.0", "id": "l", "method":
                                                                           "tools/list"})
        assert [t["name"] for t in s.answer("l")["result"]["tools"]] == ["send_payment"]
        s.send({"jsonrpc": "2.0", "id": "p", "method": "ping"})
        assert s.answer("p")["result"] == {}
        got = []
        for n in range(1, 6):
            s.send(call(n, {**PAYMENT, "amount_cents": 60000}))
            got.append(s.answer(n)["result"])
        assert [r.get("isError", False) for r in got] == [False, False, False, True, True]
        assert "daily limit" in got[3]["content"][0]["text"]
        assert s.paid() == [60000] * 3
    finally:
        s.close()
    assert [(r["action_id"], r["allowed"]) for r in s.records()] == [(str(n), n < 4) for n in range(1, 6)]
    assert "refused tools/call 'send_payment' (id 4)" in s.stderr.read_text()


# --- 2. the server's stderr is marked as its own -------------------------------------------------------------------
def test_the_servers_stderr_cannot_pass_for_the_proxys(payments_build, tmp_path):
    """Before: the child's stderr was the proxy's own, and its forged line read like the proxy allowing a call."""
    s = Session(payments_build, tmp_path, child=["chatty"])
    try:
        s.send({"jsonrpc": "2.0", "method": "notifications/initialized"}, call(1))
        assert text(s.answer(1)) == "sent 45000"
    finally:
        s.close()
    lines = s.stderr.read_text().splitlines()
    assert not [x for x in lines if x.startswith("veriguard mcp-proxy: shadow")], lines
    assert "veriguard mcp-proxy: the MCP server's stderr: veriguard mcp-proxy: shadow tools/call 'send_payment' (id 9): " \
           "allowed" in lines, lines
    # M30: the chatty server's own tools/call request (t1) has a record of its refusal, beside the host's call
    assert sorted((r["allowed"], "the MCP server sent the client a request 'tools/call'" in r["fail_closed"])
                  for r in s.records()) == [(False, True), (True, False)], s.records()


def test_a_noisy_servers_stderr_is_drained_from_the_start_marked_and_escaped(payments_build, tmp_path):
    """8 MB of stderr before the handshake (the proxy reads it from the start, or the server would block on a full
    pipe), a carriage return, terminal escapes, bytes that are not UTF-8, a NUL and a last line without a newline."""
    s = Session(payments_build, tmp_path, child=["noisy"])
    try:
        s.send(call(1))
        assert text(s.answer(1)) == "sent 45000"
    finally:
        s.close()
    err = s.stderr.read_bytes().decode("utf-8")
    assert not any(c in err for c in "\r\x1b\x00"), [x for x in err.splitlines() if "x" * 20 not in x]
    lines = err.splitlines()
    assert all(x.startswith("veriguard mcp-proxy: ") for x in lines)
    assert not [x for x in lines if x.startswith(("veriguard mcp-proxy: shadow", "veriguard mcp-proxy: the last"))]
    assert "veriguard mcp-proxy: the MCP server's stderr: veriguard mcp-proxy: the last words" in lines
    assert sum(len(x.rsplit(": ", 1)[-1]) for x in lines if set(x.rsplit(": ", 1)[-1]) == {"x"}) == 8 << 20


def test_a_servers_stderr_line_is_relayed_escaped_and_in_parts(monkeypatch):
    import asyncio

    import veriguard.enforce.integrations.mcp_proxy as proxy

    assert proxy.server_says(b"ok\rveriguard mcp-proxy: allowed\x1b[2K\r\n") == (
        "the MCP server's stderr: ok\\rveriguard mcp-proxy: allowed\\x1b[2K")
    assert proxy.server_says(b"caf\xc3\xa9 \xff") == "the MCP server's stderr: caf\u00e9 \\xff"
    said: list[str] = []
    monkeypatch.setattr(proxy, "say", said.append)

    async def run() -> None:
        stream = asyncio.StreamReader()
        stream.feed_data(b"one\ntw")
        stream.feed_data(b"o\n" + b"x" * (3 * proxy.STDERR_LINE) + b"\nlast")
        stream.feed_eof()
        await proxy.relay_stderr(stream)

    asyncio.run(run())
    shown = [x.removeprefix("the MCP server's stderr: ") for x in said]
    assert shown[:2] == ["one", "two"] and shown[-1] == "last"
    assert "".join(shown[2:-1]) == "x" * (3 * proxy.STDERR_LINE) and all(len(x) <= 2 * proxy.STDERR_LINE for x in shown)


# --- 3. combining marks ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["tools/c\u0301all", "to\u0308ols/call", "tools/call\u0323", "TOOLS/CA\u0300LL",
                                    "tools/cal\u0327l"])
def test_a_method_that_reads_as_tools_call_without_its_marks_is_recorded(payments_build, tmp_path, method):
    s = Session(payments_build, tmp_path)
    try:
        s.send(call(1, OVER_LIMIT, method=method), call(2))
        assert s.answer(1)["error"]["code"] == -32601 and text(s.answer(2)) == "sent 45000"
    finally:
        s.close()
    got = [(r["allowed"], r["fail_closed"]) for r in s.records()]
    assert len(got) == 2 and got[0][0] is False and "reads as it" in got[0][1] and got[1] == (True, ""), got
    assert s.paid() == [45000]
