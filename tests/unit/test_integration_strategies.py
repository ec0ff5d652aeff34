"""Every enforcement strategy carried out by every integration, on one script: two calls over the
clerk's limit, then an allowed one (halt_after = 2). A call refused because its run was halted earlier
is logged too, with the reason."""
import anyio
import pytest

from veriguard.enforce.decision_log import DecisionLog
from veriguard.enforce.guard import RunTerminated
from tests.llm_fakes import ScriptedModel
from tests.unit.test_guard import CONTEXT, OVER_LIMIT, PAYMENT, guard
from tests.unit.test_integration_anthropic import payments_tool, run, tool_results, tool_use_reply
from tests.unit.test_monitor import payments_build  # noqa: F401  (fixture)

CALLS = (OVER_LIMIT, OVER_LIMIT, PAYMENT)
HALTED = "halted in this run"
# What the model is told for each call (None: the call ran); "stop": the run ended there.
EXPECTED = {
    "block": ["Blocked by policy payments", "Blocked by policy payments", None],
    "replan": ["change the plan", "change the plan", None],
    "tool_halt": ["halted for the rest of this run", HALTED, HALTED],
    "replan_halt": ["change the plan", "halted for the rest of this run", HALTED],
    "terminate": ["Task terminated by policy payments", "stop"],
}
STRATEGIES = sorted(EXPECTED)


