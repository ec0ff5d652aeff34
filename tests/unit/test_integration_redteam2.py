"""Second red-team pass on the integrations (2026-11-29, night): the classes that failed open or left no record, each
run for real (the proxy as its own process in front of a real MCP child, raw bytes; the Anthropic and OpenAI Agents
SDKs with the model behind httpx2.MockTransport). Each test failed on the code before its fix:
- a slow policy held the MCP proxy's event loop (a ping waited for the decision) and had no deadline;
- host lines that are not strict JSON, and requests whose method reads as tools/call to a lenient reader
  ("TOOLS/CALL", "tools/call ", a method that is a list), were refused with no decision record;
- two tool_use blocks of one message with the same id (or none): `split_tool_uses` let the allowed one run, and a loop
  that finds each block by its id ran the denied block's input;
- an Agents handoff with `input_type` runs `on_handoff` with the model's arguments, which no guardrail decides."""
import json
import queue
import subprocess
import sys
import threading
import time

import httpx2
import pytest

from veriguard.enforce.decision_log import DecisionLog
from tests.conftest import ROOT
from tests.unit.test_guard import CONTEXT, OVER_LIMIT, PAYMENT, guard
from tests.unit.test_monitor import payments_build  # noqa: F401  (fixture)

pytest.importorskip("mcp", reason="the MCP proxy needs the mcp SDK")
from tests.unit.test_mcp_proxy import proxy_argv, reached_child, setup  # noqa: E402,F401  (fixture)

