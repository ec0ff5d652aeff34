"""The MCP proxy for real: a payments MCP server written here (mcp SDK, low-level Server) runs as the
proxy's child, the proxy runs as its own process (`python -m veriguard.enforce.integrations.mcp_proxy`), and a
real MCP client session talks to it. No JVM: the build is made without Nagini."""
import json
import subprocess
import sys
from contextlib import asynccontextmanager
from typing import Any, Literal

import anyio
import pytest

pytest.importorskip("mcp", reason="the MCP proxy needs the mcp SDK")
import mcp_types as types  # noqa: E402
from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

from veriguard.enforce.decision_log import DecisionLog  # noqa: E402
from veriguard.enforce.integrations.mcp_proxy import main  # noqa: E402
from tests.conftest import ROOT  # noqa: E402
from tests.unit.test_guard import CONTEXT, OVER_LIMIT, PAYMENT  # noqa: E402
from tests.unit.test_monitor import payments_build  # noqa: E402,F401  (fixture)

# The recipient picks how the server misbehaves, so that one server shows every failure (all are on the
# vendor allowlist, so the policy lets the call through to the server).
CHILD = '''
import os, sys
import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

CALLS = sys.argv[1]
wire = anyio.wrap_file(open(os.dup(1), "w", encoding="utf-8"))   # an explicit stream: the SDK leaves fd 1 alone
PAYMENT = {"type": "object", "properties": {"recipient": {"type": "string"}, "amount_cents": {"type": "integer"},
                                            "currency": {"type": "string"}, "method": {"type": "string"}}}

async def list_tools(ctx, params):
    return types.ListToolsResult(tools=[types.Tool(name="send_payment", description="Send a payment.",
                                                   input_schema=PAYMENT)])

async def call_tool(ctx, params):
    args = params.arguments or {}
    with open(CALLS, "a", encoding="utf-8") as f:
        f.write(repr(args) + "\\n")
    who = args.get("recipient")
    if who == "city-utilities":
        os._exit(3)
    if who == "initech-payroll":
        await wire.write("}{ this is not JSON-RPC\\n")
        await wire.flush()
        await anyio.sleep(3600)
    if who == "umbrella-insurance":
        await wire.write('{"jsonrpc": "2.0", "id": %s, "result": {"content": "not a list"}}\\n' % ctx.request_id)
        await wire.flush()
        await anyio.sleep(3600)
    if who == "globex-logistics":
        await anyio.sleep(3600)
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"sent {args.get('amount_cents')}")])

async def list_resources(ctx, params):
    return types.ListResourcesResult(resources=[types.Resource(uri="ledger://today", name="ledger")])

async def read_resource(ctx, params):
    return types.ReadResourceResult(contents=[types.TextResourceContents(uri=params.uri, text="sent today: 0")])

async def list_prompts(ctx, params):
    return types.ListPromptsResult(prompts=[types.Prompt(name="pay_invoice")])

async def get_prompt(ctx, params):
    return types.GetPromptResult(messages=[types.PromptMessage(
        role="user", content=types.TextContent(type="text", text="Pay the invoice."))])

server = Server("payments", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool,
                on_list_resources=list_resources, on_read_resource=read_resource, on_list_prompts=list_prompts,
                on_get_prompt=get_prompt)

async def main():
    async with stdio_server(anyio.wrap_file(open(os.dup(0), encoding="utf-8")), wire) as (r, w):
        await server.run(r, w, server.create_initialization_options())

anyio.run(main)
'''


class RawToolCall(types.Request[dict, Literal["tools/call"]]):
    """A tools/call with params the typed client would refuse to send."""

    method: Literal["tools/call"] = "tools/call"
    params: dict


