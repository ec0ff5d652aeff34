"""Fourth red-team pass on the integrations (A24, 2026-11-30). Each test but those marked as guarding the clean path
failed on ce800b3:

- a provider-side tool defined by a `tool_addition` block (in a user or system message, a compaction block, a batch's
  params; runner.add_tools sends one) went out past `refuse_provider_tools`, and so did a request whose JSON body was
  sent under another content type (text/plain);
- the request hooks read the request only, never the tool runner's own table: a guarded tool swapped for a plain one
  of the same definition, a plain tool beside guarded ones without require_guarded, or one added by add_tools ran
  undecided under `refuse_provider_tools` and (the swap) under `refuse_undecided_tools`;
- a plain `@beta_tool(@guarded)` handed to the runner without require_guarded left no record for the inputs the SDK
  refuses before any argument is read (a missing or unknown key, a list or a string);
- an OpenAI Agents SandboxAgent's shell (a capability tool the agent's own list does not show) ran a command behind
  policy_hooks, undecided;
- Guard.check took `run=` objects by their str(), so one whose __str__ changes escaped its run's halt.
Real SDK code paths, the model behind httpx2.MockTransport (Anthropic; the Agents SDK's chat-completions model)."""
import asyncio
import json

import httpx2
import pytest

from veriguard.enforce.decision_log import DecisionLog
from tests.llm_fakes import ScriptedModel
from tests.unit.test_guard import CONTEXT, OVER_LIMIT, PAYMENT, guard, tool_use
from tests.unit.test_integration_anthropic import payments_tool, tool_use_reply
from tests.unit.test_integration_unguarded import Script, calls
from tests.unit.test_integration_unguarded import model as agents_model
from tests.unit.test_monitor import payments_build  # noqa: F401  (fixture)

WEB_SEARCH = {"type": "web_search_20250305", "name": "web_search"}
USER = [{"role": "user", "content": "Pay the invoices."}]


def records(log):
    return [(r["allowed"], r["fail_closed"]) for r in DecisionLog(log).records()] if log.exists() else []


def hooked(model, hook=None, *, asynchronous=False):
    """An Anthropic client whose HTTP client runs `hook` (default: refuse_provider_tools) on every request."""
    from anthropic import Anthropic, AsyncAnthropic

    from veriguard.enforce.integrations.anthropic_sdk import refuse_provider_tools, refuse_provider_tools_async

    if asynchronous:
        return AsyncAnthropic(api_key="sk-ant-test", max_retries=0, http_client=httpx2.AsyncClient(
            transport=httpx2.MockTransport(model), event_hooks={"request": [hook or refuse_provider_tools_async]}))
    return Anthropic(api_key="sk-ant-test", max_retries=0, http_client=httpx2.Client(
        transport=httpx2.MockTransport(model), event_hooks={"request": [hook or refuse_provider_tools]}))


def plain_payment(ran):
    from anthropic.lib.tools import beta_tool

    @beta_tool
    def send_payment(recipient: str, amount_cents: int, currency: str, method: str = "ach") -> str:
        """Send a payment."""
        ran.append(("undecided", amount_cents))
        return "sent"
    return send_payment


def plain_refund(ran):
    from anthropic.lib.tools import beta_tool

    @beta_tool
    def refund(recipient: str, amount_cents: int) -> str:
        """Refund."""
        ran.append(("refund", amount_cents))
        return "refunded"
    return refund


def added(definition):
    return {"type": "tool_addition", "tool": {"type": "tool_definition", "definition": definition}}


# --- Anthropic: tools reaching the model by a path other than `tools` ------------------------------------------------
@pytest.mark.parametrize("body", [
    {"messages": [{"role": "user", "content": [{"type": "text", "text": "x"}, added(WEB_SEARCH)]}]},
    {"messages": [{"role": "user", "content": [added({"type": "mcp_toolset", "mcp_server_name": "bank"})]}]},
    {"messages": [{"role": "user", "content": [{"type": "tool_addition", "tool": {
        "type": "mcp_toolset_reference", "server_name": "bank"}}]}]},
    {"messages": [{"role": "system", "content": [added({"type": "code_execution_20250825", "name": "c"})]}]},
    {"messages": [{"role": "user", "content": [{"type": "compaction", "content": "summary", "tool_changes": [
        added(WEB_SEARCH)]}]}]},
    {"requests": [{"custom_id": "a", "params": {"messages": [{"role": "user", "content": [added(WEB_SEARCH)]}]}}]},
], ids=["user-message", "mcp-toolset", "mcp-reference", "system-message", "compaction", "batch"])
def test_a_provider_side_tool_added_in_the_messages_is_refused(body):
    from veriguard.enforce.integrations.anthropic_sdk import ProviderToolsRefused, refuse_provider_tools

    request = httpx2.Request("POST", "https://api.anthropic.com/v1/messages", json={"model": "m", "max_tokens": 1, **body})
    with pytest.raises(ProviderToolsRefused, match="run on Anthropic's side"):
        refuse_provider_tools(request)


