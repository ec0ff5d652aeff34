"""Third red-team pass on the integrations (helper A23, 2026-11-30): the classes that failed, each test failing on the
code before (ef16922, checked in a worktree):
- a call the guard refused after the policy had allowed it (another allowed call of its run still running, or its run
  halted while it was decided) had two records: an allow, then the refusal. An auditor reading the allow records saw
  calls that never ran (39 of 40 parallel MCP calls; parallel Agents and async Anthropic calls; threads calling
  Guard.check at once). Guard.check now asks its last check through Monitor.check's `veto`, before the record is
  logged: the one record of such a call is the refusal;
- the MCP proxy bounded only the decisions already past their deadline (8), not the ones still running: a burst of
  calls on a slow policy started a thread each (24 threads for 30 calls), all of which outlived their deadline. At
  most 8 decisions now run at once, in time or late; a call beyond is refused at once, with a record;
- a value the Anthropic SDK's validation refuses (NaN, 1e400 or "250000x" for an int, an object for a string) under a
  plain @beta_tool that require_guarded never saw left no record: `guarded`'s per-argument validator now keeps the
  refusal for the guarded function, which records it;
- a plain tool given to the Anthropic tool runner after require_guarded checked the list (runner.add_tools, appended to
  the returned list, or added under the guarded tool's name) ran undecided: the client's request hook
  `refuse_undecided_tools(guard)` refuses, recorded, to offer the model a tool require_guarded did not check;
- a cancellation raised while the guard read the context (asyncio.CancelledError, GeneratorExit) passed through
  Guard.check with no record: it is recorded as a refusal, then raised on."""
import asyncio
import io
import json
import threading
import time

import httpx2
import pytest

from veriguard.enforce.decision_log import DecisionLog, verify_log
from veriguard.enforce.monitor import Monitor
from tests.unit.test_guard import CONTEXT, OVER_LIMIT, PAYMENT, guard
from tests.unit.test_monitor import payments_build  # noqa: F401  (fixture)


def records(log):
    return list(DecisionLog(log).records()) if log.exists() else []


def tool_use(payment=PAYMENT, call_id="t"):
    return {"type": "tool_use", "id": call_id, "name": "send_payment", "input": dict(payment)}


# --- 1. one record per call: a refusal after the policy allowed is the record, not a second one ---------------------
def test_threads_deciding_at_once_leave_one_record_per_call_and_one_allow(payments_build, tmp_path):
    """Twelve threads call Guard.check(exclusive=True) at once with a call the policy allows, on facts beside the call:
    one runs, the others are refused to be sent again. Before: twelve allow records (eleven of them followed by the
    refusal), so the log said twelve payments were allowed while one ran."""
    log = tmp_path / "log.jsonl"
    g = guard(payments_build, log=log)
    start, outcomes = threading.Barrier(12), {}

    def one(k):
        start.wait(10)
        outcomes[k] = g.check(tool_use(call_id=f"t{k}"), context=CONTEXT, action_id=f"t{k}", exclusive=True)
    threads = [threading.Thread(target=one, args=(k,)) for k in range(12)]
    [t.start() for t in threads]
    [t.join(30) for t in threads]
    got = records(log)
    assert sum(o.allowed for o in outcomes.values()) == 1
    assert sorted(r["action_id"] for r in got) == sorted(f"t{k}" for k in range(12))   # one record each
    assert [r["allowed"] for r in got].count(True) == 1
    busy = [o for o in outcomes.values() if not o.allowed]
    assert all(o.action == "replan" and "one at a time" in o.message and not o.record.allowed for o in busy)
    assert all(o.record.arguments["payment"]["amount_cents"] == 45000 for o in busy)   # what was decided is kept
    assert g.check(tool_use(), context=CONTEXT, exclusive=True).action == "replan"   # the one allowed still runs
    g.finished()
    assert g.check(tool_use(), context=CONTEXT, exclusive=True).allowed
    assert verify_log(log).ok


def test_an_allow_whose_log_write_fails_does_not_hold_the_run(payments_build, tmp_path):
    """The allow claims the run's one running call before it is logged; when the log write then fails, the call is
    denied (an unlogged decision is no decision) and the claim is released, or every later call would be refused."""
    g = guard(payments_build)

    class Broken:
        def append(self, record):
            raise OSError("disk full")
    g.monitor.log = Broken()
    out = g.check(tool_use(), context=CONTEXT, exclusive=True)
    assert not out.allowed and "decision log write failed" in out.record.fail_closed
    g.monitor.log = None
    assert g.check(tool_use(), context=CONTEXT, exclusive=True).allowed


