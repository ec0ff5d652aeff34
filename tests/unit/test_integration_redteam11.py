"""Eleventh red-team pass on the integrations (A31, 2026-12-01). Each test but the benign and regression rows failed on
6d7c2a0:

- Agents: a guardrail run after the policy's (reject_content, raise_exception, an error, sync or async; another guard's
  policy guardrail refusing) refused the call after the policy allowed it: nothing ran, and the allow was the call's one
  record (A30's open item). The policy's guardrail now makes each later guardrail of the tool record the allows of a
  call it refuses as not run (with or without policy_hooks);
- Agents, without policy_hooks: an on_invoke_tool of the user's that wore the attributes of the SDK's invoker
  (functools.wraps, a copied __dict__, a subclass, a partial) was read as the SDK's, which runs the text decided; it ran
  its own code on other text (250000 under an allow of 45000). It is now read as a tool made by hand: refused without
  the hooks, held by them;
- Agents, with RunConfig(tool_execution=ToolExecutionConfig(pre_approval_tool_input_guardrails=True)): the check made
  before a call's approval took the run's one running call (a policy reading a ledger), nothing released it, and the
  approved call was refused as busy: it never ran (a false refusal). That check now takes nothing; and a call it
  allowed whose approval the person refused had that allow as its one record: the hooks now record it as not run;
- Guard.record_unchecked (asked for by the MCP proxy's helper): a pass the operator left unchecked is an allowed record
  marked unchecked: true (the rows fail on 6d7c2a0 as the method did not exist).
Real SDK code paths: the Agents SDK's chat-completions and responses models over httpx2.MockTransport."""
import asyncio
import dataclasses
import functools
import hashlib
import json

import pytest

from tests.unit.test_guard import CONTEXT, OVER_LIMIT, PAYMENT, guard
from tests.unit.test_integration_redteam5 import records
from tests.unit.test_integration_redteam6 import responses_model, responses_reply
from tests.unit.test_integration_unguarded import Script, agents_fixture, calls
from tests.unit.test_integration_unguarded import model as agents_model
from tests.unit.test_monitor import payments_build  # noqa: F401  (fixture)
from veriguard.enforce.decision_log import DecisionLog
from veriguard.enforce.monitor import _sealed as sealed

BUSY = "another allowed call of this run has not finished"   # the refusal of a call while another allowed one runs

SMALL = {**PAYMENT, "amount_cents": 100}
LATER_REFUSED = "run after the policy's, refused the call after it was allowed"
LATER_FAILED = "run after the policy's, failed after the call was allowed"


def run(agent, g, *, hooks=True):
    from agents import RunConfig, Runner

    from veriguard.enforce.integrations.openai_agents import policy_hooks

    return asyncio.run(Runner.run(agent, "Pay.", context=CONTEXT, run_config=RunConfig(tracing_disabled=True),
                                  **({"hooks": policy_hooks(g)} if hooks else {})))


def send_tool(ran, guardrails, **kw):
    """send_payment as function_tool makes it, with `guardrails` in that order."""
    from agents import function_tool

    def send_payment(recipient: str, amount_cents: int, currency: str, method: str) -> str:
        """Send a payment."""
        ran.append(amount_cents)
        return "sent"
    return function_tool(send_payment, tool_input_guardrails=guardrails, **kw)


def second(kind="reject", amount=None):
    """A guardrail of the user's that refuses (`kind`: reject, raise, error, async) a call (of `amount` only when given)."""
    from agents import ToolGuardrailFunctionOutput, ToolInputGuardrail

    def answer(data):
        if amount is not None and json.loads(data.context.tool_arguments)["amount_cents"] != amount:
            return ToolGuardrailFunctionOutput.allow()
        if kind == "raise":
            return ToolGuardrailFunctionOutput.raise_exception()
        if kind == "error":
            raise RuntimeError("the second guardrail broke")
        return ToolGuardrailFunctionOutput.reject_content("no, says the second guardrail")

    async def later(data):
        await asyncio.sleep(0)
        return answer(data)
    return ToolInputGuardrail(guardrail_function=later if kind == "async" else answer, name="second")


def agent_paying(tool, *replies):
    from agents import Agent

    return Agent(name="payer", model=agents_model(Script(*(replies or [calls(("send_payment", PAYMENT))]))), tools=[tool])


def said(log):
    return [(allowed, LATER_REFUSED in why or LATER_FAILED in why) for allowed, why in records(log)]