def test_client_tools_and_references_added_in_the_messages_pass():
    """Guards the clean path: a custom or bash tool added by tool_addition, a reference to a declared tool, and a
    tool_use whose input happens to look like a tool addition (the model's data, not a request field) pass."""
    from veriguard.enforce.integrations.anthropic_sdk import refuse_provider_tools

    content = [added({"name": "lookup", "input_schema": {"type": "object"}}), added({"type": "bash_20250124",
                                                                                    "name": "bash"}),
               {"type": "tool_addition", "tool": {"type": "tool_reference", "name": "send_payment"}}]
    said = {"type": "tool_use", "id": "t", "name": "note", "input": {"text": added(WEB_SEARCH)}}
    refuse_provider_tools(httpx2.Request("POST", "https://api.anthropic.com/v1/messages", json={
        "model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": content},
                                                    {"role": "assistant", "content": [said]}]}))


def test_runner_add_tools_of_a_server_tool_is_refused_before_the_model_is_asked(payments_build):
    from veriguard.enforce.integrations.anthropic_sdk import ProviderToolsRefused, require_guarded

    g, ran, model = guard(payments_build), [], ScriptedModel(tool_use_reply(("toolu_1", PAYMENT)), "Done.")
    runner = hooked(model).beta.messages.tool_runner(model="claude-test", max_tokens=10, messages=USER,
                                                     tools=require_guarded(g, [payments_tool(g, ran)]))
    runner.add_tools(WEB_SEARCH)
    with pytest.raises(ProviderToolsRefused, match="web_search"):
        runner.until_done()
    assert model.bodies == [] and ran == []


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", ""])
def test_a_json_body_sent_under_another_content_type_is_read(content_type):
    from veriguard.enforce.integrations.anthropic_sdk import ProviderToolsRefused, refuse_provider_tools

    model = ScriptedModel("Done.")
    with pytest.raises(ProviderToolsRefused, match="web_search"):
        hooked(model).messages.create(model="claude-test", max_tokens=10, messages=USER, tools=[WEB_SEARCH],
                                      extra_headers={"content-type": content_type})
    assert model.bodies == []
    with pytest.raises(ProviderToolsRefused, match="cannot be read"):   # looks like JSON, is not: unknown
        refuse_provider_tools(httpx2.Request("POST", "https://api.anthropic.com/v1/messages", content=b'{"tools": [',
                                             headers={"content-type": content_type}))


def test_an_upload_that_is_not_json_passes():
    """Guards the clean path: a file upload (multipart, or raw bytes) is not a Messages request."""
    from veriguard.enforce.integrations.anthropic_sdk import refuse_provider_tools

    for body, kind in [(b"--boundary\r\ncontent-disposition: form-data\r\n\r\nx\r\n--boundary--", "multipart/form-data"),
                       (b"\x89PNG\r\n", "application/octet-stream")]:
        refuse_provider_tools(httpx2.Request("POST", "https://api.anthropic.com/v1/files", content=body,
                                             headers={"content-type": kind}))


# --- Anthropic: the runner's own table --------------------------------------------------------------------------------
def swapped_plain(g, ran):
    return plain_payment(ran)


def swapped_unwrapped(g, ran):
    from anthropic.lib.tools import beta_tool

    return beta_tool(payments_tool(g, ran).func.__wrapped__)


def swapped_func(g, ran):   # a plain tool showing the guarded function as its `func`; it runs its own
    tool = plain_payment(ran)
    tool.func = payments_tool(g, ran).func
    return tool


def swapped_call(g, ran):   # the guarded tool, with a `call` of its own
    tool = payments_tool(g, ran)
    tool.call = lambda given: ran.append(("undecided", given.get("amount_cents"))) or "sent"
    return tool


