"""A payments agent on the Anthropic tool runner, behind the proved payments policy.

    .venv/bin/python examples/payments_anthropic.py [--build build/payments]

The model is scripted (its replies come through the SDK's own HTTP layer from examples/_offline.py),
so this runs offline. It asks for three payments: a 450 USD invoice (allowed), 2,500 USD from a clerk
(over the per-payment limit) and a wire to an unknown payee; the policy refuses the last two inside
the tool function and the model receives each reason as an is_error tool_result.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import httpx2
from anthropic import Anthropic
from anthropic.lib.tools import beta_tool

from _offline import (CONTEXT, INVOICE, OVER_LIMIT, UNKNOWN_PAYEE, anthropic_http, build_option, payments_build,
                      show_log)
from veriguard.enforce.guard import Guard
from veriguard.enforce.integrations.anthropic_sdk import guarded

build, offline = payments_build(build_option(__doc__.splitlines()[0]))
log = Path(tempfile.mkdtemp(prefix="veriguard-example-log-")) / "decisions.jsonl"
guard = Guard.from_build(build, log=log, accept_unproved=offline)   # strategy from the spec's [enforcement] (block)
print(f"Policy {guard.policy_name}, strategy {guard.strategy}, mode {guard.mode}; the user is a clerk without MFA.\n")


@beta_tool
@guarded(guard, context=lambda: CONTEXT)
def send_payment(recipient: str, amount_cents: int, currency: str, method: str) -> str:
    """Send a payment to a vendor."""
    print(f"    send_payment ran: {amount_cents / 100:,.2f} {currency} to {recipient} by {method}")
    return f"sent {amount_cents} cents to {recipient}"


client = Anthropic(api_key="offline-example", max_retries=0, http_client=httpx2.Client(transport=anthropic_http(
    INVOICE, OVER_LIMIT, UNKNOWN_PAYEE,
    "I paid the 450.00 USD invoice to acme-supplies. The 2,500.00 USD payment is over a clerk's per-payment limit "
    "and totally-legit-llc is not an approved vendor, so I did not send those: a manager or a human approval is "
    "needed.")))
runner = client.beta.messages.tool_runner(model="claude-sonnet-4-5", max_tokens=1024, tools=[send_payment],
                                          messages=[{"role": "user", "content": "Pay this week's invoices."}])
for message in runner:
    for block in message.content:
        if block.type == "tool_use":
            print(f"model asks: send_payment({block.input})")
        elif block.type == "text":
            print(f"model says: {block.text}")
    response = runner.generate_tool_call_response()
    for result in (response or {}).get("content", []):
        print(f"    tool_result{' (is_error)' if result.get('is_error') else ''}: {result['content']}")
show_log(log)