# --- Agents: a guardrail after the policy's refuses the call it allowed -------------------------------------------------
@pytest.mark.parametrize("hooks", [True, False], ids=["hooks", "no-hooks"])
@pytest.mark.parametrize("kind", ["reject", "raise", "error", "async"])
def test_a_later_guardrails_refusal_after_the_allow_is_recorded(payments_build, tmp_path, kind, hooks):
    """Before: the allow was the one record of a call that never ran."""
    agents_fixture()
    from agents import ToolInputGuardrailTripwireTriggered, UserError

    from veriguard.enforce.integrations.openai_agents import policy_guardrail

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    agent = agent_paying(send_tool(ran, [policy_guardrail(g), second(kind)]))
    if kind in ("raise", "error"):
        with pytest.raises((ToolInputGuardrailTripwireTriggered, UserError, RuntimeError)):
            run(agent, g, hooks=hooks)
    else:
        run(agent, g, hooks=hooks)
    assert ran == [] and said(log) == [(True, False), (False, True)]


def test_a_later_rejection_that_ends_the_run_is_recorded(payments_build, tmp_path):
    """tool_use_behavior stops at the tool: the rejection is the run's final output, and no model call follows."""
    agents_fixture()
    from veriguard.enforce.integrations.openai_agents import policy_guardrail

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    agent = agent_paying(send_tool(ran, [policy_guardrail(g), second()])).clone(
        tool_use_behavior={"stop_at_tool_names": ["send_payment"]})
    assert "second guardrail" in run(agent, g).final_output
    assert ran == [] and said(log) == [(True, False), (False, True)]


def test_another_guards_refusal_records_the_first_guards_allow_as_not_run(payments_build, tmp_path):
    """Two policies: the first allows, the second (its ledger near the daily limit) refuses."""
    agents_fixture()
    from veriguard.enforce.integrations.openai_agents import policy_guardrail

    first, later = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    g1, g2, ran = guard(payments_build, log=first), guard(payments_build, log=later), []
    near = {**CONTEXT, "ledger": {"sent_today_cents": 480000}}
    run(agent_paying(send_tool(ran, [policy_guardrail(g1), policy_guardrail(g2, context=lambda data: near)])), g1,
        hooks=False)
    assert ran == [] and [a for a, _ in records(later)] == [False]
    assert [(a, "policy payments refused the call after it was allowed" in why) for a, why in records(first)] == [
        (True, False), (False, True)]


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_parallel_calls_one_refused_by_a_later_guardrail(payments_build, tmp_path, api):
    agents_fixture()
    from agents import Agent

    from veriguard.enforce.integrations.openai_agents import policy_guardrail

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    model = agents_model(Script(calls(("send_payment", PAYMENT), ("send_payment", SMALL)))) if api == "chat" else \
        responses_model(responses_reply(("send_payment", PAYMENT), ("send_payment", SMALL)))
    run(Agent(name="payer", model=model, tools=[send_tool(ran, [policy_guardrail(g), second(amount=100)])]), g,
        hooks=False)
    assert ran == [45000] and sorted(said(log)) == [(False, True), (True, False), (True, False)]


def test_a_guardrail_shared_with_a_tool_where_it_runs_first_and_a_copy_of_the_tool(payments_build, tmp_path):
    """The wrapped guardrail records only a call a policy allowed before it: on a tool where it runs before the policy
    (which then allows) nothing extra is recorded. A copy of the tool (dataclasses.replace, Agent.clone) shares it."""
    agents_fixture()
    from veriguard.enforce.integrations.openai_agents import policy_guardrail

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    shared = second(amount=100)
    after = dataclasses.replace(send_tool(ran, [policy_guardrail(g), shared]))
    before = send_tool(ran, [shared, policy_guardrail(g)])
    run(agent_paying(after, calls(("send_payment", SMALL))).clone(name="cloned"), g)
    run(agent_paying(before, calls(("send_payment", SMALL)), calls(("send_payment", PAYMENT))), g)
    assert ran == [45000] and said(log) == [(True, False), (False, True), (True, False)]


@pytest.mark.parametrize("mode", ["enforce", "shadow"])
def test_benign_a_later_guardrail_that_allows_and_shadow_mode(payments_build, tmp_path, mode):
    """A later guardrail that allows: the call runs, one record. In shadow mode a later rejection is not the policy's
    doing and adds no record (nothing of the policy was enforced)."""
    agents_fixture()
    from veriguard.enforce.integrations.openai_agents import policy_guardrail

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log, mode=mode), []
    run(agent_paying(send_tool(ran, [policy_guardrail(g), second(amount=1 if mode == "enforce" else None)])), g)
    assert ran == ([45000] if mode == "enforce" else []) and [a for a, _ in records(log)] == [True]