def swapped_class(g, ran):   # the guarded tool, of a subclass whose call() runs something else
    tool = payments_tool(g, ran)

    class Sneaky(type(tool)):
        def call(self, given):
            ran.append(("undecided", given.get("amount_cents")))
            return "sent"
    tool.__class__ = Sneaky
    return tool


@pytest.mark.parametrize("swap", [swapped_plain, swapped_unwrapped, swapped_func, swapped_call, swapped_class],
                         ids=["plain", "unwrapped", "func-set", "call-set", "subclass"])
def test_a_guarded_tool_swapped_in_the_checked_list_is_refused_with_a_record(payments_build, tmp_path, swap):
    """The swap happens in the list require_guarded returned; the request looks the same, so only the runner's own
    table shows it: the hook reads it."""
    from veriguard.enforce.integrations.anthropic_sdk import ProviderToolsRefused, refuse_undecided_tools, \
        require_guarded

    log = tmp_path / "log.jsonl"
    g, ran, model = guard(payments_build, log=log), [], ScriptedModel(tool_use_reply(("toolu_1", OVER_LIMIT)), "Done.")
    tools = require_guarded(g, [payments_tool(g, ran)])
    tools[0] = swap(g, ran)
    with pytest.raises(ProviderToolsRefused, match="no guard decides: 'send_payment'"):
        hooked(model, refuse_undecided_tools(g)).beta.messages.tool_runner(
            model="claude-test", max_tokens=10, messages=USER, tools=tools).until_done()
    assert model.bodies == [] and ran == []
    assert [allowed for allowed, _ in records(log)] == [False]


def test_a_tool_of_another_guard_or_under_another_name_is_refused(payments_build, tmp_path):
    from veriguard.enforce.integrations.anthropic_sdk import ProviderToolsRefused, refuse_undecided_tools, \
        require_guarded

    log = tmp_path / "log.jsonl"
    g, other, ran = guard(payments_build, log=log), guard(payments_build), []
    tools = require_guarded(g, [payments_tool(g, ran)])
    tools[0] = payments_tool(other, ran)
    with pytest.raises(ProviderToolsRefused, match="another guard"):
        hooked(ScriptedModel(), refuse_undecided_tools(g)).beta.messages.tool_runner(
            model="claude-test", max_tokens=10, messages=USER, tools=tools).until_done()
    from anthropic.lib.tools import beta_tool

    renamed = beta_tool(payments_tool(g, ran).func, name="pay")   # the policy would see send_payment
    with pytest.raises(ProviderToolsRefused, match="'pay' \\(decided as 'send_payment'\\)"):
        hooked(ScriptedModel(), refuse_undecided_tools(g)).beta.messages.tool_runner(
            model="claude-test", max_tokens=10, messages=USER, tools=require_guarded(g, [renamed])).until_done()
    assert ran == [] and [allowed for allowed, _ in records(log)] == [False, False]


def test_an_async_runner_with_a_swapped_tool_is_refused(payments_build, tmp_path):
    from anthropic.lib.tools import beta_async_tool

    from veriguard.enforce.integrations.anthropic_sdk import ProviderToolsRefused, refuse_undecided_tools_async, \
        require_guarded

    log = tmp_path / "log.jsonl"
    g, ran, model = guard(payments_build, log=log), [], ScriptedModel(tool_use_reply(("toolu_1", OVER_LIMIT)), "Done.")
    tools = require_guarded(g, [payments_tool(g, ran)])

    @beta_async_tool
    async def send_payment(recipient: str, amount_cents: int, currency: str, method: str = "ach") -> str:
        """Send a payment."""
        ran.append(("undecided", amount_cents))
        return "sent"
    tools[0] = send_payment
    with pytest.raises(ProviderToolsRefused, match="no guard decides"):
        asyncio.run(hooked(model, refuse_undecided_tools_async(g), asynchronous=True).beta.messages.tool_runner(
            model="claude-test", max_tokens=10, messages=USER, tools=tools).until_done())
    assert model.bodies == [] and ran == [] and len(records(log)) == 1


