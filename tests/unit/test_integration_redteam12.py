"""Twelfth red-team pass on the integrations (A32, 2026-12-01). Each test but the benign rows failed on c1d7034:

- Agents, with RunConfig(tool_execution=ToolExecutionConfig(pre_approval_tool_input_guardrails=True)): the check the SDK
  makes before asking for a call's approval took the run's one running call (a policy reading a ledger) when the tool's
  needs_approval was a function, or the tool had a namespace, and the approved call was then refused as busy (a false
  refusal; A31 left it open); a call so allowed whose approval the person refused had the allow as its one record. The
  SDK marks a call executed before the guardrails of the pass that runs it, never before the check before approval:
  that mark is read now, for any needs_approval and any namespace; a call that runs still takes the running call;
- Agents, without policy_hooks: an on_tool_start of the agent's own hooks that raised, or was cancelled
  (asyncio.wait_for around the run), after the allow left the allow as the one record of a call that never ran. The
  guardrail now makes the agent's hooks record it at the allow, as policy_hooks did before each model call;
- Agents: a RunConfig's model settings that send hosted tools (extra_body tools, chat's web_search_options, hosted MCP)
  ran them at every model call, and the function calls of that run ran as if nothing was there (the hooks cannot see a
  RunConfig). The guardrail, the first point that sees the RunConfig, refuses each call of such a run, recorded; and
  model settings keys naming a search or functions (web_search_options) now count as tools, in an agent's settings too;
- Anthropic: a tool runner given a server tool (web search, code execution), MCP servers or extra_body tools, with no
  request hook and no require_guarded, sent them (the server tool ran: server_tool_use in the reply) and ran the guarded
  call as if nothing else was there. The guarded function, the first to see the runner's request, refuses it, recorded.
Real SDK code paths: the Agents SDK's chat-completions and responses models, and the Anthropic client and its tool
runner (sync and async), over httpx2.MockTransport."""
import asyncio
import contextlib

import httpx2
import pytest

from tests.llm_fakes import ScriptedModel
from tests.unit.test_guard import CONTEXT, PAYMENT, guard
from tests.unit.test_integration_anthropic import async_payments_tool, client, payments_tool, tool_results, \
    tool_use_reply
from tests.unit.test_integration_redteam5 import records
from tests.unit.test_integration_redteam6 import responses_model, responses_reply
from tests.unit.test_integration_redteam10 import NOT_RUN_AFTER_RAISE, run_configured
from tests.unit.test_integration_redteam11 import BUSY, agent_paying, approve, pre_approval, run, send_tool
from tests.unit.test_integration_unguarded import Script, agents_fixture, calls, reply
from tests.unit.test_integration_unguarded import model as agents_model
from tests.unit.test_monitor import payments_build  # noqa: F401  (fixture)


async def asks_approval(context, params, call_id):
    return True


async def asks_none(context, params, call_id):
    return False


def busy(log):
    return [(allowed, BUSY in why) for allowed, why in records(log)]


# --- Agents: the check before approval (pre_approval_tool_input_guardrails) ---------------------------------------------
@pytest.mark.parametrize("payments", [[PAYMENT], [PAYMENT, PAYMENT]], ids=["one", "parallel"])
def test_a_call_whose_needs_approval_is_a_function_runs_once_approved(payments_build, tmp_path, payments):
    """Before: the approved call was refused as busy (nothing ran). Of two parallel approved calls the first runs and the
    second is refused as busy: the check before approval no longer holds the running call, and a call that runs does."""
    agents_fixture()
    from veriguard.enforce.integrations.openai_agents import policy_guardrail

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    agent = agent_paying(send_tool(ran, [policy_guardrail(g)], needs_approval=asks_approval),
                         calls(*[("send_payment", p) for p in payments]))
    asyncio.run(approve(agent, g, pre_approval()))
    assert ran == [45000] and busy(log) == [(True, False)] * (2 * len(payments) - 1) + [
        (len(payments) == 1, len(payments) == 2)]


