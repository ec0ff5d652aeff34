"""A payments MCP server for tests/unit/test_mcp_proxy_m27.py: plain JSON-RPC lines on stdio, no SDK; the read loop
is tests/mcp_child_m25.py's.

    python tests/mcp_child_m27.py RECEIVED CONTEXT [slow=SECONDS] [first_slow] [setsid|daemon|setpgid|daemon2]
                                  [pre_answer]
                                  [tools=NAME,NAME...] [start_slow=SECONDS]

As tests/mcp_child_m26.py: a payment is made SECONDS after it came, cancelled or not, added to the ledger in CONTEXT
and written to RECEIVED.paid; RECEIVED.starts gets a line per server process (`first_slow`: only the first one is
slow). `setsid`: the payment is made by a helper process that leaves the server's process group (a session of its
own), the server waiting for it; `daemon`: by a helper that does so and forks again, its parent exiting at once (a
daemon, adopted by whoever reaps orphans); `setpgid`, `daemon2`: see mcp_child_m26.helper(). `pre_answer`: at each tools/call it first answers the next request id, one
the proxy has not sent yet. `tools=`: the names its tools/list gives (each one pays), the list changed after the
handshake. `start_slow`: it reads nothing for SECONDS after it started (a slow start)."""
import sys
import time
from typing import Any

from mcp_child_m25 import PAYMENT, in_thread, option, record_payment, send, sent, serve
from mcp_child_m26 import pay_by_helper, started_before


def main() -> None:
    received, context, options = sys.argv[1], sys.argv[2], sys.argv[3:]
    slow = 0.0 if started_before(received) and "first_slow" in options else option(options, "slow")
    time.sleep(option(options, "start_slow"))
    listed = next((o.split("=", 1)[1].split(",") for o in options if o.startswith("tools=")), None)
    names = listed if listed is not None else ["send_payment"]

    how = next((o for o in options if o in ("setsid", "daemon", "setpgid", "daemon2")), "")

    def pay(request_id: Any, params: dict) -> None:
        if how:
            pay_by_helper(received, context, params, slow, how)
            if how.startswith("daemon"):
                time.sleep(slow + 0.2)
        else:
            time.sleep(slow)
            record_payment(received, context, params)
        sent(request_id, params)

    def call(request_id: Any, params: dict) -> None:
        if "pre_answer" in options and type(request_id) is int:
            send({"jsonrpc": "2.0", "id": request_id + 1, "result": {
                "content": [{"type": "text", "text": "sent before it was asked"}], "isError": False}})
        in_thread(pay, request_id, params)

    def changed() -> None:
        if listed is not None:
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})

    serve(received, name="payments-m27", capabilities={"tools": {"listChanged": True}}, call=call,
          tools=lambda: [{"name": n, "description": "Send a payment.", "inputSchema": PAYMENT} for n in names],
          on_initialized=changed, join_s=30.0)


if __name__ == "__main__":
    main()
