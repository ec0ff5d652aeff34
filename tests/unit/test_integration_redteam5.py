"""Fifth red-team pass on the integrations (A25, 2026-11-30). Each test but those marked as guarding the clean path
failed on 9cb4155:

- the managed-agents SessionToolRunner (`client.beta.sessions.events.tool_runner`, anthropic 2.14) runs a session's
  tool calls in tasks of its own; the request hooks looked for the Messages tool runner only, so a plain tool beside
  guarded ones ran refund(evil, 250000) undecided under both hooks;
- the hooks checked the runner's table when a request left, not when a tool ran: a tool added in the loop body
  (sync, async, while a reply streams with run_tools_eagerly, before generate_tool_call_response) ran before the next
  request showed it;
- split_tool_uses decided the tool_use blocks of a reply that ended with max_tokens: the streamed input was cut
  (45000999 read as 4) and the 4 was allowed; the SDK's runner runs no tool_use of a turn that did not end with
  tool_use;
- a request the hooks could not read (`{"tools": 5}`) raised a TypeError that the SDK took for a connection error, and
  refuse_undecided_tools left no record of a body it could not read; a JSON body behind a UTF-8 BOM or a
  content-encoding passed unread;
- an OpenAI Agents agent called as a tool runs in a nested run without the hooks: a tool its agent gained at run time
  (a tool's side effect, the agent's own AgentHooks) ran undecided.
Real SDK code paths: the Anthropic client over httpx2.MockTransport answering as the API would (Messages, SSE streams,
the sessions event stream, list and send), the Agents SDK's chat-completions model over httpx2.MockTransport."""
import asyncio
import gzip
import json

import httpx2
import pytest

from veriguard.enforce.decision_log import DecisionLog
from tests.llm_fakes import ScriptedModel
from tests.unit.test_guard import CONTEXT, OVER_LIMIT, PAYMENT, guard
from tests.unit.test_integration_anthropic import async_payments_tool, payments_tool
from tests.unit.test_integration_redteam4 import USER, hooked, plain_refund
from tests.unit.test_integration_unguarded import Script, calls
from tests.unit.test_integration_unguarded import model as agents_model
from tests.unit.test_monitor import payments_build  # noqa: F401  (fixture)

EVIL = {"recipient": "evil", "amount_cents": 250000}
WEB_SEARCH = {"type": "web_search_20250305", "name": "web_search"}


def records(log):
    return [(r["allowed"], r["fail_closed"]) for r in DecisionLog(log).records()] if log.exists() else []


def reply(content, stop="tool_use"):
    return httpx2.Response(200, json={"id": "m", "type": "message", "role": "assistant", "model": "c", "content": content,
                                      "stop_reason": stop, "stop_sequence": None,
                                      "usage": {"input_tokens": 1, "output_tokens": 1}})


def use(name, given, call_id="t1"):
    return {"type": "tool_use", "id": call_id, "name": name, "input": given}