def test_a_namespaced_tool_runs_once_approved(payments_build, tmp_path):
    """tool_namespace(): the SDK checks the call by its namespaced name; before, the approved call was refused as busy."""
    agents_fixture()
    from agents import Agent, tool_namespace

    from veriguard.enforce.integrations.openai_agents import policy_guardrail

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    reply = responses_reply(("send_payment", PAYMENT))
    reply["output"][0]["namespace"] = "billing"
    tools = tool_namespace(name="billing", description="Billing tools.",
                           tools=[send_tool(ran, [policy_guardrail(g)], needs_approval=True)])
    asyncio.run(approve(Agent(name="payer", model=responses_model(reply), tools=tools), g, pre_approval()))
    assert ran == [45000] and busy(log) == [(True, False), (True, False)]


def test_a_refused_approval_of_a_call_whose_needs_approval_is_a_function_is_recorded(payments_build, tmp_path):
    """Before: the allow made before the approval was asked was the one record of a call the person refused."""
    agents_fixture()
    from veriguard.enforce.integrations.openai_agents import policy_guardrail

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    asyncio.run(approve(agent_paying(send_tool(ran, [policy_guardrail(g)], needs_approval=asks_approval)), g,
                        pre_approval(), refuse=True))
    assert ran == [] and [(a, "its approval was refused" in why) for a, why in records(log)] == [(True, False),
                                                                                                (False, True)]


def test_benign_a_call_that_needs_no_approval_still_takes_the_running_call(payments_build, tmp_path):
    """The pre-approval setting on, needs_approval a function that says no: each call runs at once, so its check takes
    the running call (two parallel calls: the first runs, the second is refused as busy, as without the setting)."""
    agents_fixture()
    from agents import Runner

    from veriguard.enforce.integrations.openai_agents import policy_guardrail, policy_hooks

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    agent = agent_paying(send_tool(ran, [policy_guardrail(g)], needs_approval=asks_none),
                         calls(("send_payment", PAYMENT), ("send_payment", PAYMENT)))
    asyncio.run(Runner.run(agent, "Pay.", context=CONTEXT, hooks=policy_hooks(g), run_config=pre_approval()))
    assert ran == [45000] and busy(log) == [(True, False), (False, True)]


# --- Agents: the agent's own on_tool_start raises or is cancelled after the allow, without policy_hooks -----------------
def stopping_hooks(how, entered):
    """Agent hooks whose on_tool_start raises CancelledError (`how` "raise") or waits to be cancelled (it sets `entered`,
    an asyncio.Event, first)."""
    from agents import AgentHooks

    class Hooks(AgentHooks):
        async def on_tool_start(self, context, agent, tool):
            if how == "raise":
                raise asyncio.CancelledError()
            entered.set()
            await asyncio.sleep(60)
    return Hooks()


@pytest.mark.parametrize("how", ["raise", "cancel"])
def test_an_agents_hook_that_stops_the_call_after_its_allow_is_recorded_without_policy_hooks(payments_build, tmp_path,
                                                                                               how):
    """`cancel`: the run's task is cancelled while the hook runs (asyncio.wait_for's timeout does that)."""
    agents_fixture()
    from agents import RunConfig, Runner

    from veriguard.enforce.integrations.openai_agents import policy_guardrail

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []

    async def main():
        entered = asyncio.Event()
        agent = agent_paying(send_tool(ran, [policy_guardrail(g)])).clone(hooks=stopping_hooks(how, entered))
        task = asyncio.ensure_future(Runner.run(agent, "Pay.", context=CONTEXT,
                                                run_config=RunConfig(tracing_disabled=True)))
        if how == "cancel":
            await entered.wait()
            task.cancel()
        await task
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(main())
    assert ran == [] and [(a, NOT_RUN_AFTER_RAISE in why) for a, why in records(log)] == [(True, False), (False, True)]


