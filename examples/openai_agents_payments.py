"""A payments agent on the OpenAI Agents SDK, behind the proved payments policy.

    .venv/bin/python examples/openai_agents_payments.py [--build build/payments]

Needs the optional `openai-agents`. The model is scripted (Chat Completions replies through the
OpenAI client's own HTTP layer, examples/_offline.py), so this runs offline. The guardrail runs
with the re-plan strategy: a refused call's reason replaces the tool's result and the run goes on.
"""
from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

import httpx2
from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner, function_tool
from openai import AsyncOpenAI

from _offline import CONTEXT, INVOICE, OVER_LIMIT, build_option, openai_http, payments_build, show_log
from veriguard.enforce.guard import Guard
from veriguard.enforce.integrations.openai_agents import policy_guardrail

build, offline = payments_build(build_option(__doc__.splitlines()[0]))
log = Path(tempfile.mkdtemp(prefix="veriguard-example-log-")) / "decisions.jsonl"
guard = Guard.from_build(build, strategy="replan", log=log, accept_unproved=offline)
print(f"Policy {guard.policy_name}, strategy {guard.strategy}, mode {guard.mode}; the user is a clerk without MFA.\n")


@function_tool(tool_input_guardrails=[policy_guardrail(guard)])
def send_payment(recipient: str, amount_cents: int, currency: str, method: str) -> str:
    """Send a payment to a vendor."""
    return f"sent {amount_cents} cents to {recipient}"


SPLIT = {**OVER_LIMIT, "amount_cents": 100000}
transport = openai_http(OVER_LIMIT, SPLIT, INVOICE, "Paid 1,000.00 USD of the 2,500.00 USD bill (a clerk's per-payment "
                        "limit) and the 450.00 USD invoice; the rest needs a manager.")
model = OpenAIChatCompletionsModel("gpt-scripted", AsyncOpenAI(api_key="offline-example",
                                                               http_client=httpx2.AsyncClient(transport=transport)))
agent = Agent(name="treasury", instructions="Pay the user's invoices with send_payment.", tools=[send_payment],
              model=model)
result = asyncio.run(Runner.run(agent, "Pay the 2,500 USD bill and the 450 USD invoice to acme-supplies.",
                                context=CONTEXT, run_config=RunConfig(tracing_disabled=True)))
for item in result.new_items:
    if item.type == "tool_call_item":
        print(f"model asks: {item.raw_item.name}({item.raw_item.arguments})")
    elif item.type == "tool_call_output_item":
        print(f"    tool output: {item.output}")
print(f"model says: {result.final_output}")
show_log(log)