def test_monitor_check_asks_its_veto_before_logging_an_allow(payments_build, tmp_path):
    """`veto` turns an allow into a denial that says why, before it is logged; it is not asked for a denial, and one
    that raises denies."""
    log = tmp_path / "log.jsonl"
    monitor = Monitor.from_build(payments_build, log=log)
    observation = {**CONTEXT, "tool_call": tool_use()}
    asked = []

    def veto(record):
        asked.append(record.allowed)
        return "its run was halted"
    out = monitor.check(observation, veto=veto)
    assert not out.allowed and out.fail_closed == "its run was halted" and out.arguments["payment"]["amount_cents"]
    monitor.check({**CONTEXT, "tool_call": tool_use(OVER_LIMIT)}, veto=veto)
    assert asked == [True]

    def broken(record):
        raise RuntimeError("boom")
    out = monitor.check(observation, veto=broken)
    assert not out.allowed and "RuntimeError: boom" in out.fail_closed
    assert monitor.check(observation, veto=lambda record: "").allowed
    assert [r["allowed"] for r in records(log)] == [False, False, False, True] and verify_log(log).ok


def test_parallel_agents_calls_leave_one_record_each(payments_build, tmp_path):
    """Three parallel calls in one model reply (allowed, over the limit, allowed) with policy_hooks: the first allowed
    runs, the second allowed is refused to be sent again. Before: that refused call had an allow record too."""
    pytest.importorskip("agents", reason="openai-agents is an optional extra")
    from veriguard.enforce.integrations.openai_agents import policy_guardrail
    from tests.unit.test_integration_unguarded import Script, calls, model, pay_tool, run_agent
    from agents import Agent

    log, ran = tmp_path / "log.jsonl", []
    g = guard(payments_build, log=log)
    script = Script(calls(("send_payment", PAYMENT), ("send_payment", OVER_LIMIT), ("send_payment", PAYMENT)))
    run_agent(Agent(name="payer", model=model(script), tools=[pay_tool(ran, policy_guardrail(g))]), g)
    got = records(log)
    ids = [r["action_id"] for r in got]
    assert ran == [45000] and len(ids) == 3 == len(set(ids)), got
    assert [r["allowed"] for r in got].count(True) == 1


def test_concurrent_calls_of_an_async_guarded_tool_leave_one_record_each(payments_build, tmp_path):
    """Five calls of one @beta_async_tool at once (an async runner, or an application's gather): one runs, four are
    refused. Before: five allow records, four of them followed by a refusal."""
    from anthropic.lib.tools import beta_async_tool

    from veriguard.enforce.integrations.anthropic_sdk import guarded

    log, ran = tmp_path / "log.jsonl", []
    g = guard(payments_build, log=log)

    @beta_async_tool
    @guarded(g, context=lambda: CONTEXT)
    async def send_payment(recipient: str, amount_cents: int, currency: str, method: str = "ach") -> str:
        """Send a payment."""
        await asyncio.sleep(0.05)
        ran.append(amount_cents)
        return "sent"

    async def five() -> list:
        return await asyncio.gather(*[send_payment.call(dict(PAYMENT)) for _ in range(5)], return_exceptions=True)
    results = asyncio.run(five())
    assert ran == [45000] and results.count("sent") == 1
    got = records(log)
    assert len(got) == 5 and [r["allowed"] for r in got].count(True) == 1, [(r["allowed"], r["fail_closed"]) for r in got]


# --- 2. the MCP proxy runs at most MAX_DECIDING decisions at once ---------------------------------------------------
def proxy_with_blocking_policy(payments_build, log, context, strategy="block", halt_after=None):
    """A Proxy in this process, in front of a fake child, whose decisions run on threads with a 0.2 s deadline."""
    pytest.importorskip("mcp", reason="the MCP proxy needs the mcp SDK")
    import mcp_types as types

    from veriguard.enforce.integrations.mcp_proxy import Proxy
    from tests.unit.test_mcp_proxy import FakeChild

    init = types.InitializeResult.model_validate({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                                                  "serverInfo": {"name": "s", "version": "1"}})
    host_out, child = io.BytesIO(), FakeChild()
    g = guard(payments_build, strategy, log=log, **({"halt_after": halt_after} if halt_after else {}))
    return Proxy(g, child, init, context, 5.0, host_out, decision_timeout_s=0.2), host_out, child


