"""Each example runs offline from the project root, as a user would: `.venv/bin/python examples/NAME.py`."""
import importlib.util
import subprocess
import sys

import pytest

from tests.conftest import ROOT

OPTIONAL = {"openai_agents_payments.py": "agents", "mcp_server_behind_proxy.py": "mcp"}
EXPECTED = {
    "payments_anthropic.py": ["tool_result (is_error): Blocked by policy payments: A payment may not exceed",
                              "Only allowlisted vendors may be paid without human approval",
                              "#0 (no call id): allowed", "#1 (no call id): denied (per_payment_limit)"],
    "openai_agents_payments.py": ["tool output: Denied by policy payments: A payment may not exceed",
                                  "#0 call_01: denied (per_payment_limit)", "#1 call_02: allowed"],
    "mcp_server_behind_proxy.py": ["tools: ['send_payment']", "tool_result: sent 45000 cents to acme-supplies by ach",
                                   "tool_result (is_error): Blocked by policy payments: A payment may not exceed",
                                   "refused tools/call 'send_payment'",
                                   "#0 3: passed unchecked (resources/read)", "#1 4: allowed",
                                   "#2 5: denied (per_payment_limit)"],
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_runs_offline_and_says_so(name):
    if name in OPTIONAL and importlib.util.find_spec(OPTIONAL[name]) is None:
        pytest.skip(f"{name} needs the optional {OPTIONAL[name]!r} package")
    done = subprocess.run([sys.executable, f"examples/{name}"], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert out.startswith("NOTE: offline example") and "WITHOUT running Nagini" in out
    assert "(chain intact)" in out
    for line in EXPECTED[name]:
        assert line in out, (line, out)