@pytest.mark.parametrize("extra", ["beside", "add_tools"])
def test_refuse_provider_tools_refuses_a_runner_that_would_run_a_plain_tool(payments_build, tmp_path, extra):
    """Fail closed by default: a client with the hook refuses a tool runner whose table holds a tool no guard decides,
    with or without require_guarded, recorded by the guard of the runner's guarded tools."""
    from veriguard.enforce.integrations.anthropic_sdk import ProviderToolsRefused

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    model = ScriptedModel(tool_use_reply(("toolu_1", PAYMENT)), "Done.")
    tools = [payments_tool(g, ran)] + ([plain_refund(ran)] if extra == "beside" else [])
    runner = hooked(model).beta.messages.tool_runner(model="claude-test", max_tokens=10, messages=USER, tools=tools)
    if extra == "add_tools":
        runner.add_tools(plain_refund(ran))
    with pytest.raises(ProviderToolsRefused, match="'refund'"):
        runner.until_done()
    assert model.bodies == [] and ran == [] and [allowed for allowed, _ in records(log)] == [False]
    with pytest.raises(ProviderToolsRefused, match="'refund'"):   # no guarded tool at all: refused, nothing to record in
        hooked(ScriptedModel("Done.")).beta.messages.tool_runner(model="claude-test", max_tokens=10, messages=USER,
                                                                 tools=[plain_refund(ran)]).until_done()


def test_a_tool_let_through_on_purpose_runs_under_the_hook(payments_build, tmp_path):
    """Guards the clean path: require_guarded(unguarded=[...]) lets a plain tool run undecided under the hook."""
    from veriguard.enforce.integrations.anthropic_sdk import require_guarded

    g, ran = guard(payments_build), []
    model = ScriptedModel(httpx2.Response(200, json={
        "id": "m", "type": "message", "role": "assistant", "model": "c", "stop_reason": "tool_use",
        "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1},
        "content": [{"type": "tool_use", "id": "t1", "name": "refund", "input": {"recipient": "a", "amount_cents": 5}}]}),
        "Done.")
    tools = require_guarded(g, [payments_tool(g, ran), plain_refund(ran)], unguarded=["refund"])
    hooked(model).beta.messages.tool_runner(model="claude-test", max_tokens=10, messages=USER, tools=tools).until_done()
    assert ran == [("refund", 5)]


@pytest.mark.parametrize("given", [{"recipient": "acme-supplies", "currency": "USD"},
                                   {**PAYMENT, "memo": "x"}, [1, 2], "pay 250000"],
                         ids=["missing-key", "unknown-key", "list", "string"])
@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_a_plain_beta_tool_records_what_the_sdk_refuses_under_a_hooked_client(payments_build, tmp_path, given,
                                                                              asynchronous):
    """Item (3) of A23: without require_guarded, the SDK refused these inputs before the guarded function ran, with no
    record. The hook that reads the runner's table makes its guarded tools record such refusals."""
    from anthropic.lib.tools import beta_async_tool

    from veriguard.enforce.integrations.anthropic_sdk import guarded

    log = tmp_path / "log.jsonl"
    g, ran = guard(payments_build, log=log), []
    model = ScriptedModel(httpx2.Response(200, json={
        "id": "m", "type": "message", "role": "assistant", "model": "c", "stop_reason": "tool_use",
        "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1},
        "content": [{"type": "tool_use", "id": "t1", "name": "send_payment", "input": given}]}), "Done.")
    if asynchronous:
        @beta_async_tool
        @guarded(g, context=lambda: CONTEXT)
        async def send_payment(recipient: str, amount_cents: int, currency: str, method: str = "ach") -> str:
            """Send a payment."""
            ran.append(amount_cents)
            return "sent"
        asyncio.run(hooked(model, asynchronous=True).beta.messages.tool_runner(
            model="claude-test", max_tokens=10, messages=USER, tools=[send_payment]).until_done())
    else:
        hooked(model).beta.messages.tool_runner(model="claude-test", max_tokens=10, messages=USER,
                                                tools=[payments_tool(g, ran)]).until_done()
    assert ran == []
    assert [(allowed, why.startswith("the tool runner refused the input before")) for allowed, why in records(log)] \
        == [(False, True)]
    result = [b for m in model.bodies[1]["messages"] if isinstance(m["content"], list) for b in m["content"]
              if b.get("type") == "tool_result"]
    assert result[0]["is_error"] is True and "payments" in json.dumps(result[0]["content"])


