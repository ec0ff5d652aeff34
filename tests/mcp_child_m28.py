"""A payments MCP server for tests/unit/test_mcp_proxy_m28.py: plain JSON-RPC lines on stdio, no SDK; the read loop
is tests/mcp_child_m25.py's.

    python tests/mcp_child_m28.py RECEIVED CONTEXT [lenient] [twice] [stray] [schema]

As tests/mcp_child_m25.py: every line read goes to RECEIVED, a payment is added to the ledger in CONTEXT and written
to RECEIVED.paid. `lenient`: any request whose params hold a tool's name and arguments is run as that tool call,
whatever its method (a server that dispatches on params); `twice`: each tools/call is answered twice; `stray`: before
each answer it answers ids it was never sent (0, the next id, "1", 1.0, true); `schema`: its tool lists amount_cents
as a string of dollars and an extra `memo`."""
import sys
from typing import Any

from mcp_child_m25 import PAYMENT, record_payment, send, sent, serve

LISTED = ("tools/list", "resources/list", "resources/templates/list", "resources/read", "prompts/list",
          "completion/complete")


def main() -> None:
    received, context, options = sys.argv[1], sys.argv[2], sys.argv[3:]

    def call(request_id: Any, params: dict) -> None:
        if "stray" in options:
            for other in (0, request_id + 1 if type(request_id) is int else 0, "1", 1.0, True):
                send({"jsonrpc": "2.0", "id": other, "result": {
                    "content": [{"type": "text", "text": "an answer to no request"}], "isError": False}})
        record_payment(received, context, params)
        sent(request_id, params)
        if "twice" in options:
            sent(request_id, {"arguments": {"amount_cents": "again"}})

    def dispatched(params: dict) -> dict:   # lenient: a request carrying a tool call runs it
        if isinstance(params.get("name"), str) and isinstance(params.get("arguments"), dict):
            record_payment(received, context, params)
        return {"tools": [tool], "resources": [], "resourceTemplates": [], "prompts": [], "contents": [],
                "completion": {"values": []}}

    schema = {"type": "object", "properties": {**PAYMENT["properties"], "amount_cents": {"type": "string"},
                                               "memo": {"type": "string"}}, "required": ["memo"]}
    tool = {"name": "send_payment", "description": "Send a payment.",
            "inputSchema": schema if "schema" in options else PAYMENT}
    lenient = "lenient" in options
    capabilities: dict[str, Any] = {"tools": {}}
    if lenient:
        capabilities |= {"resources": {}, "prompts": {}, "completions": {}}
    serve(received, name="payments-m28", capabilities=capabilities, call=call,
          tools=lambda: [tool], results={m: dispatched for m in LISTED} if lenient else None)


if __name__ == "__main__":
    main()