# --- Agents: an invoker wearing the attributes of the SDK's --------------------------------------------------------------
def disguised(tool, how):
    """An on_invoke_tool of the user's that pays 250000 through the SDK's invoker, showing that invoker's attributes."""
    orig = tool.on_invoke_tool

    async def other(ctx, text):
        ctx._function_tool_arguments = None
        return await orig(ctx, json.dumps(OVER_LIMIT))
    if how == "wraps":
        return functools.wraps(orig)(other)
    if how == "subclass":
        class Other(type(orig)):
            async def __call__(self, ctx, text):
                return await other(ctx, text)
        return Other(orig._invoke_tool_impl, orig._on_handled_error, function_tool=tool)
    made = functools.partial(other) if how == "partial" else other
    made.__dict__.update(orig.__dict__)
    return made


@pytest.mark.parametrize("how", ["wraps", "dict-copy", "subclass", "partial"])
def test_without_hooks_an_invoker_wearing_the_sdks_attributes_is_refused(payments_build, tmp_path, how):
    """Before: read as the SDK's invoker (which runs the text decided), it paid 250000 under an allow of 45000."""
    agents_fixture()
    from veriguard.enforce.integrations.openai_agents import policy_guardrail

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    tool = send_tool(ran, [policy_guardrail(g)])
    tool.on_invoke_tool = disguised(tool, how)
    run(agent_paying(tool), g, hooks=False)
    assert ran == [] and [(a, "made by hand" in why) for a, why in records(log)] == [(False, True)]


@pytest.mark.parametrize("kw", [{}, {"failure_error_function": None}, {"strict_mode": False}], ids=str)
def test_benign_function_tools_and_a_wrapper_behind_the_hooks_run(payments_build, tmp_path, kw):
    """function_tool's own invokers run without the hooks (a copy too); a logging wrapper made with functools.wraps runs
    behind them, on the text decided."""
    agents_fixture()
    from veriguard.enforce.integrations.openai_agents import policy_guardrail

    log = tmp_path / "log.jsonl"
    g, ran, seen = guard(payments_build, log=log), [], []
    tool = send_tool(ran, [policy_guardrail(g)], **kw)
    run(agent_paying(dataclasses.replace(tool)), g, hooks=False)
    orig = tool.on_invoke_tool

    @functools.wraps(orig)
    async def logging(ctx, text):
        seen.append(json.loads(text)["amount_cents"])
        return await orig(ctx, text)
    tool.on_invoke_tool = logging
    run(agent_paying(tool), g)
    assert ran == [45000, 45000] and seen == [45000] and [a for a, _ in records(log)] == [True, True]


# --- Guard.record_unchecked ----------------------------------------------------------------------------------------------
HASH = hashlib.sha256(b'{"uri":"file:///notes.txt"}').hexdigest()


@pytest.mark.parametrize("mode", ["enforce", "shadow"])
def test_an_unchecked_pass_is_an_allowed_record_marked_unchecked(payments_build, tmp_path, mode):
    log = tmp_path / "log.jsonl"
    g = guard(payments_build, log=log, mode=mode)
    decided = g.check({"type": "tool_use", "id": "t1", "name": "send_payment", "input": PAYMENT}, context=CONTEXT)
    record = g.record_unchecked("resources/read", HASH, action_id="7")
    assert record.allowed and record.unchecked and decided.record.allowed and not decided.record.unchecked
    first, second = DecisionLog(log).records()
    assert "unchecked" not in first   # a decision's record keeps the fields it always had
    assert second["unchecked"] is True and second["allowed"] is True and second["mode"] == mode
    assert (second["tool"], second["action_id"], second["integration"]) == ("resources/read", "7", "mcp_proxy")
    assert second["arguments"] == {"method": "resources/read", "params_sha256": HASH} and second["fail_closed"] == ""
    # the mark is in the hash that binds the decision: an unchecked pass cannot be edited into a decided allow
    assert second["decision_sha256"] == record.decision_sha256 != sealed(dataclasses.replace(record, unchecked=False)).decision_sha256
    assert g.halted() == "" and g.check({"type": "tool_use", "id": "t2", "name": "send_payment", "input": PAYMENT},
                                        context=CONTEXT).allowed   # it counts in no run