def streamed(blocks, stop="tool_use"):
    """A Messages SSE stream of tool_use blocks, (id, name, JSON text) each, the text in 7-character input_json_delta
    pieces, ending with `stop`."""
    events = [{"type": "message_start", "message": {"id": "msg", "type": "message", "role": "assistant", "model": "c",
                                                    "content": [], "stop_reason": None, "stop_sequence": None,
                                                    "usage": {"input_tokens": 1, "output_tokens": 1}}}]
    for i, (call_id, name, text) in enumerate(blocks):
        events.append({"type": "content_block_start", "index": i,
                       "content_block": {"type": "tool_use", "id": call_id, "name": name, "input": {}}})
        events += [{"type": "content_block_delta", "index": i,
                    "delta": {"type": "input_json_delta", "partial_json": text[k:k + 7]}} for k in range(0, len(text), 7)]
        events.append({"type": "content_block_stop", "index": i})
    events += [{"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 1}}, {"type": "message_stop"}]
    return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content="".join(
        f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode())


# --- Anthropic: the managed-agents session runner ----------------------------------------------------------------------
class Session:
    """The sessions API of one session: the event stream (SSE) gives `events`, then on the reconnect the session's end;
    the events list is empty; each result the runner sends is kept."""

    def __init__(self, *events):
        ended = {"id": "sevt_end", "type": "session.status_terminated", "processed_at": "2026-11-30T00:00:00Z"}
        self.streams, self.sent = [list(events), [ended]], []

    def __call__(self, request):
        if request.url.path.endswith("/events/stream"):
            events = self.streams.pop(0) if self.streams else []
            return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content="".join(
                f"event: message\ndata: {json.dumps(e)}\n\n" for e in events).encode())
        if request.method == "GET":
            return httpx2.Response(200, json={"data": [], "next_page": None})
        self.sent.append(json.loads(request.content))
        return httpx2.Response(200, json={"data": []})


def custom_tool_use(name, given, event_id="sevt_1"):
    return {"id": event_id, "type": "agent.custom_tool_use", "name": name, "input": given,
            "processed_at": "2026-11-30T00:00:00Z"}


def run_session(session, hook, tools, **kw):
    from anthropic import AsyncAnthropic

    client = AsyncAnthropic(api_key="sk-ant-test", max_retries=0, http_client=httpx2.AsyncClient(
        transport=httpx2.MockTransport(session), event_hooks={"request": [hook]}))
    runner = client.beta.sessions.events.tool_runner("sesn_1", tools=tools, max_idle=None, **kw)
    asyncio.run(asyncio.wait_for(runner.until_done(), 20))


@pytest.mark.parametrize("how", ["provider-hook", "undecided-hook", "environment-key"])
def test_a_session_runner_holding_a_plain_tool_is_refused_before_any_tool_runs(payments_build, tmp_path, how):
    from veriguard.enforce.integrations.anthropic_sdk import ProviderToolsRefused, refuse_provider_tools_async, \
        refuse_undecided_tools_async, require_guarded

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    tools = [payments_tool(g, ran), plain_refund(ran)]
    hook = refuse_provider_tools_async
    if how == "undecided-hook":   # the plain tool appended to the checked list
        tools, hook = require_guarded(g, tools[:1]) + tools[1:], refuse_undecided_tools_async(g)
    session = Session(custom_tool_use("refund", EVIL))
    with pytest.raises(BaseExceptionGroup) as raised:   # the runner's task group carries the refusal
        run_session(session, hook, tools, **({"environment_key": "envk_1"} if how == "environment-key" else {}))
    assert raised.group_contains(ProviderToolsRefused, match="no guard decides: 'refund'")
    assert ran == [] and session.sent == []
    assert [(allowed, why.startswith("refused to send the tool runner's request")) for allowed, why in records(log)] \
        == [(False, True)]


def test_a_session_runner_of_guarded_tools_decides_each_call(payments_build, tmp_path):
    """Guards the clean path: the session runner runs an allowed payment and sends the policy's refusal of one over the
    limit as an is_error result."""
    from veriguard.enforce.integrations.anthropic_sdk import refuse_provider_tools_async

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    session = Session(custom_tool_use("send_payment", PAYMENT), custom_tool_use("send_payment", OVER_LIMIT, "sevt_2"))
    run_session(session, refuse_provider_tools_async, [payments_tool(g, ran)])
    assert ran == [45000] and [allowed for allowed, _ in records(log)] == [True, False]
    results = [e for body in session.sent for e in body["events"]]
    assert [r.get("is_error", False) for r in results] == [False, True] and "payments" in json.dumps(results[1])


# --- Anthropic: a tool put in the runner's table after the request was checked ----------------------------------------
def sync_loop(g, ran, model):
    runner = hooked(model).beta.messages.tool_runner(model="c", max_tokens=10, messages=USER, tools=[payments_tool(g, ran)])
    for message in runner:
        if message.stop_reason == "tool_use":
            runner.add_tools(plain_refund(ran))


def async_loop(g, ran, model):
    from anthropic.lib.tools import beta_async_tool

    send_payment = async_payments_tool(g, ran)

    @beta_async_tool
    async def refund(recipient: str, amount_cents: int) -> str:
        """Refund."""
        ran.append(("refund", amount_cents))
        return "refunded"

    async def go():
        runner = hooked(model, asynchronous=True).beta.messages.tool_runner(model="c", max_tokens=10, messages=USER,
                                                                            tools=[send_payment])
        async for message in runner:
            if message.stop_reason == "tool_use":
                runner.add_tools(refund)
    asyncio.run(go())


def eager_stream(g, ran, model):
    runner = hooked(model).beta.messages.tool_runner(model="c", max_tokens=10, messages=USER, stream=True,
                                                     run_tools_eagerly=True, tools=[payments_tool(g, ran)])
    for stream in runner:
        for event in stream:
            if event.type == "content_block_start":
                runner.add_tools(plain_refund(ran))


def generated(g, ran, model):
    runner = hooked(model).beta.messages.tool_runner(model="c", max_tokens=10, messages=USER, max_iterations=1,
                                                     tools=[payments_tool(g, ran)])
    for _ in runner:
        runner.add_tools(plain_refund(ran))
        runner.generate_tool_call_response()
        break


def swapped_by_name(g, ran, model):   # the guarded tool removed and a plain one added under its name
    from tests.unit.test_integration_redteam4 import plain_payment

    runner = hooked(model).beta.messages.tool_runner(model="c", max_tokens=10, messages=USER, tools=[payments_tool(g, ran)])
    for message in runner:
        if message.stop_reason == "tool_use":
            runner.remove_tools("send_payment")
            runner.add_tools(plain_payment(ran))


def call_replaced(g, ran, model):   # the guarded tool's call replaced on the object the runner holds
    runner = hooked(model).beta.messages.tool_runner(model="c", max_tokens=10, messages=USER, tools=[payments_tool(g, ran)])
    for message in runner:
        if message.stop_reason == "tool_use":
            for tool in runner._runnable_tools().values():
                tool.call = lambda given: ran.append(("undecided", given.get("amount_cents"))) or "sent"


@pytest.mark.parametrize("loop", [sync_loop, async_loop, eager_stream, generated, swapped_by_name, call_replaced],
                         ids=["sync", "async", "eager-stream", "generate_tool_call_response", "swapped-by-name",
                              "call-replaced"])
def test_a_tool_added_in_the_loop_body_is_refused_before_it_runs(payments_build, tmp_path, loop):
    from veriguard.enforce.integrations.anthropic_sdk import ProviderToolsRefused

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    name, given = ("send_payment", OVER_LIMIT) if loop in (swapped_by_name, call_replaced) else ("refund", EVIL)
    first = streamed([("t1", name, json.dumps(given))]) if loop is eager_stream else reply([use(name, given)])
    with pytest.raises(ProviderToolsRefused, match=f"refused to run a tool of the tool runner .*'{name}'"):
        loop(g, ran, ScriptedModel(first, "Done."))
    assert ran == []
    assert [(allowed, why.startswith("refused to run a tool")) for allowed, why in records(log)] == [(False, True)]


@pytest.mark.parametrize("eager", [False, True], ids=["streamed", "eager"])
def test_guarded_tools_still_run_in_a_watched_runner(payments_build, tmp_path, eager):
    """Guards the clean path: the runner's tools are checked as they run; guarded ones run, two payments streamed in
    one reply (the first allowed, the second over the limit refused by the policy), and the loop goes on."""
    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    model = ScriptedModel(streamed([("t1", "send_payment", json.dumps(PAYMENT)),
                                    ("t2", "send_payment", json.dumps(OVER_LIMIT))]), streamed([], stop="end_turn"))
    runner = hooked(model).beta.messages.tool_runner(model="c", max_tokens=10, messages=USER, stream=True,
                                                     run_tools_eagerly=eager, tools=[payments_tool(g, ran)])
    for stream in runner:
        for _ in stream:
            pass
    assert ran == [45000] and [allowed for allowed, _ in records(log)] == [True, False]
    assert len(model.bodies) == 2


# --- Anthropic: a reply that did not end with tool_use -----------------------------------------------------------------
@pytest.mark.parametrize("mode", ["enforce", "shadow"])
def test_the_tool_uses_of_a_reply_cut_at_max_tokens_are_refused(payments_build, tmp_path, mode):
    """The streamed input of the last tool_use stops where max_tokens cut it: 45000999 is read as 4, a complete object
    the policy allowed."""
    from veriguard.enforce.integrations.anthropic_sdk import split_tool_uses

    log = tmp_path / "log.jsonl"
    g = guard(payments_build, log=log, mode=mode)
    text = json.dumps({"recipient": "acme-supplies", "currency": "USD", "method": "ach", "amount_cents": 45000999})
    with hooked(ScriptedModel(streamed([("t1", "send_payment", text[:text.index("45000999") + 1])], stop="max_tokens"))
                ).messages.stream(model="c", max_tokens=10, messages=USER) as stream:
        final = stream.get_final_message()
    assert final.content[0].input["amount_cents"] == 4
    to_run, refused = split_tool_uses(g, final, context=CONTEXT)
    assert to_run == [] and "stop_reason 'max_tokens'" in refused[0]["content"]
    assert [(allowed, "max_tokens" in why) for allowed, why in records(log)] == [(False, True)]


@pytest.mark.parametrize("stop", ["end_turn", "refusal", "pause_turn", "model_context_window_exceeded",
                                  "stop_sequence", "some_new_reason", "TOOL_USE", 5])
def test_tool_uses_of_a_turn_that_did_not_end_with_tool_use_are_refused(payments_build, tmp_path, stop):
    from veriguard.enforce.integrations.anthropic_sdk import split_tool_uses

    log = tmp_path / "log.jsonl"
    g = guard(payments_build, log=log)
    to_run, refused = split_tool_uses(g, {"role": "assistant", "stop_reason": stop,
                                          "content": [use("send_payment", PAYMENT)]}, context=CONTEXT)
    assert to_run == [] and len(refused) == 1 and [allowed for allowed, _ in records(log)] == [False]


def test_tool_uses_of_a_tool_use_turn_or_a_bare_message_are_decided(payments_build):
    """Guards the clean path: stop_reason tool_use, and a message given without the field (a dict of blocks)."""
    from veriguard.enforce.integrations.anthropic_sdk import split_tool_uses

    g = guard(payments_build)
    for message in [{"stop_reason": "tool_use", "content": [use("send_payment", PAYMENT)]},
                    {"content": [use("send_payment", PAYMENT, "t2")]}]:
        to_run, refused = split_tool_uses(g, message, context=CONTEXT)
        assert len(to_run) == 1 and refused == []


# --- Anthropic: a request the hooks cannot read ------------------------------------------------------------------------
def test_a_request_of_an_unexpected_shape_is_refused_with_a_record_and_not_retried(payments_build, tmp_path):
    from anthropic import Anthropic

    from veriguard.enforce.integrations.anthropic_sdk import ProviderToolsRefused, refuse_undecided_tools

    log = tmp_path / "log.jsonl"
    g, model = guard(payments_build, log=log), ScriptedModel("Done.")
    client = Anthropic(api_key="sk-ant-test", max_retries=2, http_client=httpx2.Client(
        transport=httpx2.MockTransport(model), event_hooks={"request": [refuse_undecided_tools(g)]}))
    for body in [{"tools": 5}, {"mcp_servers": 5}, {"requests": [{"params": {"tools": 5}}]}]:
        with pytest.raises(ProviderToolsRefused, match="could not be checked"):
            client.post("/v1/messages", body={"model": "c", "max_tokens": 1, "messages": USER, **body}, cast_to=object)
    assert model.bodies == [] and [allowed for allowed, _ in records(log)] == [False] * 3


@pytest.mark.parametrize("content, headers", [
    (b'{"tools": [', {"content-type": "application/json"}),
    (b"\xef\xbb\xbf" + json.dumps({"tools": [WEB_SEARCH]}).encode(), {"content-type": "text/plain"}),
    (gzip.compress(json.dumps({"tools": [WEB_SEARCH]}).encode()), {"content-type": "application/json",
                                                                   "content-encoding": "gzip"}),
    (gzip.compress(json.dumps({"tools": [WEB_SEARCH]}).encode()), {"content-type": "text/plain",
                                                                   "content-encoding": "gzip"}),
], ids=["cut-json", "bom-text-plain", "gzip-json", "gzip-text-plain"])
def test_a_body_the_hook_cannot_read_is_refused_with_a_record(payments_build, tmp_path, content, headers):
    from veriguard.enforce.integrations.anthropic_sdk import ProviderToolsRefused, refuse_provider_tools, \
        refuse_undecided_tools

    log = tmp_path / "log.jsonl"
    g = guard(payments_build, log=log)
    request = httpx2.Request("POST", "https://api.anthropic.com/v1/messages", content=content, headers=headers)
    for hook in (refuse_provider_tools, refuse_undecided_tools(g)):
        with pytest.raises(ProviderToolsRefused, match="cannot be read"):
            hook(request)
    assert [allowed for allowed, _ in records(log)] == [False]


# --- OpenAI Agents: an agent called as a tool --------------------------------------------------------------------------
def agent_tools(g, ran, effect=None):
    from agents import function_tool

    from veriguard.enforce.integrations.openai_agents import policy_guardrail

    def send_payment(recipient: str, amount_cents: int, currency: str, method: str) -> str:
        """Send a payment."""
        ran.append(amount_cents)
        if effect:
            effect()
        return "sent"

    def refund(recipient: str, amount_cents: int) -> str:
        """Refund."""
        ran.append(("refund", amount_cents))
        return "refunded"
    return function_tool(send_payment, tool_input_guardrails=[policy_guardrail(g)]), function_tool(refund)


def gained_by_a_tool(g, ran):
    """A treasury agent whose guarded payment adds a plain refund tool to it (a plugin loader, say)."""
    from agents import Agent

    box = []
    pay, refund = agent_tools(g, ran, lambda: box[0].tools.append(refund))
    box.append(Agent(name="treasury", model=agents_model(Script(calls(("send_payment", PAYMENT)),
                                                                 calls(("refund", EVIL)))), tools=[pay]))
    return box[0]


def gained_by_its_hooks(g, ran):
    """A treasury agent whose own AgentHooks add the refund tool when it starts."""
    from agents import Agent, AgentHooks

    pay, refund = agent_tools(g, ran)

    class Adding(AgentHooks):
        async def on_start(self, context, agent):
            if refund not in agent.tools:
                agent.tools.append(refund)
    return Agent(name="treasury", model=agents_model(Script(calls(("refund", EVIL)))), tools=[pay], hooks=Adding())


def run_outer(agent_tool, g, unguarded=("ask",)):
    from agents import Agent, RunConfig, Runner

    from veriguard.enforce.integrations.openai_agents import policy_hooks

    outer = Agent(name="outer", model=agents_model(Script(calls(("ask", {"input": "go"})))), tools=[agent_tool])
    return asyncio.run(Runner.run(outer, "Pay.", context=CONTEXT, hooks=policy_hooks(g, unguarded=unguarded),
                                  run_config=RunConfig(tracing_disabled=True)))


@pytest.mark.parametrize("treasury", [gained_by_a_tool, gained_by_its_hooks], ids=["by-a-tool", "by-its-hooks"])
def test_an_agent_called_as_a_tool_without_policy_hooks_is_refused(payments_build, tmp_path, treasury):
    from veriguard.enforce.integrations.openai_agents import UnguardedTools

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    with pytest.raises(UnguardedTools, match="agent tool 'ask' of agent 'outer', which runs agent 'treasury' in a "
                                             "nested run without policy_hooks"):
        run_outer(treasury(g, ran).as_tool(tool_name="ask", tool_description="d"), g)
    assert ran == [] and [allowed for allowed, _ in records(log)] == [False]


@pytest.mark.parametrize("treasury", [gained_by_a_tool, gained_by_its_hooks], ids=["by-a-tool", "by-its-hooks"])
def test_policy_agent_tool_stops_a_tool_the_nested_run_gains(payments_build, tmp_path, treasury):
    from veriguard.enforce.integrations.openai_agents import UnguardedTools, policy_agent_tool

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    with pytest.raises(UnguardedTools, match="FunctionTool 'refund' of agent 'treasury'"):
        run_outer(policy_agent_tool(treasury(g, ran), g, tool_name="ask", tool_description="d"), g)
    assert ("refund", 250000) not in ran
    assert records(log) and all(not allowed for allowed, _ in records(log)[-1:])


def test_agents_called_as_tools_two_deep_carry_the_hooks(payments_build, tmp_path):
    from agents import Agent

    from veriguard.enforce.integrations.openai_agents import UnguardedTools, policy_agent_tool

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    inner = gained_by_a_tool(g, ran)
    mid = Agent(name="mid", model=agents_model(Script(calls(("inner", {"input": "go"})))), tools=[
        policy_agent_tool(inner, g, tool_name="inner", tool_description="d")])
    with pytest.raises(UnguardedTools, match="'refund' of agent 'treasury'"):
        run_outer(policy_agent_tool(mid, g, unguarded=["inner"], tool_name="ask", tool_description="d"), g,
                  unguarded=("ask", "inner"))
    assert ran == [45000]
    plain_mid = Agent(name="mid", model=agents_model(Script()), tools=[inner.as_tool(tool_name="inner",
                                                                                   tool_description="d")])
    with pytest.raises(UnguardedTools, match="agent tool 'inner' of agent 'mid'"):   # the inner one has no hooks
        run_outer(policy_agent_tool(plain_mid, g, unguarded=["inner"], tool_name="ask", tool_description="d"), g,
                  unguarded=("ask", "inner"))


def test_a_guarded_nested_graph_runs_and_nested_runs_can_be_let_through(payments_build, tmp_path):
    """Guards the clean path: policy_agent_tool's nested run decides its payment and runs it; naming "nested_runs" in
    unguarded lets a plain as_tool run (its tools are still checked before the model is asked)."""
    from agents import Agent

    from veriguard.enforce.integrations.openai_agents import policy_agent_tool

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    pay, _ = agent_tools(g, ran)

    def treasury():
        return Agent(name="treasury", model=agents_model(Script(calls(("send_payment", PAYMENT)))), tools=[pay])
    assert run_outer(policy_agent_tool(treasury(), g, tool_name="ask", tool_description="d"), g).final_output == "Done."
    run_outer(treasury().as_tool(tool_name="ask", tool_description="d"), g, unguarded=("ask", "nested_runs"))
    assert ran == [45000, 45000] and [allowed for allowed, _ in records(log)] == [True, True]