# --- Agents: a RunConfig's model settings send hosted tools ------------------------------------------------------------
HOSTED_SETTINGS = [{"extra_body": {"tools": [{"type": "web_search"}]}}, {"extra_args": {"web_search_options": {}}},
                   {"extra_body": {"tools": [{"type": "mcp", "server_label": "bank", "server_url": "https://x"}]}}]


@pytest.mark.parametrize("hooks", [{}, None], ids=["hooks", "no-hooks"])
@pytest.mark.parametrize("settings", HOSTED_SETTINGS, ids=["extra_body-tools", "web_search_options", "hosted-mcp"])
def test_a_call_in_a_run_whose_run_config_sends_hosted_tools_is_refused(payments_build, tmp_path, settings, hooks):
    """Before: the call ran, and nothing recorded the hosted tool the RunConfig sent at every model call. With the hooks,
    the run is refused before the model is asked (A33: the hooks find the RunConfig)."""
    agents_fixture()
    from veriguard.enforce.integrations.openai_agents import UnguardedTools, policy_guardrail

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    with pytest.raises(UnguardedTools) if hooks is not None else contextlib.nullcontext():
        run_configured(agent_paying(send_tool(ran, [policy_guardrail(g)])), g, settings, hooks)
    assert ran == [] and [(a, "RunConfig model settings send the model tools" in why) for a, why in records(log)] == [
        (False, True)]


def test_an_agents_settings_that_enable_web_search_options_are_refused_before_the_model_is_asked(payments_build,
                                                                                                 tmp_path):
    agents_fixture()
    from agents import ModelSettings

    from veriguard.enforce.integrations.openai_agents import UnguardedTools, policy_guardrail

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    agent = agent_paying(send_tool(ran, [policy_guardrail(g)])).clone(
        model_settings=ModelSettings(extra_args={"web_search_options": {"search_context_size": "low"}}))
    with pytest.raises(UnguardedTools, match="web_search_options"):
        run(agent, g)
    assert ran == [] and [a for a, _ in records(log)] == [False]


@pytest.mark.parametrize("settings", [{"temperature": 0.1, "extra_body": {"metadata": {"team": "ap"}}},
                                      {"extra_args": {"user": "clerk-7"}, "extra_headers": {"X-Trace": "1"}}])
def test_benign_run_config_settings_without_tools_run(payments_build, tmp_path, settings):
    agents_fixture()
    from veriguard.enforce.integrations.openai_agents import policy_guardrail

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    run_configured(agent_paying(send_tool(ran, [policy_guardrail(g)])), g, settings, {})
    assert ran == [45000] and [a for a, _ in records(log)] == [True]


def test_benign_hooks_that_name_model_settings_let_a_run_configs_tools_through(payments_build, tmp_path):
    agents_fixture()
    from veriguard.enforce.integrations.openai_agents import policy_guardrail

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    run_configured(agent_paying(send_tool(ran, [policy_guardrail(g)])), g, HOSTED_SETTINGS[0],
                   {"unguarded": ["model_settings"]})
    assert ran == [45000] and [a for a, _ in records(log)] == [True]


def test_benign_an_agent_called_with_a_chat_model_and_no_settings_runs(payments_build, tmp_path):
    """The plain case beside the rows above: a Script model, no settings, one call."""
    agents_fixture()
    from agents import Agent

    from veriguard.enforce.integrations.openai_agents import policy_guardrail

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    agent = Agent(name="payer", model=agents_model(Script(calls(("send_payment", PAYMENT)))),
                  tools=[send_tool(ran, [policy_guardrail(g)])])
    run(agent, g)
    assert ran == [45000] and [a for a, _ in records(log)] == [True]


