"""What the enforcement points add, measured side by side in one run (medians, interleaved calls):

  * in process: Monitor.check alone; the Guard; an Anthropic `@guarded` tool function called with the
    same arguments; the OpenAI Agents guardrail function. Target: the Anthropic wrapper adds < 100 us.
  * the MCP proxy: one tools/call from a client session to the payments MCP server directly, and the
    same call through `python -m veriguard.enforce.integrations.mcp_proxy` in front of the same server. Target:
    the proxy adds < 2 ms.

Allowed calls only (a denial raises ToolError, which the SDK catches). No decision log unless
--log (its fsync per record is a disk cost, not the integration's). Uses the payments build given
with --build, else one compiled without Nagini (the proof does not change the policy's speed).

    .venv/bin/python scripts/bench_integrations.py [--build build/payments] [--calls 2000] [--mcp-calls 300]
"""
from __future__ import annotations

import argparse
import functools
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "examples")]

from _offline import CONTEXT, INVOICE, payments_build  # noqa: E402
from veriguard.enforce.guard import Guard  # noqa: E402
from veriguard.enforce.monitor import Monitor  # noqa: E402


def interleaved_us(fns: dict[str, Callable[[], Any]], calls: int) -> dict[str, list[float]]:
    """Per-call wall times in microseconds, the functions taking turns so drift hits all alike."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    clock = time.perf_counter_ns
    for _ in range(calls):
        for name, fn in fns.items():
            t0 = clock()
            fn()
            times[name].append((clock() - t0) / 1000.0)
    return times


def in_process(build: Path, calls: int, log: Path | None, *, unproved: bool) -> dict[str, float]:
    from agents import Agent, ToolInputGuardrailData, function_tool
    from agents.tool_context import ToolContext

    from anthropic.lib.tools import beta_tool

    from veriguard.enforce.integrations.anthropic_sdk import guarded
    from veriguard.enforce.integrations.openai_agents import policy_guardrail

    guard = Guard(Monitor.from_build(build, log=log, accept_unproved=unproved))
    observation = {**CONTEXT, "tool_call": {"type": "tool_use", "name": "send_payment", "input": INVOICE}}

    @guarded(guard, context=CONTEXT)
    def send_payment(recipient: str, amount_cents: int, currency: str, method: str) -> str:
        return "sent"

    def pay(recipient: str, amount_cents: int, currency: str, method: str) -> str:
        return "sent"

    guardrail = policy_guardrail(guard, context=lambda data: CONTEXT)
    agent = Agent(name="bench", tools=[function_tool(pay, name_override="send_payment",
                                                     tool_input_guardrails=[guardrail])])   # the guardrail finds it
    tool = beta_tool(send_payment)
    data = ToolInputGuardrailData(context=ToolContext(context=None, tool_name="send_payment", tool_call_id="call_1",
                                                      tool_arguments=json.dumps(INVOICE)), agent=agent)
    assert guard.monitor.check(observation).allowed and send_payment(**INVOICE) == "sent"
    assert guardrail.guardrail_function(data).behavior["type"] == "allow"
    times = interleaved_us({
        "Monitor.check": lambda: guard.monitor.check(observation),
        "Guard.check": lambda: guard.check(observation["tool_call"], context=CONTEXT),
        "anthropic @guarded tool": lambda: send_payment(**INVOICE),
        "anthropic @guarded tool, SDK's tool.call": lambda: tool.call(INVOICE),
        "openai-agents guardrail": lambda: guardrail.guardrail_function(data),
    }, calls)
    return {name: statistics.median(t) for name, t in times.items()}


def cpu_seconds(marker: str) -> float:
    """User + system CPU seconds of this process's child whose command line holds `marker` (Linux /proc)."""
    import os

    tick = os.sysconf("SC_CLK_TCK")
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        for pid in (task / "children").read_text().split():
            if marker in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"):
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                return (int(fields[11]) + int(fields[12])) / tick
    raise LookupError(f"no child process running {marker!r}")