def host_call(request_id, arguments=PAYMENT) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                       "params": {"name": "send_payment", "arguments": arguments}}).encode() + b"\n"


class Blocking:
    """A context whose reading holds each decision's thread until released (a slow policy, without the CPU)."""

    def __init__(self):
        self.release, self.started, self.lock = threading.Event(), 0, threading.Lock()

    def __call__(self):
        with self.lock:
            self.started += 1
        self.release.wait(30)
        return CONTEXT


async def released(context: Blocking, proxy) -> None:
    """Let the held decisions go, and wait (at most 30 s) until the proxy has none left abandoned."""
    context.release.set()
    end = time.monotonic() + 30
    while proxy.abandoned and time.monotonic() < end:
        await asyncio.sleep(0.05)


def answer_texts(host_out) -> dict:
    """The proxy's answers to the host, by request id: the text of each result."""
    return {m["id"]: m["result"]["content"][0]["text"] for m in map(json.loads, host_out.getvalue().splitlines())}


def test_a_burst_of_calls_on_a_slow_policy_starts_at_most_eight_decisions(payments_build, tmp_path):
    """Twelve calls at once, then one more after their deadlines: eight decisions run, the four beyond and the last are
    refused at once (recorded), and nothing reaches the child. Before: every call started a thread (13 for 13 calls),
    since only decisions already past their deadline were counted against the bound."""
    from veriguard.enforce.integrations.mcp_proxy import MAX_DECIDING

    log, context = tmp_path / "log.jsonl", Blocking()
    proxy, host_out, child = proxy_with_blocking_policy(payments_build, log, context)

    async def run() -> None:
        for k in range(1, 13):
            proxy.from_host(host_call(k))
        await asyncio.sleep(0.8)   # the eight deadlines pass: refused, their threads still running
        proxy.from_host(host_call(13))
        await asyncio.sleep(0.1)
        await released(context, proxy)
    asyncio.run(run())
    answers = answer_texts(host_out)
    assert context.started == MAX_DECIDING == 8
    assert sorted(answers) == list(range(1, 14))
    beyond = [k for k, text in answers.items() if f"no more than {MAX_DECIDING} run at once" in text]
    assert beyond == [9, 10, 11, 12, 13], answers
    assert all("did not decide within 0.2 s" in answers[k] for k in range(1, 9))
    assert [m for m in child.stdin.lines if m.get("method") == "tools/call"] == []
    got = records(log)
    assert not any(r["allowed"] for r in got) and {r["action_id"] for r in got} == {str(k) for k in range(1, 14)}


def test_deadline_refusals_count_towards_halt_after(payments_build, tmp_path):
    """Decided, not a finding (it held before too): the refusal at the deadline is a denial of the run, so under
    replan_halt two calls the policy cannot decide in time halt the run and the third is refused unread; the late
    records (abandoned) do not count again."""
    log, context = tmp_path / "log.jsonl", Blocking()
    proxy, host_out, child = proxy_with_blocking_policy(payments_build, log, context, "replan_halt", halt_after=2)

    async def run() -> None:
        proxy.from_host(host_call(1))
        await asyncio.sleep(0.4)
        proxy.from_host(host_call(2))
        await asyncio.sleep(0.4)
        proxy.from_host(host_call(3))
        await released(context, proxy)
    asyncio.run(run())
    answers = answer_texts(host_out)
    assert "did not decide within 0.2 s" in answers[1] and "Do not retry" in answers[1]
    assert "halted for the rest of this run" in answers[2] and "halted in this run" in answers[3]
    # call 3 is never decided; call 2 may not be either, when its thread starts after its own deadline halted the run
    assert context.started <= 2 and not any(r["allowed"] for r in records(log))


