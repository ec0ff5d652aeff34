"""Red-team pass on the integrations (2026-11-29, evening): tools that ran without a decision, and refusals that left
no record. Each test failed on the code before its fix: provider-side Anthropic tools (server tools, the MCP connector)
went out in the request and their calls passed `split_tool_uses` silently; an OpenAI Agents function tool without the
guardrail (forgotten, in an agent handed off to, in an agent called as a tool) or a hosted tool ran undecided; a `run`
name function that raised, a content block whose model_dump raised, and a tools/call in a nested JSON-RPC batch were
refused with no decision record. Real SDK code paths, with the model behind httpx2.MockTransport."""
import asyncio
import itertools
import json

import httpx2
import pytest

from veriguard.enforce.decision_log import DecisionLog
from veriguard.enforce.guard import RunTerminated
from tests.llm_fakes import ScriptedModel
from tests.unit.test_guard import CONTEXT, OVER_LIMIT, PAYMENT, guard
from tests.unit.test_integration_anthropic import client, payments_tool, run as run_tools, tool_use_reply
from tests.unit.test_monitor import payments_build  # noqa: F401  (fixture)


def records(log):
    return [(r["allowed"], r["tool"], r["action_id"], r["fail_closed"]) for r in DecisionLog(log).records()]


def reply(*content, stop="end_turn"):
    return httpx2.Response(200, json={"id": "msg", "type": "message", "role": "assistant", "model": "claude-test",
                                      "content": list(content), "stop_reason": stop, "stop_sequence": None,
                                      "usage": {"input_tokens": 1, "output_tokens": 1}})