# --- Anthropic: a tool runner whose requests enable provider-side tools, with no request hook and no require_guarded ---
SERVER_TOOL_REPLY = [{"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "iban"}},
                     {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
                     {"type": "tool_use", "id": "toolu_1", "name": "send_payment", "input": PAYMENT}]
PROVIDER_SIDE = [{"tools": [{"type": "web_search_20250305", "name": "web_search"}]},
                 {"tools": [{"type": "code_execution_20250825", "name": "code_execution"}],
                  "betas": ["code-execution-2025-08-25"]},
                 {"mcp_servers": [{"type": "url", "url": "https://bank.example/mcp", "name": "bank"}],
                  "betas": ["mcp-client-2025-04-04"]},
                 {"extra_body": {"tools": [{"type": "web_fetch_20250910", "name": "web_fetch"}]}}]
RUNNER_REFUSED = "the tool runner running this call sends requests that enable tools run on Anthropic's side"


def runner_kwargs(g, ran, extra, *, asynchronous=False):
    kw = {key: value for key, value in extra.items() if key != "tools"}
    return dict(model="claude-test", max_tokens=64, messages=[{"role": "user", "content": "Pay."}],
                tools=[(async_payments_tool if asynchronous else payments_tool)(g, ran), *extra.get("tools", ())], **kw)


@pytest.mark.parametrize("extra", PROVIDER_SIDE, ids=["web_search", "code_execution", "mcp_servers", "extra_body"])
def test_a_guarded_call_of_a_runner_that_enables_provider_side_tools_is_refused(payments_build, tmp_path, extra):
    """No request hook, no require_guarded: before, the server tool went out (and ran: server_tool_use in the reply), and
    the guarded call ran as if nothing else was there. The guarded function is the first to see the runner's request."""

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    model = ScriptedModel(reply(*SERVER_TOOL_REPLY, stop="tool_use"), "Done.")
    client(model).beta.messages.tool_runner(**runner_kwargs(g, ran, extra)).until_done()
    assert ran == [] and [(a, RUNNER_REFUSED in why) for a, why in records(log)] == [(False, True)]
    assert tool_results(model, 1)[0]["is_error"] is True


def test_an_async_runner_that_enables_provider_side_tools_is_refused(payments_build, tmp_path):
    from anthropic import AsyncAnthropic


    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    model = ScriptedModel(reply(*SERVER_TOOL_REPLY, stop="tool_use"), "Done.")
    runner = client(model, AsyncAnthropic, httpx2.AsyncClient).beta.messages.tool_runner(
        **runner_kwargs(g, ran, PROVIDER_SIDE[0], asynchronous=True))
    asyncio.run(runner.until_done())
    assert ran == [] and [(a, RUNNER_REFUSED in why) for a, why in records(log)] == [(False, True)]


def test_benign_a_runner_of_client_tools_and_a_call_outside_any_runner_run(payments_build, tmp_path):

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    model = ScriptedModel(tool_use_reply(("toolu_1", PAYMENT)), "Done.")
    client(model).beta.messages.tool_runner(**runner_kwargs(g, ran, {"tool_choice": {
        "type": "tool", "name": "send_payment", "disable_parallel_tool_use": True}})).until_done()
    payments_tool(g, ran).call(PAYMENT)
    assert ran == [45000, 45000] and [a for a, _ in records(log)] == [True, True]


@pytest.mark.parametrize("hooks", [True, False], ids=["hooks", "no-hooks"])
def test_agent_hooks_that_cannot_be_changed_leave_the_call_to_run(payments_build, tmp_path, hooks):
    """An agent's hooks object that refuses attributes (slots, a __setattr__ that raises): the call runs as decided.
    Before, policy_hooks refused the whole run there (their check failed), a false refusal."""
    agents_fixture()
    from agents import AgentHooks

    from veriguard.enforce.integrations.openai_agents import policy_guardrail

    class Frozen(AgentHooks):
        __slots__ = ()

        def __setattr__(self, name, value):
            raise AttributeError("frozen hooks")
    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    run(agent_paying(send_tool(ran, [policy_guardrail(g)])).clone(hooks=Frozen()), g, hooks=hooks)
    assert ran == [45000] and [a for a, _ in records(log)] == [True]
