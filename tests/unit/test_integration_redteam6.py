"""Sixth red-team pass on the integrations (A26, 2026-11-30). Each test but those marked as guarding the clean path
failed on c915136:

- a streamed tool_use whose JSON input was cut (the connection dropped, or the block ended, before the object closed)
  ran on the part read: 45000999 read as 4, "acme-supplies-evil-corp" as "acme-supplies" under fine-grained streaming
  (the runner streamed, eager or not, sync or async; split_tool_uses given the stream);
- a tool_use naming a tool the runner does not have (never given, or taken away by remove_tools), and an Agents call
  of a tool the agent does not have, were answered "not found" by the SDK with no decision record;
- a provider-side result block (bash_code_execution_tool_result, mcp_tool_result...) whose call block was not in the
  reply left no record;
- a check that raised inside the runner's per-tool watch, or inside the Agents hooks, stopped the run with no record;
- where the SDK renames a private name the guard reads (the runner's _toolsets_by_family, an agent tool's
  _agent_instance), the guard read nothing there and let the tools behind it through.
Real SDK code paths: the Anthropic client over httpx2.MockTransport answering as the API would (Messages, SSE streams),
the Agents SDK's chat-completions and responses models over httpx2.MockTransport."""
import asyncio
import itertools
import json
import sys

import httpx2
import pytest

from tests.llm_fakes import ScriptedModel
from tests.unit.test_guard import CONTEXT, OVER_LIMIT, PAYMENT, guard
from tests.unit.test_integration_anthropic import async_payments_tool, payments_tool
from tests.unit.test_integration_redteam4 import USER, hooked
from tests.unit.test_integration_redteam5 import EVIL, records, reply, use
from tests.unit.test_integration_unguarded import Script, calls
from tests.unit.test_integration_unguarded import model as agents_model
from tests.unit.test_monitor import payments_build  # noqa: F401  (fixture)

WHOLE = json.dumps({"recipient": "acme-supplies", "currency": "USD", "method": "ach", "amount_cents": 45000999})
CUT = WHOLE[:WHOLE.index("45000999") + 1]   # ..."amount_cents": 4
NOT_WHOLE = "not one complete JSON object"


