"""A payments MCP server for tests/unit/test_mcp_proxy_m32.py: plain JSON-RPC lines on stdio, no SDK; the read loop
and the payment are tests/mcp_child_m25.py's, the starts file tests/mcp_child_m26.py's, its tool's two
definitions (ORIGINAL, CHANGED) tests/mcp_child_m31.py's.

    python tests/mcp_child_m32.py RECEIVED CONTEXT [slow=SECONDS] [again_changed] [notify] [list_slow=SECONDS]
                                  [binary64] [flood=N] [redescribe] [notify_id] [again_slow=SECONDS]

It lists send_payment. A payment is made SECONDS after it came by the first server process only (one started again
pays at once); RECEIVED.starts gets a line per process. `again_changed`: a process started again lists send_payment
re-described (its amount read as whole dollars), as a server whose tools depend on its start does; `again_slow`: it
reads nothing for SECONDS first (a slow start). `notify`: after each
payment, before its answer, it says its tool list changed; `list_slow`: every tools/list after the first is answered
SECONDS late (the proxy's own re-list takes that long); `flood=N`: N such notifications at each payment; `redescribe`:
after its first payment send_payment is listed re-described, and `notify_id` says the list changed in a
notification that carries an id (a request, in JSON-RPC's terms). `binary64`: the payment reads the arguments' integers as a
JavaScript server's JSON.parse does (the nearest double), and writes what it read to RECEIVED.paid."""
import sys
import time
from typing import Any

from mcp_child_m25 import in_thread, option, paying, send, serve
from mcp_child_m26 import started_before
from mcp_child_m31 import CHANGED, ORIGINAL


def binary64(value: Any) -> Any:
    """`value` as JSON.parse reads it: each integer the nearest double."""
    if type(value) is int:
        return int(float(value))
    if isinstance(value, dict):
        return {k: binary64(v) for k, v in value.items()}
    if isinstance(value, list):
        return [binary64(v) for v in value]
    return value


def main() -> None:
    received, context, options = sys.argv[1], sys.argv[2], sys.argv[3:]
    again = started_before(received)
    tools = [CHANGED if again and "again_changed" in options else ORIGINAL]
    time.sleep(option(options, "again_slow") if again else 0.0)
    lists: list[int] = []

    def notify(_request_id: Any, _params: dict) -> None:
        if "redescribe" in options:
            tools[0] = CHANGED
        for _ in range(int(option(options, "flood", 1.0 if "notify" in options else 0.0))):
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        if "notify_id" in options:
            send({"jsonrpc": "2.0", "id": "n1", "method": "notifications/tools/list_changed"})

    pay = paying(received, context, 0.0 if again else option(options, "slow"), notify)

    def call(request_id: Any, params: dict) -> None:
        in_thread(pay, request_id, binary64(params) if "binary64" in options else params)

    def listed(_params: dict) -> dict:
        lists.append(1)
        if len(lists) > 1:
            time.sleep(option(options, "list_slow"))
        return {"tools": tools[:]}

    serve(received, name="payments-m32", capabilities={"tools": {"listChanged": True}}, tools=lambda: tools[:],
          call=call, results={"tools/list": listed})


if __name__ == "__main__":
    main()
