"""The OpenAI Agents SDK (`openai-agents`, an optional extra): a tool input guardrail that puts a
function tool behind the policy.

Attach it to each function tool: `@function_tool(tool_input_guardrails=[policy_guardrail(guard)])`.
A call refused under block or replan returns `reject_content(reason)`: the reason replaces the tool's
result and the run goes on, so the model can re-plan. A halt or terminate returns `raise_exception()`:
the Runner raises `ToolInputGuardrailTripwireTriggered`, whose `.output.output_info` is the
GuardOutcome. Hosted tools, handoffs and the shell, patch and computer tools have no tool guardrails
in the SDK and are not covered.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

from agents import ToolGuardrailFunctionOutput, ToolInputGuardrail, ToolInputGuardrailData

from veriguard.enforce.guard import Guard

Facts = Callable[[ToolInputGuardrailData], Mapping[str, Any]]


def policy_guardrail(guard: Guard, *, context: Facts | None = None, run: Callable[[ToolInputGuardrailData], str] | None
                     = None, name: str = "veriguard") -> ToolInputGuardrail[Any]:
    """A tool input guardrail deciding each call with `guard`. `context(data)` gives the facts beside
    the call (default: the run's context object, `Runner.run(..., context=...)`, which must then be a
    mapping); `run(data)` names the run whose halting state the call counts in (default: one run)."""
    def check(data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
        tool = data.context
        call = {"type": "function", "id": tool.tool_call_id,
                "function": {"name": tool.tool_name, "arguments": tool.tool_arguments}}
        facts = (lambda: context(data)) if context is not None else (lambda: tool.context)
        outcome = guard.check(call, context=facts, action_id=tool.tool_call_id, run=run(data) if run else "",
                              integration="openai_agents", tool=tool.tool_name)
        if outcome.action in ("halt", "terminate"):
            return ToolGuardrailFunctionOutput.raise_exception(output_info=outcome)
        if not outcome.allowed:
            return ToolGuardrailFunctionOutput.reject_content(outcome.message, output_info=outcome)
        return ToolGuardrailFunctionOutput.allow(output_info=outcome)

    return ToolInputGuardrail(guardrail_function=check, name=name)
