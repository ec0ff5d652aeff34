"""The Anthropic SDK integration, end to end through the SDK's own tool runner and HTTP layer (a
scripted model behind httpx2.MockTransport). The SDK and veriguard's integration are imported where a test
uses them, not at collection (2.5 s of CPU in every pytest-xdist process)."""
import anyio
import httpx2
import pytest

from veriguard.enforce.decision_log import DecisionLog
from veriguard.enforce.guard import RunTerminated
from tests.llm_fakes import ScriptedModel
from tests.unit.test_guard import CONTEXT, OVER_LIMIT, PAYMENT, guard
from tests.unit.test_monitor import payments_build  # noqa: F401  (fixture)


def tool_use_reply(*calls):
    """A Messages API reply asking for these (id, input) calls of send_payment."""
    return httpx2.Response(200, json={
        "id": "msg_tool", "type": "message", "role": "assistant", "model": "claude-test",
        "content": [{"type": "text", "text": "Paying."}] + [{"type": "tool_use", "id": call_id, "name": "send_payment",
                                                              "input": payment} for call_id, payment in calls],
        "stop_reason": "tool_use", "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 10}})


def client(model, cls=None, http=httpx2.Client):
    from anthropic import Anthropic

    return (cls or Anthropic)(api_key="sk-ant-test", max_retries=0, http_client=http(transport=httpx2.MockTransport(model)))


def payments_tool(g, ran, **kw):
    from anthropic.lib.tools import beta_tool

    from veriguard.enforce.integrations.anthropic_sdk import guarded

    @beta_tool
    @guarded(g, context=lambda: CONTEXT, **kw)
    def send_payment(recipient: str, amount_cents: int, currency: str, method: str = "ach") -> str:
        """Send a payment."""
        ran.append(amount_cents)
        return f"sent {amount_cents} to {recipient}"
    return send_payment


def async_payments_tool(g, ran, **kw):
    """payments_tool as a @beta_async_tool (shared by the red-team passes' tests)."""
    from anthropic.lib.tools import beta_async_tool

    from veriguard.enforce.integrations.anthropic_sdk import guarded

    @beta_async_tool
    @guarded(g, context=lambda: CONTEXT, **kw)
    async def send_payment(recipient: str, amount_cents: int, currency: str, method: str = "ach") -> str:
        """Send a payment."""
        ran.append(amount_cents)
        return "sent"
    return send_payment


def run(model, tool):
    runner = client(model).beta.messages.tool_runner(model="claude-test", max_tokens=256, tools=[tool],
                                                     messages=[{"role": "user", "content": "Pay the invoices."}])
    return runner.until_done()


def tool_results(model, turn):
    """The tool_result blocks the runner sent on request `turn`."""
    return [b for m in model.bodies[turn]["messages"] if m["role"] == "user" and isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "tool_result"]


def test_allowed_call_runs_and_denied_call_returns_is_error(payments_build, tmp_path):
    ran = []
    g = guard(payments_build, "block", log=tmp_path / "log.jsonl")
    model = ScriptedModel(tool_use_reply(("toolu_1", PAYMENT)), tool_use_reply(("toolu_2", OVER_LIMIT)), "Done.")
    final = run(model, payments_tool(g, ran))
    assert final.content[0].text == "Done." and ran == [45000]
    ok, = tool_results(model, 1)
    assert ok == {"type": "tool_result", "tool_use_id": "toolu_1", "content": "sent 45000 to acme-supplies"}
    denied = tool_results(model, 2)[-1]
    assert denied["tool_use_id"] == "toolu_2" and denied["is_error"] is True
    assert "Blocked by policy payments" in denied["content"] and "per-payment limit" in denied["content"]
    assert [r["allowed"] for r in DecisionLog(tmp_path / "log.jsonl").records()] == [True, False]


def test_terminate_stops_the_runner(payments_build):
    ran = []
    model = ScriptedModel(tool_use_reply(("toolu_1", OVER_LIMIT)), "never sent")
    with pytest.raises(RunTerminated) as stopped:
        run(model, payments_tool(guard(payments_build, "terminate"), ran))
    assert ran == [] and len(model.bodies) == 1 and model.replies == ["never sent"]
    assert stopped.value.record.violations == ("per_payment_limit",)
    assert "Task terminated by policy payments" in str(stopped.value)


def test_tool_halt_refuses_the_later_calls_of_the_run(payments_build):
    ran = []
    model = ScriptedModel(tool_use_reply(("toolu_1", OVER_LIMIT)), tool_use_reply(("toolu_2", PAYMENT)), "Stopped.")
    run(model, payments_tool(guard(payments_build, "tool_halt"), ran))
    assert ran == []
    halted = tool_results(model, 2)[-1]
    assert halted["is_error"] and "halted in this run" in halted["content"]


def test_shadow_mode_runs_the_call_and_logs_the_would_be_denial(payments_build, tmp_path):
    ran = []
    g = guard(payments_build, "terminate", mode="shadow", log=tmp_path / "log.jsonl")
    model = ScriptedModel(tool_use_reply(("toolu_1", OVER_LIMIT)), "Done.")
    run(model, payments_tool(g, ran))
    assert ran == [250000] and "is_error" not in tool_results(model, 1)[0]
    record, = DecisionLog(tmp_path / "log.jsonl").records()
    assert record["allowed"] is False and record["violations"] == ["per_payment_limit"]


def test_the_policy_sees_the_defaults_the_function_receives(payments_build, tmp_path):
    ran = []
    g = guard(payments_build, log=tmp_path / "log.jsonl")
    no_method = {k: v for k, v in PAYMENT.items() if k != "method"}
    run(ScriptedModel(tool_use_reply(("toolu_1", no_method)), "Done."), payments_tool(g, ran))
    assert ran == [45000]
    record, = DecisionLog(tmp_path / "log.jsonl").records()
    assert record["arguments"]["payment"]["method"] == "ach"


def test_a_tool_named_otherwise_than_the_policy_expects_is_denied(payments_build):
    ran = []
    model = ScriptedModel(tool_use_reply(("toolu_1", PAYMENT)), "Done.")
    run(model, payments_tool(guard(payments_build), ran, name="wire_money"))
    assert ran == [] and tool_results(model, 1)[0]["is_error"]


def test_async_runner_and_async_tool(payments_build):
    from anthropic import AsyncAnthropic
    from anthropic.lib.tools import beta_async_tool

    from veriguard.enforce.integrations.anthropic_sdk import guarded

    ran = []

    @beta_async_tool
    @guarded(guard(payments_build, "terminate"), context=CONTEXT)
    async def send_payment(recipient: str, amount_cents: int, currency: str, method: str) -> str:
        """Send a payment."""
        ran.append(amount_cents)
        return "sent"

    model = ScriptedModel(tool_use_reply(("toolu_1", PAYMENT)), tool_use_reply(("toolu_2", OVER_LIMIT)), "never")

    async def main():
        runner = client(model, AsyncAnthropic, httpx2.AsyncClient).beta.messages.tool_runner(
            model="claude-test", max_tokens=256, tools=[send_payment], messages=[{"role": "user", "content": "Pay."}])
        return await runner.until_done()

    with pytest.raises(RunTerminated):
        anyio.run(main)
    assert ran == [45000] and len(model.bodies) == 2


def test_split_tool_uses_in_a_hand_written_loop(payments_build, tmp_path):
    from veriguard.enforce.integrations.anthropic_sdk import split_tool_uses

    g = guard(payments_build, "replan", log=tmp_path / "log.jsonl")
    model = ScriptedModel(tool_use_reply(("toolu_1", PAYMENT), ("toolu_2", OVER_LIMIT)), "Done.")
    api = client(model)
    messages = [{"role": "user", "content": "Pay the invoices."}]
    reply = api.messages.create(model="claude-test", max_tokens=256, messages=messages)
    to_run, refused = split_tool_uses(g, reply, context=CONTEXT)
    assert [b.id for b in to_run] == ["toolu_1"]
    assert refused == [{"type": "tool_result", "tool_use_id": "toolu_2", "is_error": True,
                        "content": refused[0]["content"]}] and "change the plan" in refused[0]["content"]
    results = [{"type": "tool_result", "tool_use_id": b.id, "content": "sent"} for b in to_run] + refused
    messages += [{"role": "assistant", "content": [b.model_dump() for b in reply.content]},
                 {"role": "user", "content": results}]
    assert api.messages.create(model="claude-test", max_tokens=256, messages=messages).content[0].text == "Done."
    assert [(r["action_id"], r["allowed"]) for r in DecisionLog(tmp_path / "log.jsonl").records()] == [
        ("toolu_1", True), ("toolu_2", False)]


def test_split_tool_uses_terminates_before_anything_runs(payments_build):
    from veriguard.enforce.integrations.anthropic_sdk import split_tool_uses

    reply = {"content": [{"type": "tool_use", "id": "a", "name": "send_payment", "input": PAYMENT},
                         {"type": "tool_use", "id": "b", "name": "send_payment", "input": OVER_LIMIT}]}
    with pytest.raises(RunTerminated) as stopped:
        split_tool_uses(guard(payments_build, "terminate"), reply, context=CONTEXT)
    assert stopped.value.record.action_id == "b"


def test_split_tool_uses_records_every_block_of_a_terminated_message_as_refused(payments_build, tmp_path):
    """The allowed block before the terminating one, and the block after it, never run: each gets a refusal
    record (the log said 'allowed' for the first and had nothing for the last)."""
    from veriguard.enforce.integrations.anthropic_sdk import split_tool_uses

    reply = {"content": [{"type": "tool_use", "id": i, "name": "send_payment", "input": p}
                         for i, p in (("a", PAYMENT), ("b", OVER_LIMIT), ("c", PAYMENT))]}
    with pytest.raises(RunTerminated) as stopped:
        split_tool_uses(guard(payments_build, "terminate", log=tmp_path / "log.jsonl"), reply, context=CONTEXT)
    assert stopped.value.record.action_id == "b"
    records = [(r["action_id"], r["allowed"]) for r in DecisionLog(tmp_path / "log.jsonl").records()]
    assert records == [("a", True), ("b", False), ("c", False), ("a", False)]
    assert split_tool_uses(guard(payments_build), {"content": [{"type": "text", "text": "hi"}]}) == ([], [])


def test_split_tool_uses_reads_string_content_and_refuses_an_unreadable_block(payments_build, tmp_path):
    from veriguard.enforce.integrations.anthropic_sdk import split_tool_uses

    g = guard(payments_build, "block", log=tmp_path / "log.jsonl")
    assert split_tool_uses(g, {"role": "assistant", "content": "hello"}, context=CONTEXT) == ([], [])

    class Block:
        id = "toolu_9"
        type = "tool_use"

    to_run, refused = split_tool_uses(g, {"content": [Block()]}, context=CONTEXT)
    assert to_run == [] and refused[0]["tool_use_id"] == "toolu_9" and refused[0]["is_error"] is True
    assert "cannot be read, so it is refused" in refused[0]["content"]
    record, = DecisionLog(tmp_path / "log.jsonl").records()
    assert record["allowed"] is False and "cannot be read" in record["fail_closed"]


@pytest.mark.parametrize("amount", [True, 45000.0, "45000"])
def test_the_policy_reads_the_arguments_the_model_sent_not_what_pydantic_made_of_them(payments_build, tmp_path, amount):
    ran = []
    g = guard(payments_build, "block", log=tmp_path / "log.jsonl")
    model = ScriptedModel(tool_use_reply(("toolu_1", {**PAYMENT, "amount_cents": amount})), "Done.")
    run(model, payments_tool(g, ran))
    assert ran == [] and tool_results(model, 1)[0]["is_error"] is True
    record, = DecisionLog(tmp_path / "log.jsonl").records()
    assert record["allowed"] is False


def test_the_function_gets_the_validated_arguments_and_keeps_its_schema(payments_build, tmp_path):
    import enum

    from anthropic.lib.tools import beta_tool

    from veriguard.enforce.integrations.anthropic_sdk import guarded

    class Currency(str, enum.Enum):
        USD = "USD"

    got = []

    def send_payment(recipient: str, amount_cents: int, currency: Currency, method: str = "ach") -> str:
        """Send a payment."""
        got.append(currency)
        return "sent"

    plain_schema = beta_tool(send_payment).input_schema
    tool = beta_tool(guarded(guard(payments_build, log=tmp_path / "log.jsonl"), context=CONTEXT)(send_payment))
    assert tool.input_schema == plain_schema and send_payment.__annotations__["currency"] is Currency
    run(ScriptedModel(tool_use_reply(("toolu_1", PAYMENT)), "Done."), tool)
    assert got == [Currency.USD] and type(got[0]) is Currency
    record, = DecisionLog(tmp_path / "log.jsonl").records()
    assert record["allowed"] is True and record["arguments"]["payment"]["currency"] == "USD"


def test_an_async_tool_is_checked_on_what_the_model_sent(payments_build):
    from anthropic import AsyncAnthropic
    from anthropic.lib.tools import beta_async_tool

    from veriguard.enforce.integrations.anthropic_sdk import guarded

    ran = []

    @beta_async_tool
    @guarded(guard(payments_build, "block"), context=CONTEXT)
    async def send_payment(recipient: str, amount_cents: int, currency: str, method: str) -> str:
        """Send a payment."""
        ran.append(amount_cents)
        return "sent"

    model = ScriptedModel(tool_use_reply(("toolu_1", {**PAYMENT, "amount_cents": True})),
                          tool_use_reply(("toolu_2", PAYMENT)), "Done.")

    async def main():
        runner = client(model, AsyncAnthropic, httpx2.AsyncClient).beta.messages.tool_runner(
            model="claude-test", max_tokens=256, tools=[send_payment], messages=[{"role": "user", "content": "Pay."}])
        return await runner.until_done()

    anyio.run(main)
    assert ran == [45000] and tool_results(model, 1)[0]["is_error"] is True


@pytest.mark.parametrize("strategy,halt_after", [("tool_halt", 2), ("replan_halt", 1)])
def test_split_tool_uses_runs_nothing_of_a_message_that_halted_its_run(payments_build, tmp_path, strategy, halt_after):
    """An allowed call before the one that halts the run would run after the halt (the loop runs what split
    returns): it is refused as halted, and recorded so (red team B: it was returned to run)."""
    from veriguard.enforce.integrations.anthropic_sdk import split_tool_uses

    g = guard(payments_build, strategy, halt_after=halt_after, log=tmp_path / "log.jsonl")
    reply = {"content": [{"type": "tool_use", "id": "a", "name": "send_payment", "input": PAYMENT},
                         {"type": "tool_use", "id": "b", "name": "send_payment", "input": OVER_LIMIT}]}
    to_run, refused = split_tool_uses(g, reply, context=CONTEXT, run="r")
    assert to_run == [] and [r["tool_use_id"] for r in refused] == ["b", "a"]
    assert all(r["is_error"] for r in refused) and "halted" in refused[1]["content"]
    records = [(r["action_id"], r["allowed"], r["tool"]) for r in DecisionLog(tmp_path / "log.jsonl").records()]
    assert records == [("a", True, "send_payment"), ("b", False, "send_payment"), ("a", False, "send_payment")]
    shadow = guard(payments_build, strategy, halt_after=halt_after, mode="shadow")
    assert [b["id"] for b in split_tool_uses(shadow, reply, context=CONTEXT)[0]] == ["a", "b"]


@pytest.mark.parametrize("content", [5, b"tool_use", {"type": "tool_use", "id": "a", "name": "send_payment"}])
def test_split_tool_uses_says_what_is_wrong_with_content_that_is_not_a_list(payments_build, content):
    from veriguard.enforce.integrations.anthropic_sdk import split_tool_uses

    with pytest.raises(TypeError, match="must be a list of content blocks or a string, not"):
        split_tool_uses(guard(payments_build), {"content": content}, context=CONTEXT)


def test_split_tool_uses_keeps_the_halt_of_its_message_when_the_run_is_ended_meanwhile(payments_build):
    """end_run by another thread between the halting block and the end of the message must not hand the allowed
    block back to run: the halt is read from this message's own outcomes too."""
    from veriguard.enforce.integrations.anthropic_sdk import split_tool_uses

    g = guard(payments_build, "tool_halt")

    class EndsTheRun:   # a text block whose reading ends the run, as another thread's end_run would then
        def model_dump(self):
            g.end_run("r")
            return {"type": "text", "text": "done"}

    reply = {"content": [{"type": "tool_use", "id": "a", "name": "send_payment", "input": PAYMENT},
                         {"type": "tool_use", "id": "b", "name": "send_payment", "input": OVER_LIMIT}, EndsTheRun()]}
    to_run, refused = split_tool_uses(g, reply, context=CONTEXT, run="r")
    assert to_run == [] and sorted(r["tool_use_id"] for r in refused) == ["a", "b"]
