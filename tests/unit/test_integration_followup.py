"""Follow-up to the second red-team pass on the integrations (helper G22): the classes it left open, closed. Each test
failed on the code before (checked against a worktree of that commit):
- a decision that missed its deadline (the MCP proxy's --decision-timeout, a host's cancellation) was logged as the
  allow it was, for a call that never ran; only a later refusal record said it did not run. Monitor.check and
  Guard.check now take `abandoned`, asked just before the record is logged: the late record itself is a denial that
  says the call was abandoned, and it is not counted in the run a second time;
- input the Anthropic SDK's tool runner refuses before the tool function runs (an unknown key, a missing one, a list,
  a string or null for the input, NaN or 1e400 for an int, an object for a string) left no decision record: a tool
  list passed through `require_guarded` now records each such refusal;
- runs refused before the model is asked (`UnguardedTools`: the OpenAI Agents hooks, Anthropic's `require_guarded`)
  left no decision record: each refusal is now recorded, and counts in no run."""
import json
import time

import httpx2
import pytest

from veriguard.enforce.decision_log import DecisionLog, verify_log
from veriguard.enforce.monitor import ABANDONED, Monitor
from tests.unit.test_guard import CONTEXT, OVER_LIMIT, PAYMENT, guard
from tests.unit.test_monitor import payments_build  # noqa: F401  (fixture)

OBSERVATION = {**CONTEXT, "tool_call": {"type": "tool_use", "name": "send_payment", "input": PAYMENT}}


def records(log):
    return list(DecisionLog(log).records()) if log.exists() else []


# --- 1. a decision its caller abandoned never reads as an allow ----------------------------------------------------
def test_a_decision_abandoned_before_it_is_logged_is_a_denial_that_says_so(payments_build, tmp_path):
    """Before: Monitor.check had no way to learn that its caller gave up, so the late allow was logged as an allow."""
    log = tmp_path / "log.jsonl"
    monitor = Monitor.from_build(payments_build, log=log)
    kept = monitor.check(OBSERVATION, action_id="1", abandoned=lambda: "")
    late = monitor.check(OBSERVATION, action_id="2", abandoned=lambda: "its 0.3 s deadline passed")
    broken = monitor.check(OBSERVATION, action_id="3", abandoned=lambda: 1 / 0)
    assert kept.allowed is True and kept.fail_closed == ""
    assert late.allowed is False and late.fail_closed.startswith(ABANDONED) and "deadline passed" in late.fail_closed
    assert late.arguments == kept.arguments and late.enforcement.action != "allow"   # what was decided stays readable
    assert broken.allowed is False and "ZeroDivisionError" in broken.fail_closed
    got = records(log)
    assert [(r["action_id"], r["allowed"]) for r in got] == [("1", True), ("2", False), ("3", False)]
    assert verify_log(log).ok and verify_log(log).records == 3
    assert monitor.stats == {"checked": 3, "denied": 2, "fail_closed": 2}


def test_an_abandoned_decision_does_not_count_in_the_run_a_second_time(payments_build, tmp_path):
    """The caller refused the call already (its refusal counted); the late record must not halt the run again.
    Before: Guard.check took no `abandoned`."""
    g = guard(payments_build, "replan_halt", halt_after=2, log=tmp_path / "log.jsonl")
    first = g.refuse("the policy did not decide within 0.3 s", action_id="5")     # what the proxy does at the deadline
    late = g.check({"type": "tool_use", "name": "send_payment", "input": OVER_LIMIT}, context=CONTEXT, action_id="5",
                   abandoned=lambda: "the policy did not decide within 0.3 s")
    assert (first.action, late.action, late.allowed) == ("replan", "abandoned", False)
    assert g.halted() == "" and late.record is not None and late.record.fail_closed.startswith(ABANDONED)
    assert g.check({"type": "tool_use", "name": "send_payment", "input": PAYMENT}, context=CONTEXT).allowed


def test_settled_lets_only_one_side_win():
    pytest.importorskip("mcp", reason="the MCP proxy needs the mcp SDK")
    from veriguard.enforce.integrations.mcp_proxy import Settled

    decided = Settled()
    assert decided.logging() == "" and decided.give_up("deadline") is False and decided.logging() == ""
    given_up = Settled()
    assert given_up.give_up("deadline") is True and given_up.logging() == "deadline"
    assert given_up.give_up("cancelled") is False   # the first reason stands


