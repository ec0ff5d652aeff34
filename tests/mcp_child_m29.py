"""A payments MCP server for tests/unit/test_mcp_proxy_m29.py: plain JSON-RPC lines on stdio, no SDK; the read loop
is tests/mcp_child_m25.py's.

    python tests/mcp_child_m29.py RECEIVED CONTEXT [slow=SECONDS] [error] [garbage] [exit_on_call] [big=MB]
                                  [flood] [daemon_before=SECONDS]

As tests/mcp_child_m25.py: every line read goes to RECEIVED, a payment is made SECONDS after it came (on a thread),
added to the ledger in CONTEXT and written to RECEIVED.paid. `error`: each tools/call is answered with a JSON-RPC
error (after paying); `garbage`: with a result that is not a CallToolResult; `exit_on_call`: the server exits when a
tools/call comes, before answering it; `big=MB`: each result carries a text of MB megabytes; `flood`: a thread writes
to its stderr without end (lines of control characters); `daemon_before=SECONDS`: at its start it leaves a process
outside its own tree (double fork, setsid) that makes a payment of 250000 SECONDS later."""
import os
import sys
import threading
import time
from typing import Any

from mcp_child_m25 import PAYMENT, in_thread, option, record_payment, send, sent, serve


def flood() -> None:
    line = b"\x01" * 16000 + b"\n"
    while True:
        try:
            sys.stderr.buffer.write(line)
        except OSError:
            return


def daemon_before(received: str, context: str, after: float) -> None:
    """A process that is no longer below the server by the time the proxy stops it (started, then re-parented)."""
    if os.fork() > 0:
        return
    os.setsid()
    if os.fork() > 0:
        os._exit(0)
    time.sleep(after)
    record_payment(received, context, {"name": "send_payment", "arguments": {"amount_cents": 250000}})
    os._exit(0)


def main() -> None:
    received, context, options = sys.argv[1], sys.argv[2], sys.argv[3:]
    slow, big = option(options, "slow"), int(option(options, "big") * (1 << 20))
    if "flood" in options:
        threading.Thread(target=flood, daemon=True).start()
    if option(options, "daemon_before"):
        daemon_before(received, context, option(options, "daemon_before"))

    def pay(request_id: Any, params: dict) -> None:
        time.sleep(slow)
        record_payment(received, context, params)
        if "error" in options:
            send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32000, "message": "the bank said no"}})
        elif "garbage" in options:
            send({"jsonrpc": "2.0", "id": request_id, "result": {"content": "paid"}})
        elif big:
            sent(request_id, params, {"structuredContent": {"blob": "x" * big}})
        else:
            sent(request_id, params)

    def call(request_id: Any, params: dict) -> None:
        if "exit_on_call" in options:
            os._exit(3)
        in_thread(pay, request_id, params)

    serve(received, name="payments-m29", capabilities={"tools": {}},
          tools=lambda: [{"name": "send_payment", "description": "Send a payment.", "inputSchema": PAYMENT}],
          call=call, join_s=30.0)


if __name__ == "__main__":
    main()