# --- 3. a plain @beta_tool records the values the SDK's validation refuses ------------------------------------------
@pytest.mark.parametrize("tool_input", [
    '{"recipient":"acme-supplies","amount_cents":NaN,"currency":"USD","method":"ach"}',
    '{"recipient":"acme-supplies","amount_cents":1e400,"currency":"USD","method":"ach"}',
    '{"recipient":"acme-supplies","amount_cents":"250000x","currency":"USD","method":"ach"}',
    '{"recipient":{"name":"acme-supplies"},"amount_cents":250000,"currency":"USD","method":"ach"}',
])
@pytest.mark.parametrize("through_require_guarded", [False, True])
def test_a_value_the_sdk_refuses_is_recorded_once_under_a_plain_beta_tool(payments_build, tmp_path, tool_input,
                                                                          through_require_guarded):
    """Before: under a plain @beta_tool (no require_guarded) the SDK refused these with its own error and no record.
    Through require_guarded too, the refusal is recorded once (not by the tool and again by the function)."""
    from anthropic.lib.tools import beta_tool

    from tests.llm_fakes import ScriptedModel
    from tests.unit.test_integration_anthropic import client
    from tests.unit.test_integration_followup import DONE, raw_reply
    from veriguard.enforce.integrations.anthropic_sdk import guarded, require_guarded

    log, ran = tmp_path / "log.jsonl", []
    g = guard(payments_build, log=log)

    @beta_tool
    @guarded(g, context=lambda: CONTEXT)
    def send_payment(recipient: str, amount_cents: int, currency: str, method: str = "ach") -> str:
        """Send a payment."""
        ran.append(amount_cents)
        return "sent"
    model = ScriptedModel(raw_reply(tool_input), DONE)
    tools = require_guarded(g, [send_payment]) if through_require_guarded else [send_payment]
    client(model).beta.messages.tool_runner(model="claude-test", max_tokens=50, tools=tools,
                                            messages=[{"role": "user", "content": "Pay."}]).until_done()
    got = records(log)
    assert ran == [] and len(got) == 1 and got[0]["allowed"] is False, got
    assert "the tool runner refused the input before send_payment() ran" in got[0]["fail_closed"]
    result = model.bodies[1]["messages"][-1]["content"][0]
    assert result["is_error"] is True and "Blocked by policy" in json.dumps(result["content"])


def test_shadow_mode_records_the_refused_value_and_still_does_not_run(payments_build, tmp_path):
    from anthropic.lib.tools import beta_tool

    from veriguard.enforce.integrations.anthropic_sdk import guarded

    log, ran = tmp_path / "log.jsonl", []
    g = guard(payments_build, log=log, mode="shadow")

    @beta_tool
    @guarded(g, context=lambda: CONTEXT)
    def send_payment(recipient: str, amount_cents: int, currency: str, method: str = "ach") -> str:
        """Send a payment."""
        ran.append(amount_cents)
        return "sent"
    with pytest.raises(ValueError, match="amount_cents"):
        send_payment.call({**PAYMENT, "amount_cents": float("nan")})
    got = records(log)
    assert ran == [] and len(got) == 1 and got[0]["mode"] == "shadow"


# --- 4. tools given to the Anthropic tool runner after require_guarded ----------------------------------------------
def runner_with_hook(g, model, tools, change=None):
    """A tool runner over `tools`, its client behind refuse_undecided_tools(g); `change(runner, ran)` before it runs."""
    from anthropic import Anthropic

    from veriguard.enforce.integrations.anthropic_sdk import refuse_undecided_tools

    client = Anthropic(api_key="sk-ant-test", max_retries=0, http_client=httpx2.Client(
        transport=httpx2.MockTransport(model), event_hooks={"request": [refuse_undecided_tools(g)]}))
    runner = client.beta.messages.tool_runner(model="claude-test", max_tokens=50, tools=tools,
                                              messages=[{"role": "user", "content": "Pay."}])
    if change is not None:
        change(runner)
    return runner


def payment_tools(g, ran):
    from anthropic.lib.tools import beta_tool

    from veriguard.enforce.integrations.anthropic_sdk import guarded

    @beta_tool
    @guarded(g, context=lambda: CONTEXT)
    def send_payment(recipient: str, amount_cents: int, currency: str, method: str = "ach") -> str:
        """Send a payment."""
        ran.append(amount_cents)
        return "sent"

    @beta_tool
    def refund(recipient: str, amount_cents: int) -> str:
        """Refund a payment."""
        ran.append(("refund", amount_cents))
        return "refunded"
    return send_payment, refund


def calling(name: str, tool_input: str) -> httpx2.Response:
    """A Messages reply calling tool `name` with `tool_input` (raw JSON)."""
    from tests.unit.test_integration_followup import raw_reply

    reply = raw_reply(tool_input)
    return httpx2.Response(200, content=reply.content.replace(b'"name":"send_payment"', f'"name":"{name}"'.encode()),
                           headers={"content-type": "application/json"})