INIT = {"jsonrpc": "2.0", "id": "init", "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


def call(request_id, arguments, **envelope):
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": "send_payment", "arguments": arguments}, **envelope}


def line(message) -> bytes:
    return message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n"


def records(log):
    return list(DecisionLog(log).records()) if log.exists() else []


class Proxy:
    """The proxy process, fed raw lines; its answers read on a thread."""

    def __init__(self, setup, *options: str) -> None:
        self.p = subprocess.Popen([sys.executable, *proxy_argv(setup, *options)], cwd=ROOT, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env={"PYTHONPATH": str(ROOT)})
        self.answers: queue.Queue[dict] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for raw in self.p.stdout:
            self.answers.put(json.loads(raw))

    def send(self, *messages) -> None:
        self.p.stdin.write(b"".join(line(m) for m in messages))
        self.p.stdin.flush()

    def until(self, request_id, timeout=60.0) -> list[dict]:
        """The answers up to and including the one to `request_id`, in the order they came."""
        got, end = [], time.monotonic() + timeout
        while not got or got[-1].get("id") != request_id:
            got.append(self.answers.get(timeout=max(0.01, end - time.monotonic())))
        return got

    def close(self) -> int:
        self.p.stdin.close()
        return self.p.wait(timeout=60)


def slow_context(setup, entries=30_000):
    """A context whose reading takes the policy seconds (it is read, parsed and searched for calls at every call)."""
    history = [{"note": str(n), "meta": {"k": [n, {"x": n}]}} for n in range(entries)]
    (setup["tmp"] / "context.json").write_text(json.dumps({**CONTEXT, "history": history}), encoding="utf-8")


def test_a_slow_decision_is_refused_at_its_deadline_and_the_loop_keeps_serving(setup):
    """Before: no deadline, and the decision ran on the event loop, so a ping sent after a slow call was answered only
    once the call was decided (--decision-timeout did not exist). Now the ping is answered at once, the call is refused
    at the deadline with a record, a second call with the same id meanwhile is refused, and the late decision (an
    allow) is recorded as abandoned, not run (G22: before, as an allow followed by a refusal)."""
    slow_context(setup)
    proxy = Proxy(setup, "--decision-timeout", "0.3")
    try:
        proxy.send(INIT)
        proxy.until("init")
        proxy.send(call(5, PAYMENT), call(5, PAYMENT), {"jsonrpc": "2.0", "id": "ping", "method": "ping"})
        fives = [a for a in proxy.until("ping", 30) if a.get("id") == 5]
        while len(fives) < 2:   # M29: the reused id's refusal is held until the deadline's answer to id 5, then follows
            fives.append(proxy.until(5, 30)[-1])
        refused, reused = fives
        assert refused["result"]["isError"] and "did not decide within 0.3 s" in refused["result"]["content"][0]["text"]
        assert reused["result"]["isError"] and "still in use" in reused["result"]["content"][0]["text"]
        end = time.monotonic() + 60
        while len(records(setup["log"])) < 3 and time.monotonic() < end:   # the late decision, abandoned
            time.sleep(0.1)
        reasons = [(r["allowed"], r["fail_closed"]) for r in records(setup["log"]) if r["action_id"] == "5"]
        assert reasons[-1][0] is False and "abandoned" in reasons[-1][1], reasons
        assert any("did not decide within 0.3 s" in why for _, why in reasons)
        assert reached_child(setup) == []
    finally:
        assert proxy.close() == 0


def test_decisions_still_run_when_the_host_hangs_up_at_once(setup):
    """A call sent just before the host closes its input is decided and answered (the child is stopped after)."""
    done = subprocess.run([sys.executable, *proxy_argv(setup)], cwd=ROOT, input=line(INIT) + line(call(1, PAYMENT)),
                          capture_output=True, timeout=120, env={"PYTHONPATH": str(ROOT)})
    answers = [json.loads(x) for x in done.stdout.splitlines()]
    assert answers[-1]["id"] == 1 and answers[-1]["result"]["content"][0]["text"] == "sent 45000"


@pytest.mark.parametrize("raw,why", [
    (b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"send_payment","arguments":{"amount_cents":NaN}}}\n',
     "not strict JSON"),
    (b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"send_payment","arguments":{"amount_cents":45000,'
     b'"amount_cents":250000,"recipient":"acme-supplies","currency":"USD","method":"ach"}}}\n', "duplicate key"),
    (b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"send_payment","arguments":{"amount_cents":1e400}}}\n',
     "beyond the range"),
    (b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":' + b"[" * 100_000 + b"]" * 100_000 + b"}\n",
     "nested too deeply"),
    (line(call(9, OVER_LIMIT, method="TOOLS/CALL")), "reads as it"),
    (line(call(9, OVER_LIMIT, method="tools/call ")), "reads as it"),
    (line(call(9, OVER_LIMIT, method="tools\uff0fcall")), "reads as it"),
    (line(call(9, OVER_LIMIT, method=["tools/call"])), "method is list"),
])
def test_host_lines_refused_before_any_call_is_read_leave_a_record(setup, raw, why):
    """Before: a parse error or "method not found" went back to the host, and the log had nothing. Now each is
    recorded as a refused call (the line may have been one), nothing reaches the child, and the session goes on."""
    done = subprocess.run([sys.executable, *proxy_argv(setup)], cwd=ROOT,
                          input=line(INIT) + raw + line(call(10, PAYMENT)), capture_output=True, timeout=120,
                          env={"PYTHONPATH": str(ROOT)})
    answers = {a["id"]: a for a in map(json.loads, done.stdout.splitlines()) if a.get("id") is not None}
    assert answers[10]["result"]["content"][0]["text"] == "sent 45000"
    got = [(r["allowed"], r["fail_closed"]) for r in records(setup["log"])]
    assert len(got) == 2 and got[0][0] is False and why in got[0][1] and got[1] == (True, ""), got
    assert len(reached_child(setup)) == 1


# --- Anthropic: one id, two blocks ---------------------------------------------------------------------------------
def reply_with(*blocks):
    return httpx2.Response(200, json={"id": "msg", "type": "message", "role": "assistant", "model": "claude-test",
                                      "content": list(blocks), "stop_reason": "tool_use", "stop_sequence": None,
                                      "usage": {"input_tokens": 1, "output_tokens": 1}})


def tool_use(call_id, payment):
    return {"type": "tool_use", "id": call_id, "name": "send_payment", "input": payment}


