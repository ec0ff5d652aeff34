"""Red-team pass M31 on the MCP proxy and the console script's start (2026-12-01): the real proxy process in front of a
real child (tests/mcp_child_m29.py, mcp_child_m28.py, mcp_child_m31.py), fed raw JSON-RPC lines through M25's session.
Each test but the controls failed on the code before:
- an integer id over 1000 bits was keyed as +infinity whatever its sign, and one of 1001-1024 bits as infinity where
  JavaScript's Number() reads a finite number: a request with the string id "-Infinity" (for -(2**1100)) or
  "1.0972248137587377e+304" (for 2**1010) was answered at once while that call ran, and the TypeScript SDK took the
  answer for the running call's;
- a request forwarded unchecked by the operator's choice (--unchecked resources: resources/read) left no record;
- a tool the server re-described after the host listed it (a payment's amount read as dollars, not cents), listed
  twice, or re-described on a later page of tools/list, was called as the server now defines it, decided as first listed;
- `python -m veriguard.cli hook|mcp-proxy` and `python -m veriguard.hook` skipped veriguard/entry.py: a stop signal
  while their modules loaded killed them (a hook killed is a hook error: Claude Code runs the tool)."""
import signal
import time
from pathlib import Path

import pytest

from veriguard.enforce.integrations.mcp_proxy import id_keys, int_number
from tests.unit.test_guard import PAYMENT
from tests.unit.test_mcp_proxy_m25 import call, records, session_fixture, text
from tests.unit.test_mcp_proxy_m29 import everything
from tests.unit.test_mcp_proxy_m30 import SLOW_LOAD, loading
from tests.unit.test_monitor import payments_build  # noqa: F401  (fixture)

pytest.importorskip("mcp", reason="the MCP proxy needs the mcp SDK")

CHILDREN = Path(__file__).resolve().parent.parent
session = session_fixture(CHILDREN / "mcp_child_m29.py")
lenient = session_fixture(CHILDREN / "mcp_child_m28.py")
listing = session_fixture(CHILDREN / "mcp_child_m31.py")
BIG = 2 ** 1100
LIST = {"jsonrpc": "2.0", "id": "l", "method": "tools/list"}


# --- 1. JSON numbers as ids: JavaScript's Number() of a large integer ------------------------------------------------
@pytest.mark.parametrize("value,number", [(-BIG, float("-inf")), (BIG, float("inf")), (2 ** 1010, float(2 ** 1010)),
                                          (-(2 ** 1010), -float(2 ** 1010)), (2 ** 1024 - 1, float("inf")),
                                          (2 ** 53 + 1, float(2 ** 53)), (0, 0.0)])
def test_an_integer_is_the_number_javascript_reads(value, number):
    """Before: every integer over 1000 bits was +infinity (-(2**1100) too, and 2**1010, which is finite)."""
    assert int_number(value) == number


@pytest.mark.parametrize("held,second", [(-BIG, "-Infinity"), (2 ** 1010, repr(float(2 ** 1010)))])
def test_a_large_integer_id_waits_for_the_call_holding_it(session, held, second):
    """Before: the ping's answer came at once, before the call's, under an id the TypeScript SDK takes for the call's."""
    assert id_keys(held) & id_keys(second) and not id_keys(-BIG) & id_keys("Infinity")
    s = session(child=["slow=1.0"])
    try:
        s.send(call(held))
        s.wait_received(1)
        s.send({"jsonrpc": "2.0", "id": second, "method": "ping"})
        s.answer(held)
    finally:
        s.close()
    assert [a["id"] for a in everything(s)] == [held, second]


# --- 2. --unchecked: a pass the operator chose is recorded ------------------------------------------------------------
def test_an_unchecked_pass_is_recorded(lenient):
    """Before: resources/read went to the server with no record. Now an allowed record marked unchecked, with the
    sha256 of the params sent, precedes the forward; a tools/list (always forwarded, never a pass) adds none."""
    s = lenient(child=["lenient"], options=["--unchecked", "resources"])
    try:
        s.send({"jsonrpc": "2.0", "id": "r", "method": "resources/read", "params": {"uri": "ledger://x"}}, LIST, call(2))
        assert "result" in s.answer("r") and "result" in s.answer("l") and text(s.answer(2)) == "sent 45000"
    finally:
        s.close()
    got = s.records()
    assert [(r["action_id"], r["allowed"], r.get("unchecked", False)) for r in got] == [("r", True, True),
                                                                                         ("2", True, False)], got
    assert got[0]["arguments"]["method"] == "resources/read" and len(got[0]["arguments"]["params_sha256"]) == 64


def test_an_unchecked_pass_that_cannot_be_recorded_is_not_forwarded(lenient):
    """The log file replaced by a folder mid-session: the resources/read is refused (its record could not be written)
    and never reaches the server."""
    s = lenient(child=["lenient"], options=["--unchecked", "resources"])
    try:
        s.log.unlink(missing_ok=True)
        s.log.mkdir()
        s.send({"jsonrpc": "2.0", "id": "r", "method": "resources/read", "params": {"uri": "ledger://x"}})
        assert "could not be recorded" in s.answer("r")["error"]["message"]
    finally:
        s.p.stdin.close()
        s.p.wait(timeout=60)
    assert [m.get("method") for m in s.requests()].count("resources/read") == 0


