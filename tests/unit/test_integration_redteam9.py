"""Ninth red-team pass on the integrations (A29, 2026-11-30). Each test but those marked as benign controls failed on
e1e32b1:

- Agents: what ran was not always what the guardrail decided. A FunctionTool made by hand (its own on_invoke_tool)
  ran the text a hook rewrote after the decision (with policy_hooks: recorded, but it ran; without: no record), and so
  did a function tool whose hook also took away the SDK's prepared arguments; a hook that rewrote the call and dropped
  veriguard's decision, or a tool made with failure_error_function=None, left only the allow record. policy_hooks now
  put a DecidedInvoker in front of each guarded tool (its public on_invoke_tool) before the model is asked: a call runs
  only for the data allowed for that invocation, else it is refused, recorded, and the model told why. Without the
  hooks a tool made by hand is refused (nothing can hold it to the text decided);
- a hook that re-serialised the same JSON (key order, spacing) was refused (false refusal): it runs the data decided;
- hosted tools enabled in an agent's model settings (`extra_body={"tools": [...]}`) reached the provider past the
  hooks' check, and hosted calls in a Responses answer (web_search_call, code_interpreter_call) left no record;
- the guardrail read openai-agents 0.24's private names without saying so: another version now gets a clear error
  (env.agents_sdk) naming the version tested when the guardrail is made.
Real SDK code paths: the Agents SDK's chat-completions and responses models over httpx2.MockTransport."""
import asyncio
import copy
import json

import pytest

from tests.unit.test_guard import CONTEXT, OVER_LIMIT, PAYMENT, guard
from tests.unit.test_integration_redteam5 import records
from tests.unit.test_integration_redteam6 import responses_model, responses_reply
from tests.unit.test_integration_redteam8 import CHANGED_AFTER, pay, rewrite, told
from tests.unit.test_integration_unguarded import Script, agents_fixture, calls, run_agent
from tests.unit.test_integration_unguarded import model as agents_model
from tests.unit.test_monitor import payments_build  # noqa: F401  (fixture)


def hand_made(g, ran, **kw):
    """send_payment as a FunctionTool built directly (not by @function_tool): its function reads the JSON text; `kw`
    go to FunctionTool (needs_approval=True)."""
    from agents import FunctionTool

    from veriguard.enforce.integrations.openai_agents import policy_guardrail

    async def invoke(ctx, text):
        ran.append(json.loads(text)["amount_cents"])
        return "sent"
    return FunctionTool(name="send_payment", description="Send a payment.", params_json_schema=pay(g, []).params_json_schema,
                        on_invoke_tool=invoke, tool_input_guardrails=[policy_guardrail(g)], **kw)


def hooks_doing(step):
    """AgentHooks whose on_tool_start runs `step(context)` after the run hooks' (the SDK gathers both)."""
    from agents import AgentHooks

    class Doing(AgentHooks):
        async def on_tool_start(self, context, agent, tool):
            await asyncio.sleep(0)
            step(context)
    return Doing()


def without_hooks(agent):
    from agents import RunConfig, Runner

    return asyncio.run(Runner.run(agent, "Pay.", context=CONTEXT, run_config=RunConfig(tracing_disabled=True)))


def paying(tool, step, *replies):
    from agents import Agent

    script = Script(*(replies or [calls(("send_payment", PAYMENT))]))
    return Agent(name="payer", model=agents_model(script), tools=[tool], hooks=hooks_doing(step)), script


def rewrite_and_clear(context):
    rewrite(context)
    context._function_tool_arguments = None   # the SDK's prepared arguments taken away: it would validate the new text


def rewrite_and_forget(context):
    rewrite(context)
    context.__dict__.pop("veriguard_decided", None)


# --- Agents: what runs is what was decided -----------------------------------------------------------------------------
@pytest.mark.parametrize("made, step", [("by-hand", rewrite), ("function_tool", rewrite_and_clear),
                                        ("function_tool", rewrite_and_forget)],
                         ids=["hand-made", "prepared-taken-away", "decision-dropped"])
def test_a_call_rewritten_after_the_decision_does_not_run_and_is_recorded(payments_build, tmp_path, made, step):
    """Before: hand-made and prepared-taken-away paid 250000 under an allow of 45000; decision-dropped ran nothing but
    left the allow as the call's only record."""
    agents_fixture()
    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    agent, script = paying(hand_made(g, ran) if made == "by-hand" else pay(g, ran), step)
    run_agent(agent, g)
    assert ran == []
    assert [allowed for allowed, _ in records(log)] == [True, False]
    assert told(script).startswith("Not run by policy payments")