@pytest.mark.parametrize("blocks", [
    [tool_use("toolu_1", PAYMENT), tool_use("toolu_1", OVER_LIMIT)],
    [tool_use("toolu_1", OVER_LIMIT), tool_use("toolu_1", PAYMENT)],
    [tool_use("", PAYMENT), tool_use("", OVER_LIMIT)],
    [tool_use("toolu_2", PAYMENT), tool_use("toolu_1", PAYMENT), tool_use("toolu_1", OVER_LIMIT)],
])
@pytest.mark.parametrize("mode", ["enforce", "shadow"])
def test_tool_use_blocks_sharing_an_id_are_all_refused(payments_build, tmp_path, blocks, mode):
    """Before: the allowed block of two with one id was returned to run, and a loop that finds each call by its id
    (`{b.id: b for b in message.content}`) ran the other block's input, 250000 for a clerk. Now every block whose id is
    empty or shared is refused, recorded (in shadow mode too: which input runs is the loop's guess)."""
    from tests.llm_fakes import ScriptedModel
    from tests.unit.test_integration_anthropic import client
    from veriguard.enforce.integrations.anthropic_sdk import split_tool_uses

    log = tmp_path / "log.jsonl"
    message = client(ScriptedModel(reply_with(*blocks))).messages.create(
        model="claude-test", max_tokens=10, messages=[{"role": "user", "content": "Pay."}])
    to_run, refused = split_tool_uses(guard(payments_build, log=log, mode=mode), message, context=CONTEXT)
    by_id = {b.id: b for b in message.content if b.type == "tool_use"}
    ran = [by_id[b.id].input["amount_cents"] for b in to_run]
    alone = [b["id"] for b in blocks if [c["id"] for c in blocks].count(b["id"]) == 1 and b["id"]]
    assert ran == [45000] * len(alone) and [b.id for b in to_run] == alone
    shared = [r for r in refused if r["tool_use_id"] not in alone]
    assert len(shared) == len(blocks) - len(alone) and all("fail closed" in r["content"] or "id" in r["content"]
                                                           for r in shared)
    got = [(r["allowed"], r["action_id"]) for r in DecisionLog(log).records()]
    assert len(got) == len(blocks) and [a for a, i in got if i not in alone] == [False] * len(shared)


# --- OpenAI Agents: a handoff that takes the model's arguments -----------------------------------------------------
def test_a_handoff_whose_on_handoff_takes_model_input_is_refused_unless_named(payments_build, tmp_path):
    """Before: `handoff(payer, on_handoff=f, input_type=Payment)` ran f with the model's arguments (a payment of 250000
    to an unknown recipient, recorded nowhere): a call no guardrail sees. The hooks now refuse such a run before the
    model is asked, unless `unguarded` names the handoff; a handoff without input passes as before."""
    pytest.importorskip("agents", reason="openai-agents is an optional extra")
    from agents import Agent, handoff
    from pydantic import BaseModel

    from veriguard.enforce.integrations.openai_agents import UnguardedTools, policy_guardrail
    from tests.unit.test_integration_unguarded import Script, calls, model, pay_tool, run_agent

    class Escalation(BaseModel):
        recipient: str
        amount_cents: int

    log, paid = tmp_path / "log.jsonl", []
    g = guard(payments_build, log=log)

    def front(*, with_input: bool):
        payer = Agent(name="payer", model=model(Script()), tools=[pay_tool([], policy_guardrail(g))])
        h = (handoff(payer, on_handoff=lambda ctx, data: paid.append(data.amount_cents), input_type=Escalation)
             if with_input else handoff(payer, on_handoff=lambda ctx: paid.append("plain")))
        script = Script(calls((h.tool_name, {"recipient": "evil", "amount_cents": 250000})))
        return Agent(name="front", model=model(script), tools=[pay_tool([], policy_guardrail(g))], handoffs=[h]), h, script

    agent, h, script = front(with_input=True)
    with pytest.raises(UnguardedTools, match="on_handoff with the model's arguments"):
        run_agent(agent, g)
    assert paid == [] and script.bodies == []
    agent, h, _ = front(with_input=True)
    run_agent(agent, g, unguarded=[h.tool_name])   # named: it runs, undecided, as the operator chose
    assert paid == [250000]
    agent, h, _ = front(with_input=False)
    run_agent(agent, g)
    assert paid == [250000, "plain"]