async def mcp_medians(build: Path, calls: int, log: Path | None, work: Path, *, unproved: bool) -> dict[str, float]:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    (work / "context.json").write_text(json.dumps(CONTEXT), encoding="utf-8")
    server = [sys.executable, str(ROOT / "examples" / "payments_mcp_server.py")]
    logging = (["--log", str(log)] if log else []) + (["--accept-unproved"] if unproved else [])
    proxy = [sys.executable, "-m", "veriguard.enforce.integrations.mcp_proxy", "--build", str(build), "--context",
             str(work / "context.json"), *logging, "--", *server]
    errlog = open(work / "stderr.txt", "w", encoding="utf-8")
    times: dict[str, list[float]] = {"MCP direct": [], "MCP through the proxy": []}
    async with stdio_client(StdioServerParameters(command=server[0], args=server[1:]), errlog=errlog) as direct_io, \
            stdio_client(StdioServerParameters(command=proxy[0], args=proxy[1:], cwd=str(ROOT)),
                         errlog=errlog) as proxy_io, \
            ClientSession(*direct_io) as direct, ClientSession(*proxy_io) as proxied:
        sessions = {"MCP direct": direct, "MCP through the proxy": proxied}
        for session in sessions.values():
            await session.initialize()
            result = await session.call_tool("send_payment", INVOICE)     # warm up; lists the tools once
            assert not result.is_error, result
        cpu0 = {name: cpu_seconds(name) for name in ("mcp_proxy", "payments_mcp_server")}
        for _ in range(calls):
            for name, session in sessions.items():
                t0 = time.perf_counter_ns()
                await session.call_tool("send_payment", INVOICE)
                times[name].append((time.perf_counter_ns() - t0) / 1000.0)
        cpu = {name: (cpu_seconds(name) - t) / calls * 1e6 for name, t in cpu0.items()}
    errlog.close()
    return {**{name: statistics.median(t) for name, t in times.items()},
            "CPU per call: the proxy process": cpu["mcp_proxy"],
            "CPU per call: the MCP server (direct)": cpu["payments_mcp_server"]}


def main() -> int:
    import anyio

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", type=Path)
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--mcp-calls", type=int, default=300)
    p.add_argument("--log", action="store_true", help="write the decision log (a fresh temporary file)")
    opts = p.parse_args()
    build, unproved = payments_build(opts.build)
    work = Path(tempfile.mkdtemp(prefix="veriguard-bench-"))
    log = work / "decisions.jsonl" if opts.log else None
    local = in_process(build, opts.calls, log, unproved=unproved)
    remote = anyio.run(functools.partial(mcp_medians, build, opts.mcp_calls, log, work, unproved=unproved))
    base, mcp_base = local["Monitor.check"], remote["MCP direct"]
    print(f"{'median per call':32} {'us':>10} {'added':>10} {'ratio':>7}")
    for name, us in local.items():
        print(f"{name:32} {us:10.1f} {us - base:10.1f} {us / base:7.2f}")
    cpu = {name: remote.pop(name) for name in list(remote) if name.startswith("CPU")}
    for name, us in remote.items():
        print(f"{name:32} {us:10.1f} {us - mcp_base:10.1f} {us / mcp_base:7.2f}")
    for name, us in cpu.items():
        print(f"{name:38} {us:10.1f}")
    print("(the proxy relays JSON-RPC lines and validates only the child's handshake and tools/call results with the "
          "SDK's types; the direct server's CPU is one SDK server hop)")
    added_wrapper = local["anthropic @guarded tool"] - base
    added_proxy = remote["MCP through the proxy"] - mcp_base
    print(f"\nAnthropic wrapper over Monitor.check: {added_wrapper:.1f} us (target < 100 us) "
          f"{'MET' if added_wrapper < 100 else 'MISSED'}")
    print(f"MCP proxy over the direct call: {added_proxy / 1000:.2f} ms (target < 2 ms) "
          f"{'MET' if added_proxy < 2000 else 'MISSED'}")
    print(f"({opts.calls} in-process and {opts.mcp_calls} MCP calls each, interleaved; decision log "
          f"{'on' if log else 'off'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