def test_with_failure_error_function_none_the_rewrite_is_recorded(payments_build, tmp_path):
    """Before: the SDK raised its UserError out of the run and the allow was the only record."""
    agents_fixture()
    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    agent, _ = paying(pay(g, ran, failure_error_function=None), rewrite)
    run_agent(agent, g)
    assert ran == [] and [(allowed, CHANGED_AFTER in why) for allowed, why in records(log)] == [(True, False), (False, True)]


def test_without_policy_hooks_a_tool_made_by_hand_is_refused(payments_build, tmp_path):
    """Nothing holds a tool made by hand to the text decided without the hooks. Before: a rewrite paid 250000 with no
    record but the allow."""
    agents_fixture()
    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    agent, script = paying(hand_made(g, ran), rewrite)
    without_hooks(agent)
    assert ran == [] and [allowed for allowed, _ in records(log)] == [False]
    assert "policy_hooks" in told(script)


def test_a_guarded_tool_invoked_directly_by_another_tool_is_refused(payments_build, tmp_path):
    """A tool function (let through undecided on purpose) that calls a guarded tool's on_invoke_tool with its own
    context: no guardrail decided that invocation. Before: send_payment(250000) ran undecided (open after A28)."""
    agents_fixture()
    from agents import Agent, function_tool
    from agents.tool_context import ToolContext

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    target = pay(g, ran)

    async def lookup_invoice(ctx: ToolContext, number: str) -> str:
        """Look an invoice up."""
        return str(await target.on_invoke_tool(ctx, json.dumps(OVER_LIMIT)))
    agent = Agent(name="payer", model=agents_model(Script(calls(("lookup_invoice", {"number": "7"})))),
                  tools=[function_tool(lookup_invoice), target])
    run_agent(agent, g, unguarded=["lookup_invoice"])
    assert ran == [] and [allowed for allowed, _ in records(log)] == [False]


def test_a_check_that_raises_inside_the_invoker_refuses_with_a_record(payments_build, tmp_path, monkeypatch):
    agents_fixture()
    from veriguard.enforce.integrations import openai_agents

    def broken(left, right):
        raise RuntimeError("cannot compare")
    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    agent, script = paying(pay(g, ran), lambda context: setattr(context.tool_call, "arguments", json.dumps(
        PAYMENT, sort_keys=True)))
    monkeypatch.setattr(openai_agents, "same_json", broken)
    run_agent(agent, g)
    assert ran == [] and [allowed for allowed, _ in records(log)] == [True, False]
    assert "the check of this invocation failed" in told(script)


def test_an_invoker_a_hook_swapped_in_after_the_decision_is_recorded(payments_build, tmp_path):
    """A hook that replaces the tool's on_invoke_tool after the decision runs its own code, which A33 holds to the data
    decided (a DecidedInvoker put in front of it: test_integration_redteam13): it runs the call decided, and the allow
    is its record. Before A33 it was not held, and a refusal was recorded after it had run."""
    agents_fixture()
    from agents import Agent, AgentHooks

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []

    async def other(ctx, text):
        ran.append(json.loads(text)["amount_cents"])
        return "sent"

    class Swapping(AgentHooks):
        async def on_tool_start(self, context, agent, tool):
            tool.on_invoke_tool = other
    run_agent(Agent(name="payer", model=agents_model(Script(calls(("send_payment", PAYMENT)))), tools=[pay(g, ran)],
                    hooks=Swapping()), g)
    assert ran == [45000] and [allowed for allowed, _ in records(log)] == [True]


@pytest.mark.parametrize("form", ["sort_keys", "indent", "compact", "reversed", "escaped"])
@pytest.mark.parametrize("made", ["function_tool", "by-hand"])
def test_benign_the_same_json_written_otherwise_runs(payments_build, tmp_path, form, made):
    """Before: a hook that re-serialised the arguments (the same data) got the function tool's call refused (the SDK
    compared the text), and the hand-made tool's call recorded as rewritten."""
    agents_fixture()

    def rewritten(context):
        data = json.loads(context.tool_call.arguments)
        context.tool_call.arguments = {
            "sort_keys": lambda: json.dumps(data, sort_keys=True), "indent": lambda: json.dumps(data, indent=2),
            "compact": lambda: json.dumps(data, separators=(",", ":")),
            "reversed": lambda: json.dumps(dict(reversed(list(data.items())))),
            "escaped": lambda: json.dumps(data).replace("acme", "\\u0061cme")}[form]()
    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    agent, _ = paying(pay(g, ran) if made == "function_tool" else hand_made(g, ran), rewritten)
    run_agent(agent, g)
    assert ran == [45000] and records(log) == [(True, "")]


@pytest.mark.parametrize("text", [json.dumps({**PAYMENT, "amount_cents": 45000.0}), json.dumps({**PAYMENT, "extra": None}),
                                  json.dumps(PAYMENT)[:-1] + ', "amount_cents": 250000}', json.dumps(PAYMENT)[:-1] + " "],
                         ids=["int-as-float", "key-added", "duplicate-key", "cut"])
