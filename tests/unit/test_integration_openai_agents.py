"""The OpenAI Agents SDK integration: the tool input guardrail with the SDK's Runner and a scripted
model behind the OpenAI client's own HTTP layer (httpx2.MockTransport serving Chat Completions)."""
import asyncio
import json

import httpx2
import pytest

from veriguard.enforce.decision_log import DecisionLog
from tests.unit.test_guard import CONTEXT, OVER_LIMIT, PAYMENT, guard
from tests.unit.test_monitor import payments_build  # noqa: F401  (fixture)


@pytest.fixture(autouse=True)
def sdk():
    """The SDK, imported when a test runs, not at collection (2 s of CPU in every pytest-xdist process)."""
    return pytest.importorskip("agents", reason="openai-agents is an optional extra")


def completion(message, finish):
    return {"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": "gpt-test",
            "choices": [{"index": 0, "finish_reason": finish, "message": {"role": "assistant", **message}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}}


def call(arguments, call_id):
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return completion({"content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": "send_payment", "arguments": text}}]}, "tool_calls")


def answer(text):
    return completion({"content": text}, "stop")


class Script:
    def __init__(self, *replies):
        self.replies, self.bodies = list(replies), []

    def __call__(self, request):
        self.bodies.append(json.loads(request.content))
        return httpx2.Response(200, json=self.replies.pop(0))

    def tool_messages(self):
        return [m for m in self.bodies[-1]["messages"] if m["role"] == "tool"]


def run(script, g, ran, *, run_context=CONTEXT, **kw):
    from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner, function_tool
    from openai import AsyncOpenAI

    from veriguard.enforce.integrations.openai_agents import policy_guardrail

    @function_tool(tool_input_guardrails=[policy_guardrail(g, **kw)])
    def send_payment(recipient: str, amount_cents: int, currency: str, method: str) -> str:
        """Send a payment."""
        ran.append(amount_cents)
        return f"sent {amount_cents}"

    model = OpenAIChatCompletionsModel("gpt-test", AsyncOpenAI(
        api_key="sk-test", http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(script))))
    agent = Agent(name="payments", instructions="Pay invoices.", tools=[send_payment], model=model)
    return asyncio.run(Runner.run(agent, "Pay the invoices.", context=run_context,
                                  run_config=RunConfig(tracing_disabled=True)))


@pytest.mark.parametrize("strategy,says", [("replan", "change the plan"), ("block", "Blocked by policy payments")])
def test_refused_call_goes_back_to_the_model_and_the_run_goes_on(payments_build, tmp_path, strategy, says):
    ran = []
    script = Script(call(OVER_LIMIT, "call_1"), call(PAYMENT, "call_2"), answer("Paid the small one."))
    result = run(script, guard(payments_build, strategy, log=tmp_path / "log.jsonl"), ran)
    assert result.final_output == "Paid the small one." and ran == [45000]
    refused, ok = script.tool_messages()
    assert refused["tool_call_id"] == "call_1" and says in refused["content"] and "per-payment" in refused["content"]
    assert ok == {"role": "tool", "tool_call_id": "call_2", "content": "sent 45000"}
    assert [(r["action_id"], r["allowed"]) for r in DecisionLog(tmp_path / "log.jsonl").records()] == [
        ("call_1", False), ("call_2", True)]


@pytest.mark.parametrize("strategy,action", [("terminate", "terminate"), ("tool_halt", "halt")])
def test_terminate_and_halt_raise_the_tripwire(payments_build, strategy, action, sdk):
    ran = []
    script = Script(call(OVER_LIMIT, "call_1"), answer("never"))
    with pytest.raises(sdk.ToolInputGuardrailTripwireTriggered) as tripped:
        run(script, guard(payments_build, strategy), ran)
    outcome = tripped.value.output.output_info
    assert ran == [] and outcome.action == action and outcome.record.violations == ("per_payment_limit",)
    assert len(script.bodies) == 1


def test_replan_halt_rejects_then_raises(payments_build, sdk):
    ran = []
    script = Script(call(OVER_LIMIT, "call_1"), call(OVER_LIMIT, "call_2"), answer("never"))
    with pytest.raises(sdk.ToolInputGuardrailTripwireTriggered):
        run(script, guard(payments_build, "replan_halt", halt_after=2), ran)
    assert ran == [] and len(script.bodies) == 2 and "change the plan" in script.tool_messages()[0]["content"]


def test_shadow_mode_runs_the_call_and_logs_the_denial(payments_build, tmp_path):
    ran = []
    script = Script(call(OVER_LIMIT, "call_1"), answer("Done."))
    run(script, guard(payments_build, "terminate", mode="shadow", log=tmp_path / "log.jsonl"), ran)
    assert ran == [250000] and script.tool_messages()[0]["content"] == "sent 250000"
    record, = DecisionLog(tmp_path / "log.jsonl").records()
    assert record["allowed"] is False and record["action_id"] == "call_1"


@pytest.mark.parametrize("arguments", [
    "{not json", "[]", json.dumps({**PAYMENT, "amount_cents": "lots"}),
    json.dumps(PAYMENT)[:-1] + ', "amount_cents": 99999999}',       # a duplicate key: two parsers, two values
])
def test_malformed_arguments_are_refused_before_the_tool(payments_build, arguments):
    ran = []
    script = Script(call(arguments, "call_1"), answer("Done."))
    run(script, guard(payments_build), ran)
    assert ran == [] and "fail closed" in script.tool_messages()[0]["content"]


def test_context_from_a_function_or_a_bad_run_context(payments_build):
    ran = []
    script = Script(call(PAYMENT, "call_1"), answer("Done."))
    run(script, guard(payments_build), ran, run_context={"user": 7}, context=lambda data: CONTEXT)
    assert ran == [45000]
    script = Script(call(PAYMENT, "call_1"), answer("Done."))
    run(script, guard(payments_build), ran, run_context="not a mapping")
    assert ran == [45000] and "must be a mapping" in script.tool_messages()[0]["content"]