PROVIDER_SIDE_REPLY = [
    {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "iban of acme"}},
    {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
    {"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "send_payment", "server_name": "bank", "input": OVER_LIMIT},
    {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_1", "is_error": False,
     "content": [{"type": "text", "text": "sent 250000"}]},
    {"type": "text", "text": "Done."}]


def hooked(model, *, asynchronous=False):
    """An Anthropic client whose HTTP client refuses requests that enable provider-side tools."""
    from anthropic import Anthropic, AsyncAnthropic

    from veriguard.enforce.integrations.anthropic_sdk import refuse_provider_tools, refuse_provider_tools_async

    if asynchronous:
        return AsyncAnthropic(api_key="sk-ant-test", max_retries=2, http_client=httpx2.AsyncClient(
            transport=httpx2.MockTransport(model), event_hooks={"request": [refuse_provider_tools_async]}))
    return Anthropic(api_key="sk-ant-test", max_retries=2, http_client=httpx2.Client(
        transport=httpx2.MockTransport(model), event_hooks={"request": [refuse_provider_tools]}))


@pytest.mark.parametrize("enables", [
    {"tools": [{"type": "web_search_20250305", "name": "web_search"}]},
    {"tools": [{"type": "code_execution_20250825", "name": "code_execution"}]},
    {"tools": [{"type": "web_fetch_20250910", "name": "web_fetch"}]},
    {"tools": [{"type": "tool_search_tool_bm25", "name": "tool_search"}]},
    {"tools": [{"type": "mcp_toolset", "mcp_server_name": "bank"}]},
    {"tools": [{"type": "browser_toolset_20260801", "name": "browser"}]},     # a type this code does not know
    {"mcp_servers": [{"type": "url", "url": "https://bank.example/mcp", "name": "bank"}]},
])
def test_a_request_that_enables_provider_side_tools_is_refused_before_it_is_sent(enables):
    """Server tools and the MCP connector run on Anthropic's side, inside the response, where no guard can decide them:
    the request hook refuses to send the request (the SDK does not retry it: ProviderToolsRefused is no Exception)."""
    from veriguard.enforce.integrations.anthropic_sdk import ProviderToolsRefused

    model = ScriptedModel(reply(*PROVIDER_SIDE_REPLY))
    with pytest.raises(ProviderToolsRefused, match="enables tools run on Anthropic's side"):
        hooked(model).beta.messages.create(model="claude-test", max_tokens=10,
                                           messages=[{"role": "user", "content": "Pay acme."}], **enables)
    assert model.bodies == []


def test_the_tool_runner_the_async_client_and_a_batch_are_refused_too(payments_build):
    from veriguard.enforce.integrations.anthropic_sdk import ProviderToolsRefused

    model, ran = ScriptedModel(reply(*PROVIDER_SIDE_REPLY)), []
    with pytest.raises(ProviderToolsRefused):
        hooked(model).beta.messages.tool_runner(
            model="claude-test", max_tokens=10, messages=[{"role": "user", "content": "Pay."}],
            tools=[payments_tool(guard(payments_build), ran), {"type": "web_search_20250305", "name": "web_search"}]
        ).until_done()
    with pytest.raises(ProviderToolsRefused):
        asyncio.run(hooked(model, asynchronous=True).beta.messages.create(
            model="claude-test", max_tokens=10, messages=[{"role": "user", "content": "Pay."}],
            mcp_servers=[{"type": "url", "url": "https://bank.example/mcp", "name": "bank"}]))
    with pytest.raises(ProviderToolsRefused):
        hooked(model).messages.batches.create(requests=[{"custom_id": "a", "params": {
            "model": "claude-test", "max_tokens": 1, "messages": [{"role": "user", "content": "x"}],
            "tools": [{"type": "code_execution_20250825", "name": "code_execution"}]}}])
    assert model.bodies == [] and ran == []


def test_client_tools_pass_the_request_hook(payments_build, tmp_path):
    """Tools whose calls come back as tool_use blocks (yours, bash, text editor, computer use, memory) are decided
    where they run: the hook lets such a request through, and the call is decided as before."""
    ran, log = [], tmp_path / "log.jsonl"
    model = ScriptedModel(tool_use_reply(("toolu_1", PAYMENT)), "Done.")
    hooked(model).beta.messages.tool_runner(
        model="claude-test", max_tokens=10, messages=[{"role": "user", "content": "Pay."}],
        tools=[payments_tool(guard(payments_build, log=log), ran), {"type": "bash_20250124", "name": "bash"},
               {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"},
               {"type": "computer_20251124", "name": "computer", "display_width_px": 800, "display_height_px": 600},
               {"type": "memory_20250818", "name": "memory"}]).until_done()
    assert ran == [45000] and [r[0] for r in records(log)] == [True] and len(model.bodies) == 2


def test_calls_the_provider_ran_are_recorded_as_refusals_by_split_tool_uses(payments_build, tmp_path):
    """A reply with server_tool_use / mcp_tool_use blocks (a client without the hook): those calls ran undecided.
    Each gets a refusal record that says so (before: none, and nothing was said), and no tool_result."""
    from veriguard.enforce.integrations.anthropic_sdk import split_tool_uses

    log = tmp_path / "log.jsonl"
    message = client(ScriptedModel(reply(*PROVIDER_SIDE_REPLY))).messages.create(
        model="claude-test", max_tokens=10, messages=[{"role": "user", "content": "Pay."}])
    to_run, refused = split_tool_uses(guard(payments_build, log=log), message, context=CONTEXT)
    assert to_run == [] and refused == []
    got = records(log)
    assert [(a, t, i) for a, t, i, _ in got] == [(False, "web_search", "srvtoolu_1"), (False, "send_payment", "mcptoolu_1")]
    assert all("ran on Anthropic's side, undecided" in why for *_, why in got)


def test_a_provider_side_call_under_terminate_stops_the_message(payments_build, tmp_path):
    from veriguard.enforce.integrations.anthropic_sdk import split_tool_uses

    log = tmp_path / "log.jsonl"
    message = {"content": [PROVIDER_SIDE_REPLY[0], {"type": "tool_use", "id": "toolu_1", "name": "send_payment",
                                                     "input": PAYMENT}]}
    with pytest.raises(RunTerminated, match="web_search"):
        split_tool_uses(guard(payments_build, "terminate", log=log), message, context=CONTEXT)
    assert [(a, t) for a, t, *_ in records(log)] == [(False, "web_search"), (False, "send_payment")]


def test_a_block_whose_model_dump_raises_is_refused_and_recorded(payments_build, tmp_path):
    from veriguard.enforce.integrations.anthropic_sdk import split_tool_uses

    class Broken:
        type, id, name, input = "tool_use", "toolu_9", "send_payment", OVER_LIMIT

        def model_dump(self):
            raise RuntimeError("cannot dump")

    log = tmp_path / "log.jsonl"
    to_run, refused = split_tool_uses(guard(payments_build, log=log), {"content": [Broken()]}, context=CONTEXT)
    assert to_run == [] and refused[0]["tool_use_id"] == "toolu_9" and refused[0]["is_error"] is True
    assert [(a, i) for a, _, i, _ in records(log)] == [(False, "toolu_9")]


def test_a_run_name_function_that_raises_refuses_the_call_with_a_record(payments_build, tmp_path):
    """`run=` given as a function (a contextvar read) that raises: the call is refused and recorded (before, the
    exception left the enforcement point before any record; the Anthropic runner sent its repr to the model)."""
    def no_conversation():
        raise LookupError("no conversation id in this context")

    log = tmp_path / "log.jsonl"
    ran = []
    g = guard(payments_build, log=log)
    outcome = g.check({"type": "tool_use", "name": "send_payment", "input": PAYMENT}, context=CONTEXT,
                      run=no_conversation)
    assert not outcome.allowed and "run's name could not be had" in outcome.message
    run_tools(ScriptedModel(tool_use_reply(("toolu_1", PAYMENT)), "Done."), payments_tool(g, ran, run=no_conversation))
    assert ran == [] and [(a, "LookupError" in why) for a, _, _, why in records(log)] == [(False, True)] * 2
    assert not g.check({"type": "tool_use", "name": "send_payment", "input": PAYMENT}, context=CONTEXT,
                       run=lambda: 7).allowed   # a name that is not a string


def test_a_tools_call_in_a_nested_batch_is_recorded(payments_build, tmp_path):
    from tests.unit.test_mcp_proxy import relay

    log = tmp_path / "log.jsonl"
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "send_payment", "arguments": OVER_LIMIT}}
    _, to_host, to_child = relay(payments_build, [("host", json.dumps([[call], [[call]]]).encode() + b"\n")], log=log)
    assert to_child == [] and to_host[0]["error"]["code"] == -32600
    assert [(a, t) for a, t, *_ in records(log)] == [(False, "send_payment")] * 2