def sse(blocks, *, stop="tool_use", closed=True, message_stop=True, empty_delta=False,
        message_delta=True):
    """A Messages SSE stream of tool_use blocks, (id, name, JSON text) each, the text in 7-character pieces; `closed`:
    which blocks get their content_block_stop (all, none, or a set of indexes); `empty_delta`: a block whose text is ""
    gets the one input_json_delta, empty, that the API sends for a call with no input (else none: cut before it);
    `message_delta`: False ends the stream before it (no stop_reason: the reply was cut)."""
    events = [{"type": "message_start", "message": {"id": "msg", "type": "message", "role": "assistant", "model": "c",
                                                    "content": [], "stop_reason": None, "stop_sequence": None,
                                                    "usage": {"input_tokens": 1, "output_tokens": 1}}}]
    for i, (call_id, name, text) in enumerate(blocks):
        events.append({"type": "content_block_start", "index": i,
                       "content_block": {"type": "tool_use", "id": call_id, "name": name, "input": {}}})
        events += [{"type": "content_block_delta", "index": i,
                    "delta": {"type": "input_json_delta", "partial_json": text[k:k + 7]}}
                   for k in (range(0, len(text), 7) if text or not empty_delta else [0])]
        if closed is True or (closed and i in closed):
            events.append({"type": "content_block_stop", "index": i})
    events += [{"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 1}}] if message_delta else []
    events += [{"type": "message_stop"}] if message_stop else []
    return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content="".join(
        f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode())


def streamed_runner(g, ran, first, **kw):
    model = ScriptedModel(first, sse([], stop="end_turn"))
    runner = hooked(model).beta.messages.tool_runner(model="c", max_tokens=10, messages=USER, stream=True,
                                                     tools=[payments_tool(g, ran)], **kw)
    for stream in runner:
        for _ in stream:
            pass
    return model


# --- Anthropic: a streamed input cut short ------------------------------------------------------------------------------
@pytest.mark.parametrize("first, kw", [
    (sse([("t1", "send_payment", CUT)], closed=False), {}),
    (sse([("t1", "send_payment", CUT)]), {}),                                 # the block closed on a cut object
    (sse([("t1", "send_payment", CUT)]), {"run_tools_eagerly": True}),
    (sse([("t1", "send_payment", CUT)], closed=False), {"run_tools_eagerly": True}),
], ids=["no-block-stop", "closed-early", "closed-early-eager", "no-block-stop-eager"])
def test_a_streamed_input_cut_short_is_refused_with_a_record(payments_build, tmp_path, first, kw):
    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    model = streamed_runner(g, ran, first, **kw)
    assert ran == []
    assert [(allowed, NOT_WHOLE in why) for allowed, why in records(log)] == [(False, True)]
    results = [b for m in model.bodies[1]["messages"] if isinstance(m["content"], list) for b in m["content"]
               if b.get("type") == "tool_result"]
    assert [(r["tool_use_id"], r["is_error"], NOT_WHOLE in r["content"]) for r in results] == [("t1", True, True)]


def test_a_stream_that_ends_without_message_stop_does_not_run_its_cut_input(payments_build, tmp_path):
    """The connection dropped after message_delta: the runner still ran the cut input (the SDK then fails to append
    the results to a reply it never finished: its ValueError)."""
    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    with pytest.raises(ValueError, match="max"):
        streamed_runner(g, ran, sse([("t1", "send_payment", CUT)], closed=False, message_stop=False))
    assert ran == [] and [(allowed, NOT_WHOLE in why) for allowed, why in records(log)] == [(False, True)]


def test_a_cut_block_before_a_whole_one_is_refused_and_the_whole_one_runs_eagerly(payments_build, tmp_path):
    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    streamed_runner(g, ran, sse([("t1", "send_payment", CUT), ("t2", "send_payment", json.dumps(PAYMENT))],
                                closed={1}), run_tools_eagerly=True)
    assert ran == [45000]
    assert [(allowed, NOT_WHOLE in why) for allowed, why in records(log)] == [(True, False), (False, True)]


def test_a_string_cut_under_fine_grained_tool_streaming_is_refused(payments_build, tmp_path):
    """The beta reads a cut string as if it ended there: "acme-supplies-evil-corp" read as the allowlisted
    "acme-supplies" was allowed and paid."""
    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    text = json.dumps({**PAYMENT, "recipient": "acme-supplies-evil-corp"})
    model = ScriptedModel(sse([("t1", "send_payment", text[:text.index("-evil")])], closed=False),
                          sse([], stop="end_turn"))
    runner = hooked(model).beta.messages.tool_runner(model="c", max_tokens=10, messages=USER, stream=True,
                                                     betas=["fine-grained-tool-streaming-2025-05-14"],
                                                     tools=[payments_tool(g, ran)])
    for stream in runner:
        for _ in stream:
            pass
    assert ran == [] and [(allowed, NOT_WHOLE in why) for allowed, why in records(log)] == [(False, True)]


def test_an_async_streamed_runner_refuses_a_cut_input(payments_build, tmp_path):
    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    send_payment = async_payments_tool(g, ran)

    async def go():
        model = ScriptedModel(sse([("t1", "send_payment", CUT)], closed=False), sse([], stop="end_turn"))
        runner = hooked(model, asynchronous=True).beta.messages.tool_runner(model="c", max_tokens=10, messages=USER,
                                                                            stream=True, tools=[send_payment])
        async for stream in runner:
            async for _ in stream:
                pass
    asyncio.run(go())
    assert ran == [] and [(allowed, NOT_WHOLE in why) for allowed, why in records(log)] == [(False, True)]


@pytest.mark.parametrize("beta", [True, False], ids=["beta", "messages"])
def test_split_tool_uses_given_the_stream_refuses_a_cut_input(payments_build, tmp_path, beta):
    from veriguard.enforce.integrations.anthropic_sdk import split_tool_uses

    log = tmp_path / "log.jsonl"
    g = guard(payments_build, log=log)
    client = hooked(ScriptedModel(sse([("t1", "send_payment", CUT)], closed=False)))
    with (client.beta.messages if beta else client.messages).stream(model="c", max_tokens=10, messages=USER) as stream:
        stream.until_done()
        to_run, refused = split_tool_uses(g, stream, context=CONTEXT)
    assert to_run == [] and [(r["tool_use_id"], NOT_WHOLE in r["content"]) for r in refused] == [("t1", True)]
    assert [(allowed, NOT_WHOLE in why) for allowed, why in records(log)] == [(False, True)]


@pytest.mark.parametrize("eager", [False, True], ids=["streamed", "eager"])
def test_whole_streamed_inputs_still_run(payments_build, tmp_path, eager):
    """Guards the clean path: whole inputs streamed in pieces run (the runner's, and split_tool_uses given the
    stream); one over the limit is refused by the policy."""
    from veriguard.enforce.integrations.anthropic_sdk import split_tool_uses

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    streamed_runner(g, ran, sse([("t1", "send_payment", json.dumps(PAYMENT)),
                                 ("t2", "send_payment", json.dumps(OVER_LIMIT))]), run_tools_eagerly=eager)
    assert ran == [45000] and [allowed for allowed, _ in records(log)] == [True, False]
    with hooked(ScriptedModel(sse([("t3", "send_payment", json.dumps(PAYMENT))]))).beta.messages.stream(
            model="c", max_tokens=10, messages=USER) as stream:
        stream.until_done()
        to_run, refused = split_tool_uses(g, stream, context=CONTEXT)
    assert [b.input for b in to_run] == [PAYMENT] and refused == []


# --- Anthropic: a call of a tool the runner does not have ---------------------------------------------------------------
def unknown_sync(g, ran, model, hook=None):
    from veriguard.enforce.integrations.anthropic_sdk import refuse_undecided_tools, require_guarded

    tools = [payments_tool(g, ran)]
    if hook:
        tools, hook = require_guarded(g, tools), refuse_undecided_tools(g)
    hooked(model, hook).beta.messages.tool_runner(model="c", max_tokens=10, messages=USER, tools=tools).until_done()


def unknown_eager(g, ran, _):
    streamed_runner(g, ran, sse([("t1", "wire_all", json.dumps(EVIL))]), run_tools_eagerly=True)


def unknown_async(g, ran, model):
    send_payment = async_payments_tool(g, ran)
    asyncio.run(hooked(model, asynchronous=True).beta.messages.tool_runner(
        model="c", max_tokens=10, messages=USER, tools=[send_payment]).until_done())


def removed(g, ran, _):   # removal is a hint to the model: it may still call the tool, and the runner says not found
    model = ScriptedModel(reply([use("send_payment", PAYMENT)]), "Done.")
    runner = hooked(model).beta.messages.tool_runner(model="c", max_tokens=10, messages=USER,
                                                     tools=[payments_tool(g, ran)])
    for message in runner:
        if message.stop_reason == "tool_use":
            runner.remove_tools("send_payment")


@pytest.mark.parametrize("loop, name", [
    (unknown_sync, "wire_all"), (lambda g, ran, m: unknown_sync(g, ran, m, hook=True), "wire_all"),
    (unknown_eager, "wire_all"), (unknown_async, "wire_all"), (removed, "send_payment"),
], ids=["sync", "undecided-hook", "eager", "async", "removed"])
def test_a_call_of_a_tool_the_runner_does_not_have_is_recorded(payments_build, tmp_path, loop, name):
    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    with pytest.warns(UserWarning, match="not found in tool runner"):
        loop(g, ran, ScriptedModel(reply([use("wire_all", EVIL)]), "Done."))
    assert ran == []
    assert [(allowed, f"the model called {name!r}, which the tool runner does not have" in why)
            for allowed, why in records(log)] == [(False, True)]


# --- Anthropic: provider-side results, a check that raises, a renamed SDK name ------------------------------------------
@pytest.mark.parametrize("block", [
    {"type": "bash_code_execution_tool_result", "tool_use_id": "srvtoolu_9", "content": {
        "type": "bash_code_execution_result", "stdout": "sent", "stderr": "", "return_code": 0, "content": []}},
    {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_9", "content": [{"type": "text", "text": "paid"}]},
    {"type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_9", "content": {}},
], ids=["bash-code-execution", "mcp", "web-fetch"])
def test_a_provider_result_without_its_call_is_recorded(payments_build, tmp_path, block):
    from veriguard.enforce.integrations.anthropic_sdk import split_tool_uses

    log = tmp_path / "log.jsonl"
    to_run, refused = split_tool_uses(guard(payments_build, log=log), {"stop_reason": "end_turn", "content": [
        block, {"type": "text", "text": "Done."}]}, context=CONTEXT)
    assert to_run == [] and refused == []
    assert [(allowed, why.startswith(f"a {block['type']} block without its call")) for allowed, why in records(log)] \
        == [(False, True)]


def test_a_check_that_raises_inside_the_runner_refuses_with_a_record(payments_build, tmp_path):
    from veriguard.enforce.integrations.anthropic_sdk import ProviderToolsRefused

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    tool = payments_tool(g, ran)

    class Unreadable(type(tool)):
        @property
        def func(self):
            raise RuntimeError("unreadable")
    runner = hooked(ScriptedModel(reply([use("send_payment", PAYMENT)]), "Done.")).beta.messages.tool_runner(
        model="c", max_tokens=10, messages=USER, tools=[tool])
    with pytest.raises(ProviderToolsRefused, match="the check failed .RuntimeError: unreadable"):
        for _ in runner:
            tool.__class__ = Unreadable
    assert ran == [] and [(allowed, "the check failed" in why) for allowed, why in records(log)] == [(False, True)]


def test_a_runner_whose_toolsets_cannot_be_read_is_refused_with_a_record(payments_build, tmp_path, monkeypatch):
    """An SDK that renamed the runner's _toolsets_by_family: the toolsets it runs cannot be seen, so its request is
    refused (before, they were read as none)."""
    from anthropic.lib.tools._beta_runner import BaseToolRunner

    from veriguard.enforce.integrations.anthropic_sdk import SdkChanged, refuse_undecided_tools, require_guarded

    sdk_own = BaseToolRunner._toolsets_by_family

    def renamed(runner):   # gone for veriguard's reads only: the SDK's own code keeps working as after a rename
        if sys._getframe(1).f_globals.get("__name__", "").startswith("veriguard."):
            raise AttributeError("_toolsets_by_family")
        return sdk_own.fget(runner)
    monkeypatch.setattr(BaseToolRunner, "_toolsets_by_family", property(renamed))
    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    model = ScriptedModel(reply([use("send_payment", PAYMENT)]), "Done.")
    with pytest.raises(SdkChanged, match="has no _toolsets_by_family"):
        hooked(model, refuse_undecided_tools(g)).beta.messages.tool_runner(
            model="c", max_tokens=10, messages=USER, tools=require_guarded(g, [payments_tool(g, ran)])).until_done()
    assert ran == [] and model.bodies == [] and [allowed for allowed, _ in records(log)] == [False]


# --- OpenAI Agents -----------------------------------------------------------------------------------------------------
RESPONSE_IDS = itertools.count(1)


def responses_reply(*pairs, text=None):
    """A Responses API answer: a function_call item per (name, arguments), or a message with `text`."""
    output = [{"type": "function_call", "id": f"fc_{n}", "call_id": f"call_r{n}", "name": name,
               "arguments": json.dumps(arguments), "status": "completed"}
              for n, (name, arguments) in ((next(RESPONSE_IDS), p) for p in pairs)]
    output += [] if text is None else [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                                        "content": [{"type": "output_text", "text": text, "annotations": []}]}]
    return {"id": "resp_1", "object": "response", "created_at": 0, "model": "gpt-test", "status": "completed",
            "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
            "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2,
                      "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}}


def responses_model(*replies):
    from agents import OpenAIResponsesModel
    from openai import AsyncOpenAI

    queue = list(replies)

    def answer(request):
        return httpx2.Response(200, json=queue.pop(0) if queue else responses_reply(text="Done."))
    return OpenAIResponsesModel("gpt-test", AsyncOpenAI(api_key="sk-test", max_retries=0, http_client=httpx2.AsyncClient(
        transport=httpx2.MockTransport(answer))))


def pay(g, ran):
    from agents import function_tool

    from veriguard.enforce.integrations.openai_agents import policy_guardrail

    def send_payment(recipient: str, amount_cents: int, currency: str, method: str) -> str:
        """Send a payment."""
        ran.append(amount_cents)
        return "sent"
    return function_tool(send_payment, tool_input_guardrails=[policy_guardrail(g)])


def run_agent(agent, g, **kw):
    from agents import RunConfig, Runner

    from veriguard.enforce.integrations.openai_agents import policy_hooks

    return asyncio.run(Runner.run(agent, "Pay.", context=CONTEXT, hooks=policy_hooks(g, **kw),
                                  run_config=RunConfig(tracing_disabled=True)))


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_an_agents_call_of_a_tool_the_agent_does_not_have_is_recorded(payments_build, tmp_path, api):
    from agents import Agent, ModelBehaviorError

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    model = agents_model(Script(calls(("wire_all", EVIL)))) if api == "chat" else \
        responses_model(responses_reply(("wire_all", EVIL)))
    with pytest.raises(ModelBehaviorError, match="Tool wire_all not found"):
        run_agent(Agent(name="treasury", model=model, tools=[pay(g, ran)]), g)
    assert ran == []
    assert [(allowed, "the model called 'wire_all', which agent 'treasury' has no tool or handoff" in why)
            for allowed, why in records(log)] == [(False, True)]


def test_the_responses_model_runs_guarded_calls_and_handoffs_are_known(payments_build, tmp_path):
    """Guards the clean path: through the Responses model an allowed payment runs and one over the limit is refused;
    a handoff the model takes is no unknown call."""
    from agents import Agent

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    clerk = Agent(name="clerk", model=responses_model(responses_reply(("send_payment", PAYMENT))), tools=[pay(g, ran)])
    front = Agent(name="front", model=responses_model(responses_reply(("send_payment", OVER_LIMIT)),
                                                      responses_reply(("transfer_to_clerk", {}))),
                  tools=[pay(g, ran)], handoffs=[clerk])
    assert run_agent(front, g).final_output == "Done."
    assert ran == [45000] and [allowed for allowed, _ in records(log)] == [False, True]


def raising_schema_handoff():
    from agents import Agent, handoff

    h = handoff(Agent(name="other", model=agents_model(Script())))

    class Unreadable(type(h)):
        @property
        def input_json_schema(self):
            raise RuntimeError("unreadable")
    h.__class__ = Unreadable
    return {"handoffs": [h]}


def raising_guardrails_tool():
    from agents import function_tool

    def refund(recipient: str, amount_cents: int) -> str:
        """Refund."""
        return "refunded"
    tool = function_tool(refund)

    class Unreadable(type(tool)):
        @property
        def tool_input_guardrails(self):
            raise RuntimeError("unreadable")
    tool.__class__ = Unreadable
    return {"extra": tool}


@pytest.mark.parametrize("odd", [raising_schema_handoff, raising_guardrails_tool], ids=["handoff", "tool"])
def test_a_check_that_raises_inside_the_agents_hooks_stops_the_run_with_a_record(payments_build, tmp_path, odd):
    from agents import Agent

    from veriguard.enforce.integrations.openai_agents import UnguardedTools

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    given = odd()
    agent = Agent(name="treasury", model=agents_model(Script(calls(("send_payment", PAYMENT)))),
                  tools=[pay(g, ran)] + ([given.pop("extra")] if "extra" in given else []), **given)
    with pytest.raises(UnguardedTools, match="the policy hooks' check failed .RuntimeError: unreadable"):
        run_agent(agent, g)
    assert ran == [] and [(allowed, "check failed" in why) for allowed, why in records(log)] == [(False, True)]


def test_an_agent_tool_whose_agent_cannot_be_seen_is_refused(payments_build, tmp_path):
    """An SDK that no longer keeps an agent tool's agent as _agent_instance: the tools of its nested run are unknown.
    Before, the agent tool was taken for a plain one, and with unguarded=["ask", "nested_runs"] its agent's plain
    refund ran undecided."""
    from agents import Agent, function_tool

    from veriguard.enforce.integrations.openai_agents import UnguardedTools

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []

    def refund(recipient: str, amount_cents: int) -> str:
        """Refund."""
        ran.append(("refund", amount_cents))
        return "refunded"
    inner = Agent(name="inner", model=agents_model(Script(calls(("refund", EVIL)))), tools=[function_tool(refund)])
    tool = inner.as_tool(tool_name="ask", tool_description="d")
    del tool._agent_instance
    outer = Agent(name="outer", model=agents_model(Script(calls(("ask", {"input": "go"})))), tools=[tool])
    with pytest.raises(UnguardedTools, match="agent tool 'ask' of agent 'outer', whose agent cannot be seen"):
        run_agent(outer, g, unguarded=["ask", "nested_runs"])
    assert ran == [] and [allowed for allowed, _ in records(log)] == [False]


def test_a_request_loading_container_skills_is_refused(payments_build, tmp_path):
    """Skills run in Anthropic's code-execution container, which no guard here decides; the request went out."""
    from veriguard.enforce.integrations.anthropic_sdk import ProviderToolsRefused, refuse_undecided_tools

    log = tmp_path / "log.jsonl"
    g = guard(payments_build, log=log)
    model = ScriptedModel(reply([{"type": "text", "text": "ok"}], stop="end_turn"))
    with pytest.raises(ProviderToolsRefused, match=r"container skills \(xlsx\)"):
        hooked(model, refuse_undecided_tools(g)).beta.messages.create(
            model="c", max_tokens=10, messages=USER, container={"skills": [{"type": "anthropic", "skill_id": "xlsx"}]})
    assert model.bodies == [] and [allowed for allowed, _ in records(log)] == [False]
    hooked(model, refuse_undecided_tools(g)).beta.messages.create(model="c", max_tokens=10, messages=USER,
                                                                    container="container_1")   # a container id: passes
    assert len(model.bodies) == 1