def check_log(path, strategy, calls_seen):
    """One record per call seen; those refused because the run was halted say so."""
    records = list(DecisionLog(path).records())
    assert len(records) == calls_seen
    for record, says in zip(records, EXPECTED[strategy][:calls_seen]):
        assert record["allowed"] is (says is None)
        if says == HALTED:
            assert "halted earlier" in record["fail_closed"] and "per-payment limit" in record["fail_closed"]
        elif says is not None:
            assert record["violations"] == ["per_payment_limit"] and record["fail_closed"] == ""
    return records


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_anthropic_tool_runner(payments_build, tmp_path, strategy):
    ran = []
    g = guard(payments_build, strategy, halt_after=2, log=tmp_path / "log.jsonl")
    model = ScriptedModel(*[tool_use_reply((f"toolu_{i}", p)) for i, p in enumerate(CALLS, 1)], "Done.")
    if strategy == "terminate":
        with pytest.raises(RunTerminated, match="Task terminated by policy payments"):
            run(model, payments_tool(g, ran))
        assert ran == [] and len(model.bodies) == 1
        check_log(tmp_path / "log.jsonl", strategy, 1)
        return
    run(model, payments_tool(g, ran))
    for turn, says in enumerate(EXPECTED[strategy], 1):
        result = tool_results(model, turn)[-1]
        if says is None:
            assert "is_error" not in result and result["content"].startswith("sent")
        else:
            assert result["is_error"] and says in result["content"], (turn, result)
    assert ran == ([45000] if EXPECTED[strategy][-1] is None else [])
    check_log(tmp_path / "log.jsonl", strategy, 3)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_anthropic_hand_written_loop(payments_build, tmp_path, strategy):
    from veriguard.enforce.integrations.anthropic_sdk import split_tool_uses

    g = guard(payments_build, strategy, halt_after=2, log=tmp_path / "log.jsonl")
    for i, (payment, says) in enumerate(zip(CALLS, EXPECTED[strategy]), 1):
        reply = {"content": [{"type": "tool_use", "id": f"toolu_{i}", "name": "send_payment", "input": payment}]}
        if says == "stop":
            break
        if says == "Task terminated by policy payments":
            with pytest.raises(RunTerminated, match=says):
                split_tool_uses(g, reply, context=CONTEXT)
            continue
        to_run, refused = split_tool_uses(g, reply, context=CONTEXT)
        if says is None:
            assert [b["id"] for b in to_run] == [f"toolu_{i}"] and refused == []
        else:
            assert to_run == [] and refused[0]["is_error"] and says in refused[0]["content"]
    records = check_log(tmp_path / "log.jsonl", strategy, 1 if strategy == "terminate" else 3)
    assert [r["action_id"] for r in records] == [f"toolu_{i}" for i in range(1, len(records) + 1)]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_openai_agents_guardrail(payments_build, tmp_path, strategy):
    pytest.importorskip("agents", reason="openai-agents is an optional extra")
    from agents import ToolInputGuardrailTripwireTriggered

    from tests.unit.test_integration_openai_agents import Script, answer, call
    from tests.unit.test_integration_openai_agents import run as run_agent

    ran = []
    g = guard(payments_build, strategy, halt_after=2, log=tmp_path / "log.jsonl")
    script = Script(*[call(p, f"call_{i}") for i, p in enumerate(CALLS, 1)], answer("Done."))
    stops = {"tool_halt": 0, "replan_halt": 1, "terminate": 0}.get(strategy)   # the call whose tripwire ends the run
    if stops is None:      # block and replan: the reasons go back to the model and the run goes on
        result = run_agent(script, g, ran)
        assert result.final_output == "Done." and ran == [45000]
        for message, says in zip(script.tool_messages(), EXPECTED[strategy]):
            assert (says is None) == (message["content"] == "sent 45000") and (says is None or says in message["content"])
        check_log(tmp_path / "log.jsonl", strategy, 3)
        return
    with pytest.raises(ToolInputGuardrailTripwireTriggered) as tripped:    # halt and terminate end the run
        run_agent(script, g, ran)
    assert ran == [] and len(script.bodies) == stops + 1
    assert EXPECTED[strategy][stops] in tripped.value.output.output_info.message
    with pytest.raises(ToolInputGuardrailTripwireTriggered) as again:     # the same run, asked again: still halted
        run_agent(Script(call(PAYMENT, "call_9"), answer("never")), g, ran)
    assert ran == [] and HALTED in again.value.output.output_info.message
    records = list(DecisionLog(tmp_path / "log.jsonl").records())
    assert len(records) == stops + 2 and records[-1]["action_id"] == "call_9"
    assert "halted earlier" in records[-1]["fail_closed"]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_mcp_proxy(tmp_path, payments_build, strategy):
    pytest.importorskip("mcp", reason="the MCP proxy needs the mcp SDK")
    import json

    from tests.unit.test_mcp_proxy import CHILD, proxied, reached_child, text

    (tmp_path / "child.py").write_text(CHILD, encoding="utf-8")
    (tmp_path / "context.json").write_text(json.dumps(CONTEXT), encoding="utf-8")
    setup = {"tmp": tmp_path, "build": payments_build, "calls": tmp_path / "calls.txt", "log": tmp_path / "log.jsonl"}

    async def main():
        async with proxied(setup, "--strategy", strategy, "--halt-after", "2") as s:
            return [await s.call_tool("send_payment", p) for p in CALLS]

    results = anyio.run(main)
    # MCP cannot end the host's run: terminate refuses this call and every later one.
    expected = EXPECTED[strategy] if strategy != "terminate" else ["Task terminated by policy payments", HALTED, HALTED]
    for result, says in zip(results, expected):
        if says is None:
            assert not result.is_error and text(result) == "sent 45000"
        else:
            assert result.is_error and says in text(result), (says, text(result))
    assert reached_child(setup) == ([repr(PAYMENT)] if expected[-1] is None else [])
    records = list(DecisionLog(setup["log"]).records())
    assert [r["allowed"] for r in records] == [says is None for says in expected]
    assert [("halted earlier" in r["fail_closed"]) for r in records] == [says == HALTED for says in expected]


def test_anthropic_runs_named_per_call_keep_their_own_halting(payments_build):
    import contextvars

    ran = []
    conversation = contextvars.ContextVar("conversation", default="a")
    tool = payments_tool(guard(payments_build, "tool_halt"), ran, run=conversation.get)
    run(ScriptedModel(tool_use_reply(("toolu_1", OVER_LIMIT)), tool_use_reply(("toolu_2", PAYMENT)), "Stopped."), tool)
    assert ran == []                                  # conversation a is halted
    conversation.set("b")
    run(ScriptedModel(tool_use_reply(("toolu_3", PAYMENT)), "Done."), tool)
    assert ran == [45000]                             # b is not