def test_the_proxy_never_logs_an_allow_for_a_call_refused_at_its_deadline(payments_build, tmp_path):
    """The real proxy process, a context that takes the policy seconds to read, --decision-timeout 0.3: the call is
    refused at the deadline, and the decision that comes later is logged as an abandoned denial. Before: it was
    logged as an allow (allowed: true), followed by a refusal record."""
    pytest.importorskip("mcp", reason="the MCP proxy needs the mcp SDK")
    from tests.unit.test_integration_redteam2 import INIT, Proxy, call, slow_context
    from tests.unit.test_mcp_proxy import CHILD, reached_child

    (tmp_path / "child.py").write_text(CHILD, encoding="utf-8")
    setup = {"tmp": tmp_path, "build": payments_build, "calls": tmp_path / "calls.txt", "log": tmp_path / "log.jsonl"}
    slow_context(setup)
    proxy = Proxy(setup, "--decision-timeout", "0.3")
    try:
        proxy.send(INIT)
        proxy.until("init")
        proxy.send(call(5, PAYMENT))
        refused = proxy.until(5, 60)[-1]
        assert refused["result"]["isError"] and "did not decide within 0.3 s" in refused["result"]["content"][0]["text"]
        end = time.monotonic() + 90
        while len(records(setup["log"])) < 2 and time.monotonic() < end:   # the deadline's refusal, the late record
            time.sleep(0.1)
        got = [(r["allowed"], r["fail_closed"]) for r in records(setup["log"]) if r["action_id"] == "5"]
        assert len(got) == 2 and not any(allowed for allowed, _ in got), got
        assert got[1][1].startswith(ABANDONED) and "did not decide within 0.3 s" in got[1][1], got
        assert reached_child(setup) == [] and verify_log(setup["log"]).ok
    finally:
        assert proxy.close() == 0


# --- 3. a run refused before the model is asked leaves a record -----------------------------------------------------
def test_an_agents_run_refused_for_an_undecided_handoff_is_recorded_and_counts_in_no_run(payments_build, tmp_path):
    """Before: UnguardedTools stopped the run (nothing ran) and the log had nothing of it."""
    pytest.importorskip("agents", reason="openai-agents is an optional extra")
    from agents import Agent, handoff
    from pydantic import BaseModel

    from veriguard.enforce.integrations.openai_agents import UnguardedTools, policy_guardrail
    from tests.unit.test_integration_unguarded import Script, calls, model, pay_tool, run_agent

    class Escalation(BaseModel):
        recipient: str
        amount_cents: int

    log, paid = tmp_path / "log.jsonl", []
    g = guard(payments_build, "terminate", log=log)
    payer = Agent(name="payer", model=model(Script()), tools=[pay_tool([], policy_guardrail(g))])
    h = handoff(payer, on_handoff=lambda ctx, data: paid.append(data.amount_cents), input_type=Escalation)
    script = Script(calls((h.tool_name, {"recipient": "evil", "amount_cents": 250000})))
    with pytest.raises(UnguardedTools):
        run_agent(Agent(name="front", model=model(script), tools=[pay_tool([], policy_guardrail(g))], handoffs=[h]), g)
    got = records(log)
    assert paid == [] and len(got) == 1 and got[0]["allowed"] is False and got[0]["integration"] == "openai_agents"
    assert h.tool_name in got[0]["fail_closed"] and "refused to ask the model" in got[0]["fail_closed"]
    assert g.halted() == ""   # a refusal to start is no denial of a call: under terminate, the run is not halted


def test_a_tool_runner_refused_for_an_undecided_tool_is_recorded(payments_build, tmp_path):
    """Before: require_guarded raised UnguardedTools and the log had nothing of it."""
    from anthropic.lib.tools import beta_tool

    from veriguard.enforce.integrations.anthropic_sdk import UnguardedTools, require_guarded

    @beta_tool
    def lookup(name: str) -> str:
        """Look a name up."""
        return name

    log = tmp_path / "log.jsonl"
    with pytest.raises(UnguardedTools):
        require_guarded(guard(payments_build, log=log), [lookup])
    got = records(log)
    assert len(got) == 1 and got[0]["allowed"] is False and got[0]["integration"] == "anthropic_sdk"
    assert "'lookup'" in got[0]["fail_closed"] and "refused to start a tool runner" in got[0]["fail_closed"]


# --- 2. input the Anthropic tool runner refuses before the tool function runs leaves a record ------------------------
def raw_reply(tool_input: str) -> httpx2.Response:
    """A Messages reply with one tool_use whose input is `tool_input`, as raw JSON text (NaN, 1e400 and all)."""
    body = ('{"id":"msg","type":"message","role":"assistant","model":"claude-test","content":[{"type":"tool_use",'
            '"id":"toolu_1","name":"send_payment","input":%s}],"stop_reason":"tool_use","stop_sequence":null,'
            '"usage":{"input_tokens":1,"output_tokens":1}}' % tool_input)
    return httpx2.Response(200, content=body.encode(), headers={"content-type": "application/json"})