def test_json_of_other_data_is_not_the_same(payments_build, tmp_path, text):
    """45000.0 for 45000, a key added, a duplicate key (json.loads reads the last: 250000) or a cut text is other data
    than the text decided: not run, recorded. Before: the tool made by hand ran each."""
    agents_fixture()
    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    agent, _ = paying(hand_made(g, ran), lambda context: setattr(context.tool_call, "arguments", text))
    run_agent(agent, g)
    assert ran == [] and [(allowed, CHANGED_AFTER in why) for allowed, why in records(log)] == [(True, False), (False, True)]


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_benign_a_tool_made_by_hand_runs_behind_the_hooks(payments_build, tmp_path, api):
    agents_fixture()
    from agents import Agent

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    model = agents_model(Script(calls(("send_payment", PAYMENT)), calls(("send_payment", OVER_LIMIT)))) \
        if api == "chat" else responses_model(responses_reply(("send_payment", PAYMENT)),
                                              responses_reply(("send_payment", OVER_LIMIT)))
    run_agent(Agent(name="payer", model=model, tools=[hand_made(g, ran)]), g)
    assert ran == [45000] and [allowed for allowed, _ in records(log)] == [True, False]


@pytest.mark.parametrize("how", ["copy", "clone", "approval"])
def test_benign_copies_and_approval_checked_tools_still_run(payments_build, tmp_path, how):
    """A copied tool (copy.copy, Agent.clone) is held by its own copy of the invoker; a tool with a callable
    needs_approval (the SDK compares the invoker it planned with) runs its parallel calls, one at a time."""
    agents_fixture()
    from agents import Agent

    async def never(ctx, params, call_id):
        return False
    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    tool = pay(g, ran, needs_approval=never) if how == "approval" else pay(g, ran)
    base = Agent(name="payer", model=agents_model(Script(calls(("send_payment", PAYMENT), ("send_payment", PAYMENT)))),
                 tools=[tool])
    run_agent(base.clone(tools=[copy.copy(tool)]) if how == "copy" else base.clone() if how == "clone" else base, g)
    assert ran == [45000] and [allowed for allowed, _ in records(log)] == [True, False]


# --- Agents: hosted tools from outside the agent's list -------------------------------------------------------------------
def test_hosted_tools_in_an_agents_model_settings_are_refused_before_the_model_is_asked(payments_build, tmp_path):
    """Before: `extra_body={"tools": [{"type": "web_search"}]}` sent OpenAI's hosted web search with the request."""
    agents_fixture()
    from agents import Agent, ModelSettings

    from veriguard.enforce.integrations.openai_agents import UnguardedTools

    log = tmp_path / "log.jsonl"
    g = guard(payments_build, log=log)
    agent = Agent(name="payer", model=responses_model(responses_reply(text="Done.")), tools=[pay(g, [])],
                  model_settings=ModelSettings(extra_body={"tools": [{"type": "web_search"}]}))
    with pytest.raises(UnguardedTools, match="model settings"):
        run_agent(agent, g)
    assert [allowed for allowed, _ in records(log)] == [False]
    assert run_agent(agent, g, unguarded=["model_settings"]).final_output == "Done."   # let through on purpose


@pytest.mark.parametrize("unguarded, recorded", [((), ["web_search_call", "code_interpreter_call"]),
                                                 (("web_search", "code_interpreter"), [])],
                         ids=["recorded", "named-in-unguarded"])
def test_hosted_calls_in_a_responses_answer_are_recorded(payments_build, tmp_path, unguarded, recorded):
    """Before: a web_search_call and a code_interpreter_call the provider ran (enabled outside the agent's tools: a
    RunConfig's model settings, which the hooks cannot see) left no record."""
    agents_fixture()
    from agents import Agent

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    answer = responses_reply(("send_payment", PAYMENT))
    answer["output"][:0] = [
        {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "acme"}},
        {"type": "code_interpreter_call", "id": "ci_1", "status": "completed", "code": "print(1)", "container_id": "c",
         "outputs": []}]
    run_agent(Agent(name="payer", model=responses_model(answer), tools=[pay(g, ran)]), g, unguarded=unguarded)
    from veriguard.enforce.decision_log import DecisionLog

    assert ran == [45000]
    assert [r["tool"] for r in DecisionLog(log).records() if not r["allowed"]] == recorded


