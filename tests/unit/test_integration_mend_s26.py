"""Review mends (S26) of the integrations, behaviour unchanged: the Agents hooks ask the agent for its tools only
when the model's answer holds a function call to read against them."""
import asyncio
from types import SimpleNamespace

import pytest

from tests.unit.test_guard import guard
from tests.unit.test_integration_redteam5 import records
from tests.unit.test_monitor import payments_build  # noqa: F401  (fixture)


@pytest.fixture(autouse=True)
def sdk():
    return pytest.importorskip("agents", reason="openai-agents is an optional extra")


class Listed:
    """An agent that counts how often its tools are listed (in the SDK, a list_tools per MCP server each time)."""

    name, tools, handoffs = "treasury", (), ()

    def __init__(self):
        self.listed = 0

    async def get_all_tools(self, context):
        self.listed += 1
        return []


def test_an_answer_without_function_calls_does_not_list_the_agents_tools(payments_build, tmp_path):
    from veriguard.enforce.integrations.openai_agents import policy_hooks

    log = tmp_path / "log.jsonl"
    g, agent = guard(payments_build, log=log), Listed()
    hooks = policy_hooks(g)
    text = SimpleNamespace(output=[SimpleNamespace(type="message", content="Done.")])
    asyncio.run(hooks.on_llm_end(None, agent, text))
    asyncio.run(hooks.on_llm_end(None, agent, SimpleNamespace(output=[])))
    assert agent.listed == 0 and records(log) == []
    called = SimpleNamespace(output=[SimpleNamespace(type="function_call", name="wire_all", call_id="c1")])
    asyncio.run(hooks.on_llm_end(None, agent, called))   # a call still is read against the listed tools: recorded
    assert agent.listed == 1 and [(allowed, "wire_all" in why) for allowed, why in records(log)] == [(False, True)]