@pytest.mark.parametrize("how", ["add_tools", "add_tools_same_name", "appended_to_the_list"])
def test_a_tool_added_after_require_guarded_is_refused_before_the_model_is_asked(payments_build, tmp_path, how):
    """Before: a plain tool given to the runner after require_guarded checked its list (runner.add_tools, or appended
    to the list it returned) ran undecided when the model called it, refund(evil, 250000) or send_payment(250000) in
    the place of the guarded one. The client's request hook refuses to offer it (recorded), so nothing runs."""
    from anthropic.lib.tools import beta_tool

    from veriguard.enforce.integrations.anthropic_sdk import ProviderToolsRefused, require_guarded
    from tests.llm_fakes import ScriptedModel
    from tests.unit.test_integration_followup import DONE

    log, ran = tmp_path / "log.jsonl", []
    g = guard(payments_build, log=log)
    send_payment, refund = payment_tools(g, ran)
    tools = require_guarded(g, [send_payment])
    if how == "appended_to_the_list":
        tools.append(refund)
    if how == "add_tools_same_name":
        plain = beta_tool(send_payment.func.__wrapped__)   # the undecorated function: a plain tool of that name
        model = ScriptedModel(calling("send_payment", json.dumps(OVER_LIMIT)), DONE)
        change = lambda runner: runner.add_tools(plain)   # noqa: E731
    else:
        model = ScriptedModel(calling("refund", '{"recipient":"evil","amount_cents":250000}'), DONE)
        change = (lambda runner: runner.add_tools(refund)) if how == "add_tools" else None   # noqa: E731
    runner = runner_with_hook(g, model, tools, change)
    with pytest.raises(ProviderToolsRefused, match="does not decide"):
        runner.until_done()
    got = records(log)
    assert ran == [] and len(got) == 1 and got[0]["allowed"] is False, got
    assert "refused to send a request offering the model tools" in got[0]["fail_closed"]


def test_tools_checked_by_require_guarded_pass_the_request_hook(payments_build, tmp_path):
    from veriguard.enforce.integrations.anthropic_sdk import require_guarded
    from tests.llm_fakes import ScriptedModel
    from tests.unit.test_integration_followup import DONE, raw_reply

    log, ran = tmp_path / "log.jsonl", []
    g = guard(payments_build, log=log)
    send_payment, _ = payment_tools(g, ran)
    model = ScriptedModel(raw_reply(json.dumps(PAYMENT)), DONE)
    runner_with_hook(g, model, require_guarded(g, [send_payment])).until_done()
    assert ran == [45000] and [r["allowed"] for r in records(log)] == [True]


# --- 5. a cancellation while the context is read ----------------------------------------------------------------------
@pytest.mark.parametrize("stop", [asyncio.CancelledError, GeneratorExit])
def test_a_cancellation_while_the_context_is_read_is_recorded_and_raised_on(payments_build, tmp_path, stop):
    """Before: the BaseException went through Guard.check with no record (nothing ran either)."""
    log = tmp_path / "log.jsonl"
    g = guard(payments_build, log=log)

    def context():
        raise stop()
    with pytest.raises(stop):
        g.check(tool_use(), context=context, action_id="c1")
    got = records(log)
    assert len(got) == 1 and got[0]["allowed"] is False and got[0]["action_id"] == "c1"
    assert f"the call could not be checked: {stop.__name__}" in got[0]["fail_closed"]


def test_an_async_guarded_tool_cancelled_while_its_context_is_read_runs_nothing_and_is_recorded(payments_build,
                                                                                                 tmp_path):
    from anthropic.lib.tools import beta_async_tool

    from veriguard.enforce.integrations.anthropic_sdk import guarded

    log, ran = tmp_path / "log.jsonl", []
    g = guard(payments_build, log=log)

    def context():
        raise asyncio.CancelledError()

    @beta_async_tool
    @guarded(g, context=context)
    async def send_payment(recipient: str, amount_cents: int, currency: str, method: str = "ach") -> str:
        """Send a payment."""
        ran.append(amount_cents)
        return "sent"
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(send_payment.call(dict(PAYMENT)))
    got = records(log)
    assert ran == [] and len(got) == 1 and got[0]["allowed"] is False
