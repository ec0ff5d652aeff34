"""An MCP server behind the policy proxy, used by an agent on the Anthropic tool runner.

    .venv/bin/python examples/mcp_server_behind_proxy.py [--build build/payments]

The agent's MCP client starts `python -m veriguard.enforce.integrations.mcp_proxy --build ... -- python
examples/payments_mcp_server.py` (what `veriguard mcp-proxy` runs): the proxy starts the real server as
its child and decides every tools/call before forwarding it. The model is scripted (its replies come
through the Anthropic SDK's own HTTP layer), so this runs offline.
"""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import anyio
import httpx2
from anthropic import AsyncAnthropic
from anthropic.lib.tools.mcp import async_mcp_tool
from mcp import ClientSession, StdioServerParameters, stdio_client

from _offline import (CONTEXT, INVOICE, OVER_LIMIT, ROOT, UNKNOWN_PAYEE, anthropic_http, build_option, payments_build,
                      show_log)

build, offline = payments_build(build_option(__doc__.splitlines()[0]))
work = Path(tempfile.mkdtemp(prefix="veriguard-example-mcp-"))
(work / "context.json").write_text(json.dumps(CONTEXT), encoding="utf-8")   # read again at every call
log = work / "decisions.jsonl"
proxy = StdioServerParameters(command=sys.executable, cwd=str(ROOT), args=[
    "-m", "veriguard.enforce.integrations.mcp_proxy", "--build", str(build), "--context", str(work / "context.json"),
    "--log", str(log), "--unchecked", "resources",   # the ledger resource, read unchecked (the policy decides tool calls)
    *(["--accept-unproved"] if offline else []), "--", sys.executable, str(ROOT / "examples" / "payments_mcp_server.py")])
print(f"Host runs: {' '.join(['veriguard mcp-proxy', *proxy.args[2:]])}\n")


async def main() -> None:
    with open(work / "proxy.stderr", "w", encoding="utf-8") as errlog:
        async with stdio_client(proxy, errlog=errlog) as (read, write), ClientSession(read, write) as mcp:
            init = await mcp.initialize()
            listed = await mcp.list_tools()
            print(f"Connected to {init.server_info.name}; tools: {[t.name for t in listed.tools]}; "
                  f"resource: {(await mcp.read_resource('ledger://today')).contents[0].text!r}")
            client = AsyncAnthropic(api_key="offline-example", max_retries=0, http_client=httpx2.AsyncClient(
                transport=anthropic_http(INVOICE, OVER_LIMIT, UNKNOWN_PAYEE, "Paid the 450.00 USD invoice; the "
                                         "other two payments were refused by the payments policy.")))
            runner = client.beta.messages.tool_runner(
                model="claude-sonnet-4-5", max_tokens=1024, messages=[{"role": "user", "content": "Pay the invoices."}],
                tools=[async_mcp_tool(t, mcp) for t in listed.tools])
            async for message in runner:
                for block in message.content:
                    print(f"model asks: send_payment({block.input})" if block.type == "tool_use" else
                          f"model says: {block.text}")
                response = await runner.generate_tool_call_response()
                for result in (response or {}).get("content", []):
                    content = result["content"] if isinstance(result["content"], str) else " ".join(
                        c.get("text", "") for c in result["content"])
                    print(f"    tool_result{' (is_error)' if result.get('is_error') else ''}: {content}")
    print("\nThe proxy said on stderr:\n" + (work / "proxy.stderr").read_text(encoding="utf-8").rstrip())
    show_log(log)


anyio.run(main)