# --- the SDK version the guardrail reads ----------------------------------------------------------------------------------
@pytest.mark.parametrize("lacks", ["prepared", "invoke-context"])
def test_an_sdk_without_the_names_read_gets_a_clear_error_naming_the_version_tested(payments_build, monkeypatch, lacks):
    agents_fixture()
    import agents.tool

    from veriguard.enforce.integrations import openai_agents

    if lacks == "prepared":
        monkeypatch.setattr(openai_agents, "PreparedFunctionArguments", None)
    else:
        monkeypatch.delattr(agents.tool, "_get_function_tool_invoke_context")
    openai_agents.sdk_unreadable.cache_clear()
    try:
        with pytest.raises(openai_agents.AgentsSdkUnsupported, match="tested with openai-agents 0.24") as raised:
            openai_agents.policy_guardrail(guard(payments_build))
        assert raised.value.code == "env.agents_sdk" and raised.value.exit_code == 3
    finally:
        monkeypatch.undo()
        openai_agents.sdk_unreadable.cache_clear()
    openai_agents.policy_guardrail(guard(payments_build))   # the installed SDK has them


def test_benign_an_agent_called_as_a_tool_with_the_guardrail_still_runs(payments_build, tmp_path):
    """An agent tool carrying the guardrail is no tool made by hand: its input is a prompt, and the nested run's own
    tools are decided (policy_agent_tool). Shadow mode: the payments policy denies any tool but send_payment."""
    agents_fixture()
    from agents import Agent

    from veriguard.enforce.integrations.openai_agents import policy_agent_tool, policy_guardrail

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log, mode="shadow"), []
    inner = Agent(name="treasury", model=agents_model(Script(calls(("send_payment", PAYMENT)))), tools=[pay(g, ran)])
    ask = policy_agent_tool(inner, g, tool_name="ask", tool_description="Ask the treasury.")
    ask.tool_input_guardrails = [policy_guardrail(g)]
    run_agent(Agent(name="payer", model=agents_model(Script(calls(("ask", {"input": "pay acme"})))), tools=[ask]), g)
    assert ran == [45000] and not [why for _, why in records(log) if "made by hand" in why]


def test_a_run_resumed_with_an_agent_made_anew_holds_its_tools_with_hold_tools(payments_build, tmp_path):
    """Runner.run(agent, state) runs the approved calls before any hook, so a tool made by hand in an agent made anew
    is not held yet: refused, recorded, naming hold_tools; after hold_tools(agent, guard) the approved call runs.
    Guards the refusal of an unheld tool made by hand against a false refusal with no way out."""
    agents_fixture()
    from agents import Agent, RunConfig, Runner, RunState

    from veriguard.enforce.integrations.openai_agents import hold_tools, policy_hooks

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []

    def agent_anew():
        return Agent(name="payer", model=agents_model(Script(calls(("send_payment", PAYMENT)))),
                     tools=[hand_made(g, ran, needs_approval=True)])

    async def resumed(hold):
        config = RunConfig(tracing_disabled=True)
        first = await Runner.run(agent_anew(), "Pay.", context=CONTEXT, hooks=policy_hooks(g), run_config=config)
        agent = agent_anew()
        state = await RunState.from_string(agent, first.to_state().to_string())
        for item in state.get_interruptions():
            state.approve(item)
        if hold:
            hold_tools(agent, g)
        return await Runner.run(agent, state, hooks=policy_hooks(g), run_config=config)
    asyncio.run(resumed(False))
    assert ran == [] and [("hold_tools" in why) for _, why in records(log)] == [True]
    asyncio.run(resumed(True))
    assert ran == [45000] and [allowed for allowed, _ in records(log)] == [False, True]


# --- Anthropic: counting tokens runs nothing ------------------------------------------------------------------------------
@pytest.mark.parametrize("beta", [False, True])
def test_benign_counting_the_tokens_of_a_request_with_a_server_tool_is_not_refused(payments_build, beta):
    """Before: refuse_provider_tools and refuse_undecided_tools refused messages.count_tokens naming web search, though
    the endpoint runs nothing. Sending the same request to messages.create is still refused."""
    import httpx2

    from tests.llm_fakes import ScriptedModel
    from tests.unit.test_integration_redteam4 import USER, WEB_SEARCH, hooked
    from veriguard.enforce.integrations.anthropic_sdk import ProviderToolsRefused, refuse_undecided_tools

    for hook in (None, refuse_undecided_tools(guard(payments_build))):
        model = ScriptedModel(httpx2.Response(200, json={"input_tokens": 12}))
        messages = (lambda c: c.beta.messages if beta else c.messages)(hooked(model, hook))
        assert messages.count_tokens(model="c", messages=USER, tools=[WEB_SEARCH]).input_tokens == 12
        with pytest.raises(ProviderToolsRefused):
            messages.create(model="c", max_tokens=9, messages=USER, tools=[WEB_SEARCH])
        assert len(model.bodies) == 1