# --- OpenAI Agents: policy_hooks ------------------------------------------------------------------------------------
def agents_fixture():
    return pytest.importorskip("agents", reason="openai-agents is an optional extra")


def completion(message, finish):
    return {"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": "gpt-test",
            "choices": [{"index": 0, "finish_reason": finish, "message": {"role": "assistant", **message}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


CALL_IDS = itertools.count(1)   # the SDK refuses a call id used twice in a run


def calls(*pairs):
    return completion({"content": None, "tool_calls": [
        {"id": f"call_{next(CALL_IDS)}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
        for name, arguments in pairs]}, "tool_calls")


class Script:
    def __init__(self, *replies):
        self.replies, self.bodies = list(replies), []

    def __call__(self, request):
        self.bodies.append(json.loads(request.content))
        return httpx2.Response(200, json=self.replies.pop(0) if self.replies else completion({"content": "Done."},
                                                                                             "stop"))


def model(script):
    from agents import OpenAIChatCompletionsModel
    from openai import AsyncOpenAI

    return OpenAIChatCompletionsModel("gpt-test", AsyncOpenAI(api_key="sk-test", max_retries=0, http_client=httpx2.AsyncClient(
        transport=httpx2.MockTransport(script))))


def pay_tool(ran, *guardrails):
    from agents import function_tool

    def send_payment(recipient: str, amount_cents: int, currency: str, method: str) -> str:
        """Send a payment."""
        ran.append(amount_cents)
        return f"sent {amount_cents}"
    return function_tool(send_payment, tool_input_guardrails=list(guardrails) or None)


def run_agent(agent, g, **kw):
    from agents import RunConfig, Runner

    from veriguard.enforce.integrations.openai_agents import policy_hooks

    return asyncio.run(Runner.run(agent, "Pay the invoices.", context=CONTEXT, hooks=policy_hooks(g, **kw),
                                  run_config=RunConfig(tracing_disabled=True)))


@pytest.mark.parametrize("where", ["beside", "handoff", "agent_as_tool", "hosted", "other_guard"])
def test_policy_hooks_refuse_a_run_where_the_model_could_call_a_tool_undecided(payments_build, tmp_path, where):
    """Without the hooks, each of these ran send_payment(250000) for a clerk (limit 100000) with no decision: a
    function tool the guardrail was not attached to, beside a guarded one, in an agent handed off to, or in an agent
    called as a tool; a hosted tool; a guardrail of another guard. The hooks refuse before the model is asked."""
    agents_fixture()
    from agents import Agent, WebSearchTool

    from veriguard.enforce.integrations.openai_agents import UnguardedTools, policy_guardrail

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    guarded_pay = pay_tool([], policy_guardrail(g))
    script = Script(calls(("transfer_to_payer", {})) if where == "handoff" else
                    calls(("payer", {"input": "pay"})) if where == "agent_as_tool" else
                    calls(("send_payment", OVER_LIMIT)), calls(("send_payment", OVER_LIMIT)))
    payer = Agent(name="payer", model=model(script), tools=[pay_tool(ran)])
    tools = {"beside": [guarded_pay, pay_tool(ran)], "handoff": [guarded_pay], "hosted": [guarded_pay, WebSearchTool()],
             "agent_as_tool": [guarded_pay, payer.as_tool("payer", "Pays invoices.")],
             "other_guard": [pay_tool(ran, policy_guardrail(guard(payments_build)))]}[where]
    front = Agent(name="front", model=model(script), tools=tools, handoffs=[payer] if where == "handoff" else [])
    with pytest.raises(UnguardedTools, match="does not decide"):
        run_agent(front, g)
    got = records(log)   # the refusal to start is recorded (G22), and is the only record
    assert ran == [] and script.bodies == [] and len(got) == 1 and got[0][0] is False
    assert got[0][3].startswith("refused to ask the model")


def test_policy_hooks_let_a_guarded_graph_run_and_what_unguarded_names(payments_build, tmp_path):
    agents_fixture()
    from agents import Agent, function_tool

    from veriguard.enforce.integrations.openai_agents import policy_agent_tool, policy_guardrail

    log = tmp_path / "log.jsonl"
    g, ran, looked = guard(payments_build, log=log), [], []
    pay = pay_tool(ran, policy_guardrail(g))

    @function_tool
    def lookup_invoice(number: str) -> str:
        """Look an invoice up."""
        looked.append(number)
        return "invoice 7: 450 USD to acme-supplies"

    script = Script(calls(("transfer_to_payer", {})), calls(("lookup_invoice", {"number": "7"})),
                    calls(("send_payment", PAYMENT)))
    payer = Agent(name="payer", model=model(script), tools=[pay, lookup_invoice])
    front = Agent(name="front", model=model(script), tools=[pay, policy_agent_tool(
        payer, g, unguarded=["lookup_invoice"], tool_name="payer2", tool_description="Pays.")], handoffs=[payer])
    run_agent(front, g, unguarded=["lookup_invoice", "payer2"])   # payer2 runs undecided, its own tools decided
    assert ran == [45000] and looked == ["7"] and [r[0] for r in records(log)] == [True]


@pytest.mark.parametrize("mode", ["enforce", "shadow"])
def test_arguments_that_do_not_fit_the_tool_function_are_refused_and_recorded(payments_build, tmp_path, mode):
    """A call of the guarded function that does not bind to its signature is refused with a record (shadow mode
    too: there is no call to run), not left to raise a TypeError unrecorded."""
    from anthropic.lib.tools import ToolError

    from veriguard.enforce.integrations.anthropic_sdk import guarded

    log = tmp_path / "log.jsonl"
    g = guard(payments_build, log=log, mode=mode)

    @guarded(g, context=CONTEXT)
    def send_payment(recipient: str, amount_cents: int, currency: str, method: str) -> str:
        return "sent"

    with pytest.raises(ToolError, match="do not fit send_payment"):
        send_payment("acme-supplies", 45000, "USD", "ach", "extra")
    assert [(a, t) for a, t, *_ in records(log)] == [(False, "send_payment")]


def test_require_guarded_refuses_tools_the_runner_would_run_undecided(payments_build, tmp_path):
    """A plain @beta_tool beside the guarded one ran wire_money(9999999) with no decision (the runner runs what it is
    given); so would a guarded function of another guard, or a built-in tool. require_guarded names them."""
    from anthropic.lib.tools import beta_tool

    from veriguard.enforce.integrations.anthropic_sdk import UnguardedTools, require_guarded

    log = tmp_path / "log.jsonl"
    g, ran, wired = guard(payments_build, log=log), [], []

    @beta_tool
    def wire_money(recipient: str, amount_cents: int) -> str:
        """Wire money."""
        wired.append(amount_cents)
        return "wired"

    mine, others = payments_tool(g, ran), payments_tool(guard(payments_build), ran)
    for tools, named in [([mine, wire_money], "'wire_money'"), ([others], "'send_payment'"),
                         ([mine, {"type": "web_search_20250305", "name": "web_search"}], "web_search_20250305")]:
        with pytest.raises(UnguardedTools, match=named):
            require_guarded(g, tools)
    model = ScriptedModel(tool_use_reply(("toolu_1", PAYMENT)), "Done.")
    custom = {"name": "lookup", "description": "Look up.", "input_schema": {"type": "object"}}
    tools = require_guarded(g, [mine, wire_money, custom], unguarded=["wire_money"])
    client(model).beta.messages.tool_runner(model="claude-test", max_tokens=10, tools=tools,
                                            messages=[{"role": "user", "content": "Pay."}]).until_done()
    # the three refusals are recorded (G22), then the allowed call
    assert ran == [45000] and wired == [] and [r[0] for r in records(log)] == [False, False, False, True]


def streamed_tool_use(call_id, payment):
    """A Messages stream (SSE) of one send_payment tool_use whose input arrives in 7-character pieces."""
    def event(e):
        return f"event: {e['type']}\ndata: {json.dumps(e)}\n\n"
    text = json.dumps(payment)
    events = [{"type": "message_start", "message": {"id": "msg", "type": "message", "role": "assistant",
                                                    "model": "claude-test", "content": [], "stop_reason": None,
                                                    "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}},
              {"type": "content_block_start", "index": 0,
               "content_block": {"type": "tool_use", "id": call_id, "name": "send_payment", "input": {}}}]
    events += [{"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": text[k:k + 7]}}
               for k in range(0, len(text), 7)]
    events += [{"type": "content_block_stop", "index": 0},
               {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None}, "usage": {"output_tokens": 1}},
               {"type": "message_stop"}]
    return httpx2.Response(200, headers={"content-type": "text/event-stream"},
                           content="".join(map(event, events)).encode())


@pytest.mark.parametrize("mode", ["enforce", "shadow"])
def test_a_snapshot_of_a_stream_still_running_is_not_decided(payments_build, tmp_path, mode):
    """Mid-stream, the snapshot's tool_use input is parsed from a cut JSON text: amount_cents 45000999 (over the
    clerk's limit) read as 4, which split_tool_uses allowed. A message whose stop_reason is null is refused, recorded;
    the finished one is decided as before."""
    from veriguard.enforce.integrations.anthropic_sdk import split_tool_uses

    log = tmp_path / "log.jsonl"
    g = guard(payments_build, log=log, mode=mode)
    over = {"recipient": "acme-supplies", "currency": "USD", "method": "ach", "amount_cents": 45000999}
    allowed_snapshots = []
    with client(ScriptedModel(streamed_tool_use("toolu_1", over))).messages.stream(
            model="claude-test", max_tokens=10, messages=[{"role": "user", "content": "Pay."}]) as stream:
        for _ in stream:
            snapshot = stream.current_message_snapshot
            if snapshot.stop_reason is None and any(b.type == "tool_use" and "amount_cents" in b.input
                                                    for b in snapshot.content):
                to_run, refused = split_tool_uses(g, snapshot, context=CONTEXT)
                allowed_snapshots += [b.input["amount_cents"] for b in to_run]
                assert refused and "not finished" in refused[0]["content"]
        final = stream.get_final_message()
    assert allowed_snapshots == [] and final.content[0].input["amount_cents"] == 45000999
    unfinished = [r for r in records(log) if "not finished" in r[3]]
    assert unfinished and all(not a for a, *_ in unfinished)


@pytest.mark.parametrize("make", ["folder", "link", "fifo", "no_parent", "parent_is_file"])
def test_a_log_that_cannot_be_written_stops_the_proxy_before_it_starts(payments_build, tmp_path, capsys, make):
    """`--log` naming a folder, a FIFO, a symbolic link or a path under a missing folder started the proxy, which then
    refused every call (the log could not be written): bad input, exit 2 before the server starts."""
    import os

    from veriguard.enforce.integrations.mcp_proxy import main

    log = tmp_path / "log.jsonl"
    if make == "folder":
        log.mkdir()
    elif make == "link":
        (tmp_path / "real.jsonl").write_text("")
        log.symlink_to(tmp_path / "real.jsonl")
    elif make == "fifo":
        os.mkfifo(log)
    elif make == "parent_is_file":
        (tmp_path / "f").write_text("")
        log = tmp_path / "f" / "log.jsonl"
    else:
        log = tmp_path / "missing" / "log.jsonl"
    assert main(["--build", str(payments_build), "--log", str(log), "--", "/bin/true"]) == 2
    err = capsys.readouterr().err
    assert "--log" in err and "Traceback" not in err and "handshake" not in err


def test_a_request_body_the_hook_could_read_otherwise_than_the_server_is_refused():
    """The hook reads the body strictly: with a duplicate key ({"tools": [web_search], "tools": []}) a lenient parser
    takes the last and let it through, while a server that takes the first would enable the server tool."""
    from veriguard.enforce.integrations.anthropic_sdk import ProviderToolsRefused, refuse_provider_tools

    body = b'{"model": "m", "tools": [{"type": "web_search_20250305", "name": "web_search"}], "tools": []}'
    request = httpx2.Request("POST", "https://api.anthropic.com/v1/messages", content=body,
                             headers={"content-type": "application/json"})
    with pytest.raises(ProviderToolsRefused, match="cannot be read"):
        refuse_provider_tools(request)
    refuse_provider_tools(httpx2.Request("POST", "https://api.anthropic.com/v1/messages", content=b'{"tools": []}',
                                         headers={"content-type": "application/json"}))


# --- one allowed call at a time when the policy reads facts the calls change -----------------------------------------
NINETY = {**PAYMENT, "amount_cents": 90000}   # six of them: 540000, over a clerk's daily 500000


def test_a_reply_with_several_calls_runs_one_when_the_policy_reads_a_ledger(payments_build, tmp_path):
    """Six payments of 90000 in one reply, each decided against the same ledger (0 sent today): all six were allowed,
    540000 against a clerk's daily limit of 500000. The first runs; the others are refused (recorded, not counted as
    denials: replan_halt does not halt) and sent again one by one, each decided on the ledger the previous updated."""
    from veriguard.enforce.integrations.anthropic_sdk import split_tool_uses

    log, ledger = tmp_path / "log.jsonl", [0]
    g = guard(payments_build, "replan_halt", log=log)

    def facts():
        return {**CONTEXT, "ledger": {"sent_today_cents": ledger[0]}}

    def reply_of(n):
        return {"stop_reason": "tool_use", "content": [{"type": "tool_use", "id": f"toolu_{n}_{i}",
                                                        "name": "send_payment", "input": NINETY} for i in range(6 - n)]}
    sent = []
    for n in range(6):
        to_run, refused = split_tool_uses(g, reply_of(n), context=facts)
        assert len(to_run) == (n < 5) and all("one at a time" in r["content"] for r in refused[n == 5:])
        for block in to_run:
            ledger[0] += block["input"]["amount_cents"]
            sent.append(block["id"])
    assert ledger[0] == 450000 and len(sent) == 5 and g.halted() == ""   # the sixth would pass the daily limit


def test_the_mcp_proxy_runs_one_allowed_call_at_a_time_when_the_policy_reads_a_ledger(payments_build, tmp_path):
    from tests.unit.test_mcp_proxy import relay

    log = tmp_path / "log.jsonl"
    call = {"name": "send_payment", "arguments": NINETY}
    proxy, to_host, to_child = relay(payments_build, [
        ("host", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}),
        ("host", {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}),     # while 1 runs: refused
        ("host", {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "send_payment",
                                                                                  "arguments": OVER_LIMIT}}),
        ("child", {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "sent"}]}}),
        ("host", {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": call}),     # 1 answered: decided
    ], log=log)
    assert [(m["id"], m["params"]["arguments"]["amount_cents"]) for m in to_child] == [(1, 90000), (2, 90000)]
    busy, denied, sent = to_host
    assert busy["id"] == 2 and "one at a time" in busy["result"]["content"][0]["text"]
    assert denied["id"] == 3 and "per-payment limit" in denied["result"]["content"][0]["text"]   # still decided
    assert sent["id"] == 1 and list(proxy.pending) == [2]
    # one record per call: 2's is the refusal (A23: before, an allow record for 2 and then its refusal)
    assert [(r[0], r[2]) for r in records(log)] == [(True, "1"), (False, "2"), (False, "3"), (True, "4")]


def test_parallel_agents_calls_run_one_at_a_time_with_policy_hooks(payments_build, tmp_path):
    """Six parallel send_payment(90000) calls, the ledger read live: each guardrail decided on 0 sent today and all six
    ran (540000 past the clerk's daily 500000). With policy_hooks the first allowed runs, the others are refused to be
    sent again, and the sixth payment, decided on a ledger of 450000, is denied."""
    agents_fixture()
    from agents import Agent, function_tool

    from veriguard.enforce.integrations.openai_agents import policy_guardrail

    log, ledger, ran = tmp_path / "log.jsonl", [0], []
    g = guard(payments_build, log=log)

    async def send_payment(recipient: str, amount_cents: int, currency: str, method: str) -> str:
        """Send a payment."""
        await asyncio.sleep(0.01)
        ledger[0] += amount_cents
        ran.append(amount_cents)
        return "sent"

    def facts(data):
        return {**CONTEXT, "ledger": {"sent_today_cents": ledger[0]}}

    tool = function_tool(send_payment, tool_input_guardrails=[policy_guardrail(g, context=facts)])
    script = Script(*[calls(*[("send_payment", NINETY)] * (6 - turn)) for turn in range(6)])
    run_agent(Agent(name="payer", model=model(script), tools=[tool]), g)
    assert ran == [90000] * 5 and ledger[0] == 450000
    assert "daily limit" in [m for m in script.bodies[-1]["messages"] if m["role"] == "tool"][-1]["content"]


def test_a_policy_that_reads_only_the_call_decides_parallel_calls_as_before(payments_build):
    """Exclusive decisions cost parallel calls a retry only where the policy reads facts beside the call: a policy whose
    arguments all come from the tool call (an allowlist of tools) lets each of them run."""
    from types import SimpleNamespace

    from veriguard.enforce.guard import Guard

    monitor = guard(payments_build).monitor
    calls_only = SimpleNamespace(**{**vars(monitor), "extractors": {"payment": monitor.extractors["payment"]}},
                                 check=monitor.check, refuse=monitor.refuse)
    call = {"type": "tool_use", "name": "send_payment", "input": NINETY}
    for m, second_runs in ((monitor, False), (calls_only, True)):
        g = Guard(m)
        assert g.check(call, context=CONTEXT, exclusive=True).allowed
        assert g.check(call, context=CONTEXT, exclusive=True).allowed is second_runs   # the first has not finished