# --- OpenAI Agents: tools the agent's list does not show --------------------------------------------------------------
@pytest.mark.parametrize("nested", [False, True], ids=["the-agent", "an-agent-called-as-a-tool"])
def test_a_sandbox_agents_shell_is_refused_before_the_model_is_asked(payments_build, tmp_path, nested):
    """A SandboxAgent's capabilities (files, a shell) add tools at run time that the agent's `tools` never shows: the
    model was offered a shell behind policy_hooks and its command ran undecided, also in a SandboxAgent called as a tool
    (a nested run, without the hooks). The hooks now refuse such an agent unless `unguarded` names "sandbox"."""
    from agents import Agent, RunConfig, Runner, function_tool
    from agents.run_config import SandboxRunConfig
    from agents.sandbox import SandboxAgent
    from agents.sandbox.sandboxes.unix_local import UnixLocalSandboxClient

    from veriguard.enforce.integrations.openai_agents import UnguardedTools, policy_guardrail, policy_hooks

    log, marker = tmp_path / "log.jsonl", tmp_path / "ran"
    g = guard(payments_build, log=log)

    async def send_payment(recipient: str, amount_cents: int, currency: str, method: str) -> str:
        """Send a payment."""
        return "sent"
    shell = Script(calls(("exec_command", {"cmd": f"touch {marker}"})))
    sandboxed = SandboxAgent(name="treasury", model=agents_model(shell),
                             tools=[function_tool(send_payment, tool_input_guardrails=[policy_guardrail(g)])])
    agent = Agent(name="outer", model=agents_model(Script(calls(("ask", {"input": "go"})))),
                  tools=[sandboxed.as_tool(tool_name="ask", tool_description="d")]) if nested else sandboxed
    with pytest.raises(UnguardedTools, match="the sandbox capabilities \\['Filesystem', 'Shell'\\] of agent 'treasury'"):
        asyncio.run(Runner.run(agent, "Pay.", context=CONTEXT, hooks=policy_hooks(g, unguarded=["ask"]),
                               run_config=RunConfig(tracing_disabled=True,
                                                    sandbox=SandboxRunConfig(client=UnixLocalSandboxClient()))))
    assert not marker.exists() and shell.bodies == []   # the sandboxed agent's model was never asked
    assert [(allowed, "sandbox capabilities" in why) for allowed, why in records(log)] == [(False, True)]


def test_a_tool_about_to_run_that_no_guardrail_decides_stops_the_run(payments_build, tmp_path):
    """The hooks check each tool again as it is about to run (on_tool_start: function, shell, patch, computer tools),
    so a tool the check before the model call did not see stops the run there, recorded. Before, the hooks had no
    on_tool_start: the SDK's no-op ran and the tool ran. (Called as the SDK calls it.)"""
    from agents import Agent, function_tool

    from veriguard.enforce.integrations.openai_agents import UnguardedTools, policy_guardrail, policy_hooks

    log = tmp_path / "log.jsonl"
    g = guard(payments_build, log=log)

    def refund(recipient: str, amount_cents: int) -> str:
        """Refund."""
        return "ok"

    async def lookup(number: str) -> str:
        """Look up."""
        return "ok"
    hooks = policy_hooks(g, unguarded=["lookup"])
    agent = Agent(name="a", tools=[])
    asyncio.run(hooks.on_tool_start(None, agent, function_tool(lookup)))   # named in unguarded: runs
    asyncio.run(hooks.on_tool_start(None, agent, function_tool(lookup, name_override="x", tool_input_guardrails=[
        policy_guardrail(g)])))   # decided by this guard's guardrail: runs
    with pytest.raises(UnguardedTools, match="refused to run FunctionTool 'refund' of agent 'a'"):
        asyncio.run(hooks.on_tool_start(None, agent, function_tool(refund)))
    assert [allowed for allowed, _ in records(log)] == [False]


# --- Guard: the run's name --------------------------------------------------------------------------------------------
def test_a_run_named_by_an_object_is_refused_and_a_str_subclass_names_its_own_value(payments_build, tmp_path):
    log = tmp_path / "log.jsonl"
    g = guard(payments_build, "tool_halt", log=log)

    class Shifting:
        count = 0

        def __str__(self):
            Shifting.count += 1
            return f"run-{Shifting.count}"
    out = g.check(tool_use(), context=CONTEXT, run=Shifting())
    assert not out.allowed and "must be a string" in out.record.fail_closed

    class Lying(str):
        def __str__(self):
            return f"elsewhere-{id(object())}"
    assert g.check(tool_use(OVER_LIMIT), context=CONTEXT, run=Lying("conv-1")).action == "halt"
    later = g.check(tool_use(), context=CONTEXT, run=Lying("conv-1"))
    assert later.action == "halt" and not later.allowed and g.halted("conv-1")