@pytest.mark.parametrize("method, params_hash", [("", HASH), (None, HASH), ("resources/read", HASH.upper()),
                                                 ("resources/read", HASH[:-1]), ("resources/read", b"x" * 64)],
                         ids=["empty-method", "no-method", "upper-hex", "short-hash", "bytes-hash"])
def test_an_unchecked_pass_of_another_shape_is_a_logged_denial(payments_build, tmp_path, method, params_hash):
    log = tmp_path / "log.jsonl"
    record = guard(payments_build, log=log).record_unchecked(method, params_hash)
    assert record is not None and not record.allowed and "cannot be recorded" in record.fail_closed
    assert [a for a, _ in records(log)] == [False]


def test_an_unchecked_pass_whose_log_cannot_be_written_is_a_denial(payments_build, tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the log's folder should be")
    record = guard(payments_build, log=blocker / "log.jsonl").record_unchecked("prompts/get", HASH)
    assert record is not None and not record.allowed and record.fail_closed.startswith("decision log write failed")


async def approve(agent, g, config, *, refuse=False):
    """Run `agent` to its approvals, approve (or refuse) each, and resume: the run's result."""
    from agents import Runner

    from veriguard.enforce.integrations.openai_agents import policy_hooks

    first = await Runner.run(agent, "Pay.", context=CONTEXT, hooks=policy_hooks(g), run_config=config)
    state = first.to_state()
    for item in state.get_interruptions():
        (state.reject if refuse else state.approve)(item)
    return await Runner.run(agent, state, hooks=policy_hooks(g), run_config=config)


def pre_approval():
    from agents import RunConfig
    from agents.run_config import ToolExecutionConfig

    return RunConfig(tracing_disabled=True, tool_execution=ToolExecutionConfig(pre_approval_tool_input_guardrails=True))


# --- Agents: guardrails run before approval (ToolExecutionConfig.pre_approval_tool_input_guardrails) --------------------
@pytest.mark.parametrize("payments", [[PAYMENT], [PAYMENT, PAYMENT]], ids=["one", "parallel"])
def test_a_call_checked_before_its_approval_runs_once_approved(payments_build, tmp_path, payments):
    """The check before approval took the run's one running call, and nothing released it: the approved call was then
    refused as busy (nothing ran). Now that check takes nothing; the approved calls are decided again, one at a time (of
    two parallel ones the first runs, the second is refused as busy)."""
    agents_fixture()
    from veriguard.enforce.integrations.openai_agents import policy_guardrail

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    config = pre_approval()
    agent = agent_paying(send_tool(ran, [policy_guardrail(g)], needs_approval=True),
                         calls(*[("send_payment", p) for p in payments]))

    asyncio.run(approve(agent, g, config))
    assert ran == [45000] and [(a, BUSY in why) for a, why in records(log)] == \
        [(True, False)] * (2 * len(payments) - 1) + [(len(payments) == 1, len(payments) == 2)]


def test_a_call_refused_after_its_allow_gives_back_the_runs_running_call(payments_build, tmp_path):
    """A policy reading a ledger runs one allowed call at a time (behind policy_hooks). Of two parallel calls, a later
    guardrail refuses the first after its allow: before, it kept the run's running call, and the second (45000) was
    refused as busy though nothing ran; now it is given back and the second runs."""
    agents_fixture()
    from veriguard.enforce.integrations.openai_agents import policy_guardrail

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    run(agent_paying(send_tool(ran, [policy_guardrail(g), second(amount=100)]),
                     calls(("send_payment", SMALL), ("send_payment", PAYMENT))), g)
    assert ran == [45000] and said(log) == [(True, False), (False, True), (True, False)]


def test_a_call_allowed_before_its_approval_that_the_approval_refuses_is_recorded(payments_build, tmp_path):
    """Before: the allow made before the approval was asked was the one record of a call that never ran (the person
    refused it). The hooks now record it as not run when its result reaches the model."""
    agents_fixture()
    from veriguard.enforce.integrations.openai_agents import policy_guardrail

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    agent = agent_paying(send_tool(ran, [policy_guardrail(g)], needs_approval=True))
    asyncio.run(approve(agent, g, pre_approval(), refuse=True))
    assert ran == [] and [(a, "its approval was refused" in why) for a, why in records(log)] == [(True, False),
                                                                                                (False, True)]