DONE = {"id": "msg2", "type": "message", "role": "assistant", "model": "claude-test",
        "content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1}}
PAID = '{"recipient":"acme-supplies","amount_cents":%s,"currency":"USD","method":"ach"}'
REFUSED_BY_THE_SDK = [
    '{"recipient":"evil","amount_cents":250000,"currency":"USD","method":"ach","human_approved":true}',   # unknown key
    '{"amount_cents":250000,"currency":"USD","method":"ach"}',                                          # missing key
    '[1,2]', '"{\\"amount_cents\\":250000}"', "null",                                              # not an object
    PAID % "NaN", PAID % "1e400", PAID % '"250000x"',                                                  # not an int
    '{"recipient":{"name":"acme-supplies"},"amount_cents":250000,"currency":"USD","method":"ach"}',      # an object
]


@pytest.mark.parametrize("tool_input", REFUSED_BY_THE_SDK)
@pytest.mark.parametrize("asynchronous", [False, True])
def test_input_the_tool_runner_refuses_before_the_tool_runs_is_recorded(payments_build, tmp_path, tool_input,
                                                                         asynchronous):
    """Before: the SDK's validation raised before the guarded function was entered, so the model got the SDK's error
    and the log had nothing. Through require_guarded each such call is recorded as a refused call of its run, and the
    model is told the refusal; nothing runs."""
    import asyncio

    from anthropic import AsyncAnthropic
    from anthropic.lib.tools import beta_async_tool, beta_tool

    from tests.llm_fakes import ScriptedModel
    from tests.unit.test_integration_anthropic import client
    from veriguard.enforce.integrations.anthropic_sdk import guarded, require_guarded

    log, ran = tmp_path / "log.jsonl", []
    g = guard(payments_build, log=log)
    model = ScriptedModel(raw_reply(tool_input), DONE)
    if asynchronous:
        @beta_async_tool
        @guarded(g, context=lambda: CONTEXT)
        async def send_payment(recipient: str, amount_cents: int, currency: str, method: str = "ach") -> str:
            """Send a payment."""
            ran.append(amount_cents)
            return "sent"

        async def run() -> None:
            await client(model, AsyncAnthropic, httpx2.AsyncClient).beta.messages.tool_runner(
                model="claude-test", max_tokens=50, tools=require_guarded(g, [send_payment]),
                messages=[{"role": "user", "content": "Pay."}]).until_done()
        asyncio.run(run())
    else:
        @beta_tool
        @guarded(g, context=lambda: CONTEXT)
        def send_payment(recipient: str, amount_cents: int, currency: str, method: str = "ach") -> str:  # noqa: F811
            """Send a payment."""
            ran.append(amount_cents)
            return "sent"

        client(model).beta.messages.tool_runner(model="claude-test", max_tokens=50,
                                                tools=require_guarded(g, [send_payment]),
                                                messages=[{"role": "user", "content": "Pay."}]).until_done()
    got = records(log)
    assert ran == [] and len(got) == 1 and got[0]["allowed"] is False and got[0]["tool"] == "send_payment", got
    assert "the tool runner refused the input before send_payment() ran" in got[0]["fail_closed"]
    result = model.bodies[1]["messages"][-1]["content"][0]
    assert result["is_error"] is True and "Blocked by policy" in json.dumps(result["content"])


def test_calls_the_tool_function_refuses_itself_are_not_recorded_twice(payments_build, tmp_path):
    """The record is made only when the guarded function was never entered: a decided call (allowed or refused) has
    its one record, and an error the tool raises after the decision is the tool's, passed on as it is."""
    from anthropic.lib.tools import beta_tool

    from tests.llm_fakes import ScriptedModel
    from tests.unit.test_integration_anthropic import client
    from veriguard.enforce.integrations.anthropic_sdk import guarded, require_guarded

    log = tmp_path / "log.jsonl"
    g = guard(payments_build, log=log)

    @beta_tool
    @guarded(g, context=lambda: CONTEXT)
    def send_payment(recipient: str, amount_cents: int, currency: str, method: str = "ach") -> str:
        """Send a payment."""
        raise ValueError("the bank is closed")

    model = ScriptedModel(raw_reply(PAID % "45000"), raw_reply(PAID % "250000"), DONE)
    client(model).beta.messages.tool_runner(model="claude-test", max_tokens=50, tools=require_guarded(g, [send_payment]),
                                            messages=[{"role": "user", "content": "Pay."}]).until_done()
    assert [(r["allowed"], r["fail_closed"]) for r in records(log)] == [(True, ""), (False, "")]
    assert "the bank is closed" in json.dumps(model.bodies[1]["messages"][-1]["content"])


def test_a_context_that_fails_after_the_caller_gave_up_is_recorded_as_abandoned(payments_build, tmp_path):
    """The slow part of a decision may be reading the context; when that fails after the deadline, the refusal says
    the call was abandoned and is not counted in the run again (before: Guard.check took no `abandoned`)."""
    g = guard(payments_build, "replan_halt", halt_after=1, log=tmp_path / "log.jsonl")

    def context():
        raise OSError("the ledger is gone")
    late = g.check({"type": "tool_use", "name": "send_payment", "input": PAYMENT}, context=context,
                   abandoned=lambda: "the policy did not decide within 0.3 s")
    assert late.action == "abandoned" and late.record is not None and late.record.allowed is False
    assert late.record.fail_closed.startswith(ABANDONED) and "the ledger is gone" in late.record.fail_closed
    assert g.halted() == ""
