"""A payments MCP server for tests/unit/test_mcp_proxy_m27.py: plain JSON-RPC lines on stdio, no SDK; the read loop
is tests/mcp_child_m25.py's.

    python tests/mcp_child_m27.py RECEIVED CONTEXT [slow=SECONDS] [first_slow] [setsid|daemon|setpgid|daemon2]
                                  [pre_answer]
                                  [tools=NAME,NAME...] [start_slow=SECONDS]

As tests/mcp_child_m26.py: a payment is made SECONDS after it came, cancelled or not, added to the ledger in CONTEXT
and written to RECEIVED.paid; RECEIVED.starts gets a line per server process (`first_slow`: only the first one is
slow). `setsid`: the payment is made by a helper process that leaves the server's process group (a session of its
own), the server waiting for it; `daemon`: by a helper that does so and forks again, its parent exiting at once (a
daemon, adopted by whoever reaps orphans); `setpgid`, `daemon2`: see helper(). `pre_answer`: at each tools/call it first answers the next request id, one
the proxy has not sent yet. `tools=`: the names its tools/list gives (each one pays), the list changed after the
handshake. `start_slow`: it reads nothing for SECONDS after it started (a slow start)."""
import json
import os
import subprocess
import sys
import time
from typing import Any

from mcp_child_m25 import PAYMENT, in_thread, option, record_payment, send, sent, serve
from mcp_child_m26 import started_before


def helper(received: str, context: str, params: dict, slow: float, how: str) -> None:
    """The helper process's work: pays `slow` seconds later; `daemon` forks first and its parent exits; `setpgid`
    leaves the server's process group for one of its own (same session); `daemon2` daemonizes the classic way (fork,
    setsid, fork, the parents exiting)."""
    if how == "setpgid":
        os.setpgid(0, 0)
    if how in ("daemon", "daemon2") and os.fork() > 0:
        os._exit(0)
    if how == "daemon2":
        os.setsid()
        if os.fork() > 0:
            os._exit(0)
    time.sleep(slow)
    record_payment(received, context, params)


def main() -> None:
    if sys.argv[1] == "--pay":   # the helper process: RECEIVED CONTEXT PARAMS SECONDS HOW
        helper(sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), float(sys.argv[5]), sys.argv[6])
        return
    received, context, options = sys.argv[1], sys.argv[2], sys.argv[3:]
    slow = 0.0 if started_before(received) and "first_slow" in options else option(options, "slow")
    time.sleep(option(options, "start_slow"))
    names = next((o.split("=", 1)[1].split(",") for o in options if o.startswith("tools=")), ["send_payment"])

    how = next((o for o in options if o in ("setsid", "daemon", "setpgid", "daemon2")), "")

    def pay(request_id: Any, params: dict) -> None:
        if how:
            subprocess.run([sys.executable, __file__, "--pay", received, context, json.dumps(params), str(slow), how],
                           check=True, start_new_session=how != "setpgid")
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
        if "tools=" in " ".join(options):
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})

    serve(received, name="payments-m27", capabilities={"tools": {"listChanged": True}}, call=call,
          tools=lambda: [{"name": n, "description": "Send a payment.", "inputSchema": PAYMENT} for n in names],
          on_initialized=changed, join_s=30.0)


if __name__ == "__main__":
    main()