@pytest.fixture
def setup(tmp_path, payments_build):
    (tmp_path / "child.py").write_text(CHILD, encoding="utf-8")
    (tmp_path / "context.json").write_text(json.dumps(CONTEXT), encoding="utf-8")
    return {"tmp": tmp_path, "build": payments_build, "calls": tmp_path / "calls.txt", "log": tmp_path / "log.jsonl"}


def proxy_argv(setup, *options: str) -> list[str]:
    return ["-m", "veriguard.enforce.integrations.mcp_proxy", "--build", str(setup["build"]), "--context",
            str(setup["tmp"] / "context.json"), "--log", str(setup["log"]), "--timeout", "1", *options, "--",
            sys.executable, str(setup["tmp"] / "child.py"), str(setup["calls"])]


@asynccontextmanager
async def proxied(setup, *options: str):
    params = StdioServerParameters(command=sys.executable, args=proxy_argv(setup, *options), cwd=str(ROOT),
                                   env={"PYTHONPATH": str(ROOT)})
    with open(setup["tmp"] / "proxy.stderr", "w", encoding="utf-8") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                with anyio.fail_after(60):
                    await session.initialize()
                yield session


def text(result: types.CallToolResult) -> str:
    return " ".join(c.text for c in result.content)


def reached_child(setup) -> list[str]:
    return setup["calls"].read_text().splitlines() if setup["calls"].exists() else []


def test_forwarding_allowed_denied_and_malformed_calls(setup):
    async def main() -> dict[str, Any]:
        async with proxied(setup) as s:
            got = {"tools": [t.name for t in (await s.list_tools()).tools],
                   "resources": [r.uri for r in (await s.list_resources()).resources],
                   "read": (await s.read_resource("ledger://today")).contents[0].text,
                   "prompts": [p.name for p in (await s.list_prompts()).prompts],
                   "prompt": (await s.get_prompt("pay_invoice")).messages[0].content.text,
                   "allowed": await s.call_tool("send_payment", PAYMENT),
                   "denied": await s.call_tool("send_payment", OVER_LIMIT),
                   "mistyped": await s.call_tool("send_payment", {**PAYMENT, "amount_cents": "lots"}),
                   "missing": await s.call_tool("send_payment", {"recipient": "acme-supplies"}),
                   "no_arguments": await s.call_tool("send_payment"),
                   "other_tool": await s.call_tool("drop_ledger", {"confirm": True})}
            with pytest.raises(MCPError) as protocol:
                await s.send_request(RawToolCall(params={"name": "send_payment", "arguments": "all of it"}),
                                     types.CallToolResult)
            got["protocol"] = protocol.value.code
            setup["context_file"] = setup["tmp"] / "context.json"
            setup["context_file"].write_text(json.dumps({**CONTEXT, "ledger": {"sent_today_cents": 480000}}))
            got["near_daily_limit"] = await s.call_tool("send_payment", PAYMENT)
            setup["context_file"].unlink()
            got["no_context"] = await s.call_tool("send_payment", PAYMENT)
            return got

    got = anyio.run(main)
    assert got["tools"] == ["send_payment"] and got["resources"] == ["ledger://today"]
    assert got["read"] == "sent today: 0" and got["prompts"] == ["pay_invoice"] and got["prompt"] == "Pay the invoice."
    assert not got["allowed"].is_error and text(got["allowed"]) == "sent 45000"
    for case, says in [("denied", "per-payment limit"), ("mistyped", "extract.type"), ("missing", "fail closed"),
                       ("no_arguments", "fail closed"), ("other_tool", "fail closed"),
                       ("near_daily_limit", "daily limit"), ("no_context", "could not be checked")]:
        assert got[case].is_error and says in text(got[case]), (case, text(got[case]))
    assert got["protocol"] == types.INVALID_PARAMS
    assert reached_child(setup) == [repr(PAYMENT)]
    records = list(DecisionLog(setup["log"]).records())
    assert [r["allowed"] for r in records] == [True] + [False] * 6
    assert all(r["action_id"].isdigit() for r in records)