# --- 3. a tool re-described after it was listed -----------------------------------------------------------------------
def refused_after_first(s, *, relist: bool) -> str:
    """List, pay 45000 (the server may change its tool then), list again when `relist`, then ask the same payment:
    returns the refusal's text; nothing but the first payment ran."""
    try:
        s.send(LIST)
        assert s.answer("l")["result"]["tools"][0]["name"] == "send_payment"
        s.send(call(1))
        assert text(s.answer(1)) == "sent 45000"
        if relist:
            s.send({**LIST, "id": "l2"})
            s.answer("l2")
        s.send(call(2))
        second = s.answer(2)["result"]
    finally:
        s.close()
    assert second["isError"] is True and s.paid() == [45000], (second, s.paid())
    assert [(a, allowed) for a, allowed, _ in records(s)] == [("1", True), ("2", False)], records(s)
    return text({"result": second})


@pytest.mark.parametrize("child,relist", [(["redescribe", "notify"], False), (["redescribe"], True)])
def test_a_tool_re_described_after_it_was_listed_is_not_called(listing, child, relist):
    """Before: the second payment went to the server, which now reads its amount as dollars (45000 cents allowed,
    45000 dollars paid). Now it is refused undecided and recorded: on the server's list_changed the proxy lists the
    tools itself; a definition other than the first listed is refused until the proxy is restarted."""
    said = refused_after_first(listing(child=child), relist=relist)
    assert "changed the definition of tool 'send_payment'" in said or "reading them again" in said, said


@pytest.mark.parametrize("child", [["twice"], ["paged"]])
def test_a_tool_listed_twice_otherwise_is_not_called(listing, child):
    """Before: paid. A name listed twice with two definitions (in one answer, or on two pages) is refused."""
    s = listing(child=child)
    try:
        s.send(LIST)
        page = s.answer("l")["result"]
        if "nextCursor" in page:
            s.send({**LIST, "id": "l2", "params": {"cursor": page["nextCursor"]}})
            s.answer("l2")
        s.send(call(1))
        said = text(s.answer(1))
    finally:
        s.close()
    assert s.paid() == [] and "changed the definition of tool 'send_payment'" in said, said
    assert [(a, allowed) for a, allowed, _ in records(s)] == [("1", False)]


def test_control_a_list_change_that_changes_nothing(listing):
    """Control: the server says its list changed but lists the same tools: once the proxy read them again, payments
    are decided as before (the fourth past the daily limit refused by the policy); lists unchanged pass as they came."""
    s = listing(child=["notify"], ledger=300000)
    try:
        s.send(LIST)
        first = s.answer("l")["result"]
        got = []
        for n in range(1, 5):
            s.wait_received(n - 1)
            end = time.monotonic() + 30   # the proxy's own tools/list went to the server (list_changed after a call)
            while n > 1 and sum(m.get("method") == "tools/list" for m in s.requests()) < n and time.monotonic() < end:
                time.sleep(0.02)
            s.send({**LIST, "id": f"l{n}"})   # answered after the proxy's own (the server answers in order)
            assert s.answer(f"l{n}")["result"] == first
            s.send(call(n, {**PAYMENT, "amount_cents": 60000}))
            got.append(s.answer(n)["result"].get("isError", False))
    finally:
        s.close()
    assert got == [False, False, False, True] and s.paid() == [60000] * 3


# --- 4. `python -m` starts hold the stop signals as the console script does -----------------------------------------
AS_MODULE = SLOW_LOAD.split("sys.argv = ")[0] + (
    "run = sys.argv[3]\n"
    "sys.argv, sys.orig_argv = ['-m', *sys.argv[4:]], [sys.executable, '-m', run, *sys.argv[4:]]\n"
    "import runpy\n"
    "runpy._run_module_as_main(run)\n")   # what the interpreter's -m does: argv[0] is '-m' while the module is found


@pytest.mark.parametrize("run,argv,slow,status,said", [
    ("veriguard.cli", ["hook", "claude-code"], "veriguard.cli", 2, "while it started; denied"),
    ("veriguard.hook", ["claude-code"], "veriguard.hook", 2, "while it started; denied"),
    ("veriguard.cli", ["mcp-proxy", "--build", "b", "--", "x"], "veriguard.cli", None, "no MCP server was started")])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_python_m_holds_the_stop_signals_while_it_loads(payments_build, tmp_path, run, argv, slow, status, said, signum):
    """Before: SIGTERM killed `python -m veriguard.cli hook` / `python -m veriguard.hook` while the module loaded (-15),
    SIGINT exited 1 with a traceback; Claude Code runs the tool on both. Now: exit 2 saying so (mcp-proxy: 128 + n)."""
    p, err = loading(tmp_path, slow, [run, *argv], signum, code=AS_MODULE)
    assert p.returncode == (128 + signum if status is None else status), (p.returncode, err)
    assert said.encode() in err and b"Traceback" not in err, err


def test_which_module_runs():
    """The module and its arguments read while -m locates it; any other start holds nothing."""
    from veriguard.entry import run_as_module
    assert run_as_module(["py", "-m", "veriguard.cli", "hook"], ["-m", "hook"]) == ("veriguard.cli", ["hook"])
    assert run_as_module(["py", "-Imveriguard.hook", "x"], ["-m", "x"]) == ("veriguard.hook", ["x"])
    assert run_as_module(["py", "-X", "importtime", "-m", "veriguard.hook"], ["-m"]) == ("veriguard.hook", [])
    assert run_as_module(["py", "script.py", "-m"], ["script.py", "-m"]) == ("", [])
    assert run_as_module(["py", "-c", "x"], ["-c"]) == ("", [])
