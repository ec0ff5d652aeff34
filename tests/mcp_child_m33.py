"""A payments MCP server for tests/unit/test_mcp_proxy_m33.py: plain JSON-RPC lines on stdio, no SDK; the read loop
and the payment are tests/mcp_child_m25.py's.

    python tests/mcp_child_m33.py RECEIVED CONTEXT [slow=SECONDS] [stdout_noise] [twice] [stray] [self_cancel]
                                  [close_stdin] [close_stdout] [ignore_term] [stderr_flood=MB] [big=MB]
                                  [list_slow=SECONDS] [list_fails=N]

It lists send_payment and pays it as M25's server does (SECONDS after it came). `stdout_noise`: before each answer it
writes log lines to stdout (plain text, a partial JSON object, an answer to an id never asked); `twice`: each call is
answered twice, the second time "sent 999999"; `stray`: after the handshake it answers ids it was never asked (1-5 and
"x"); `self_cancel`: as a call comes it sends notifications/cancelled for it, and never answers it; `close_stdin`:
0.5 s after the handshake it closes its input and keeps running (its stdout open); `close_stdout`: after the handshake it
closes its stdout and keeps running; `ignore_term`: it ignores SIGTERM; `stderr_flood=MB`, `stdout_flood=MB`: after the handshake it
writes MB megabytes of log lines to its stderr, or its stdout; `big=MB`: each answer carries MB megabytes of text; `list_slow`: each tools/list is answered SECONDS late (reading
nothing meanwhile); `list_fails=N`: its first N tools/list are answered with no list."""
import json
import os
import select
import signal
import sys
import threading
import time
from typing import Any

from mcp_child_m25 import PAYMENT, in_thread, lock, option, record_payment, send, serve


def answer_then_close(tool: dict) -> None:
    """The handshake and tools/list answered for 0.5 s after the initialized notification; then its input is closed
    (no reader is left: what is written to it is lost) and it keeps running, its stdout open."""
    deadline, buffered = float("inf"), b""
    while select.select([0], [], [], max(0.0, min(deadline - time.monotonic(), 3600.0)))[0]:
        chunk = os.read(0, 1 << 16)
        if not chunk:
            break
        *lines, buffered = (buffered + chunk).split(b"\n")
        for line in lines:
            message = json.loads(line)
            if message.get("method") == "initialize":
                send({"jsonrpc": "2.0", "id": message["id"], "result": {
                    "protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                    "serverInfo": {"name": "payments-m33", "version": "1.0"}}})
            elif message.get("method") == "tools/list":
                send({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": [tool]}})
            elif message.get("method") == "notifications/initialized":
                deadline = time.monotonic() + 0.5
    os.close(0)
    time.sleep(3600)


def main() -> None:
    received, context, options = sys.argv[1], sys.argv[2], sys.argv[3:]
    if "ignore_term" in options:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    slow, big = option(options, "slow"), int(option(options, "big") * (1 << 20))

    def answer(request_id: Any, amount: Any) -> None:
        text = f"sent {amount}" + ("x" * big if big else "")
        send({"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": text}],
                                                             "isError": False}})

    def pay(request_id: Any, params: dict) -> None:
        if "self_cancel" in options:
            send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id}})
            return
        time.sleep(slow)
        record_payment(received, context, params)
        if "stdout_noise" in options:
            sys.stdout.write("INFO paying now\n{\"jsonrpc\": \"2.0\", \"id\"\n\n")
            send({"jsonrpc": "2.0", "id": 4242, "result": {"content": [{"type": "text", "text": "sent 1"}]}})
        answer(request_id, (params.get("arguments") or {}).get("amount_cents"))
        if "twice" in options:
            answer(request_id, 999999)

    def after_handshake() -> None:
        if "stray" in options:
            for stray in (1, 2, 3, 4, 5, "x"):
                answer(stray, "never asked")
        if "close_stdout" in options:
            os.close(1)
        if option(options, "stdout_flood"):   # a server logging to stdout: lines that are not JSON-RPC, without end
            threading.Thread(target=flood, args=(int(option(options, "stdout_flood")), 1), daemon=True).start()
        if option(options, "stderr_flood"):
            threading.Thread(target=flood, args=(int(option(options, "stderr_flood")), 2), daemon=True).start()

    def flood(megabytes: int, fd: int) -> None:
        line = b"INFO " + b"e" * 1018 + b"\n"
        for _ in range(megabytes * 1024):
            with lock:   # whole lines between the answers on stdout
                os.write(fd, line)

    tool = {"name": "send_payment", "description": "Send a payment.", "inputSchema": PAYMENT}
    if "close_stdin" in options:
        answer_then_close(tool)
        return
    lists: list[int] = []

    def listed(_params: dict) -> dict:
        time.sleep(option(options, "list_slow"))
        lists.append(1)
        if len(lists) <= option(options, "list_fails"):
            return {"tools": "not ready"}
        return {"tools": [tool]}

    serve(received, name="payments-m33", capabilities={"tools": {}}, tools=lambda: [tool],
          call=lambda i, p: in_thread(pay, i, p), on_initialized=after_handshake, results={"tools/list": listed})
    if "close_stdout" in options or "ignore_term" in options:
        time.sleep(3600)


if __name__ == "__main__":
    main()