def test_a_failing_server_denies_and_the_proxy_says_why(setup):
    async def main() -> dict[str, types.CallToolResult]:
        async with proxied(setup) as s:
            return {who: await s.call_tool("send_payment", {**PAYMENT, "recipient": who})
                    for who in ("globex-logistics", "initech-payroll", "umbrella-insurance", "city-utilities",
                                "acme-supplies")}

    got = anyio.run(main)
    expected = {"globex-logistics": "did not answer within 1 s",
                "initech-payroll": "wrote a line that is not MCP: '}{ this is not JSON-RPC'",
                "umbrella-insurance": "its answer is not valid MCP (content: Input should be a valid list)",
                "city-utilities": "the MCP server is gone",
                "acme-supplies": "the MCP server is gone"}
    for who, says in expected.items():
        assert got[who].is_error and says in text(got[who]), (who, text(got[who]))
        assert "allowed by the policy but did not complete" in text(got[who])
    assert len(reached_child(setup)) == 4
    assert "the MCP server is gone" in (setup["tmp"] / "proxy.stderr").read_text()


def test_terminate_refuses_the_call_and_every_later_one(setup):
    async def main() -> list[types.CallToolResult]:
        async with proxied(setup, "--strategy", "terminate") as s:
            return [await s.call_tool("send_payment", p) for p in (OVER_LIMIT, PAYMENT)]

    stopped, later = anyio.run(main)
    assert stopped.is_error and "Task terminated by policy payments" in text(stopped)
    assert later.is_error and "halted in this run" in text(later)
    assert reached_child(setup) == []


def test_shadow_mode_forwards_and_logs_the_would_be_denial(setup):
    async def main() -> types.CallToolResult:
        async with proxied(setup, "--mode", "shadow") as s:
            return await s.call_tool("send_payment", OVER_LIMIT)

    result = anyio.run(main)
    assert not result.is_error and text(result) == "sent 250000"
    record, = DecisionLog(setup["log"]).records()
    assert record["allowed"] is False and record["violations"] == ["per_payment_limit"]
    assert "shadow mode, not enforced" in (setup["tmp"] / "proxy.stderr").read_text()


@pytest.mark.parametrize("change,says", [
    (lambda argv: argv[:argv.index("--")], "give the MCP server's command after `--`"),
    (lambda argv: argv[:argv.index("--") + 1] + ["no-such-server-binary"], "no executable 'no-such-server-binary'"),
    (lambda argv: [a if a != "1" else "0" for a in argv], "--timeout must be a positive number"),
    (lambda argv: [a.replace("payments", "nowhere") if a.endswith("payments") else a for a in argv],
     "error[load.missing]"),
    (lambda argv: [a if not a.endswith("context.json") else a + ".missing" for a in argv], "does not exist"),
    (lambda argv: ["--mode", "loud"] + argv, "invalid choice: 'loud'"),
    (lambda argv: ["--strategy", "shrug"] + argv, "unknown enforcement strategy 'shrug'"),
    (lambda argv: ["--halt-after", "0"] + argv, "halt_after 0"),
    (lambda argv: ["--log-key", "/nonexistent/veriguard.key"] + argv, "key"),
])
def test_bad_starts_exit_2_with_the_reason(setup, capsys, change, says):
    assert main(change(proxy_argv(setup)[2:])) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err, err


def test_help_exits_0(capsys):
    assert main(["--help"]) == 0 and "--build DIR [options] -- COMMAND [ARGS...]" in capsys.readouterr().out


def test_a_server_that_never_speaks_mcp_exits_2(setup):
    argv = proxy_argv(setup)
    argv = argv[:argv.index("--") + 1] + [sys.executable, "-c", "print('hello')"]
    done = subprocess.run([sys.executable, *argv], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL, env={"PYTHONPATH": str(ROOT)})
    assert done.returncode == 2 and "did not complete the MCP handshake" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
